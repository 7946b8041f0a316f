package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// slowTool answers {"wait":false} at once and blocks {"wait":true} until
// its context ends; reached counts the blocking calls that got to it.
func slowTool(reached *atomic.Int32) Handler {
	return HandlerFunc(func(ctx context.Context, p json.RawMessage, _ *Call) (json.RawMessage, error) {
		var in struct{ Wait bool }
		_ = json.Unmarshal(p, &in)
		if !in.Wait {
			return json.RawMessage(`"done"`), nil
		}
		reached.Add(1)
		<-ctx.Done()
		return nil, ctx.Err()
	})
}

// A caller whose own short timeouts expire on a slow tool does not open the
// tool's breaker for everyone: it is limited itself (rate_limited with a
// retry-after), and another caller's call succeeds.
func TestCallerTimeoutsLimitTheCallerNotTheProvider(t *testing.T) {
	e := newEnv(t, nil)
	var reached atomic.Int32
	e.register(t, "p", tool("compare"), slowTool(&reached))
	hostile := Request{Tool: "compare", Params: []byte(`{"wait":true}`), Caller: "mallory", Timeout: 30 * time.Millisecond}
	for i := range 5 {
		if _, err := e.m.Call(t.Context(), hostile); !errors.Is(err, ErrTimeout) {
			t.Fatalf("hostile call %d: %v", i, err)
		}
	}
	if st := entryOf(e.reg, "p", "compare").brk.Load().State(); st != BreakerClosed {
		t.Fatalf("the caller's own timeouts changed the breaker: %v", st)
	}
	// Another caller, generous timeout: served.
	quiet := Request{Tool: "compare", Params: []byte(`{"wait":false}`), Caller: "alice", Timeout: 10 * time.Second}
	if r, err := e.m.Call(t.Context(), quiet); err != nil || string(r.Output) != `"done"` {
		t.Fatalf("quiet caller after the hostile one's timeouts: %v", err)
	}
	// The hostile caller is held back, whatever it calls.
	var rl *RateLimited
	_, err := e.m.Call(t.Context(), Request{Tool: "compare", Params: []byte(`{"wait":false}`), Caller: "mallory"})
	if !errors.As(err, &rl) || rl.Reason != ReasonOwnTimeouts || rl.RetryAfterMs <= 0 || rl.RetryAfterMs > 10_000 {
		t.Fatalf("hostile caller after 5 timeouts of its own: %v", err)
	}
	if h := Hint(err); h == kinds[KindRateLimited].hint {
		t.Fatalf("no hint of its own: %q", h)
	}
	// ...for the cooldown only.
	e.clock.Advance(10*time.Second + time.Millisecond)
	if _, err := e.m.Call(t.Context(), Request{Tool: "compare", Params: []byte(`{"wait":false}`), Caller: "mallory"}); err != nil {
		t.Fatalf("after the cooldown: %v", err)
	}
}

// A provider that truly fails still opens its breaker: crashes, and a
// handler that overran twice its class budget on a caller's generous
// timeout. The refusal says when to come back.
func TestProviderFaultsStillOpenTheBreaker(t *testing.T) {
	e := newEnv(t, func(c *Config) {
		c.Breaker = BreakerConfig{Failures: 2, Window: time.Minute, Cooldown: 20 * time.Second}
	})
	e.register(t, "p", tool("crashy"), HandlerFunc(func(context.Context, json.RawMessage, *Call) (json.RawMessage, error) {
		panic("boom")
	}))
	var reached atomic.Int32
	hung := tool("hung")
	hung.LatencyClass = Instant // a 100 ms class budget
	e.register(t, "p", hung, slowTool(&reached))
	for range 2 {
		if _, err := e.call("crashy", `{}`); !errors.Is(err, ErrProviderCrashed) {
			t.Fatal(err)
		}
	}
	var pu *ProviderUnavailable
	if _, err := e.call("crashy", `{}`); !errors.As(err, &pu) || pu.Reason != ReasonCircuitOpen || pu.RetryAfter != 20*time.Second {
		t.Fatalf("crashing provider: %v", err)
	}
	overrun := Request{Tool: "hung", Params: []byte(`{"wait":true}`), Caller: "alice", Timeout: TimeoutFaultFactor*ClassTimeouts[Instant] + 300*time.Millisecond}
	for range 2 {
		if _, err := e.m.Call(t.Context(), overrun); !errors.Is(err, ErrTimeout) {
			t.Fatal(err)
		}
	}
	e.clock.Advance(5 * time.Second)
	if _, err := e.m.Call(t.Context(), overrun); !errors.As(err, &pu) || pu.Reason != ReasonCircuitOpen || pu.RetryAfter != 15*time.Second {
		t.Fatalf("provider overrunning its class budget: %v", err)
	}
	// Its timeouts were the provider's, not the caller's: alice is not limited.
	if _, err := e.call("crashy", `{}`); errors.Is(err, ErrRateLimited) {
		t.Fatal(err)
	}
}

