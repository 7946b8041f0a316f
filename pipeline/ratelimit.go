package pipeline

import (
	"math"
	"sync"
	"time"
)

// RateLimit is a token bucket: PerSecond tokens refill per second up to
// Burst; each call takes one. PerSecond ≤ 0 means unlimited.
type RateLimit struct {
	PerSecond float64
	Burst     int
}

// limiter holds one bucket per caller. Buckets are created on first use and
// never removed: callers are agent ids from configuration, a small set.
type limiter struct {
	def       RateLimit
	perCaller map[string]RateLimit // read-only after construction
	buckets   sync.Map             // caller → *bucket
}

type bucket struct {
	mu     sync.Mutex
	rate   float64
	burst  float64
	tokens float64
	last   time.Time
}

func newLimiter(def RateLimit, perCaller map[string]RateLimit) *limiter {
	return &limiter{def: def, perCaller: perCaller}
}

// take returns 0 when the call may go, else the time until a token is back.
func (l *limiter) take(caller string, now time.Time) time.Duration {
	v, ok := l.buckets.Load(caller)
	if !ok {
		rl, ok := l.perCaller[caller]
		if !ok {
			rl = l.def
		}
		if rl.PerSecond <= 0 {
			v, _ = l.buckets.LoadOrStore(caller, (*bucket)(nil))
		} else {
			burst := float64(max(rl.Burst, 1))
			v, _ = l.buckets.LoadOrStore(caller, &bucket{rate: rl.PerSecond, burst: burst, tokens: burst, last: now})
		}
	}
	b := v.(*bucket)
	if b == nil {
		return 0 // unlimited
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if el := now.Sub(b.last); el > 0 {
		b.tokens = math.Min(b.burst, b.tokens+el.Seconds()*b.rate)
		b.last = now
	}
	if b.tokens >= 1 {
		b.tokens--
		return 0
	}
	return time.Duration((1 - b.tokens) / b.rate * float64(time.Second))
}

// wait returns how long until caller's bucket has a token, 0 when it has
// one now, without taking it.
func (l *limiter) wait(caller string, now time.Time) time.Duration {
	v, ok := l.buckets.Load(caller)
	if !ok {
		return 0 // never used: a full bucket (or none)
	}
	b := v.(*bucket)
	if b == nil {
		return 0
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	tokens := b.tokens
	if el := now.Sub(b.last); el > 0 {
		tokens = math.Min(b.burst, tokens+el.Seconds()*b.rate)
	}
	if tokens >= 1 {
		return 0
	}
	return time.Duration((1 - tokens) / b.rate * float64(time.Second))
}

// Admit charges one request of caller to its rate-limit bucket, the one
// every call takes from, and answers RateLimited when the bucket is empty.
// The HTTP server admits each request that costs (selection, planning,
// chat, pipelines) this way, so an agent's rate_limit bounds all its work,
// not only its direct calls; the calls such a request makes take their own
// tokens.
func (m *Manager) Admit(caller string) error {
	if wait := m.limiter.take(caller, m.now()); wait > 0 {
		return &RateLimited{Caller: caller, RetryAfterMs: int64(math.Ceil(float64(wait) / float64(time.Millisecond)))}
	}
	return nil
}
