package audit

import (
	"errors"
	"sync"
	"testing"
	"time"
)

// Calls arriving together leave in one batch: a gathering Take returns as
// soon as the target is in (the hour-long bound never matters), and every
// Add returns its batch's outcome.
func TestBatcherGathersConcurrentAdds(t *testing.T) {
	q := NewBatcher(ErrClosed)
	const n = 8
	errs := make(chan error, n)
	for i := range n {
		go func() { errs <- q.Add(&Record{Tool: "t"}, []byte{byte(i)}) }()
	}
	b, closing := q.Take(time.Hour, n)
	if closing || b == nil || len(b.Recs) != n || len(b.Bodies) != n {
		t.Fatalf("Take gave %+v (closing %v), want one batch of %d", b, closing, n)
	}
	failed := errors.New("disk full")
	b.Finish(failed)
	for range n {
		if err := <-errs; !errors.Is(err, failed) {
			t.Fatalf("Add returned %v, want its batch's %v", err, failed)
		}
	}
}

// Records queued while the writer works form the next batch; Close hands
// the writer the last one and refuses more.
func TestBatcherCloseFlushesAndRefuses(t *testing.T) {
	q := NewBatcher(ErrClosed)
	var wg sync.WaitGroup
	errs := make([]error, 3)
	for i := range errs {
		wg.Go(func() { errs[i] = q.Add(&Record{Tool: "t"}, nil) })
	}
	var got int
	for got < len(errs) {
		b, closing := q.Take(0, 0)
		if closing {
			t.Fatal("closing before Close")
		}
		if b != nil {
			got += len(b.Recs)
			b.Finish(nil)
		}
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}

	last := make(chan error, 1)
	go func() { last <- q.Add(&Record{Tool: "last"}, nil) }()
	// The writer takes it (waking on its arrival), then Close comes.
	b, _ := q.Take(0, 0)
	if !q.Close() || q.Close() {
		t.Fatal("Close did not report closing exactly once")
	}
	if b == nil || b.Recs[0].Tool != "last" {
		t.Fatalf("the last record's batch: %+v", b)
	}
	b.Finish(nil)
	if err := <-last; err != nil {
		t.Fatal(err)
	}
	if b, closing := q.Take(0, 0); !closing || b != nil {
		t.Fatalf("after Close Take gave %+v, closing %v; want no batch, closing", b, closing)
	}
	if err := q.Add(&Record{}, nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("Add after Close: %v, want ErrClosed", err)
	}
}
