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

// BreakerConfig: Failures provider faults within Window, while the provider
// answered fewer calls than that over the same span, mark the tool Degraded
// and calls are refused for Cooldown; then one trial call is let through and
// its outcome closes or re-opens the circuit. Zero fields take the defaults
// (5 faults in 30 s, 30 s cooldown); Failures < 0 disables breakers.
//
// A breaker is one provider's (per registered tool version), and it counts
// only what says that provider is unwell, never what one caller or a busy
// machine did:
//
//   - ProviderCrashed and ProviderUnavailable(dead) are faults.
//   - A Timeout is a fault only when the handler had at least twice its
//     latency class's budget (ClassTimeouts: the caller gave it that long)
//     and still did not answer. A deadline the caller chose shorter than
//     that, or a default budget running out while the machine is busy,
//     says nothing of the provider: such a timeout is no verdict (and a
//     caller whose own deadlines keep expiring is limited itself:
//     CallerTimeoutLimit).
//   - A cancellation is no verdict; a ProviderRejected is an answer (the
//     file did not exist); validation or capability errors never reach the
//     provider.
//
// The "answered fewer calls" condition keeps one caller from switching a
// tool off for everyone: a caller whose inputs make the handler crash or
// overrun cannot open the breaker while the provider goes on answering
// everyone else; a provider that fails every call opens it after Failures.
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
// path is one atomic load, and an answer one atomic add; the mutex is taken
// only to record a fault or to change state.
type breaker struct {
	cfg      BreakerConfig
	state    atomic.Int32
	answered atomic.Uint64 // calls the provider answered (verdictHealthy)

	mu         sync.Mutex
	fails      []time.Time // ring of the last cfg.Failures fault times
	answeredAt []uint64    // answered when each fault in fails was recorded
	next       int
	openUntil  time.Time
	trial      bool // a half-open trial call is in flight
}

// verdict is what a call that reached the provider says of its health.
type verdict int8

const (
	verdictNone    verdict = iota // nothing: cancelled, or a timeout that is not the provider's fault
	verdictHealthy                // the provider answered (a result, or an application error)
	verdictFault                  // crashed, dead, or overran twice its class budget
)

func newBreaker(cfg BreakerConfig) *breaker {
	return &breaker{cfg: cfg, fails: make([]time.Time, 0, cfg.Failures), answeredAt: make([]uint64, 0, cfg.Failures)}
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

// record reports the verdict of a call that allow let through and that
// reached the provider.
func (b *breaker) record(now time.Time, v verdict) {
	st := BreakerState(b.state.Load())
	if v == verdictHealthy {
		b.answered.Add(1)
		if st == BreakerClosed {
			return // the common case: no lock
		}
	}
	if v == verdictNone && st == BreakerClosed {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	switch BreakerState(b.state.Load()) {
	case BreakerHalfOpen:
		b.trial = false
		switch v {
		case verdictFault:
			b.open(now)
		case verdictHealthy:
			b.fails, b.answeredAt = b.fails[:0], b.answeredAt[:0]
			b.next = 0
			b.state.Store(int32(BreakerClosed))
		}
		// verdictNone: the trial decided nothing; the next call is the trial.
	case BreakerClosed:
		if v != verdictFault {
			return
		}
		answered := b.answered.Load()
		if len(b.fails) < b.cfg.Failures {
			b.fails = append(b.fails, now)
			b.answeredAt = append(b.answeredAt, answered)
		} else {
			b.fails[b.next], b.answeredAt[b.next] = now, answered
			b.next = (b.next + 1) % b.cfg.Failures
		}
		// The oldest of the last N faults is at b.next once the ring is full.
		oldest := b.next % b.cfg.Failures
		if len(b.fails) == b.cfg.Failures && now.Sub(b.fails[oldest]) <= b.cfg.Window &&
			answered-b.answeredAt[oldest] < uint64(b.cfg.Failures) {
			b.open(now)
		}
	}
}

func (b *breaker) open(now time.Time) {
	b.openUntil = now.Add(b.cfg.Cooldown)
	b.fails, b.answeredAt = b.fails[:0], b.answeredAt[:0]
	b.next = 0
	b.state.Store(int32(BreakerOpen))
}

// done reports the end of a call that allow let through. A call that never
// reached the provider (refused by a later stage) says nothing about its
// health: like verdictNone, it only gives back a half-open trial slot.
func (b *breaker) done(now time.Time, reached bool, v verdict) {
	if !reached {
		v = verdictNone
	}
	b.record(now, v)
}

// State is the breaker's current state (open turns half-open only when a call
// asks, so a snapshot may show "degraded" a little past the cooldown).
func (b *breaker) State() BreakerState { return BreakerState(b.state.Load()) }
