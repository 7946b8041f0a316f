package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/airs-dev/airs/internal/filelock"
)

// Options configure a Recorder.
type Options struct {
	// Disabled turns recording off: Record returns at once and nothing is
	// written (the log file is not even opened).
	Disabled bool
	// Redact lists parameter names (case-insensitive) whose values are
	// replaced by "[redacted]" wherever they occur in arguments.
	Redact []string
	// MaxBatch bounds how many records one write+fsync carries (default 256).
	MaxBatch int
	// Now is the clock for records without a time (default time.Now).
	Now func() time.Time
}

// ErrClosed is returned by Record after Close.
var ErrClosed = errors.New("session: recorder closed")

type pending struct {
	line []byte
	meta Entry      // for a Sink: the record's fields it indexes
	done chan error // buffered: the writer never blocks on an abandoned waiter
}

// Entry is one encoded record as a Sink receives it: the line exactly as
// the file log would hold it (FORMAT.md, with its newline), and the fields
// a database indexes, copied from the (redacted) record.
type Entry struct {
	ID, Kind, Ref, Session, Channel, Caller string
	Time                                    time.Time
	Line                                    []byte
}

// Sink keeps records somewhere other than a file (store/pg's session log,
// shared by replicas). Append stores a batch, in order, and returns only
// once it is durable (committed): the Recorder acknowledges the batch's
// records after it. Append is called by one goroutine at a time per
// Recorder; several Recorders (replicas) may share one Sink's storage.
type Sink interface {
	Append(ctx context.Context, batch []Entry) error
}

// SinkTimeout bounds one batch's Append: a database that does not answer
// fails the batch's records (unacknowledged) rather than hanging the turn.
const SinkTimeout = 30 * time.Second

// Recorder appends records to a session log. It is safe for concurrent
// use: records are encoded (and redacted) by the caller's goroutine, then
// one writer goroutine writes whatever is queued as one batch, fsyncs, and
// only then acknowledges each record of the batch. Record returning nil
// therefore means the record is on disk.
//
// Several Recorders, in one process or several (`airs serve` and `airs
// chat` on one AIRS_HOME), may append to one log: each batch is written
// and fsynced under an exclusive flock on the file, after cutting a torn
// line that a writer which died mid-write left, so lines never interleave.
//
// A nil *Recorder, or one opened with Options.Disabled, records nothing.
type Recorder struct {
	path    string
	f       *os.File
	sink    Sink // instead of f (OpenSink)
	redact  *Redactor
	now     func() time.Time
	maxB    int
	enabled atomic.Bool

	mu      sync.RWMutex // guards closed and sends on queue
	closed  bool
	queue   chan *pending
	writerD chan struct{}

	errMu     sync.Mutex
	sticky    error // first write/fsync error: every later Record fails
	recovered int64 // bytes of torn last lines cut off (on open, or before a batch)
	size      int64 // the file's size after this Recorder's last write
}

