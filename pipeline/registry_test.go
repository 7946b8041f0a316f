package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"
)

// byName returns the candidates for name, ranked for preferred.
func ranked(r *Registry, name, preferred string) []string {
	c := r.candidates(name, "")
	rank(c, preferred, nil, 0)
	out := make([]string, len(c))
	for i, e := range c {
		out[i] = e.prov.id
	}
	return out
}

func entryOf(r *Registry, prov, name string) *entry { return r.versions[pnKey{prov, name}][0] }

// TestRankingOrder checks each criterion in turn, each one deciding only
// when all earlier ones tie.
func TestRankingOrder(t *testing.T) {
	r := NewRegistry(RegistryConfig{})
	reg := func(prov string, trust TrustLevel) {
		tl := tool("search")
		tl.Trust = trust
		if err := r.Register(prov, tl, echo); err != nil {
			t.Fatal(err)
		}
	}
	// registration order: a, b, c, d, e
	reg("a", TL1)
	reg("b", TL1)
	reg("c", TL1)
	reg("d", TL1)
	reg("e", TL3)

	// 5. registration order (everything else equal); trust already puts e first.
	if got := fmt.Sprint(ranked(r, "search", "")); got != "[e a b c d]" {
		t.Fatalf("trust then registration order: %s", got)
	}
	// 1. the explicit provider beats trust.
	if got := ranked(r, "search", "c"); got[0] != "c" || got[1] != "e" {
		t.Fatalf("explicit provider: %v", got)
	}
	// 3. p50 latency: d is fast, c slow, a and b have no history (ranked after).
	for range 10 {
		entryOf(r, "d", "search").stats.dispatched(false, 50*time.Microsecond)
		entryOf(r, "c", "search").stats.dispatched(false, 5*time.Millisecond)
	}
	if got := fmt.Sprint(ranked(r, "search", "")); got != "[e d c a b]" {
		t.Fatalf("p50: %s", got)
	}
	// 4. error rate breaks a p50 tie: a and b get the same latency bucket,
	// b fails less.
	for i := range 10 {
		entryOf(r, "a", "search").stats.dispatched(i < 5, 60*time.Microsecond)
		entryOf(r, "b", "search").stats.dispatched(i < 1, 60*time.Microsecond)
	}
	if got := fmt.Sprint(ranked(r, "search", "")); got != "[e b a d c]" && got != "[e d b a c]" {
		t.Fatalf("error rate: %s", got)
	}
	// 2. trust beats latency: e (TL3) has the worst p50 and still leads.
	for range 10 {
		entryOf(r, "e", "search").stats.dispatched(true, time.Second)
	}
	if got := ranked(r, "search", ""); got[0] != "e" {
		t.Fatalf("trust: %v", got)
	}
	// And a p50 difference beats error rate: d (50µs→64µs bucket) vs a, b
	// (60µs → 64µs bucket) tie on p50; then error rates d 0 < b 0.1 < a 0.5.
	if got := fmt.Sprint(ranked(r, "search", "")); got != "[e d b a c]" {
		t.Fatalf("full order: %s", got)
	}
}

func TestRegistryVersions(t *testing.T) {
	e := newEnv(t, nil)
	for _, v := range []string{"1.9.0", "1.10.0", "1.2.0"} {
		tl := tool("t")
		tl.Version = v
		v := v
		e.register(t, "p", tl, HandlerFunc(func(context.Context, json.RawMessage, *Call) (json.RawMessage, error) {
			return json.RawMessage(`"` + v + `"`), nil
		}))
	}
	r, err := e.call("t", `{}`)
	if err != nil || string(r.Output) != `"1.10.0"` || r.Version != "1.10.0" {
		t.Fatalf("highest version: %v %s", err, r.Output)
	}
	r, err = e.m.Call(context.Background(), Request{Tool: "t", Version: "1.2.0", Caller: "x"})
	if err != nil || string(r.Output) != `"1.2.0"` {
		t.Fatalf("pinned version: %v %s", err, r.Output)
	}
	if _, err := e.m.Call(context.Background(), Request{Tool: "t", Version: "9", Caller: "x"}); !errors.Is(err, ErrToolNotFound) {
		t.Fatal(err)
	}
	if n := len(e.reg.List()); n != 3 {
		t.Fatalf("list: %d", n)
	}
	if !e.reg.Deregister("p", "t", "1.10.0") {
		t.Fatal("deregister")
	}
	if r, _ := e.call("t", `{}`); string(r.Output) != `"1.9.0"` {
		t.Fatalf("after deregister: %s", r.Output)
	}
	if compareVersions("v2", "1.9") <= 0 || compareVersions("1.0", "1.0.1") >= 0 || compareVersions("", "0") >= 0 {
		t.Fatal("compareVersions")
	}
}

func TestRegisterRejectsBadTools(t *testing.T) {
	r := NewRegistry(RegistryConfig{})
	bad := []Tool{
		{Name: ""},
		{Name: "a b"},
		{Name: "x", Parameters: json.RawMessage(`{"type":"nope"}`)},
		{Name: "x", Parameters: json.RawMessage(`{"type":"string","pattern":"("}`)},
		{Name: "x", Parameters: json.RawMessage(`{"$ref":"https://example.org/s.json"}`)},
		{Name: "x", Trust: 7},
	}
	for _, tl := range bad {
		if err := r.Register("p", tl, echo); err == nil {
			t.Errorf("%+v accepted", tl)
		}
	}
	if err := r.Register("p", tool("x"), nil); err == nil {
		t.Error("nil handler accepted")
	}
}

