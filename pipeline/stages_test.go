package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/vmihailenco/msgpack/v5"
)

func TestMsgPackParams(t *testing.T) {
	e := newEnv(t, nil)
	tl := tool("m")
	tl.Parameters = objSchema(`{"n":{"type":"integer"},"xs":{"type":"array","items":{"type":"number"}},"s":{"type":"string"}}`, "n")
	h := &capture{}
	e.register(t, "p", tl, h)
	b, _ := msgpack.Marshal(map[string]any{"n": int8(5), "xs": []any{1.5, uint16(2)}, "s": "hé"})
	if _, err := e.m.Call(context.Background(), Request{Tool: "m", Params: b, Encoding: MsgPack, Caller: "a"}); err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(h.got, &got); err != nil || got["n"] != float64(5) || got["s"] != "hé" {
		t.Fatalf("handler got %s (%v)", h.got, err)
	}
	// validated like JSON
	b, _ = msgpack.Marshal(map[string]any{"n": "five"})
	if _, err := e.m.Call(context.Background(), Request{Tool: "m", Params: b, Encoding: MsgPack, Caller: "a"}); !errors.Is(err, ErrSchemaValidationFailed) {
		t.Fatal(err)
	}
	// no JSON form: non-string keys
	b, _ = msgpack.Marshal(map[int]any{1: "x"})
	if _, err := e.m.Call(context.Background(), Request{Tool: "m", Params: b, Encoding: MsgPack, Caller: "a"}); !errors.Is(err, ErrSchemaValidationFailed) {
		t.Fatal(err)
	}
}

func TestJSONParamsStrictDecoding(t *testing.T) {
	e := newEnv(t, nil)
	e.register(t, "p", tool("t"), echo)
	for _, bad := range []string{`{"a":1} {"b":2}`, `{"a":`, "{\"a\":\"\xff\"}"} {
		if _, err := e.call("t", bad); !errors.Is(err, ErrSchemaValidationFailed) {
			t.Errorf("%q: %v", bad, err)
		}
	}
	if r, err := e.call("t", ``); err != nil || string(r.Output) != `{}` {
		t.Fatalf("empty params mean {}: %v %s", err, r.Output)
	}
}

// `pattern` is ECMA-262 (regexp2), with a match timeout.
func TestSchemaPatternECMAScript(t *testing.T) {
	e := newEnv(t, nil)
	tl := tool("pw")
	// Lookahead: not expressible in Go's RE2.
	tl.Parameters = objSchema(`{"pw":{"type":"string","pattern":"^(?=.*[A-Z])(?=.*\\d).{8,}$"}}`)
	e.register(t, "p", tl, echo)
	if _, err := e.call("pw", `{"pw":"Secret123"}`); err != nil {
		t.Fatal(err)
	}
	if _, err := e.call("pw", `{"pw":"secret123"}`); !errors.Is(err, ErrSchemaValidationFailed) {
		t.Fatal(err)
	}
	// ECMAScript \d is ASCII only.
	tl2 := tool("digits")
	tl2.Parameters = objSchema(`{"d":{"type":"string","pattern":"^\\d+$"}}`)
	e.register(t, "p", tl2, echo)
	if _, err := e.call("digits", `{"d":"١٢٣"}`); !errors.Is(err, ErrSchemaValidationFailed) {
		t.Fatalf("Arabic-Indic digits must not match \\d: %v", err)
	}
}

func TestSchemaPatternTimeout(t *testing.T) {
	r := NewRegistry(RegistryConfig{RegexTimeout: 20 * time.Millisecond})
	m, _ := NewManager(Config{Registry: r})
	defer m.Close()
	tl := tool("evil")
	tl.Parameters = objSchema(`{"s":{"type":"string","pattern":"^(a+)+$"}}`)
	r.Register("p", tl, echo)
	start := time.Now()
	_, err := m.Call(context.Background(), Request{Tool: "evil", Caller: "a", Params: []byte(`{"s":"` + strings.Repeat("a", 40) + `!"}`)})
	if !errors.Is(err, ErrSchemaValidationFailed) {
		t.Fatalf("catastrophic backtracking must fail closed: %v", err)
	}
	if el := time.Since(start); el > 2*time.Second {
		t.Fatalf("match timeout not applied: %v", el)
	}
}

func TestSchemaCompiledOncePerDocument(t *testing.T) {
	r := NewRegistry(RegistryConfig{})
	a, b := tool("a"), tool("b")
	a.Parameters = objSchema(`{"x":{"type":"string"}}`)
	b.Parameters = objSchema(`{"x":{"type":"string"}}`)
	r.Register("p", a, echo)
	r.Register("q", b, echo)
	if entryOf(r, "p", "a").params != entryOf(r, "q", "b").params {
		t.Fatal("same schema compiled twice")
	}
}

