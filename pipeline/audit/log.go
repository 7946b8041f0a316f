package audit

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
)

// ErrClosed is returned by Append after Close.
var ErrClosed = errors.New("audit: log closed")

// ErrCorrupt is returned by Open when the last complete line is not a
// record: the log needs a person (run Verify), not a guess.
var ErrCorrupt = errors.New("audit: log corrupt")

// Syncers is how many fdatasync calls may be in flight at once. Concurrent
// syncs of one file are batched by the filesystem's journal (on ext4, four
// concurrent fdatasyncs complete ~7× as many syncs per second as one), so
// overlapping them multiplies durable throughput and cuts the wait.
const Syncers = 4

// Log is an open audit log. Append is safe for concurrent use.
//
// Two stages: one writer goroutine encodes the chain and writes batches in
// order (so the hash chain is the file order); Syncers goroutines make them
// durable. A sync covers every batch written before it started, so when one
// returns, every batch up to that point is released — whichever syncer
// started it. Each syncer uses its own file descriptor: Linux reports a
// writeback error once per open file description, so a shared descriptor
// could let one syncer's success hide another's failure.
type Log struct {
	f    *os.File
	path string

	mu      sync.Mutex
	cond    *sync.Cond // syncers wait on it for written batches
	pending *batch     // records queued for the next write
	closed  bool
	err     error // sticky: once a write or sync failed, nothing more is acknowledged

	written     []*batch // written, not yet durable, in order
	writtenIdx  uint64   // index of the last written batch
	syncStarted uint64   // highest index covered by a sync already started
	writerDone  bool

	wake    chan struct{} // cap 1: "pending is not empty"
	stop    chan struct{}
	done    chan struct{}
	syncWG  sync.WaitGroup
	syncFDs []*os.File

	// Owned by the writer goroutine.
	seq  uint64
	prev [32]byte
	buf  []byte

	recovered int64        // bytes of torn tail removed by Open
	syncs     atomic.Int64 // fdatasync calls made
}

// batch is one write: the records, and a channel closed once they are
// durable (or failed, with err set).
type batch struct {
	recs   []*Record
	bodies [][]byte
	idx    uint64
	done   chan struct{}
	err    error
}

func newBatch() *batch { return &batch{done: make(chan struct{})} }

// Open opens (creating if needed) the log at path, recovers a torn tail (see
// the package doc), takes an exclusive lock on it (two writers would fork
// the chain) and starts the writer and syncers.
func Open(path string) (*Log, error) {
	_, statErr := os.Stat(path)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	if err := lockFile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("audit: %s is in use by another writer: %w", path, err)
	}
	if os.IsNotExist(statErr) {
		// Make the new file's directory entry durable too.
		if d, err := os.Open(filepath.Dir(path)); err == nil {
			_ = d.Sync()
			d.Close()
		}
	}
	l := &Log{f: f, path: path, pending: newBatch(), wake: make(chan struct{}, 1),
		stop: make(chan struct{}), done: make(chan struct{})}
	l.cond = sync.NewCond(&l.mu)
	tail, err := recoverTail(f)
	if err != nil {
		f.Close()
		return nil, err
	}
	l.seq, l.prev, l.recovered = tail.seq, tail.hash, tail.torn
	for range Syncers {
		sf, err := os.OpenFile(path, os.O_RDWR, 0)
		if err != nil {
			l.closeFiles()
			return nil, err
		}
		l.syncFDs = append(l.syncFDs, sf)
	}
	go l.run()
	for _, sf := range l.syncFDs {
		l.syncWG.Add(1)
		go l.syncer(sf)
	}
	return l, nil
}

func (l *Log) closeFiles() {
	for _, sf := range l.syncFDs {
		sf.Close()
	}
	l.f.Close()
}

// Recovered is how many bytes of torn tail Open truncated (0 normally).
func (l *Log) Recovered() int64 { return l.recovered }

// Syncs is how many fdatasync calls have completed.
func (l *Log) Syncs() int64 { return l.syncs.Load() }

// Path is the file the log writes.
func (l *Log) Path() string { return l.path }

