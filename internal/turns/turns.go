// Package turns lets heavy work give way to light work in one process.
//
// Go's scheduler gives every runnable goroutine the same standing. A
// request that needs a millisecond and becomes runnable while every P
// runs long work waits until one of them blocks or is preempted (after
// about 10 ms); one whose bytes are still in the kernel's socket buffer
// waits until some P polls the network, which a P busy computing does not
// do. So work that is known to be heavy (a selection or plan over a long
// text, the decoding of a large call body) marks its context with Heavy
// and calls Yield at its checkpoints, and light work marks itself with
// Light for as long as it runs.
//
// At a checkpoint, a heavy goroutine that has run for a quantum while
// light work is in flight stops until no light work is in flight, for at
// most a bounded wait. Its P then runs the light goroutines that were
// waiting for one and, with nothing runnable, polls the network, so a
// light request that arrives meanwhile starts at once. Heavy work thus
// runs in slices while light work is about, and keeps at least
// quantum/(quantum+maxWait) of a core however much light work there is.
//
// With no light work in flight a checkpoint costs one atomic load; with
// some, a context lookup and a clock read until the quantum is used.
package turns

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// quantum is how long heavy work runs between two waits while light work
// is in flight: what a light request waits for a P, at most, when every
// P runs heavy work.
const quantum = 200 * time.Microsecond

// maxWait bounds one wait: light work that stays in flight for long (a
// call waiting on a slow tool) slows heavy work, never stops it.
var maxWait = 2 * time.Millisecond

var (
	light   atomic.Int64 // light work in flight
	mu      sync.Mutex
	drained chan struct{} // closed when light work falls to none; nil when nobody waits
	epoch   = time.Now()
	waits   atomic.Int64
)

type key struct{}

type chargeKey struct{}

// token is one request's standing: light (counted in light) unless it
// ended or heavy work of it runs.
type token struct {
	mu     sync.Mutex
	light  bool // counted in light
	marked bool // made by Light: light work when no heavy work of it runs
	ended  bool
	heavyN int // heavy work of it running (a request's goroutines may run several)
	heavy  atomic.Bool
	since  atomic.Int64 // when its heavy work last started running (ns since epoch)
}

func now() int64 { return int64(time.Since(epoch)) }

// Light marks the work of ctx as light until end is called: heavy work
// gives way while it is in flight. Call end when the work is done (or
// idle for long, as a stream between its events is).
func Light(ctx context.Context) (context.Context, func()) {
	t := &token{light: true, marked: true}
	light.Add(1)
	return context.WithValue(ctx, key{}, t), func() {
		t.mu.Lock()
		defer t.mu.Unlock()
		t.ended = true
		t.setLight(false)
	}
}

// Heavy marks the work of ctx heavy until done is called: its checkpoints
// (Yield with the returned context) give way to light work. A request
// marked Light stops counting as light meanwhile (it does not make other
// heavy work wait for it) and counts again after, unless it ended. When
// ctx carries a charge (WithCharge), the goroutine is locked to its thread
// until done and the thread's CPU is charged then: call done on the same
// goroutine.
func Heavy(ctx context.Context) (context.Context, func()) {
	t, _ := ctx.Value(key{}).(*token)
	if t == nil {
		t = &token{}
		ctx = context.WithValue(ctx, key{}, t)
	}
	t.mu.Lock()
	t.heavyN++
	t.setLight(false)
	t.since.Store(now())
	t.heavy.Store(true)
	t.mu.Unlock()
	charge, _ := ctx.Value(chargeKey{}).(func(time.Duration))
	var m *cpuMeter
	if charge != nil {
		m = startCPUMeter()
	}
	var once sync.Once
	return ctx, func() {
		once.Do(func() {
			if m != nil {
				charge(m.stop())
			}
			t.mu.Lock()
			defer t.mu.Unlock()
			t.heavyN--
			if t.heavyN == 0 {
				t.heavy.Store(false)
				t.setLight(t.marked && !t.ended)
			}
		})
	}
}

// Idle marks the work of ctx, light until now, as no longer in flight: it
// waits for long from here on (a stream of a model's answer), and heavy
// work need not give way to it.
func Idle(ctx context.Context) {
	if t, _ := ctx.Value(key{}).(*token); t != nil {
		t.mu.Lock()
		t.ended = true
		t.setLight(false)
		t.mu.Unlock()
	}
}

// WithCharge is ctx with charge called with the CPU each heavy work of it
// (Heavy) used, when that work is done, on whichever goroutine it ran.
func WithCharge(ctx context.Context, charge func(cpu time.Duration)) context.Context {
	return context.WithValue(ctx, chargeKey{}, charge)
}

// setLight counts t in light or not; t.mu is held.
func (t *token) setLight(on bool) {
	if on == t.light {
		return
	}
	t.light = on
	if on {
		light.Add(1)
		return
	}
	if light.Add(-1) == 0 {
		mu.Lock()
		if drained != nil {
			close(drained)
			drained = nil
		}
		mu.Unlock()
	}
}

// Yield is a checkpoint of heavy work: when ctx's work is heavy, light
// work is in flight and the heavy work has run for a quantum since it last
// gave way, it waits until no light work is in flight (at most maxWait, or
// until ctx is done). Elsewhere it returns at once.
func Yield(ctx context.Context) {
	if light.Load() == 0 || ctx == nil {
		return
	}
	t, _ := ctx.Value(key{}).(*token)
	if t == nil || !t.heavy.Load() || now()-t.since.Load() < int64(quantum) {
		return
	}
	mu.Lock()
	if light.Load() == 0 {
		mu.Unlock()
		return
	}
	if drained == nil {
		drained = make(chan struct{})
	}
	c, d := drained, maxWait
	mu.Unlock()
	waits.Add(1)
	tm := time.NewTimer(d)
	select {
	case <-c:
	case <-tm.C:
	case <-ctx.Done():
	}
	tm.Stop()
	t.since.Store(now())
}

// Func is Yield for ctx as a function of no arguments (for code that
// takes a checkpoint callback rather than a context), or nil when ctx's
// work is not heavy-capable (carries no mark).
func Func(ctx context.Context) func() {
	if ctx == nil {
		return nil
	}
	if t, _ := ctx.Value(key{}).(*token); t == nil {
		return nil
	}
	return func() { Yield(ctx) }
}

// Waits is how many times heavy work has given way since the process
// started.
func Waits() int64 { return waits.Load() }

// InFlight is the light work in flight now.
func InFlight() int64 { return light.Load() }

// SetMaxWait sets the bound of one wait until restore is called: a test
// sets it long so that a wait ends by the light work's end alone.
func SetMaxWait(d time.Duration) (restore func()) {
	mu.Lock()
	old := maxWait
	maxWait = d
	mu.Unlock()
	return func() {
		mu.Lock()
		maxWait = old
		mu.Unlock()
	}
}
