package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/airs-dev/airs/internal/atomicfile"
	"github.com/airs-dev/airs/internal/filelock"
	"github.com/airs-dev/airs/internal/settings"
	"github.com/airs-dev/airs/scoring"
	"github.com/airs-dev/airs/selector"
)

// LearnedFile is where an engine keeps what its ranker learned — each
// tool's recent success and latency, the user's verdicts and preferences —
// under AIRS_HOME, so a restart ranks as before.
const LearnedFile = "learned.json"

// learnedSaveEvery is how often a running engine saves new learning (and
// Close saves the rest): a kill -9 loses at most this much.
const learnedSaveEvery = 5 * time.Second

// learnedStore persists a Ranker's learned state in one JSON file.
//
// Crash safety: the file is replaced whole (temp file, fsync, rename, fsync
// of the directory), so it is always either the old or the new state.
// Size: scoring bounds it (MaxLearnedTools tools, the statistics' window
// of calls each: under ~2 MB). Several processes (`airs serve`, `airs
// chat`, `airs run`): each save takes an exclusive flock on FILE.lock,
// re-reads the file and folds in only what this process learned since it
// last loaded or saved (scoring.MergeLearned), so no process overwrites
// another's learning. A running process sees the others' learning at its
// next start.
type learnedStore struct {
	be learnedBackend
	r  *selector.StatsRanker

	mu                     sync.Mutex // one save at a time
	base                   scoring.Learned
	savedStats, savedPrefs uint64
	err                    error // last background save's error, reported by close

	stop chan struct{}
	done chan struct{}
}

// learnedBackend is where the learned state is kept: the file under
// AIRS_HOME (flock) or PostgreSQL's airs_state (a row lock), with the same
// read–merge–write in both.
type learnedBackend interface {
	// read returns the stored state (the empty state when there is none).
	read() (scoring.Learned, error)
	// update calls fn with the stored state under the backend's exclusive
	// lock and stores what fn returns (nil: nothing).
	update(fn func(stored scoring.Learned) (*scoring.Learned, error)) error
}

// openLearned loads the stored state into r and, with every > 0, saves new
// learning in the background at that period.
func openLearned(path string, r *selector.StatsRanker, every time.Duration) (*learnedStore, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	return openLearnedIn(fileLearned{path}, r, every)
}

func openLearnedIn(be learnedBackend, r *selector.StatsRanker, every time.Duration) (*learnedStore, error) {
	s := &learnedStore{be: be, r: r}
	l, err := be.read()
	if err != nil {
		return nil, err
	}
	r.Stats().Import(l.Stats)
	r.Prefs().Import(l.Prefs)
	s.base = l
	s.savedStats, s.savedPrefs = r.Stats().Version(), r.Prefs().Version()
	if every > 0 {
		s.stop, s.done = make(chan struct{}), make(chan struct{})
		go s.loop(every)
	}
	return s, nil
}

// fileLearned is the learned state in one JSON file, replaced whole under
// an exclusive flock on FILE.lock.
type fileLearned struct{ path string }

func (f fileLearned) read() (scoring.Learned, error) {
	unlock, err := filelock.LockPath(f.path + ".lock")
	if err != nil {
		return scoring.Learned{}, err
	}
	defer unlock()
	return readLearned(f.path)
}

func (f fileLearned) update(fn func(scoring.Learned) (*scoring.Learned, error)) error {
	unlock, err := filelock.LockPath(f.path + ".lock")
	if err != nil {
		return err
	}
	defer unlock()
	disk, err := readLearned(f.path)
	if err != nil {
		return err
	}
	next, err := fn(disk)
	if err != nil || next == nil {
		return err
	}
	b, err := json.Marshal(next)
	if err != nil {
		return err
	}
	if err := atomicfile.Write(f.path, b); err != nil {
		return fmt.Errorf("saving the learned ranking state: %w", err)
	}
	return nil
}

func readLearned(path string) (scoring.Learned, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		b, err = nil, nil
	}
	if err != nil {
		return scoring.Learned{V: scoring.LearnedVersion}, fmt.Errorf("the learned ranking state %s is unreadable (%v): move it away or delete it to start with no learned state", path, err)
	}
	return parseLearned(b, path, "move it away or delete it")
}

// parseLearned decodes a stored state (nil: none yet); where names it and
// fix says how to start afresh, for the message.
func parseLearned(b []byte, where, fix string) (scoring.Learned, error) {
	l := scoring.Learned{V: scoring.LearnedVersion}
	if b == nil {
		return l, nil
	}
	err := json.Unmarshal(b, &l)
	if err == nil {
		err = l.Validate()
	}
	if err != nil {
		return l, fmt.Errorf("the learned ranking state %s is unreadable (%v): %s to start with no learned state", where, err, fix)
	}
	return l, nil
}

func (s *learnedStore) loop(every time.Duration) {
	defer close(s.done)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			if err := s.save(); err != nil {
				s.mu.Lock()
				s.err = err
				s.mu.Unlock()
			}
		}
	}
}

// save merges what was learned since the last load or save into the file.
// Nothing new: nothing written.
func (s *learnedStore) save() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, pr := s.r.Stats(), s.r.Prefs()
	// Versions before the export: a change racing with it is saved next time
	// (the merge counts calls by totals, so nothing is counted twice).
	sv, pv := st.Version(), pr.Version()
	if sv == s.savedStats && pv == s.savedPrefs {
		return nil
	}
	cur := scoring.Learned{V: scoring.LearnedVersion, Stats: st.Export(), Prefs: pr.Export()}
	err := s.be.update(func(stored scoring.Learned) (*scoring.Learned, error) {
		merged := scoring.MergeLearned(stored, s.base, cur, st.Window())
		return &merged, nil
	})
	if err != nil {
		return err
	}
	s.base, s.savedStats, s.savedPrefs = cur, sv, pv
	return nil
}

// close stops the background saver and saves what is left.
func (s *learnedStore) close() error {
	if s.stop != nil {
		close(s.stop)
		<-s.done
		s.stop = nil
	}
	err := s.save()
	s.mu.Lock()
	defer s.mu.Unlock()
	if err == nil {
		err = s.err
	}
	return err
}

// loadLearning applies selection.weights from airs.yaml and loads what the
// ranker learned in earlier runs from AIRS_HOME (saved again as it learns
// more, and at Close).
func (e *Engine) loadLearning() error {
	if w := settings.Weights(e.cfg); w != nil {
		if err := e.ranker.SetWeights(*w); err != nil {
			return fmt.Errorf("selection.weights: %w", err)
		}
	}
	if learnedOnPG(e.cfg) {
		ls, err := e.openPGLearned()
		if err != nil {
			return err
		}
		e.learned = ls
		return nil
	}
	if e.cfg.Home == "" {
		return nil
	}
	ls, err := openLearned(filepath.Join(e.cfg.Home, LearnedFile), e.ranker, learnedSaveEvery)
	if err != nil {
		return err
	}
	e.learned = ls
	return nil
}
