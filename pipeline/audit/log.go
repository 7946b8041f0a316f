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
)

// ErrClosed is returned by Append after Close.
var ErrClosed = errors.New("audit: log closed")

// ErrCorrupt is returned by Open when the last complete line is not a
// record: the log needs a person (run Verify), not a guess.
var ErrCorrupt = errors.New("audit: log corrupt")

// Log is an open audit log. Append is safe for concurrent use.
type Log struct {
	f    *os.File
	path string

	mu      sync.Mutex
	pending *batch // records queued for the next flush
	closed  bool
	err     error // sticky: once a write or sync failed, nothing more is acknowledged

	wake chan struct{} // cap 1: "pending is not empty"
	stop chan struct{}
	done chan struct{}

	// Owned by the writer goroutine.
	seq  uint64
	prev [32]byte
	buf  []byte

	recovered int64 // bytes of torn tail removed by Open
}

// batch is one group commit: the records, and a channel closed once they
// are durable (or failed, with err set).
type batch struct {
	recs   []*Record
	bodies [][]byte
	done   chan struct{}
	err    error
}

func newBatch() *batch { return &batch{done: make(chan struct{})} }

// Open opens (creating if needed) the log at path, recovers a torn tail (see
// the package doc), takes an exclusive lock on it (two writers would fork
// the chain) and starts the writer.
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
	tail, err := recoverTail(f)
	if err != nil {
		f.Close()
		return nil, err
	}
	l.seq, l.prev, l.recovered = tail.seq, tail.hash, tail.torn
	go l.run()
	return l, nil
}

// Recovered is how many bytes of torn tail Open truncated (0 normally).
func (l *Log) Recovered() int64 { return l.recovered }

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

// run is the single writer: take the whole pending batch, write it, sync
// once, release its waiters. Records queued meanwhile form the next batch.
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
			l.flush(b)
		}
		if stopping {
			return
		}
	}
}

func (l *Log) flush(b *batch) {
	l.mu.Lock()
	err := l.err
	l.mu.Unlock()
	if err == nil {
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
		if _, err = l.f.Write(buf); err == nil {
			err = syncData(l.f)
		}
		if err == nil {
			l.seq, l.prev = seq, prev
		} else {
			err = fmt.Errorf("audit: write %s: %w", l.path, err)
			l.mu.Lock()
			l.err = err
			l.mu.Unlock()
		}
		if cap(buf) <= 1<<20 {
			l.buf = buf
		}
	}
	b.err = err
	close(b.done)
}

// Close flushes what is queued, stops the writer and closes the file.
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
	return l.f.Close()
}