// A deprecated tool still works before its sunset, with a warning; after it,
// another provider's live version is preferred; with none, ToolDeprecated.
func TestDeprecation(t *testing.T) {
	e := newEnv(t, nil)
	old := tool("t")
	old.Trust = TL3
	old.Deprecation = &Deprecation{Sunset: e.clock.Now().Add(24 * time.Hour), Replacement: "t2"}
	e.register(t, "old", old, echo)
	r, err := e.call("t", `{}`)
	if err != nil || r.Provider != "old" || r.Warning == "" {
		t.Fatalf("before sunset: %v %+v", err, r)
	}
	e.clock.Advance(48 * time.Hour)
	if _, err := e.call("t", `{}`); !errors.Is(err, ErrToolDeprecated) {
		t.Fatalf("after sunset: %v", err)
	}
	e.register(t, "new", tool("t"), echo) // lower trust, but live
	if r, err := e.call("t", `{}`); err != nil || r.Provider != "new" {
		t.Fatalf("fallback: %v %+v", err, r)
	}
}

// A dead provider is deregistered by the first call that finds it dead; a
// handler can report death by wrapping ErrProviderDead.
func TestDeadProvider(t *testing.T) {
	e := newEnv(t, nil)
	alive := true
	best := tool("t")
	best.Trust = TL3
	e.register(t, "best", best, echo)
	e.register(t, "backup", tool("t"), echo)
	e.reg.SetLiveness("best", func() bool { return alive })
	if r, _ := e.call("t", `{}`); r.Provider != "best" {
		t.Fatal(r.Provider)
	}
	alive = false
	if r, err := e.call("t", `{}`); err != nil || r.Provider != "backup" {
		t.Fatalf("dead best: %v %+v", err, r)
	}
	if _, ok := e.reg.Get("best", "t", ""); ok {
		t.Fatal("dead provider still registered")
	}
	e.register(t, "crashy", tool("u"), HandlerFunc(func(context.Context, json.RawMessage, *Call) (json.RawMessage, error) {
		return nil, fmt.Errorf("connection refused: %w", ErrProviderDead)
	}))
	_, err := e.call("u", `{}`)
	var pu *ProviderUnavailable
	if !errors.As(err, &pu) || pu.Reason != ReasonProviderDead {
		t.Fatal(err)
	}
	if _, err := e.call("u", `{}`); !errors.Is(err, ErrToolNotFound) {
		t.Fatalf("after death: %v", err)
	}
}

// With a breaker open on the best provider, calls go to the next one; after
// the cooldown one trial call decides.
func TestBreakerDegradedAndRecovery(t *testing.T) {
	e := newEnv(t, func(c *Config) {
		c.Breaker = BreakerConfig{Failures: 3, Window: 10 * time.Second, Cooldown: 30 * time.Second}
	})
	failing := true
	best := tool("t")
	best.Trust = TL3
	e.register(t, "best", best, HandlerFunc(func(ctx context.Context, _ json.RawMessage, _ *Call) (json.RawMessage, error) {
		if failing {
			panic("down")
		}
		return json.RawMessage(`1`), nil
	}))
	e.register(t, "backup", tool("t"), echo)
	// Failures spread wider than the window do not trip it.
	for range 3 {
		e.call("t", `{}`)
		e.clock.Advance(6 * time.Second)
	}
	if st := entryOf(e.reg, "best", "t").brk.Load().State(); st != BreakerClosed {
		t.Fatalf("spread failures tripped the breaker: %v", st)
	}
	for range 3 {
		e.call("t", `{}`)
	}
	if st := entryOf(e.reg, "best", "t").brk.Load().State(); st != BreakerOpen {
		t.Fatalf("3 failures in window: %v", st)
	}
	if r, err := e.call("t", `{}`); err != nil || r.Provider != "backup" {
		t.Fatalf("degraded best must be skipped: %v %+v", err, r)
	}
	if !stringsContain(prom(t, e.m), `airs_tool_breaker_state{provider="best",tool="t",version="1.0.0"} 1`) {
		t.Fatal("breaker state not in metrics")
	}
	e.clock.Advance(31 * time.Second)
	failing = false
	if r, err := e.call("t", `{}`); err != nil || r.Provider != "best" {
		t.Fatalf("trial call: %v %+v", err, r)
	}
	if st := entryOf(e.reg, "best", "t").brk.Load().State(); st != BreakerClosed {
		t.Fatalf("after good trial: %v", st)
	}
}

func TestRateLimitRefills(t *testing.T) {
	e := newEnv(t, func(c *Config) {
		c.RateLimit = RateLimit{PerSecond: 10, Burst: 2}
		c.RateLimits = map[string]RateLimit{"root": {}}
	})
	e.register(t, "p", tool("t"), echo)
	e.call("t", `{}`)
	e.call("t", `{}`)
	if _, err := e.call("t", `{}`); !errors.Is(err, ErrRateLimited) {
		t.Fatal(err)
	}
	e.clock.Advance(100 * time.Millisecond)
	if _, err := e.call("t", `{}`); err != nil {
		t.Fatalf("refilled: %v", err)
	}
	for range 20 { // an unlimited caller
		if _, err := e.m.Call(context.Background(), Request{Tool: "t", Caller: "root"}); err != nil {
			t.Fatal(err)
		}
	}
}
