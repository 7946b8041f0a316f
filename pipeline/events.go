package pipeline

import (
	"encoding/json"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// CallEvent is one delivered call as the pipeline delivered it: what the
// recommender's recent-actions signal and a live view of recent calls read,
// instead of re-reading the audit log.
type CallEvent struct {
	CallID    string          `json:"call_id"`
	Caller    string          `json:"caller"`
	Provider  string          `json:"provider"`
	Tool      string          `json:"tool"`
	Version   string          `json:"version,omitempty"`
	Outcome   Outcome         `json:"outcome"`
	ErrorKind string          `json:"error_kind,omitempty"`
	Latency   time.Duration   `json:"latency_ns"`
	At        time.Time       `json:"at"`
	Params    json.RawMessage `json:"-"` // the call's params (JSON), for signals; never serialised
}

// DefaultEventBuffer is a subscription's buffer when Subscribe is given 0.
const DefaultEventBuffer = 256

// eventBus fans CallEvents out to subscribers. Delivery never waits: a
// subscriber whose buffer is full misses the event, and the miss is
// counted, because a slow reader must not slow every call down.
type eventBus struct {
	mu   sync.Mutex
	subs atomic.Pointer[[]*subscription] // copy-on-write: the hot path only loads
}

type subscription struct {
	ch      chan CallEvent
	dropped atomic.Uint64
}

// Subscription is a reader of the Manager's call events.
type Subscription struct {
	C   <-chan CallEvent
	sub *subscription
	bus *eventBus
	end sync.Once
}

// Dropped is how many events this subscription missed because its buffer
// was full.
func (s *Subscription) Dropped() uint64 { return s.sub.dropped.Load() }

// Close ends the subscription and closes C.
func (s *Subscription) Close() {
	s.end.Do(func() {
		b := s.bus
		b.mu.Lock()
		defer b.mu.Unlock()
		var cur []*subscription
		if p := b.subs.Load(); p != nil {
			cur = *p
		}
		next := slices.DeleteFunc(slices.Clone(cur), func(x *subscription) bool { return x == s.sub })
		b.subs.Store(&next)
		close(s.sub.ch)
	})
}

// Subscribe returns a subscription to every call the Manager delivers from
// now on, in delivery order per caller goroutine. buffer 0 is
// DefaultEventBuffer. Close it when done.
func (m *Manager) Subscribe(buffer int) *Subscription {
	if buffer <= 0 {
		buffer = DefaultEventBuffer
	}
	sub := &subscription{ch: make(chan CallEvent, buffer)}
	b := &m.events
	b.mu.Lock()
	var cur []*subscription
	if p := b.subs.Load(); p != nil {
		cur = *p
	}
	next := append(slices.Clone(cur), sub)
	b.subs.Store(&next)
	b.mu.Unlock()
	return &Subscription{C: sub.ch, sub: sub, bus: b}
}

// publish sends ev to every subscriber without waiting. It holds the lock
// so that Close cannot close a channel during a send.
func (b *eventBus) publish(ev func() CallEvent) {
	p := b.subs.Load()
	if p == nil || len(*p) == 0 {
		return
	}
	e := ev()
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, s := range *b.subs.Load() {
		select {
		case s.ch <- e:
		default:
			s.dropped.Add(1)
		}
	}
}
