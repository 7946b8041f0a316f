package pipeline

import (
	"context"
	"encoding/json"
	"testing"
	"time"
)

// Breakers shows every tool, closed until failures trip it, then degraded
// with the time it reopens, and closed again after a good trial.
func TestBreakersView(t *testing.T) {
	e := newEnv(t, func(c *Config) {
		c.Breaker = BreakerConfig{Failures: 2, Window: 10 * time.Second, Cooldown: 30 * time.Second}
	})
	failing := true
	e.register(t, "p", tool("flaky"), HandlerFunc(func(ctx context.Context, _ json.RawMessage, _ *Call) (json.RawMessage, error) {
		if failing {
			panic("down")
		}
		return json.RawMessage(`1`), nil
	}))
	e.register(t, "p", tool("calm"), echo)
	find := func(name string) ToolBreaker {
		t.Helper()
		for _, b := range e.m.Breakers() {
			if b.Tool == name {
				return b
			}
		}
		t.Fatalf("no breaker for %s in %+v", name, e.m.Breakers())
		return ToolBreaker{}
	}
	if bs := e.m.Breakers(); len(bs) != 2 || bs[0].Tool != "calm" || bs[1].Tool != "flaky" {
		t.Fatalf("want both tools sorted: %+v", bs)
	}
	if b := find("flaky"); b.State != "closed" || b.RecentFailures != 0 || !b.OpenUntil.IsZero() {
		t.Fatalf("never called: %+v", b)
	}
	e.call("flaky", `{}`)
	if b := find("flaky"); b.State != "closed" || b.RecentFailures != 1 {
		t.Fatalf("one failure: %+v", b)
	}
	e.call("flaky", `{}`)
	b := find("flaky")
	if b.State != "degraded" || !b.OpenUntil.Equal(e.clock.Now().Add(30*time.Second)) {
		t.Fatalf("tripped: %+v", b)
	}
	if c := find("calm"); c.State != "closed" {
		t.Fatalf("the other tool: %+v", c)
	}
	// A snapshot changes nothing: still degraded past the cooldown until a
	// call asks.
	e.clock.Advance(31 * time.Second)
	if b := find("flaky"); b.State != "degraded" {
		t.Fatalf("past the cooldown, before a call: %+v", b)
	}
	failing = false
	if _, err := e.call("flaky", `{}`); err != nil {
		t.Fatal(err)
	}
	if b := find("flaky"); b.State != "closed" || b.RecentFailures != 0 {
		t.Fatalf("after a good trial: %+v", b)
	}
}

func TestBreakersViewDisabled(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.Breaker = BreakerConfig{Failures: -1} })
	e.register(t, "p", tool("a"), HandlerFunc(func(ctx context.Context, _ json.RawMessage, _ *Call) (json.RawMessage, error) {
		panic("down")
	}))
	for range 10 {
		e.call("a", `{}`)
	}
	if bs := e.m.Breakers(); len(bs) != 1 || bs[0].State != "closed" {
		t.Fatalf("%+v", bs)
	}
}
