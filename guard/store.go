package guard

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// The store is one JSON file, reviews.json, in the guard's directory,
// rewritten whole on every change: written to a temporary file in the same
// directory, fsync'd, renamed over the old one, and the directory fsync'd.
// A crash leaves the old file or the new one, never a mix; a leftover
// temporary file is ignored. Every read-change-write holds reviews.lock.

const (
	storeName = "reviews.json"
	lockName  = "reviews.lock"
	// storeVersion is the file's format; a file of another version is
	// refused, not misread.
	storeVersion = 1
)

// StateStore keeps the guard's state outside the directory — store/pg's
// table, shared by replicas on one database — as one document (the
// reviews.json bytes), with the file store's read-change-write under an
// exclusive lock: a confirmation approved on one replica is what the call
// sent again to any other finds.
type StateStore interface {
	// Update calls fn with the current document (nil when there is none)
	// while holding a lock that excludes every other Update of it, in any
	// process, and stores what fn returns (nil: nothing), committed before
	// Update returns. fn's error aborts and is returned as is.
	Update(ctx context.Context, fn func(cur []byte) ([]byte, error)) error
	// Where names the store in messages.
	Where() string
}

// ModelStore keeps anomaly models outside the model files (store/pg), by
// slot — SlotModel, SlotCandidate — so a model `airs guard train` stores
// once scores on every replica; they poll ModelVersion and reload on a
// change.
type ModelStore interface {
	// SaveModel keeps m (its MarshalJSON) as slot's model.
	SaveModel(ctx context.Context, slot, version string, model []byte) error
	// LoadModel is slot's model; an error wrapping fs.ErrNotExist when
	// there is none.
	LoadModel(ctx context.Context, slot string) (version string, model []byte, err error)
	// ModelVersion is slot's model's version ("" when none).
	ModelVersion(ctx context.Context, slot string) (string, error)
	// Where names the store in messages.
	Where() string
}

// The slots of a ModelStore: guard.anomaly.model's and
// guard.anomaly.candidate's.
const (
	SlotModel     = "model"
	SlotCandidate = "candidate"
)

// storeTimeout bounds one StateStore update.
const storeTimeout = 30 * time.Second

type state struct {
	Version int      `json:"version"`
	Reviews []Review `json:"reviews"`
	Grants  []Grant  `json:"grants"`
}

// withState runs fn on the store's state under the lock and, when fn says
// it changed it, writes it back atomically.
func (g *Guard) withState(fn func(st *state) (changed bool, err error)) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.cfg.Store != nil {
		return g.withStoreState(fn)
	}
	lf, err := os.OpenFile(filepath.Join(g.cfg.Dir, lockName), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return fmt.Errorf("guard: %w", err)
	}
	defer lf.Close()
	if err := lockFile(lf); err != nil {
		return fmt.Errorf("guard: locking the review store: %w", err)
	}
	defer unlockFile(lf)
	st, err := g.read()
	if err != nil {
		return err
	}
	changed, err := fn(st)
	if err != nil || !changed {
		return err
	}
	g.prune(st)
	return g.write(st)
}

// withStoreState is withState on Config.Store (g.mu held): the same
// document, decoded, changed and encoded as the file's, under the store's
// lock rather than reviews.lock.
func (g *Guard) withStoreState(fn func(st *state) (changed bool, err error)) error {
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	where := g.cfg.Store.Where()
	var fnErr error
	err := g.cfg.Store.Update(ctx, func(cur []byte) ([]byte, error) {
		st := &state{Version: storeVersion}
		if cur != nil {
			var err error
			if st, err = decodeState(cur, where); err != nil {
				return nil, err
			}
		}
		changed, err := fn(st)
		if err != nil {
			fnErr = err
			return nil, nil // fn's error is not the store's: nothing is written
		}
		if !changed {
			return nil, nil
		}
		g.prune(st)
		b, err := json.Marshal(st) // as the file: params kept as they came
		if err != nil {
			return nil, fmt.Errorf("guard: %w", err)
		}
		return append(b, '\n'), nil
	})
	if err != nil {
		return fmt.Errorf("guard: the review store (%s): %w", where, err)
	}
	return fnErr
}

func (g *Guard) read() (*state, error) {
	path := filepath.Join(g.cfg.Dir, storeName)
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &state{Version: storeVersion}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("guard: %w", err)
	}
	return decodeState(b, path)
}

// decodeState decodes the review store's document, refusing another
// version; where names it in the message.
func decodeState(b []byte, path string) (*state, error) {
	var st state
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, fmt.Errorf("guard: %s is not a review store (%v): move it aside to start a new one", path, err)
	}
	if st.Version != storeVersion {
		return nil, fmt.Errorf("guard: %s has format version %d, this airs reads %d", path, st.Version, storeVersion)
	}
	return &st, nil
}

// write replaces the store atomically (see the comment at the top).
func (g *Guard) write(st *state) error {
	b, err := json.Marshal(st) // not indented: that would re-indent the params kept as they came
	if err != nil {
		return fmt.Errorf("guard: %w", err)
	}
	if err := g.writeFile(storeName, append(b, '\n')); err != nil {
		return fmt.Errorf("guard: writing the review store: %w", err)
	}
	return nil
}

func (g *Guard) writeFile(name string, data []byte) error {
	f, err := os.CreateTemp(g.cfg.Dir, "."+name+".*.tmp")
	if err != nil {
		return err
	}
	tmp := f.Name()
	ok := false
	defer func() {
		if !ok {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if _, err := f.Write(data); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if g.crashBeforeRename != nil && g.crashBeforeRename() { // tests: a crash between write and rename
		ok = true
		return errors.New("simulated crash")
	}
	if err := os.Rename(tmp, filepath.Join(g.cfg.Dir, name)); err != nil {
		return err
	}
	ok = true
	return syncDir(g.cfg.Dir)
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) {
		return err
	}
	return nil
}
