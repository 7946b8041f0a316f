package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"runtime"
	"testing"
	"time"
)

// goid is the current goroutine's id, from its stack header.
func goid() string {
	b := make([]byte, 64)
	b = b[:runtime.Stack(b, false)]
	// "goroutine 123 [running]:..."
	f := b[len("goroutine "):]
	for i, c := range f {
		if c == ' ' {
			return string(f[:i])
		}
	}
	return ""
}

// A ContextBound handler runs on the caller's goroutine, is counted in
// flight while it runs, and keeps the guarded path's outcomes: a result,
// a panic as ProviderCrashed, the budget's end as Timeout.
func TestContextBoundHandler(t *testing.T) {
	e := newEnv(t, nil)
	var ran string
	var inflight int64
	e.register(t, "p", tool("bound"), ContextBoundFunc(func(ctx context.Context, params json.RawMessage, call *Call) (json.RawMessage, error) {
		ran = goid()
		inflight = e.reg.providers["p"].inflight.Load()
		return json.RawMessage(`{"ok":true}`), nil
	}))
	e.register(t, "p", tool("guarded"), HandlerFunc(func(ctx context.Context, params json.RawMessage, call *Call) (json.RawMessage, error) {
		ran = goid()
		return json.RawMessage(`{"ok":true}`), nil
	}))
	e.register(t, "p", tool("panics"), ContextBoundFunc(func(context.Context, json.RawMessage, *Call) (json.RawMessage, error) {
		panic("boom")
	}))
	e.register(t, "p", tool("waits"), ContextBoundFunc(func(ctx context.Context, _ json.RawMessage, _ *Call) (json.RawMessage, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	}))

	me := goid()
	if res, err := e.call("bound", `{}`); err != nil || string(res.Output) != `{"ok":true}` {
		t.Fatalf("bound call: %v %v", res, err)
	}
	if ran != me {
		t.Errorf("a ContextBound handler ran on goroutine %s, the caller is %s", ran, me)
	}
	if inflight != 1 {
		t.Errorf("in flight while the bound handler ran: %d, want 1", inflight)
	}
	if n := e.reg.providers["p"].inflight.Load(); n != 0 {
		t.Errorf("in flight after the call: %d", n)
	}
	if _, err := e.call("guarded", `{}`); err != nil {
		t.Fatal(err)
	}
	if ran == me {
		t.Error("a plain handler ran on the caller's goroutine: nothing would bound a handler that ignores its context")
	}
	var crashed *ProviderCrashed
	if _, err := e.call("panics", `{}`); !errors.As(err, &crashed) || crashed.Panic != "boom" {
		t.Errorf("panicking bound handler: %v, want ProviderCrashed", err)
	}
	var to *Timeout
	_, err := e.m.Call(context.Background(), Request{Tool: "waits", Params: []byte(`{}`), Caller: "alice", Timeout: 20 * time.Millisecond})
	if !errors.As(err, &to) {
		t.Errorf("bound handler past its budget: %v, want Timeout", err)
	}
}
