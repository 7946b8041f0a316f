package pipeline

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"testing"
)

// What property 2 (property_test.go) found, as plain regression tests.

// A handler that writes into its params changes neither the caller's buffer
// nor what the audit record hashes.
func TestHandlerCannotChangeCallersParams(t *testing.T) {
	e := newEnv(t, nil)
	e.register(t, "p", tool("scribble"), HandlerFunc(func(_ context.Context, p json.RawMessage, _ *Call) (json.RawMessage, error) {
		for i := range p {
			p[i] = 'x'
		}
		return json.RawMessage(`{}`), nil
	}))
	params := []byte(`{"a":"b"}`)
	if _, err := e.m.Call(context.Background(), Request{Tool: "scribble", Params: params, Caller: "alice"}); err != nil {
		t.Fatal(err)
	}
	if string(params) != `{"a":"b"}` {
		t.Fatalf("caller's params now %q", params)
	}
	sum := sha256.Sum256([]byte(`{"a":"b"}`))
	if got := e.audit.last().ParamsSHA256; got != hex.EncodeToString(sum[:]) {
		t.Fatalf("audit hashes %s, not what the caller sent", got)
	}
}

// Output that is not JSON is never delivered as ok, return_schema or not;
// partial output that is not JSON is dropped.
func TestOutputMustBeJSON(t *testing.T) {
	e := newEnv(t, nil)
	e.register(t, "p", tool("garbage"), HandlerFunc(func(context.Context, json.RawMessage, *Call) (json.RawMessage, error) {
		return json.RawMessage(`{"a":`), nil
	}))
	e.register(t, "p", tool("nothing"), HandlerFunc(func(context.Context, json.RawMessage, *Call) (json.RawMessage, error) {
		return nil, nil
	}))
	e.register(t, "p", tool("partial"), HandlerFunc(func(ctx context.Context, _ json.RawMessage, c *Call) (json.RawMessage, error) {
		e.m.Cancel(c.ID)
		<-ctx.Done()
		return json.RawMessage("\xff"), ctx.Err()
	}))
	r, err := e.call("garbage", `{}`)
	var sv *SchemaValidationFailed
	if !errors.As(err, &sv) || !sv.Output || r.Output != nil || r.Outcome != OutcomeError {
		t.Fatalf("garbage: %v %+v", err, r)
	}
	if r, err := e.call("nothing", `{}`); err != nil || r.Output != nil {
		t.Fatalf("no output is fine: %v %+v", err, r)
	}
	r, err = e.m.Call(context.Background(), Request{CallID: "c1", Tool: "partial", Caller: "alice"})
	if !errors.Is(err, ErrCancelled) || r.Output != nil {
		t.Fatalf("partial garbage: %v %+v", err, r)
	}
	if _, err := json.Marshal(r); err != nil {
		t.Fatal(err)
	}
}
