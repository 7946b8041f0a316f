package pipeline

import (
	"sync"
	"sync/atomic"
	"time"
)

// BreakerState is a circuit breaker's state, as /metrics shows it.
type BreakerState int32

const (
	BreakerClosed   BreakerState = iota // healthy: calls flow
	BreakerOpen                         // Degraded: calls refused until the cooldown ends
	BreakerHalfOpen                     // cooldown over: one trial call decides
)

func (s BreakerState) String() string {
	switch s {
	case BreakerOpen:
		return "degraded"
	case BreakerHalfOpen:
		return "half_open"
	}
	return "closed"
}

// BreakerConfig: Failures failures within Window mark the tool Degraded and
// calls are refused for Cooldown; then one trial call is let through and its
// outcome closes or re-opens the circuit. Zero fields take the defaults
// (5 failures in 30 s, 30 s cooldown); Failures < 0 disables breakers.
//
// Only failures that say the provider is unwell count: ProviderCrashed,
// Timeout, ProviderUnavailable(dead). A ProviderRejected is an answer (the
// file did not exist), and validation or capability errors never reach the
// provider, so they do not count.
type BreakerConfig struct {
	Failures int
	Window   time.Duration
	Cooldown time.Duration
}

func (c BreakerConfig) withDefaults() BreakerConfig {
	if c.Failures == 0 {
		c.Failures = 5
	}
	if c.Window <= 0 {
		c.Window = 30 * time.Second
	}
	if c.Cooldown <= 0 {
		c.Cooldown = 30 * time.Second
	}
	return c
}

// breaker is one tool's circuit breaker. The closed-state check on the hot
// path is one atomic load; the mutex is taken only to record a failure or to
// change state.
type breaker struct {
	cfg   BreakerConfig
	state atomic.Int32

	mu        sync.Mutex
	fails     []time.Time // ring of the last cfg.Failures failure times
	next      int
	openUntil time.Time
	trial     bool // a half-open trial call is in flight
}

func newBreaker(cfg BreakerConfig) *breaker {
	return &breaker{cfg: cfg, fails: make([]time.Time, 0, cfg.Failures)}
}

// allow reports whether a call may proceed; when refused, retry says for how long.
// In half-open state exactly one caller gets true until it reports back.
func (b *breaker) allow(now time.Time) (ok bool, retry time.Duration) {
	if BreakerState(b.state.Load()) == BreakerClosed {
		return true, 0
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	switch BreakerState(b.state.Load()) {
	case BreakerClosed:
		return true, 0
	case BreakerOpen:
		if now.Before(b.openUntil) {
			return false, b.openUntil.Sub(now)
		}
		b.state.Store(int32(BreakerHalfOpen))
		b.trial = true
		return true, 0
	default: // half-open
		if b.trial {
			return false, b.cfg.Cooldown
		}
		b.trial = true
		return true, 0
	}
}

// usable is allow without side effects, for ranking candidates.
func (b *breaker) usable(now time.Time) bool {
	switch BreakerState(b.state.Load()) {
	case BreakerClosed:
		return true
	case BreakerOpen:
		b.mu.Lock()
		defer b.mu.Unlock()
		return !now.Before(b.openUntil)
	default:
		b.mu.Lock()
		defer b.mu.Unlock()
		return !b.trial
	}
}

// record reports the outcome of a call that allow let through.
func (b *breaker) record(now time.Time, failed bool) {
	st := BreakerState(b.state.Load())
	if !failed && st == BreakerClosed {
		return // the common case: no lock
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	switch BreakerState(b.state.Load()) {
	case BreakerHalfOpen:
		b.trial = false
		if failed {
			b.open(now)
		} else {
			b.fails = b.fails[:0]
			b.next = 0
			b.state.Store(int32(BreakerClosed))
		}
	case BreakerClosed:
		if len(b.fails) < b.cfg.Failures {
			b.fails = append(b.fails, now)
		} else {
			b.fails[b.next] = now
			b.next = (b.next + 1) % b.cfg.Failures
		}
		// The oldest of the last N failures is at b.next once the ring is full.
		if len(b.fails) == b.cfg.Failures && now.Sub(b.fails[b.next%b.cfg.Failures]) <= b.cfg.Window {
			b.open(now)
		}
	}
}

func (b *breaker) open(now time.Time) {
	b.openUntil = now.Add(b.cfg.Cooldown)
	b.fails = b.fails[:0]
	b.next = 0
	b.state.Store(int32(BreakerOpen))
}

// done reports the end of a call that allow let through. A call that never
// reached the provider (refused by a later stage) says nothing about its
// health: it only gives back a half-open trial slot.
func (b *breaker) done(now time.Time, reached, failed bool) {
	if reached {
		b.record(now, failed)
		return
	}
	if BreakerState(b.state.Load()) == BreakerClosed {
		return
	}
	b.mu.Lock()
	b.trial = false
	b.mu.Unlock()
}

// State is the breaker's current state (open turns half-open only when a call
// asks, so a snapshot may show "degraded" a little past the cooldown).
func (b *breaker) State() BreakerState { return BreakerState(b.state.Load()) }