func TestReturnSchema(t *testing.T) {
	e := newEnv(t, nil)
	tl := tool("r")
	tl.ReturnSchema = json.RawMessage(`{"type":"object","required":["ok"]}`)
	out := `{"ok":true}`
	e.register(t, "p", tl, HandlerFunc(func(context.Context, json.RawMessage, *Call) (json.RawMessage, error) {
		return json.RawMessage(out), nil
	}))
	if _, err := e.call("r", `{}`); err != nil {
		t.Fatal(err)
	}
	out = `{"nope":1}`
	r, err := e.call("r", `{}`)
	var sv *SchemaValidationFailed
	if !errors.As(err, &sv) || !sv.Output || r.Output != nil || !strings.Contains(Hint(err), "return_schema") {
		t.Fatalf("%v %+v", err, r)
	}
}

// Stage 5: a timeout above the system maximum (or none) gets the latency
// class default, and the time stages 1–4 took is deducted from the budget
// the handler sees.
func TestDispatchBudget(t *testing.T) {
	var remaining time.Duration
	h := HandlerFunc(func(ctx context.Context, _ json.RawMessage, _ *Call) (json.RawMessage, error) {
		dl, ok := ctx.Deadline()
		if !ok {
			t.Error("handler context has no deadline")
		}
		remaining = time.Until(dl)
		return json.RawMessage(`{}`), nil
	})
	slowVerifier := IntentVerifierFunc(func(context.Context, IntentCheck) error {
		time.Sleep(50 * time.Millisecond)
		return nil
	})
	e := newEnv(t, func(c *Config) { c.Intent = slowVerifier })
	for class, want := range ClassTimeouts {
		tl := tool("t")
		tl.LatencyClass = LatencyClass(class)
		e.register(t, "p", tl, h)
		for _, asked := range []time.Duration{0, MaxTimeout + time.Second} {
			if _, err := e.m.Call(context.Background(), Request{Tool: "t", Caller: "a", Timeout: asked}); err != nil {
				t.Fatal(err)
			}
			if remaining > want || remaining < want-time.Second && want > time.Second {
				t.Fatalf("class %v asked %v: handler budget %v, want ≈%v", tl.LatencyClass, asked, remaining, want)
			}
		}
	}
	destructive := tool("d")
	destructive.Idempotent = false // synchronous verifier: 50 ms of stage 3
	destructive.Destructive = true
	e.register(t, "p", destructive, h)
	if _, err := e.m.Call(context.Background(), Request{Tool: "d", Caller: "a", Timeout: time.Second}); err != nil {
		t.Fatal(err)
	}
	if remaining > 950*time.Millisecond || remaining < 500*time.Millisecond {
		t.Fatalf("stages 1–4 not deducted: handler saw %v of 1s after a 50ms verifier", remaining)
	}
	// A budget used up before dispatch: Timeout, handler never runs.
	if _, err := e.m.Call(context.Background(), Request{Tool: "d", Caller: "a", Timeout: 10 * time.Millisecond}); !errors.Is(err, ErrTimeout) {
		t.Fatalf("budget spent in stage 3: %v", err)
	}
}

// Cancel reaches a call still in stages 1–4: it answers Cancelled and the
// handler never runs. Cancel of an unknown id reports false.
func TestCancelBeforeDispatch(t *testing.T) {
	inVerifier := make(chan struct{})
	release := make(chan struct{})
	e := newEnv(t, func(c *Config) {
		c.Intent = IntentVerifierFunc(func(context.Context, IntentCheck) error {
			close(inVerifier)
			<-release
			return nil
		})
	})
	ran := false
	tl := tool("d")
	tl.Idempotent = false
	tl.Destructive = true
	e.register(t, "p", tl, HandlerFunc(func(context.Context, json.RawMessage, *Call) (json.RawMessage, error) {
		ran = true
		return nil, nil
	}))
	go func() {
		<-inVerifier
		e.m.Cancel("x")
		close(release)
	}()
	r, err := e.m.Call(context.Background(), Request{CallID: "x", Tool: "d", Caller: "a"})
	if !errors.Is(err, ErrCancelled) || r.Outcome != OutcomeCancelled || ran {
		t.Fatalf("%v %+v ran=%v", err, r, ran)
	}
	if e.m.Cancel("x") || e.m.Cancel("never") {
		t.Fatal("Cancel found a finished or unknown call")
	}
}

// The caller's own context cancels too, and a handler that ignores its
// context still cannot hold the caller past the budget: the handler is
// blocked until the test ends, so each call returning at all proves it.
func TestCallerContextAndStubbornHandler(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.CancelGrace = 5 * time.Millisecond })
	block := make(chan struct{})
	e.register(t, "p", tool("stubborn"), HandlerFunc(func(context.Context, json.RawMessage, *Call) (json.RawMessage, error) {
		<-block // ignores ctx
		return nil, nil
	}))
	defer close(block)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(10*time.Millisecond, cancel)
	r, err := e.m.Call(ctx, Request{Tool: "stubborn", Caller: "a"})
	if !errors.Is(err, ErrCancelled) || r.Outcome != OutcomeCancelled {
		t.Fatalf("%v, outcome %v", err, r.Outcome)
	}
	if _, err := e.m.Call(context.Background(), Request{Tool: "stubborn", Caller: "a", Timeout: 20 * time.Millisecond}); !errors.Is(err, ErrTimeout) {
		t.Fatal(err)
	}
}

