package audit

import (
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"

	"github.com/airs-dev/airs/internal/filelock"
)

// ErrClosed is returned by Append after Close.
var ErrClosed = errors.New("audit: log closed")

// ErrCorrupt is returned by Open when the last complete line is not a
// record: the log needs a person (run Verify), not a guess.
var ErrCorrupt = errors.New("audit: log corrupt")

// Syncers is how many fdatasync calls may be in flight at once. Concurrent
// syncs of one file are batched by the filesystem's journal (on ext4
// several concurrent fdatasyncs complete in about the time of one), so
// overlapping them multiplies durable throughput and cuts the wait
// (BenchmarkAppend measures it).
const Syncers = 4

// Log is an open audit log. Append is safe for concurrent use, and several
// Logs — in one process or in several — may append to the same file (see
// "Several writers" in the package doc).
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

	q *Batcher // the records queued for the next write

	mu   sync.Mutex
	cond *sync.Cond // syncers wait on it for written batches
	err  error      // sticky: once a write or sync failed, nothing more is acknowledged

	written     []*Batch // written, not yet durable, in order
	writtenIdx  uint64   // index of the last written batch
	syncStarted uint64   // highest index covered by a sync already started
	writerDone  bool

	done    chan struct{}
	syncWG  sync.WaitGroup
	syncFDs []*os.File

	// Owned by the writer goroutine.
	seq  uint64
	prev [32]byte
	end  int64 // file size after this Log's last write: the chain tail is ours while the size is this
	buf  []byte

	recovered atomic.Int64 // bytes of torn tail removed (by Open, or under the lock later)
	syncs     atomic.Int64 // fdatasync calls made
	rereads   atomic.Int64 // batches that found another writer's records at the tail
}

// Open opens (creating if needed) the log at path, recovers a torn tail (see
// the package doc) and starts the writer and syncers. Other processes may
// have the same log open: every batch is chained and written under an
// exclusive lock on the file, after re-reading the tail another writer may
// have extended.
func Open(path string) (*Log, error) {
	_, statErr := os.Stat(path)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	if os.IsNotExist(statErr) {
		// Make the new file's directory entry durable too.
		if d, err := os.Open(filepath.Dir(path)); err == nil {
			_ = d.Sync()
			d.Close()
		}
	}
	l := &Log{f: f, path: path, q: NewBatcher(ErrClosed), done: make(chan struct{})}
	l.cond = sync.NewCond(&l.mu)
	if err := l.lock(); err != nil {
		f.Close()
		return nil, err
	}
	err = l.readTail()
	if uerr := filelock.Unlock(f); err == nil && uerr != nil {
		err = fmt.Errorf("audit: %w", uerr)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
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

// lock takes the exclusive lock every writer holds while it extends the
// chain. Holders keep it only for one batch's tail check, hashing and
// write(2), never across an fsync. Where there is no file lock
// (filelock.Supported), several processes appending to one log could fork
// the chain: there one process at a time must write it.
func (l *Log) lock() error {
	if err := filelock.Lock(l.f); err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	return nil
}

// readTail (under the lock) repairs a torn tail and takes the chain's end
// from the file: the last record's seq and hash, and the file's size.
func (l *Log) readTail() error {
	tail, err := recoverTail(l.f)
	if err != nil {
		return err
	}
	l.seq, l.prev, l.end = tail.seq, tail.hash, tail.size
	l.recovered.Add(tail.torn)
	return nil
}

func (l *Log) closeFiles() {
	for _, sf := range l.syncFDs {
		sf.Close()
	}
	l.f.Close()
}

// Recovered is how many bytes of torn tail this Log truncated (0
// normally): at Open, or later under the lock after another writer crashed
// mid-write.
func (l *Log) Recovered() int64 { return l.recovered.Load() }

// Rereads is how many batches found that another writer had appended since
// this Log's last write, and so re-read the chain's tail.
func (l *Log) Rereads() int64 { return l.rereads.Load() }

// Syncs is how many fdatasync calls have completed.
func (l *Log) Syncs() int64 { return l.syncs.Load() }

// Path is the file the log writes.
func (l *Log) Path() string { return l.path }

// Append queues r, waits until it is durable, and fills r.Seq and r.Prev.
// It returns an error when the record may not be on disk.
func (l *Log) Append(r *Record) error {
	body := r.AppendBody(make([]byte, 0, 256))
	l.mu.Lock()
	err := l.err
	l.mu.Unlock()
	if err != nil {
		return err // a record queued while err was being set fails in write
	}
	return l.q.Add(r, body)
}

// run is the single writer: take the whole pending batch, chain and write
// it, hand it to the syncers. Records queued meanwhile form the next batch.
func (l *Log) run() {
	defer close(l.done)
	for {
		b, closing := l.q.Take(0, 0)
		if b != nil {
			l.write(b)
		}
		if closing {
			l.mu.Lock()
			l.writerDone = true
			l.cond.Broadcast()
			l.mu.Unlock()
			return
		}
	}
}

func (l *Log) write(b *Batch) {
	l.mu.Lock()
	err := l.err
	l.mu.Unlock()
	if err == nil {
		err = l.writeLocked(b)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if err != nil {
		if l.err == nil {
			l.err = err
		}
		b.Finish(l.err)
		return
	}
	l.writtenIdx++
	b.idx = l.writtenIdx
	l.written = append(l.written, b)
	l.cond.Signal()
}

// writeLocked chains and writes one batch under the file lock. When the
// file is not the size this Log left it, another writer appended (or
// crashed mid-write): the tail is read again (and a torn one cut) before
// linking. The prefix up to the last newline never changes — only a torn,
// never-acknowledged tail is ever truncated — so an unchanged size means an
// unchanged tail and the check costs one fstat.
func (l *Log) writeLocked(b *Batch) (err error) {
	if err := l.lock(); err != nil {
		return err
	}
	defer func() {
		if uerr := filelock.Unlock(l.f); uerr != nil && err == nil {
			// Still holding the lock would block every other writer; stop.
			err = fmt.Errorf("audit: %w", uerr)
		}
	}()
	fi, err := l.f.Stat()
	if err != nil {
		return fmt.Errorf("audit: stat %s: %w", l.path, err)
	}
	if fi.Size() != l.end {
		l.rereads.Add(1)
		if err := l.readTail(); err != nil {
			return err
		}
	}
	buf := l.buf[:0]
	seq, prev := l.seq, l.prev
	for i, body := range b.Bodies {
		seq++
		b.Recs[i].Seq, b.Recs[i].Prev = seq, hex.EncodeToString(prev[:])
		buf, prev = AppendLine(buf, seq, prev, body)
		buf = append(buf, '\n')
	}
	n, err := l.f.Write(buf)
	if cap(buf) <= 1<<20 {
		l.buf = buf
	}
	if err != nil {
		// A partial write may be on disk: cut it while the tail is still
		// ours (if that fails, the next writer or Open cuts it), and stop
		// acknowledging.
		if n > 0 {
			_ = l.f.Truncate(l.end)
		}
		return fmt.Errorf("audit: write %s: %w", l.path, err)
	}
	l.seq, l.prev, l.end = seq, prev, l.end+int64(n)
	return nil
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
			b.Finish(l.err)
		}
	}
}

// Close flushes what is queued, stops the writer and syncers and closes the
// files.
func (l *Log) Close() error {
	if !l.q.Close() {
		return nil
	}
	<-l.done
	l.syncWG.Wait()
	var err error
	for _, sf := range l.syncFDs {
		err = errors.Join(err, sf.Close())
	}
	return errors.Join(err, l.f.Close())
}
