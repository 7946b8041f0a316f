package audit

import (
	"sync"
	"time"
)

// Batcher is the group commit both audit writers share: this package's
// file Log and store/pg's AuditLog. Concurrent Adds queue their records
// into one pending batch; a writer goroutine takes the whole batch (Take),
// makes it durable at once (one write and sync, one COMMIT), and releases
// its appenders together (Batch.Finish). Records queued meanwhile form the
// next batch, so the busier the writer, the larger its batches.
type Batcher struct {
	closedErr error

	mu      sync.Mutex
	pending *Batch
	closed  bool
	// want is the size a gathering Take waits for: Add signals full when
	// the pending batch reaches it; 0 while no Take gathers.
	want int

	wake chan struct{} // cap 1: "pending is not empty"
	full chan struct{} // cap 1: "pending reached want"
	stop chan struct{}
}

// Batch is the records one Take hands its writer, in the order they were
// added, with their encoded bodies (Record.AppendBody).
type Batch struct {
	Recs   []*Record
	Bodies [][]byte

	idx  uint64 // the file Log's write order
	done chan struct{}
	err  error
}

func newBatch() *Batch { return &Batch{done: make(chan struct{})} }

// Finish releases the batch's appenders: err nil means durable; any other
// is what each of their Adds returns.
func (b *Batch) Finish(err error) {
	b.err = err
	close(b.done)
}

// NewBatcher returns an open Batcher whose Adds after Close return
// closedErr.
func NewBatcher(closedErr error) *Batcher {
	return &Batcher{closedErr: closedErr, pending: newBatch(),
		wake: make(chan struct{}, 1), full: make(chan struct{}, 1), stop: make(chan struct{})}
}

// Add queues r with its encoded body and waits until the batch it joined
// is finished, returning the batch's error.
func (q *Batcher) Add(r *Record, body []byte) error {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return q.closedErr
	}
	b := q.pending
	b.Recs = append(b.Recs, r)
	b.Bodies = append(b.Bodies, body)
	first := len(b.Recs) == 1
	full := q.want > 0 && len(b.Recs) == q.want
	q.mu.Unlock()
	if first {
		signal(q.wake)
	}
	if full {
		signal(q.full)
	}
	<-b.done
	return b.err
}

func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// Take waits until records are pending or Close is called, and returns
// the pending batch (nil if there is none) and whether the Batcher is
// closing: then the writer finishes this last batch and returns. No Add
// joins a batch after Take has returned it.
//
// With gather > 0 and target > 1, Take first waits, at most gather, for
// the batch to hold target records: a writer that has lately seen several
// calls arrive together gathers them into one commit, and the wait ends as
// soon as they are all in, so a lone call never waits.
func (q *Batcher) Take(gather time.Duration, target int) (b *Batch, closing bool) {
	select {
	case <-q.wake:
	case <-q.stop:
		closing = true
	}
	if !closing && gather > 0 && target > 1 {
		q.gather(gather, target)
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	b = q.pending
	if len(b.Recs) == 0 {
		return nil, closing
	}
	q.pending = newBatch()
	return b, closing
}

func (q *Batcher) gather(gather time.Duration, target int) {
	// A signal left by an earlier wait that timed out is stale; no new one
	// can come while want is 0.
	select {
	case <-q.full:
	default:
	}
	q.mu.Lock()
	if len(q.pending.Recs) >= target {
		q.mu.Unlock()
		return
	}
	q.want = target
	q.mu.Unlock()
	timer := time.NewTimer(gather)
	select {
	case <-q.full:
	case <-timer.C:
	case <-q.stop:
	}
	timer.Stop()
	q.mu.Lock()
	q.want = 0
	q.mu.Unlock()
}

// Close refuses further Adds and wakes the writers for the last batch. It
// reports whether this call closed the Batcher (false: it was closed).
func (q *Batcher) Close() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return false
	}
	q.closed = true
	close(q.stop)
	return true
}