// A caller whose inputs crash the provider cannot open the breaker while
// the provider goes on answering everyone else.
func TestOneCallersCrashesDoNotOpenTheBreaker(t *testing.T) {
	e := newEnv(t, nil)
	e.register(t, "p", tool("pdf"), HandlerFunc(func(_ context.Context, p json.RawMessage, _ *Call) (json.RawMessage, error) {
		if string(p) == `{"bomb":true}` {
			panic("inflated past memory")
		}
		return json.RawMessage(`"ok"`), nil
	}))
	for i := range 20 {
		if _, err := e.m.Call(t.Context(), Request{Tool: "pdf", Params: []byte(`{"bomb":true}`), Caller: "mallory"}); !errors.Is(err, ErrProviderCrashed) {
			t.Fatalf("bomb %d: %v", i, err)
		}
		for range 2 {
			if _, err := e.call("pdf", `{}`); err != nil {
				t.Fatalf("quiet caller after bomb %d: %v", i, err)
			}
		}
	}
	// With nobody else answered, the same crashes do open it.
	for range 5 {
		e.m.Call(t.Context(), Request{Tool: "pdf", Params: []byte(`{"bomb":true}`), Caller: "mallory"})
	}
	if _, err := e.call("pdf", `{}`); !errors.Is(err, ErrProviderUnavailable) {
		t.Fatalf("a provider failing every call: %v", err)
	}
}

// Plain load: many callers on a tool with a short class budget, served one
// at a time, so most calls time out at their default budget while queued.
// A busy provider is not a failing one: nobody gets provider_unavailable,
// nobody is limited, and a call with room to wait is served.
func TestBusyMachineDoesNotOpenTheBreaker(t *testing.T) {
	e := newEnv(t, nil)
	calc := tool("calculator")
	calc.LatencyClass = Instant
	one := make(chan struct{}, 1) // a provider with one core
	e.register(t, "p", calc, HandlerFunc(func(ctx context.Context, p json.RawMessage, _ *Call) (json.RawMessage, error) {
		select {
		case one <- struct{}{}:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		defer func() { <-one }()
		time.Sleep(20 * time.Millisecond) // the work: 64 queued need far more than 100 ms
		return json.RawMessage(`4`), nil
	}))
	var wg sync.WaitGroup
	var timeouts, unavailable, limited atomic.Int32
	for i := range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			caller := []string{"a", "b", "c", "d"}[i%4]
			_, err := e.m.Call(context.Background(), Request{Tool: "calculator", Params: []byte(`{}`), Caller: caller})
			switch {
			case errors.Is(err, ErrTimeout):
				timeouts.Add(1)
			case errors.Is(err, ErrProviderUnavailable):
				unavailable.Add(1)
			case errors.Is(err, ErrRateLimited):
				limited.Add(1)
			}
		}()
	}
	wg.Wait()
	if timeouts.Load() < 5 {
		t.Fatalf("only %d timeouts: the load did not queue calls past their budget", timeouts.Load())
	}
	if unavailable.Load() != 0 || limited.Load() != 0 {
		t.Fatalf("%d timeouts under load made %d calls provider_unavailable and %d rate_limited", timeouts.Load(), unavailable.Load(), limited.Load())
	}
	if _, err := e.m.Call(t.Context(), Request{Tool: "calculator", Params: []byte(`{}`), Caller: "a", Timeout: 10 * time.Second}); err != nil {
		t.Fatalf("after the load: %v", err)
	}
}

// Every refusal of an open or half-open breaker says when to retry, and a
// trial that ends with no verdict (cancelled, or a timeout that is not the
// provider's) neither closes nor re-opens the circuit.
func TestBreakerRefusalsCarryRetryAfter(t *testing.T) {
	b := newBreaker(BreakerConfig{Failures: 1, Window: time.Minute, Cooldown: 10 * time.Second})
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	if ok, _ := b.allow(now); !ok {
		t.Fatal("closed breaker refused")
	}
	b.done(now, true, verdictFault)
	if ok, retry := b.allow(now.Add(time.Second)); ok || retry != 9*time.Second {
		t.Fatalf("open: ok %v, retry %v", ok, retry)
	}
	later := now.Add(11 * time.Second)
	if ok, _ := b.allow(later); !ok || b.State() != BreakerHalfOpen {
		t.Fatalf("past the cooldown: ok %v, %v", ok, b.State())
	}
	if ok, retry := b.allow(later); ok || retry <= 0 {
		t.Fatalf("half-open with its trial in flight: ok %v, retry %v", ok, retry)
	}
	b.done(later, true, verdictNone)
	if b.State() != BreakerHalfOpen {
		t.Fatalf("a trial with no verdict decided: %v", b.State())
	}
	if ok, _ := b.allow(later); !ok {
		t.Fatal("the trial slot was not given back")
	}
	b.done(later, true, verdictHealthy)
	if b.State() != BreakerClosed {
		t.Fatalf("after a healthy trial: %v", b.State())
	}
}

// A deadline on the caller's context is the caller's choice as much as
// Request.Timeout (a pipeline's timeout_ms reaches its steps that way);
// limits are per caller, and disabled with Timeouts < 0.
func TestCallerContextDeadlineCountsAsTheCallers(t *testing.T) {
	for _, disabled := range []bool{false, true} {
		e := newEnv(t, func(c *Config) {
			c.CallerTimeouts = CallerTimeoutLimit{Timeouts: 2}
			if disabled {
				c.CallerTimeouts.Timeouts = -1
			}
		})
		var reached atomic.Int32
		e.register(t, "p", tool("compare"), slowTool(&reached))
		for range 2 {
			ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
			_, err := e.m.Call(ctx, Request{Tool: "compare", Params: []byte(`{"wait":true}`), Caller: "mallory"})
			cancel()
			if !errors.Is(err, ErrTimeout) {
				t.Fatal(err)
			}
		}
		_, err := e.m.Call(t.Context(), Request{Tool: "compare", Caller: "mallory"})
		if limited := errors.Is(err, ErrRateLimited); limited == disabled {
			t.Fatalf("disabled %v: after two context deadlines: %v", disabled, err)
		}
		if _, err := e.m.Call(t.Context(), Request{Tool: "compare", Caller: "alice"}); err != nil {
			t.Fatalf("another caller: %v", err)
		}
	}
}
