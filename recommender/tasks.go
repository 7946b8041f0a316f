package recommender

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/airs-dev/airs/internal/atomicfile"
	"github.com/airs-dev/airs/internal/filelock"
)

// Tasks live in HOME/recommender/tasks.json, one text per caller, so that
// `airs task set` in one process steers the recommender of another (a
// running `airs serve` picks a change up within a second, at its sweep).

// MaxTaskBytes bounds one task text.
const MaxTaskBytes = 4 << 10

type taskEntry struct {
	Text string    `json:"text"`
	At   time.Time `json:"at"`
}

type taskFile struct {
	stamp time.Time // mtime last read
	size  int64
}

func (s *store) tasksPath() string {
	if s.ext != nil {
		return s.ext.Where() + " (tasks)"
	}
	return filepath.Join(s.dir, "tasks.json")
}

func (s *store) readTasks() (map[string]taskEntry, error) {
	if s.ext != nil {
		ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
		defer cancel()
		ts, rev, err := s.ext.Tasks(ctx)
		if err != nil {
			return nil, err
		}
		m := make(map[string]taskEntry, len(ts))
		for _, t := range ts {
			if t.Text != "" { // a cleared task is kept as "" (its revision tells the others)
				m[t.Caller] = taskEntry{Text: t.Text, At: t.At}
			}
		}
		s.tasksRead = rev
		return m, nil
	}
	b, err := os.ReadFile(s.tasksPath())
	if errors.Is(err, os.ErrNotExist) {
		return map[string]taskEntry{}, nil
	}
	if err != nil {
		return nil, err
	}
	m := map[string]taskEntry{}
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	return m, nil
}

// writeTask sets (or with "" clears) caller's task in the file.
func (s *store) writeTask(caller, text string, now time.Time) error {
	if s.ext != nil {
		ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
		defer cancel()
		return s.ext.SetTask(ctx, Task{Caller: caller, Text: text, At: now})
	}
	unlock, err := filelock.LockPath(filepath.Join(s.dir, "lock"))
	if err != nil {
		return err
	}
	defer unlock()
	m, err := s.readTasks()
	if err != nil {
		m = map[string]taskEntry{} // an unreadable file is replaced, not kept broken
	}
	if text == "" {
		delete(m, caller)
	} else {
		m[caller] = taskEntry{Text: text, At: now}
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.Write(s.tasksPath(), b)
}

// tasksChanged reports whether tasks.json changed since it was last read.
func (s *store) tasksChanged() bool {
	if s.ext != nil {
		ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
		defer cancel()
		rev, err := s.ext.TasksRevision(ctx)
		return err == nil && rev != s.tasksRead
	}
	st, err := os.Stat(s.tasksPath())
	if err != nil {
		return !s.tasks.stamp.IsZero()
	}
	return !st.ModTime().Equal(s.tasks.stamp) || st.Size() != s.tasks.size
}

func (s *store) markTasksRead() {
	if s.ext != nil {
		return // readTasks noted the revision it read
	}
	if st, err := os.Stat(s.tasksPath()); err == nil {
		s.tasks = taskFile{stamp: st.ModTime(), size: st.Size()}
	} else {
		s.tasks = taskFile{}
	}
}

// normalizeTask trims and bounds a task text.
func normalizeTask(text string) (string, error) {
	text = strings.TrimSpace(text)
	if len(text) > MaxTaskBytes {
		return "", errors.New("recommender: a task text holds at most 4 KiB")
	}
	return text, nil
}

// reloadTasks applies tasks.json to the callers (r.mu held).
func (r *Recommender) reloadTasks() {
	if r.store == nil || !r.store.tasksChanged() {
		return
	}
	m, err := r.store.readTasks()
	r.store.markTasksRead()
	if err != nil {
		r.cfg.Logger.Warn("recommender: tasks file unreadable", "path", r.store.tasksPath(), "err", err)
		return
	}
	for name, cs := range r.callers {
		if t := m[name].Text; t != cs.task {
			cs.task = t
			r.update(name, cs)
		}
	}
	for name, te := range m {
		if _, ok := r.callers[name]; !ok {
			cs := r.caller(name)
			cs.task = te.Text
			r.update(name, cs)
		}
	}
}

// Tasks reads and writes the task texts without a running recommender
// (airs task).
type Tasks struct{ s *store }

// OpenTasksIn opens the task texts kept in st (store/pg).
func OpenTasksIn(st Store) *Tasks { return &Tasks{s: openExtStore(st)} }

// OpenTasks opens the task texts under home.
func OpenTasks(home string) (*Tasks, error) {
	if home == "" {
		return nil, errors.New("recommender: no AIRS_HOME to keep the task in")
	}
	s, err := openStore(home)
	if err != nil {
		return nil, err
	}
	return &Tasks{s: s}, nil
}

// Set sets caller's task ("" clears it).
func (t *Tasks) Set(caller, text string) error {
	text, err := normalizeTask(text)
	if err != nil {
		return err
	}
	return t.s.writeTask(caller, text, time.Now())
}

// Get is caller's task ("" when none).
func (t *Tasks) Get(caller string) (string, error) {
	m, err := t.s.readTasks()
	if err != nil {
		return "", fmt.Errorf("recommender: %s: %w", t.s.tasksPath(), err)
	}
	return m[caller].Text, nil
}