// Append queues r, waits until it is durable, and fills r.Seq and r.Prev.
// It returns an error when the record may not be on disk.
func (l *Log) Append(r *Record) error {
	body := r.appendBody(make([]byte, 0, 256))
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return ErrClosed
	}
	if l.err != nil {
		err := l.err
		l.mu.Unlock()
		return err
	}
	b := l.pending
	b.recs = append(b.recs, r)
	b.bodies = append(b.bodies, body)
	first := len(b.recs) == 1
	l.mu.Unlock()
	if first {
		select {
		case l.wake <- struct{}{}:
		default:
		}
	}
	<-b.done
	return b.err
}

// run is the single writer: take the whole pending batch, chain and write
// it, hand it to the syncers. Records queued meanwhile form the next batch.
func (l *Log) run() {
	defer close(l.done)
	for {
		stopping := false
		select {
		case <-l.wake:
		case <-l.stop:
			stopping = true
		}
		l.mu.Lock()
		b := l.pending
		if len(b.recs) > 0 {
			l.pending = newBatch()
		}
		l.mu.Unlock()
		if len(b.recs) > 0 {
			l.write(b)
		}
		if stopping {
			l.mu.Lock()
			l.writerDone = true
			l.cond.Broadcast()
			l.mu.Unlock()
			return
		}
	}
}

func (l *Log) write(b *batch) {
	l.mu.Lock()
	err := l.err
	l.mu.Unlock()
	if err != nil {
		b.err = err
		close(b.done)
		return
	}
	buf := l.buf[:0]
	seq, prev := l.seq, l.prev
	var hexPrev [64]byte
	for i, body := range b.bodies {
		seq++
		hex.Encode(hexPrev[:], prev[:])
		start := len(buf)
		buf = append(buf, `{"seq":`...)
		buf = strconv.AppendUint(buf, seq, 10)
		buf = append(buf, `,"prev":"`...)
		buf = append(buf, hexPrev[:]...)
		buf = append(buf, `",`...)
		buf = append(buf, body...)
		prev = sha256.Sum256(buf[start:])
		buf = append(buf, '\n')
		b.recs[i].Seq, b.recs[i].Prev = seq, string(hexPrev[:])
	}
	_, err = l.f.Write(buf)
	if cap(buf) <= 1<<20 {
		l.buf = buf
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if err != nil {
		// A partial write may be on disk: stop acknowledging; the next Open
		// truncates the torn tail.
		l.err = fmt.Errorf("audit: write %s: %w", l.path, err)
		b.err = l.err
		close(b.done)
		return
	}
	l.seq, l.prev = seq, prev
	l.writtenIdx++
	b.idx = l.writtenIdx
	l.written = append(l.written, b)
	l.cond.Signal()
}

// syncer makes written batches durable: it syncs when something was written
// after the last sync started, then releases every batch that sync covers.
func (l *Log) syncer(f *os.File) {
	defer l.syncWG.Done()
	l.mu.Lock()
	defer l.mu.Unlock()
	for {
		for l.writtenIdx == l.syncStarted && !l.writerDone {
			l.cond.Wait()
		}
		if l.writtenIdx == l.syncStarted { // writer done, nothing left
			return
		}
		upto := l.writtenIdx
		l.syncStarted = upto
		l.mu.Unlock()
		err := syncData(f)
		l.syncs.Add(1)
		l.mu.Lock()
		if err != nil && l.err == nil {
			l.err = fmt.Errorf("audit: sync %s: %w", l.path, err)
		}
		for len(l.written) > 0 && l.written[0].idx <= upto {
			b := l.written[0]
			l.written[0] = nil
			l.written = l.written[1:]
			b.err = l.err
			close(b.done)
		}
	}
}

// Close flushes what is queued, stops the writer and syncers and closes the
// files.
func (l *Log) Close() error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil
	}
	l.closed = true
	l.mu.Unlock()
	close(l.stop)
	<-l.done
	l.syncWG.Wait()
	var err error
	for _, sf := range l.syncFDs {
		err = errors.Join(err, sf.Close())
	}
	return errors.Join(err, l.f.Close())
}
