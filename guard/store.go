package guard

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/airs-dev/airs/internal/filelock"
)

// The store is a snapshot, reviews.json, and a journal, reviews.log, in
// the guard's directory. A change appends one line per review it changed
// (or removed, or the grants) to the journal and fsyncs it: its cost does
// not grow with the store, so a flood of held calls does not slow every
// next one down. The state is the snapshot with the journal applied in
// order; every line replaces what it names, so applying a line twice is
// harmless. When the journal outgrows the snapshot (and 1 MiB) it is
// compacted: the state is written as a new snapshot (to a temporary file,
// fsync'd, renamed over the old one, the directory fsync'd) and the
// journal emptied. A crash leaves the old snapshot or the new one, and at
// worst a torn last journal line, which was never acknowledged and is cut
// off before the next append. Each process keeps the state it read and
// reads only the journal lines added since (or everything, when another
// process compacted). Every read-change-write holds reviews.lock.

const (
	storeName   = "reviews.json"
	journalName = "reviews.log"
	lockName    = "reviews.lock"
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

	// Indexes, so a change costs the same whatever the store's size.
	index    map[string]int   // review id → position in Reviews
	byCall   map[string][]int // callKey → positions, oldest first
	byCaller map[string][]int // caller → positions of its confirmations

	// What a change touched, for the journal.
	touched       []string
	deleted       []string
	grantsTouched bool
}

// find is the position of review id.
func (st *state) find(id string) (int, bool) {
	if st.index == nil {
		st.reindex()
	}
	i, ok := st.index[id]
	return i, ok
}

func (st *state) reindex() {
	st.index = make(map[string]int, len(st.Reviews))
	st.byCall, st.byCaller = map[string][]int{}, map[string][]int{}
	for i := range st.Reviews {
		st.indexAt(i)
	}
}

func (st *state) indexAt(i int) {
	r := &st.Reviews[i]
	st.index[r.ID] = i
	if r.Kind == KindConfirm {
		k := callKey(r.Caller, r.Tool, r.ParamsSHA256)
		st.byCall[k] = append(st.byCall[k], i)
		st.byCaller[r.Caller] = append(st.byCaller[r.Caller], i)
	}
}

// callKey identifies a confirmation's call.
func callKey(caller, tool, sum string) string { return caller + "\x00" + tool + "\x00" + sum }

// confirmsOf are the positions of the confirmations of one call, oldest
// first.
func (st *state) confirmsOf(caller, tool, sum string) []int {
	if st.index == nil {
		st.reindex()
	}
	return st.byCall[callKey(caller, tool, sum)]
}

// confirmsBy are the positions of caller's confirmations.
func (st *state) confirmsBy(caller string) []int {
	if st.index == nil {
		st.reindex()
	}
	return st.byCaller[caller]
}

// add appends a new review.
func (st *state) add(r Review) {
	if st.index == nil {
		st.reindex()
	}
	st.Reviews = append(st.Reviews, r)
	st.indexAt(len(st.Reviews) - 1)
	st.touched = append(st.touched, r.ID)
}

// touch marks review id changed.
func (st *state) touch(id string) { st.touched = append(st.touched, id) }

// deleteFunc removes the reviews del selects.
func (st *state) deleteFunc(del func(Review) bool) {
	n := len(st.Reviews)
	st.Reviews = slices.DeleteFunc(st.Reviews, func(r Review) bool {
		if del(r) {
			st.deleted = append(st.deleted, r.ID)
			return true
		}
		return false
	})
	if len(st.Reviews) != n {
		st.reindex()
	}
}

func (st *state) clearChanges() {
	st.touched, st.deleted, st.grantsTouched = st.touched[:0], st.deleted[:0], false
}

// journalLine is one change: a review as it now is, a review removed, or
// the grants as they now are.
type journalLine struct {
	Put    *Review  `json:"put,omitempty"`
	Del    string   `json:"del,omitempty"`
	Grants *[]Grant `json:"grants,omitempty"`
}

func (st *state) apply(l *journalLine) {
	switch {
	case l.Put != nil:
		if i, ok := st.find(l.Put.ID); ok {
			st.Reviews[i] = *l.Put
		} else {
			st.Reviews = append(st.Reviews, *l.Put)
			st.indexAt(len(st.Reviews) - 1)
		}
	case l.Del != "":
		if i, ok := st.find(l.Del); ok {
			st.Reviews = slices.Delete(st.Reviews, i, i+1)
			st.reindex()
		}
	case l.Grants != nil:
		st.Grants = *l.Grants
	}
}

// withState runs fn on the store's state under the lock and, when fn says
// it changed it, records the change durably.
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
	if err := filelock.Lock(lf); err != nil {
		return fmt.Errorf("guard: locking the review store: %w", err)
	}
	defer filelock.Unlock(lf)
	if err := g.refresh(); err != nil {
		g.cache = nil
		return err
	}
	st := g.cache
	st.clearChanges()
	changed, err := fn(st)
	if err != nil || !changed {
		if err != nil {
			g.cache = nil // fn may have changed it before failing: read it again
		}
		return err
	}
	if now := g.cfg.Now(); now.Sub(g.pruned) >= pruneEvery {
		g.prune(st)
		g.pruned = now
	}
	if err := g.record(st); err != nil {
		g.cache = nil // what is on disk is the truth
		return fmt.Errorf("guard: writing the review store: %w", err)
	}
	return nil
}

