package recommender

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/airs-dev/airs/internal/atomicfile"
	"github.com/airs-dev/airs/internal/filelock"
)

// What is learned is kept in two files under HOME/recommender: every
// answer is appended to feedback.jsonl (fsync'd before the answer returns:
// nothing acknowledged is lost), and state.json is a snapshot of the models
// with the log offset it includes, written whole and renamed into place
// (a crash leaves the old or the new one, never a torn one). On start the
// snapshot is loaded and the log replayed from its offset. Several
// processes may share HOME: each catches up on the others' answers before
// it writes a snapshot, under an exclusive lock. The log is rotated past
// maxLog bytes (after a snapshot that includes it), which bounds the disk.
const (
	stateVersion = 1
	maxLog       = 8 << 20
)

type store struct {
	dir      string
	instance string
	readOff  int64 // how far this process has applied the log (ext: the last position)
	tasks    taskFile
	// ext, when set, keeps everything instead of dir's files (Config.Store).
	ext       Store
	tasksRead int64 // ext: the tasks' revision last read
}

// Store keeps what a recommender learns outside HOME's files — store/pg's
// tables, shared by replicas on one database — with the file store's
// semantics: every answer is durable (committed) before it returns, a
// snapshot says how far into the answers' log it reaches, and each
// process catches up on the others' answers (on a Store at every sweep,
// a second apart, rather than only before a snapshot). The recommender
// encodes answers and snapshots; a Store keeps their bytes.
type Store interface {
	// AppendFeedback keeps one answer (a JSON line) at the end of the
	// log, returning once it is committed. Positions must grow in commit
	// order: a reader that saw position N has seen every answer before it.
	AppendFeedback(ctx context.Context, line []byte) error
	// FeedbackAfter calls fn with every answer after position pos, in
	// order, and returns the last position it passed (pos when none).
	FeedbackAfter(ctx context.Context, pos int64, fn func(line []byte)) (int64, error)
	// Snapshot is the newest snapshot kept (nil when none).
	Snapshot(ctx context.Context) ([]byte, error)
	// SaveSnapshot keeps snap, which includes the answers up to position
	// pos, unless the one kept already includes more.
	SaveSnapshot(ctx context.Context, pos int64, snap []byte) error
	// Tasks is every caller's task text (a cleared one has Text "") and
	// the revision they are at; TasksRevision the revision alone, which
	// changes whenever a task does.
	Tasks(ctx context.Context) ([]Task, int64, error)
	TasksRevision(ctx context.Context) (int64, error)
	// SetTask sets (Text "" clears) a caller's task.
	SetTask(ctx context.Context, t Task) error
	// Where names the store in messages.
	Where() string
}

// Task is one caller's task text, as a Store keeps it.
type Task struct {
	Caller string
	Text   string
	At     time.Time
}

// storeTimeout bounds one Store operation.
const storeTimeout = 30 * time.Second

func openExtStore(ext Store) *store {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return &store{ext: ext, instance: hex.EncodeToString(b)}
}

// catchUpShared applies the answers other replicas gave since the last
// time (r.mu held), when the learning is in a shared Store.
func (r *Recommender) catchUpShared() {
	if r.store == nil || r.store.ext == nil {
		return
	}
	if err := r.store.catchUp(r, false); err != nil {
		r.cfg.Logger.Warn("recommender: catching up on the other replicas' answers", "err", err)
	}
}

type snapshot struct {
	Version  int                     `json:"version"`
	Offset   int64                   `json:"feedback_offset"`
	Fusion   json.RawMessage         `json:"fusion"`
	Suppress map[string]*suppression `json:"suppress"`
	TextObs  []textObs               `json:"text_observations"`
	Stats    Stats                   `json:"stats"`
}

type feedbackLine struct {
	Instance string    `json:"instance"`
	At       time.Time `json:"at"`
	Caller   string    `json:"caller"`
	Tool     string    `json:"tool"`
	Context  string    `json:"context"`
	Outcome  string    `json:"outcome"`
	Features Features  `json:"features"`
	Text     string    `json:"text,omitempty"`
}

func openStore(home string) (*store, error) {
	dir := filepath.Join(home, "recommender")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("recommender: %w", err)
	}
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return &store{dir: dir, instance: hex.EncodeToString(b)}, nil
}

func (s *store) logPath() string { return filepath.Join(s.dir, "feedback.jsonl") }

// statePath names the snapshot in messages.
func (s *store) statePath() string {
	if s.ext != nil {
		return s.ext.Where() + " (snapshot)"
	}
	return filepath.Join(s.dir, "state.json")
}

// load fills r from the snapshot and the log after it (r.mu not needed:
// r is not shared yet).
func (s *store) load(r *Recommender) error {
	var b []byte
	var err error
	if s.ext != nil {
		ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
		b, err = s.ext.Snapshot(ctx)
		cancel()
		if err == nil && b == nil {
			err = os.ErrNotExist
		}
	} else {
		b, err = os.ReadFile(s.statePath())
	}
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return fmt.Errorf("recommender: reading %s: %w", s.statePath(), err)
	default:
		var snap snapshot
		if err := json.Unmarshal(b, &snap); err != nil {
			return fmt.Errorf("recommender: %s is not a snapshot (%v): move it away to start learning afresh", s.statePath(), err)
		}
		if snap.Version != stateVersion {
			return fmt.Errorf("recommender: %s has version %d, this build reads %d: move it away to start afresh", s.statePath(), snap.Version, stateVersion)
		}
		if len(snap.Fusion) > 0 {
			if err := r.fusion.UnmarshalJSON(snap.Fusion); err != nil {
				return fmt.Errorf("recommender: %s: fusion: %w", s.statePath(), err)
			}
		}
		if snap.Suppress != nil {
			r.suppress = snap.Suppress
		}
		r.textObs, r.stats, s.readOff = snap.TextObs, snap.Stats, snap.Offset
	}
	if err := s.catchUp(r, true); err != nil {
		return err
	}
	if m, err := s.readTasks(); err == nil {
		for name, te := range m {
			r.caller(name).task = te.Text
		}
	}
	s.markTasksRead()
	return nil
}