// Open opens (creating it and its directory if needed) the log at path for
// appending. A last line without its newline — a write torn by a crash,
// never acknowledged — is cut off first; Recovered says how many bytes.
func Open(path string, opt Options) (*Recorder, error) {
	r := &Recorder{path: path, redact: NewRedactor(opt.Redact), now: opt.Now, maxB: opt.MaxBatch}
	if r.now == nil {
		r.now = time.Now
	}
	if r.maxB <= 0 {
		r.maxB = 256
	}
	if opt.Disabled {
		return r, nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	_, statErr := os.Stat(path)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	if err := filelock.Lock(f); err != nil {
		f.Close()
		return nil, err
	}
	size, cut, err := recoverTail(f)
	if uerr := filelock.Unlock(f); err == nil {
		err = uerr
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("session: recovering %s: %w", path, err)
	}
	if os.IsNotExist(statErr) {
		syncDir(filepath.Dir(path)) // the new file's directory entry
	}
	r.f, r.size, r.recovered = f, size, cut
	r.queue = make(chan *pending, 1024)
	r.writerD = make(chan struct{})
	r.enabled.Store(true)
	go r.writer()
	return r, nil
}

// OpenSink opens a Recorder that appends to sink instead of a file; name
// says where that is (Path returns it, e.g. for "recording this session
// to …"). Batching, redaction and acknowledgement are the file Recorder's:
// Record returns nil only after sink.Append committed the record. A sink
// error is not sticky (a database comes back; a file after a failed fsync
// is not trusted again): that batch's records fail, the next batch tries.
func OpenSink(sink Sink, name string, opt Options) *Recorder {
	r := &Recorder{path: name, redact: NewRedactor(opt.Redact), now: opt.Now, maxB: opt.MaxBatch}
	if r.now == nil {
		r.now = time.Now
	}
	if r.maxB <= 0 {
		r.maxB = 256
	}
	if opt.Disabled || sink == nil {
		return r
	}
	r.sink = sink
	r.queue = make(chan *pending, 1024)
	r.writerD = make(chan struct{})
	r.enabled.Store(true)
	go r.writer()
	return r
}

// recoverTail truncates f after its last newline when the file does not end
// with one, and positions f at the end. It returns the good size and the
// number of bytes cut.
func recoverTail(f *os.File) (size, cut int64, err error) {
	st, err := f.Stat()
	if err != nil {
		return 0, 0, err
	}
	size = st.Size()
	if size == 0 {
		return 0, 0, nil
	}
	// Scan back for the last '\n'.
	const chunk = 64 << 10
	end := size
	good := int64(0)
	buf := make([]byte, chunk)
	for end > 0 {
		start := max(0, end-chunk)
		n, err := f.ReadAt(buf[:end-start], start)
		if err != nil && err != io.EOF {
			return 0, 0, err
		}
		found := false
		for i := n - 1; i >= 0; i-- {
			if buf[i] == '\n' {
				good, found = start+int64(i)+1, true
				break
			}
		}
		if found {
			break
		}
		end = start
	}
	if good < size {
		if err := f.Truncate(good); err != nil {
			return 0, 0, err
		}
		if err := f.Sync(); err != nil {
			return 0, 0, err
		}
	}
	if _, err := f.Seek(good, io.SeekStart); err != nil {
		return 0, 0, err
	}
	return good, size - good, nil
}

func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
}

// Path is the log's path ("" when disabled).
func (r *Recorder) Path() string {
	if r == nil || (r.f == nil && r.sink == nil) {
		return ""
	}
	return r.path
}

// Recovered is the number of bytes of torn last lines this Recorder cut
// off: at Open, or before a batch after another writer died mid-write.
func (r *Recorder) Recovered() int64 {
	if r == nil {
		return 0
	}
	r.errMu.Lock()
	defer r.errMu.Unlock()
	return r.recovered
}

// Enabled reports whether records are being written.
func (r *Recorder) Enabled() bool {
	return r != nil && (r.f != nil || r.sink != nil) && r.enabled.Load()
}

// SetEnabled pauses (false) or resumes (true) recording at run time. A
// recorder opened with Options.Disabled stays off.
func (r *Recorder) SetEnabled(on bool) {
	if r != nil {
		r.enabled.Store(on)
	}
}

// Record fills in V, Kind ("request"), ID (a new random one) and Time when
// they are zero, redacts, appends, and returns the record's ID once the
// record is on disk. With recording off it returns the ID and writes
// nothing. If ctx ends first, Record returns ctx.Err() and the record may
// or may not be written.
func (r *Recorder) Record(ctx context.Context, rec Record) (string, error) {
	if rec.V == 0 {
		rec.V = Version
	}
	if rec.Kind == "" {
		rec.Kind = KindRequest
	}
	if rec.ID == "" {
		rec.ID = NewID()
	}
	if !r.Enabled() {
		return rec.ID, nil
	}
	if rec.Time.IsZero() {
		rec.Time = r.now()
	}
	if rec.Kind == KindFeedback && (rec.Ref == "" || rec.Feedback == nil) {
		return rec.ID, errors.New("session: a feedback record needs Ref and Feedback")
	}
	rec = r.redact.Record(rec)
	line, err := json.Marshal(rec)
	if err != nil {
		return rec.ID, fmt.Errorf("session: encoding record: %w", err)
	}
	line = append(line, '\n')
	if err := r.stickyErr(); err != nil {
		return rec.ID, err
	}
	p := &pending{line: line, done: make(chan error, 1)}
	if r.sink != nil {
		p.meta = Entry{ID: rec.ID, Kind: rec.Kind, Ref: rec.Ref, Session: rec.Session, Channel: rec.Channel,
			Caller: rec.Caller, Time: rec.Time, Line: line}
	}
	r.mu.RLock()
	if r.closed {
		r.mu.RUnlock()
		return rec.ID, ErrClosed
	}
	select {
	case r.queue <- p:
		r.mu.RUnlock()
	case <-ctx.Done():
		r.mu.RUnlock()
		return rec.ID, ctx.Err()
	}
	select {
	case err := <-p.done:
		return rec.ID, err
	case <-ctx.Done():
		return rec.ID, ctx.Err()
	}
}

