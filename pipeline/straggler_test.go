package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a log sink safe for the watcher goroutine and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// waitFor polls cond until it holds or d passes.
func waitFor(d time.Duration, cond func() bool) bool {
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return cond()
}

func toolMetrics(m *Manager, name string) ToolMetrics {
	for _, t := range m.Metrics().Tools {
		if t.Tool == name {
			return t
		}
	}
	return ToolMetrics{}
}

// A handler that ignores its context is answered for at the deadline, and
// once it is still running StragglerGrace later it is counted by tool in
// /metrics and logged with the tool's name.
func TestStragglerCountedAndLogged(t *testing.T) {
	var logs syncBuffer
	e := newEnv(t, func(c *Config) {
		c.CancelGrace = 5 * time.Millisecond
		c.StragglerGrace = 100 * time.Millisecond
		c.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	})
	release := make(chan struct{})
	e.register(t, "p", tool("stubborn"), HandlerFunc(func(context.Context, json.RawMessage, *Call) (json.RawMessage, error) {
		<-release // ignores ctx
		return nil, nil
	}))
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(10*time.Millisecond, cancel)
	start := time.Now()
	// The handler is blocked until release: the call returning proves it
	// was answered for without waiting for it.
	if _, err := e.m.Call(ctx, Request{Tool: "stubborn", Caller: "a", CallID: "c-1"}); !errors.Is(err, ErrCancelled) {
		t.Fatal(err)
	}
	if !waitFor(30*time.Second, func() bool { return toolMetrics(e.m, "stubborn").Stragglers == 1 }) {
		t.Fatalf("stubborn handler not counted: %+v", toolMetrics(e.m, "stubborn"))
	}
	if el := time.Since(start); el < 100*time.Millisecond { // a lower bound: a slow machine only adds to it
		t.Fatalf("counted after %v, before the 100 ms grace", el)
	}
	if got := e.m.Metrics().Overrunning; got != 1 {
		t.Fatalf("overrunning = %d, want 1", got)
	}
	out := prom(t, e.m)
	for _, want := range []string{
		`airs_handler_stragglers_total{provider="p",tool="stubborn",version="1.0.0"} 1`,
		`airs_handlers_overrunning 1`,
	} {
		if !strings.Contains(out, want+"\n") {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	if l := logs.String(); !strings.Contains(l, "does not honour its context") || !strings.Contains(l, "tool=stubborn") ||
		!strings.Contains(l, "call_id=c-1") {
		t.Fatalf("log:\n%s", l)
	}
	close(release)
	if !waitFor(30*time.Second, func() bool { return e.m.Metrics().Overrunning == 0 }) {
		t.Fatal("overrunning gauge not back to 0 after the handler returned")
	}
	if !waitFor(30*time.Second, func() bool { return strings.Contains(logs.String(), "straggling handler returned") }) {
		t.Fatalf("no log when the straggler returned:\n%s", logs.String())
	}
	if got := toolMetrics(e.m, "stubborn").Stragglers; got != 1 {
		t.Fatalf("stragglers = %d after return, want 1 (a counter)", got)
	}
}

// A handler that stops late for CancelGrace but within StragglerGrace is
// not a straggler: it returns only once its call was answered (an event,
// so it is late by construction), and the grace is far longer than any
// stall of the machine between the two.
func TestLateStopWithinGraceNotCounted(t *testing.T) {
	var logs syncBuffer
	e := newEnv(t, func(c *Config) {
		c.CancelGrace = 5 * time.Millisecond
		c.StragglerGrace = time.Hour
		c.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	})
	answered := make(chan struct{})
	returned := make(chan struct{})
	e.register(t, "p", tool("slowstop"), HandlerFunc(func(ctx context.Context, _ json.RawMessage, _ *Call) (json.RawMessage, error) {
		defer close(returned)
		<-ctx.Done()
		<-answered // late for CancelGrace
		return nil, ctx.Err()
	}))
	if _, err := e.m.Call(context.Background(), Request{Tool: "slowstop", Caller: "a", Timeout: 10 * time.Millisecond}); !errors.Is(err, ErrTimeout) {
		t.Fatal(err)
	}
	close(answered)
	<-returned
	if err := e.m.Close(); err != nil { // waits for the handler and its watcher
		t.Fatal(err)
	}
	if got := toolMetrics(e.m, "slowstop").Stragglers; got != 0 {
		t.Fatalf("stragglers = %d, want 0", got)
	}
	if !strings.Contains(prom(t, e.m), `airs_handler_stragglers_total{provider="p",tool="slowstop",version="1.0.0"} 0`+"\n") {
		t.Error("/metrics does not count slowstop at 0")
	}
	if l := logs.String(); strings.Contains(l, "tool=slowstop") {
		t.Fatalf("log names a handler that stopped within the grace:\n%s", l)
	}
}

// CloseWithin does not wait past its bound for a handler that ignores its
// context (a server's drain), says so, and Close without a bound still
// waits for it to return.
func TestCloseWithinBoundsStragglers(t *testing.T) {
	for _, bounded := range []bool{true, false} {
		e := newEnv(t, func(c *Config) { c.CancelGrace = 5 * time.Millisecond })
		release := make(chan struct{})
		e.register(t, "p", tool("stubborn"), HandlerFunc(func(context.Context, json.RawMessage, *Call) (json.RawMessage, error) {
			<-release // ignores ctx
			return nil, nil
		}))
		if _, err := e.m.Call(context.Background(), Request{Tool: "stubborn", Caller: "a", Timeout: 20 * time.Millisecond}); !errors.Is(err, ErrTimeout) {
			t.Fatal(err)
		}
		closed := make(chan error, 1)
		go func() {
			if bounded {
				closed <- e.m.CloseWithin(100 * time.Millisecond)
			} else {
				closed <- e.m.Close()
			}
		}()
		wait := 5 * time.Second // the bound is 100 ms: generous for a loaded machine
		if !bounded {
			wait = 300 * time.Millisecond // long enough to see it wait
		}
		select {
		case err := <-closed:
			if !bounded {
				t.Fatalf("Close returned (%v) while a handler was still running", err)
			}
			if err == nil || !strings.Contains(err.Error(), "still running") {
				t.Errorf("CloseWithin = %v, want an error saying handlers are still running", err)
			}
		case <-time.After(wait):
			if bounded {
				t.Fatal("CloseWithin(100ms) still waiting after 5 s")
			}
		}
		close(release)
		if !bounded {
			if err := <-closed; err != nil {
				t.Errorf("Close = %v", err)
			}
		}
	}
}