func TestHandlerKindErrorsPassThrough(t *testing.T) {
	e := newEnv(t, nil)
	e.register(t, "p", tool("files"), HandlerFunc(func(context.Context, json.RawMessage, *Call) (json.RawMessage, error) {
		return nil, &ToolCapabilityDenied{Required: []Capability{{Kind: "ReadSpace", Arg: "secret"}}}
	}))
	e.register(t, "p", tool("plain"), HandlerFunc(func(context.Context, json.RawMessage, *Call) (json.RawMessage, error) {
		return nil, errors.New("disk full")
	}))
	if _, err := e.call("files", `{}`); !errors.Is(err, ErrToolCapabilityDenied) {
		t.Fatal(err)
	}
	_, err := e.call("plain", `{}`)
	var pr *ProviderRejected
	if !errors.As(err, &pr) || pr.Code != "internal" || pr.Message != "disk full" {
		t.Fatal(err)
	}
}

// Numbers outside float64's range are refused in stage 1: the validator's
// big.Rat arithmetic cannot take them (1e99999999 made jsonschema/v6 panic).
func TestHugeNumbersRejected(t *testing.T) {
	e := newEnv(t, nil)
	tl := tool("n")
	tl.Parameters = objSchema(`{"n":{"type":"number","minimum":1}}`)
	e.register(t, "p", tl, echo)
	for _, n := range []string{"1e99999999", "1e-99999999", "1e309", "-1E+401"} {
		start := time.Now()
		_, err := e.call("n", `{"n":`+n+`}`)
		var sv *SchemaValidationFailed
		if !errors.As(err, &sv) || !strings.Contains(sv.Errors[0].Message, "out of range") || time.Since(start) > time.Second {
			t.Errorf("%s: %v", n, err)
		}
	}
	if _, err := e.call("n", `{"n":1.5e300}`); err != nil {
		t.Fatal(err)
	}
}

// Cancel reaches a synchronous intent verifier through its context, and a
// verifier that gives up because of it does not turn into IntentMisaligned.
func TestCancelReachesVerifier(t *testing.T) {
	in := make(chan struct{})
	e := newEnv(t, func(c *Config) {
		c.Intent = IntentVerifierFunc(func(ctx context.Context, _ IntentCheck) error {
			close(in)
			<-ctx.Done()
			return ctx.Err()
		})
	})
	tl := tool("d")
	tl.Idempotent = false
	tl.Destructive = true
	e.register(t, "p", tl, echo)
	go func() { <-in; e.m.Cancel("v") }()
	if _, err := e.m.Call(context.Background(), Request{CallID: "v", Tool: "d", Caller: "a"}); !errors.Is(err, ErrCancelled) {
		t.Fatal(err)
	}
}

// Close waits for calls in flight, then refuses new ones.
func TestCloseWaitsForCalls(t *testing.T) {
	reg := NewRegistry(RegistryConfig{})
	m, _ := NewManager(Config{Registry: reg})
	started := make(chan struct{})
	reg.Register("p", tool("slow"), HandlerFunc(func(ctx context.Context, _ json.RawMessage, _ *Call) (json.RawMessage, error) {
		close(started)
		time.Sleep(50 * time.Millisecond)
		return json.RawMessage(`1`), nil
	}))
	done := make(chan error, 1)
	go func() {
		_, err := m.Call(context.Background(), Request{Tool: "slow", Caller: "a"})
		done <- err
	}()
	<-started
	m.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("in-flight call: %v", err)
		}
	default:
		t.Fatal("Close returned before the call in flight was answered")
	}
	if _, err := m.Call(context.Background(), Request{Tool: "slow", Caller: "a"}); !errors.Is(err, ErrClosed) || ExitCode(err) != 1 {
		t.Fatalf("after Close: %v", err)
	}
}

// Manager.Validate (added for the selector) agrees with stage 4.
func TestValidateAgreesWithStage4(t *testing.T) {
	e := newEnv(t, nil)
	tl := tool("v")
	tl.Parameters = objSchema(`{"n":{"type":"integer","default":2}}`, "n")
	tl.Lenient = true
	e.register(t, "p", tl, echo)
	for _, p := range []string{`{"n":1}`, `{"n":null}`, `{"n":"1"}`, `{}`, `{"n":1e999}`} {
		_, callErr := e.call("v", p)
		if verr := e.m.Validate(tl, json.RawMessage(p)); (verr == nil) != (callErr == nil) {
			t.Errorf("%s: Validate %v, Call %v", p, verr, callErr)
		}
	}
	if err := e.m.Validate(tool("nope"), nil); !errors.Is(err, ErrToolNotFound) {
		t.Fatal(err)
	}
}