// Feedback appends a feedback record for the request with ID ref.
func (r *Recorder) Feedback(ctx context.Context, ref string, fb Feedback) error {
	if fb.Time.IsZero() && r != nil {
		fb.Time = r.now()
	}
	_, err := r.Record(ctx, Record{Kind: KindFeedback, Ref: ref, Feedback: &fb})
	return err
}

func (r *Recorder) stickyErr() error {
	r.errMu.Lock()
	defer r.errMu.Unlock()
	return r.sticky
}

// writer is the one goroutine that touches the file.
func (r *Recorder) writer() {
	defer close(r.writerD)
	batch := make([]*pending, 0, r.maxB)
	var buf []byte
	var entries []Entry
	for p := range r.queue {
		batch = append(batch[:0], p)
	drain:
		for len(batch) < r.maxB {
			select {
			case q, ok := <-r.queue:
				if !ok {
					break drain
				}
				batch = append(batch, q)
			default:
				break drain
			}
		}
		var err error
		if r.sink != nil {
			entries = entries[:0]
			for _, q := range batch {
				entries = append(entries, q.meta)
			}
			ctx, cancel := context.WithTimeout(context.Background(), SinkTimeout)
			err = r.sink.Append(ctx, entries)
			cancel()
			if err != nil {
				err = fmt.Errorf("session: writing to %s: %w", r.path, err)
			}
		} else {
			buf = buf[:0]
			for _, q := range batch {
				buf = append(buf, q.line...)
			}
			err = r.stickyErr()
			if err == nil {
				err = r.writeBatch(buf)
			}
		}
		for _, q := range batch {
			q.done <- err
		}
	}
}

// writeBatch writes and fsyncs one batch under the file lock. A size other
// than the one this Recorder left means another writer appended (nothing
// to do: O_APPEND writes at the end) or died mid-write (its torn line is
// cut first, so the batch starts on a line of its own).
func (r *Recorder) writeBatch(buf []byte) (err error) {
	var n int
	if err = filelock.Lock(r.f); err == nil {
		n, err = r.writeLocked(buf)
		if uerr := filelock.Unlock(r.f); err == nil {
			err = uerr
		}
	}
	r.errMu.Lock()
	defer r.errMu.Unlock()
	if err != nil {
		r.sticky = fmt.Errorf("session: writing %s: %w", r.path, err)
		return r.sticky
	}
	r.size += int64(n)
	return nil
}

func (r *Recorder) writeLocked(buf []byte) (int, error) {
	st, err := r.f.Stat()
	if err != nil {
		return 0, err
	}
	if st.Size() != r.size {
		size, cut, err := recoverTail(r.f)
		if err != nil {
			return 0, err
		}
		r.errMu.Lock()
		r.size, r.recovered = size, r.recovered+cut
		r.errMu.Unlock()
	}
	n, err := r.f.Write(buf)
	if err == nil {
		err = r.f.Sync()
	}
	if err != nil && n > 0 {
		// Cut a partial (or unsynced) write while the tail is still ours,
		// so the log stays line-aligned; after a failed fsync nothing more
		// is trusted (the error is sticky).
		_ = r.f.Truncate(r.size)
	}
	return n, err
}

// Close waits for queued records to be written and closes the log.
func (r *Recorder) Close() error {
	if r == nil || (r.f == nil && r.sink == nil) {
		return nil
	}
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true
	close(r.queue)
	r.mu.Unlock()
	<-r.writerD
	if r.f == nil {
		return nil // the sink's owner closes it
	}
	err := r.f.Close()
	if s := r.stickyErr(); s != nil {
		return s
	}
	return err
}