// catchUp applies the log's lines from readOff on: every line when all,
// else only other processes' (this one applied its own as it wrote them).
func (s *store) catchUp(r *Recommender, all bool) error {
	if s.ext != nil {
		ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
		defer cancel()
		pos, err := s.ext.FeedbackAfter(ctx, s.readOff, func(line []byte) {
			var fb feedbackLine
			if json.Unmarshal(line, &fb) == nil && (all || fb.Instance != s.instance) {
				r.replay(fb)
			}
		})
		s.readOff = pos // what was applied stays applied, error or not
		if err != nil {
			return fmt.Errorf("recommender: %w", err)
		}
		return nil
	}
	f, err := os.Open(s.logPath())
	if errors.Is(err, os.ErrNotExist) {
		s.readOff = 0
		return nil
	}
	if err != nil {
		return fmt.Errorf("recommender: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if st.Size() < s.readOff { // rotated by another process
		s.readOff = 0
	}
	if _, err := f.Seek(s.readOff, io.SeekStart); err != nil {
		return err
	}
	rd := bufio.NewReader(f)
	off := s.readOff
	for {
		line, err := rd.ReadBytes('\n')
		if err != nil { // EOF, or a torn last line a crash left: stop before it
			break
		}
		off += int64(len(line))
		var fb feedbackLine
		if json.Unmarshal(line, &fb) != nil {
			continue
		}
		if all || fb.Instance != s.instance {
			r.replay(fb)
		}
	}
	s.readOff = off
	return nil
}

// append writes one answer durably (the file is opened for each line, so
// a rotation by another process never strands a writer on the old file).
func (s *store) append(fb feedbackLine) error {
	fb.Instance = s.instance
	b, err := json.Marshal(fb)
	if err != nil {
		return err
	}
	if s.ext != nil {
		ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
		defer cancel()
		return s.ext.AppendFeedback(ctx, b)
	}
	f, err := os.OpenFile(s.logPath(), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	_, werr := f.Write(append(b, '\n'))
	serr := f.Sync()
	cerr := f.Close()
	return errors.Join(werr, serr, cerr)
}

// snapshot writes state.json under the lock, after catching up (r.mu held).
func (s *store) snapshot(r *Recommender) error {
	if s.ext == nil {
		unlock, err := filelock.LockPath(filepath.Join(s.dir, "lock"))
		if err != nil {
			return err
		}
		defer unlock()
	}
	if err := s.catchUp(r, false); err != nil {
		return err
	}
	fus, err := r.fusion.MarshalJSON()
	if err != nil {
		return err
	}
	now := r.cfg.Now()
	for k, sp := range r.suppress {
		if !now.Before(sp.Until) {
			delete(r.suppress, k)
		}
	}
	// A Store's log is not rotated: its positions only grow, and a
	// snapshot names the one it includes.
	rotate := s.ext == nil && s.readOff > maxLog
	off := s.readOff
	if rotate {
		off = 0
	}
	b, err := json.Marshal(snapshot{Version: stateVersion, Offset: off, Fusion: fus, Suppress: r.suppress, TextObs: r.textObs, Stats: r.stats})
	if err != nil {
		return err
	}
	if s.ext != nil {
		ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
		defer cancel()
		return s.ext.SaveSnapshot(ctx, off, b)
	}
	if err := atomicfile.Write(s.statePath(), b); err != nil {
		return err
	}
	if rotate {
		if err := os.Rename(s.logPath(), s.logPath()+".old"); err != nil {
			return err
		}
		s.readOff = 0
	}
	return nil
}

// replay applies one logged answer to the models.
func (r *Recommender) replay(fb feedbackLine) {
	o, ok := parseOutcome(fb.Outcome)
	if !ok {
		return
	}
	r.fusion.Update(fb.Tool, fb.Features, o)
	switch o {
	case Accepted:
		if fb.Text != "" {
			r.textObs = appendBounded(r.textObs, textObs{Text: fb.Text, Tool: fb.Tool}, maxTextObs)
			if r.text != nil {
				r.text.Observe(fb.Text, fb.Tool)
			}
		}
	case Dismissed:
		r.dismissed(fb.Caller, fb.Context, fb.Tool, fb.At)
	}
}

func outcomeName(o Outcome) string {
	switch o {
	case Accepted:
		return "accepted"
	case Dismissed:
		return "dismissed"
	}
	return "ignored"
}

func parseOutcome(s string) (Outcome, bool) {
	switch s {
	case "accepted":
		return Accepted, true
	case "dismissed":
		return Dismissed, true
	case "ignored":
		return Ignored, true
	}
	return 0, false
}
