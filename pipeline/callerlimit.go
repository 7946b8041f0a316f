package pipeline

import (
	"log/slog"
	"math"
	"sync"
	"sync/atomic"
	"time"
)

// CallerTimeoutLimit limits a caller whose calls keep timing out on a
// deadline it chose itself, shorter than the tool's class budget
// (ClassTimeouts): Timeouts such timeouts within Window, in whatever stage
// the deadline expired, and the caller's calls are refused as RateLimited
// (Reason ReasonOwnTimeouts, RetryAfterMs until it ends) for Cooldown.
//
// Such a call cost work (decoding and checking its params, the provider's
// handler) whose answer nobody waited for, and
// it is no sign the provider is unwell, so it does not count in the
// provider's circuit breaker (BreakerConfig): the caller is held back, not
// everyone. Only that caller is refused, for every tool; other callers are
// not affected. Zero fields take the defaults (5 within 30 s, 10 s);
// Timeouts < 0 disables the limit.
type CallerTimeoutLimit struct {
	Timeouts int
	Window   time.Duration
	Cooldown time.Duration
}

func (c CallerTimeoutLimit) withDefaults() CallerTimeoutLimit {
	if c.Timeouts == 0 {
		c.Timeouts = 5
	}
	if c.Window <= 0 {
		c.Window = 30 * time.Second
	}
	if c.Cooldown <= 0 {
		c.Cooldown = 10 * time.Second
	}
	return c
}

// callerTimeouts keeps, per caller that ever timed out on its own deadline,
// its recent such timeouts. A caller that never did costs a call one
// sync.Map miss. Records are never removed: callers are agent ids from
// configuration, a small set (as the rate limiter's buckets).
type callerTimeouts struct {
	cfg CallerTimeoutLimit
	by  sync.Map // caller → *timeoutRecord
}

type timeoutRecord struct {
	until atomic.Int64 // wall clock (Unix ns) the caller is refused until; 0: not refused

	mu    sync.Mutex
	times []time.Time // ring of the last cfg.Timeouts timeouts
	next  int
}

// newCallerTimeouts returns nil (no limit) for Timeouts < 0.
func newCallerTimeouts(cfg CallerTimeoutLimit) *callerTimeouts {
	if cfg.Timeouts < 0 {
		return nil
	}
	return &callerTimeouts{cfg: cfg.withDefaults()}
}

// limited returns how long caller is still refused, 0 when it is not.
func (l *callerTimeouts) limited(caller string, now time.Time) time.Duration {
	if l == nil {
		return 0
	}
	v, ok := l.by.Load(caller)
	if !ok {
		return 0
	}
	u := v.(*timeoutRecord).until.Load()
	if u == 0 {
		return 0
	}
	return max(time.Unix(0, u).Sub(now), 0)
}

// timedOut records one timeout of caller on its own deadline.
func (l *callerTimeouts) timedOut(caller string, now time.Time, log *slog.Logger) {
	if l == nil {
		return
	}
	v, ok := l.by.Load(caller)
	if !ok {
		v, _ = l.by.LoadOrStore(caller, &timeoutRecord{times: make([]time.Time, 0, l.cfg.Timeouts)})
	}
	r := v.(*timeoutRecord)
	r.mu.Lock()
	defer r.mu.Unlock()
	n := l.cfg.Timeouts
	if len(r.times) < n {
		r.times = append(r.times, now)
	} else {
		r.times[r.next] = now
		r.next = (r.next + 1) % n
	}
	if len(r.times) == n && now.Sub(r.times[r.next%n]) <= l.cfg.Window {
		r.until.Store(now.Add(l.cfg.Cooldown).UnixNano())
		r.times, r.next = r.times[:0], 0
		log.Warn("caller limited: its calls keep timing out on the deadline it chose, shorter than the tools' own budgets",
			"caller", caller, "timeouts", n, "window", l.cfg.Window, "refused_for", l.cfg.Cooldown)
	}
}

// CallerRefused says, before anything of a call is read, whether Call
// would refuse caller's call now whatever it is: because too many of its
// calls timed out on its own deadline (CallerTimeoutLimit, Reason
// ReasonOwnTimeouts) or because its rate-limit bucket is empty. It
// answers a RateLimited with RetryAfterMs, or nil. It takes no token, so
// a transport may ask it first and spare itself the reading and decoding
// of a large body that Call would refuse anyway; Call takes the token.
func (m *Manager) CallerRefused(caller string) error {
	now := m.now()
	if wait := m.timeouts.limited(caller, now); wait > 0 {
		return &RateLimited{Caller: caller, RetryAfterMs: int64(math.Ceil(float64(wait) / float64(time.Millisecond))),
			Reason: ReasonOwnTimeouts}
	}
	if wait := m.limiter.wait(caller, now); wait > 0 {
		return &RateLimited{Caller: caller, RetryAfterMs: int64(math.Ceil(float64(wait) / float64(time.Millisecond)))}
	}
	return nil
}
