package pipeline

import (
	"context"
	"hash/maphash"
	"sync"
	"sync/atomic"
)

// inflight tracks running calls by call id so Cancel can reach them. It is
// sharded because every call registers and unregisters: with one mutex, 64
// concurrent callers would queue on it.
type inflight struct {
	seed   maphash.Seed
	shards [64]inflightShard
}

type inflightShard struct {
	mu    sync.Mutex
	calls map[string]*flight
	_     [40]byte // keep shards on separate cache lines
}

// flight is one running call. Several calls may share an id (ids are the
// caller's); they are chained and Cancel reaches them all.
type flight struct {
	id        string
	cancelled atomic.Bool
	cancel    atomic.Pointer[context.CancelFunc] // set at stage 5
	next      *flight
}

func newInflight() *inflight {
	f := &inflight{seed: maphash.MakeSeed()}
	for i := range f.shards {
		f.shards[i].calls = map[string]*flight{}
	}
	return f
}

func (f *inflight) shard(id string) *inflightShard {
	return &f.shards[maphash.String(f.seed, id)%uint64(len(f.shards))]
}

func (f *inflight) add(id string) *flight {
	fl := &flight{id: id}
	s := f.shard(id)
	s.mu.Lock()
	fl.next = s.calls[id]
	s.calls[id] = fl
	s.mu.Unlock()
	return fl
}

func (f *inflight) remove(fl *flight) {
	s := f.shard(fl.id)
	s.mu.Lock()
	defer s.mu.Unlock()
	head := s.calls[fl.id]
	if head == fl {
		if fl.next == nil {
			delete(s.calls, fl.id)
		} else {
			s.calls[fl.id] = fl.next
		}
		return
	}
	for p := head; p != nil; p = p.next {
		if p.next == fl {
			p.next = fl.next
			return
		}
	}
}

// cancel marks every call with id cancelled and cancels the contexts of
// those already dispatched; the others see the mark at their next stage.
func (f *inflight) cancel(id string) bool {
	s := f.shard(id)
	s.mu.Lock()
	defer s.mu.Unlock()
	found := false
	for fl := s.calls[id]; fl != nil; fl = fl.next {
		found = true
		fl.cancelled.Store(true)
		if c := fl.cancel.Load(); c != nil {
			(*c)()
		}
	}
	return found
}

// setCancel publishes the dispatch context's cancel func. The store happens
// before the flag is read and Cancel sets the flag before it loads the func,
// so a Cancel racing with dispatch is seen by at least one side.
func (fl *flight) setCancel(c context.CancelFunc) {
	fl.cancel.Store(&c)
	if fl.cancelled.Load() {
		c()
	}
}

func (f *inflight) count() int {
	n := 0
	for i := range f.shards {
		s := &f.shards[i]
		s.mu.Lock()
		for _, fl := range s.calls {
			for ; fl != nil; fl = fl.next {
				n++
			}
		}
		s.mu.Unlock()
	}
	return n
}
