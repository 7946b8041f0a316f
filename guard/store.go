package guard

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
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

func (g *Guard) read() (*state, error) {
	path := filepath.Join(g.cfg.Dir, storeName)
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &state{Version: storeVersion}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("guard: %w", err)
	}
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