// compactAt is the least journal size compacted (a variable for tests).
var compactAt int64 = 1 << 20

// pruneEvery: prune runs on a change at most this often (it scans the
// whole state).
const pruneEvery = time.Minute

// snapStamp identifies the snapshot a process read (a compaction renames
// a new one in).
type snapStamp struct {
	fi os.FileInfo
}

func (a snapStamp) same(b os.FileInfo) bool {
	if a.fi == nil || b == nil {
		return a.fi == nil && b == nil
	}
	return os.SameFile(a.fi, b) && a.fi.Size() == b.Size() && a.fi.ModTime().Equal(b.ModTime())
}

// refresh brings the cached state up to date (the lock held): the
// snapshot again when another process replaced it, else only the journal
// lines added since the last read.
func (g *Guard) refresh() error {
	snap := filepath.Join(g.cfg.Dir, storeName)
	fi, err := os.Stat(snap)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("guard: %w", err)
	}
	if g.cache == nil || !g.snap.same(fi) {
		st, err := g.read()
		if err != nil {
			return err
		}
		st.reindex()
		g.cache, g.snap, g.journalOff = st, snapStamp{fi}, 0
	}
	jf, err := os.Open(filepath.Join(g.cfg.Dir, journalName))
	if errors.Is(err, fs.ErrNotExist) {
		g.journalOff = 0
		return nil
	}
	if err != nil {
		return fmt.Errorf("guard: %w", err)
	}
	defer jf.Close()
	jfi, err := jf.Stat()
	if err != nil {
		return fmt.Errorf("guard: %w", err)
	}
	if jfi.Size() < g.journalOff { // emptied by a compaction this process did not see
		return g.reload()
	}
	if jfi.Size() == g.journalOff {
		return nil
	}
	b := make([]byte, jfi.Size()-g.journalOff)
	if _, err := jf.ReadAt(b, g.journalOff); err != nil {
		return fmt.Errorf("guard: reading %s: %w", journalName, err)
	}
	for len(b) > 0 {
		nl := bytes.IndexByte(b, '\n')
		if nl < 0 {
			break // a torn last line: never acknowledged; cut off before the next append
		}
		var l journalLine
		if err := json.Unmarshal(b[:nl], &l); err != nil {
			return fmt.Errorf("guard: %s at byte %d is not a journal line (%v): move reviews.json and reviews.log aside to start a new store", filepath.Join(g.cfg.Dir, journalName), g.journalOff, err)
		}
		g.cache.apply(&l)
		g.journalOff += int64(nl + 1)
		b = b[nl+1:]
	}
	return nil
}

// reload drops the cache and reads everything again.
func (g *Guard) reload() error {
	g.cache = nil
	g.snap = snapStamp{}
	return g.refresh()
}

// record makes st's change durable: the journal lines of what it touched,
// appended and fsync'd, or a compaction when the journal is large.
func (g *Guard) record(st *state) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	seen := map[string]bool{}
	for _, id := range st.touched {
		if seen[id] {
			continue
		}
		seen[id] = true
		if i, ok := st.find(id); ok {
			if err := enc.Encode(journalLine{Put: &st.Reviews[i]}); err != nil {
				return err
			}
		}
	}
	for _, id := range st.deleted {
		if err := enc.Encode(journalLine{Del: id}); err != nil {
			return err
		}
	}
	if st.grantsTouched {
		gr := st.Grants
		if gr == nil {
			gr = []Grant{}
		}
		if err := enc.Encode(journalLine{Grants: &gr}); err != nil {
			return err
		}
	}
	var snapSize int64
	if g.snap.fi != nil {
		snapSize = g.snap.fi.Size()
	}
	if g.journalOff+int64(buf.Len()) > max(compactAt, snapSize) {
		return g.compact(st)
	}
	if buf.Len() == 0 {
		return nil
	}
	jf, err := os.OpenFile(filepath.Join(g.cfg.Dir, journalName), os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	defer jf.Close()
	if err := jf.Truncate(g.journalOff); err != nil { // cut off a torn line a crash left
		return err
	}
	data := buf.Bytes()
	if g.crashMidAppend != nil && g.crashMidAppend() { // tests: a crash half-way through the append
		jf.WriteAt(data[:len(data)/2], g.journalOff)
		return errors.New("simulated crash")
	}
	if _, err := jf.WriteAt(data, g.journalOff); err != nil {
		return err
	}
	if err := jf.Sync(); err != nil {
		return err
	}
	g.journalOff += int64(len(data))
	return nil
}

// compact writes st as the new snapshot and empties the journal.
func (g *Guard) compact(st *state) error {
	g.prune(st)
	if err := g.write(st); err != nil {
		return err
	}
	if err := os.Truncate(filepath.Join(g.cfg.Dir, journalName), 0); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	fi, err := os.Stat(filepath.Join(g.cfg.Dir, storeName))
	if err != nil {
		return err
	}
	g.snap, g.journalOff = snapStamp{fi}, 0
	return nil
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
