package chains

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/airs-dev/airs/pipeline"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// testExec is a small real executor and catalog: it looks tools up, checks
// the caller's capabilities, validates params against the tool's schema,
// enforces the timeout and runs pipeline.Handlers. It stands in for the
// Tool Manager, which chains does not depend on.
type testExec struct {
	mu       sync.Mutex
	tools    map[string]*testTool
	grants   map[string][]pipeline.Capability // caller -> capabilities
	inflight map[string]context.CancelFunc
	requests []pipeline.Request
	cancels  []string
	running  int
	peak     int
}

type testTool struct {
	tool    pipeline.Tool
	h       pipeline.Handler
	schema  *jsonschema.Schema
	version int
}

func newTestExec() *testExec {
	return &testExec{tools: map[string]*testTool{}, grants: map[string][]pipeline.Capability{}, inflight: map[string]context.CancelFunc{}}
}

func (x *testExec) add(t pipeline.Tool, h pipeline.HandlerFunc) {
	if t.Parameters == nil {
		t.Parameters = json.RawMessage(`{"type":"object"}`)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(t.Parameters))
	if err != nil {
		panic(err)
	}
	c := jsonschema.NewCompiler()
	url := "test:///" + t.Name + ".json"
	if err := c.AddResource(url, doc); err != nil {
		panic(err)
	}
	x.tools[t.Name] = &testTool{tool: t, h: h, schema: c.MustCompile(url)}
}

var errUnknownTool = errors.New("unknown tool")

func (x *testExec) Tool(caller, name string) (pipeline.Tool, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	t, ok := x.tools[name]
	if !ok {
		return pipeline.Tool{}, errUnknownTool
	}
	for _, need := range t.tool.CapabilityRequired {
		if !slices.Contains(x.grants[caller], need) {
			return pipeline.Tool{}, fmt.Errorf("caller %q lacks capability %s", caller, need)
		}
	}
	return t.tool, nil
}

func (x *testExec) Call(ctx context.Context, req pipeline.Request) (*pipeline.Result, error) {
	if _, err := x.Tool(req.Caller, req.Tool); err != nil {
		return nil, err
	}
	x.mu.Lock()
	t := x.tools[req.Tool]
	x.requests = append(x.requests, req)
	x.mu.Unlock()
	params, err := jsonschema.UnmarshalJSON(bytes.NewReader(req.Params))
	if err != nil {
		return nil, fmt.Errorf("params: %v", err)
	}
	if err := t.schema.Validate(params); err != nil {
		return nil, fmt.Errorf("invalid params: %v", validationMessage(err))
	}
	timeout := req.Timeout
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	x.mu.Lock()
	x.inflight[req.CallID] = cancel
	x.running++
	x.peak = max(x.peak, x.running)
	x.mu.Unlock()
	defer func() {
		x.mu.Lock()
		delete(x.inflight, req.CallID)
		x.running--
		x.mu.Unlock()
	}()
	start := time.Now()
	out, err := t.h.Invoke(cctx, req.Params, &pipeline.Call{ID: req.CallID, Tool: req.Tool, Caller: req.Caller})
	res := &pipeline.Result{CallID: req.CallID, Tool: req.Tool, Provider: "test", Output: out, Latency: time.Since(start), Outcome: pipeline.OutcomeOK}
	switch {
	case err == nil:
	case errors.Is(cctx.Err(), context.DeadlineExceeded):
		res.Outcome = pipeline.OutcomeTimeout
	case cctx.Err() != nil:
		res.Outcome = pipeline.OutcomeCancelled
	default:
		res.Outcome = pipeline.OutcomeError
		res.Output, _ = json.Marshal(map[string]string{"error": err.Error()})
	}
	return res, nil
}

func (x *testExec) Cancel(callID string) bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.cancels = append(x.cancels, callID)
	if c, ok := x.inflight[callID]; ok {
		c()
		return true
	}
	return false
}

func (x *testExec) requestFor(callID string) (pipeline.Request, bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	for _, r := range x.requests {
		if r.CallID == callID {
			return r, true
		}
	}
	return pipeline.Request{}, false
}

// sleepCtx waits d or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// stdTools registers the tools most tests use:
//
//	echo    {any}            -> the params
//	sleep   {ms, tag}        -> {"tag": tag} after ms milliseconds
//	list    {n}              -> {"files": [{"name": "f0", "size": 0}, …]}
//	upper   {text}           -> {"text": TEXT}
//	count   {n: integer}     -> {"n": n}
//	fail    {}               -> error
//	secret  {}               -> needs Admin(*)
func stdTools(x *testExec) {
	x.add(pipeline.Tool{Name: "echo", Idempotent: true}, func(ctx context.Context, p json.RawMessage, c *pipeline.Call) (json.RawMessage, error) {
		return p, nil
	})
	x.add(pipeline.Tool{Name: "sleep",
		Parameters:   json.RawMessage(`{"type":"object","properties":{"ms":{"type":"integer","minimum":0},"tag":{"type":"string"}},"required":["ms"],"additionalProperties":false}`),
		ReturnSchema: json.RawMessage(`{"type":"object","properties":{"tag":{"type":"string"}}}`),
	}, func(ctx context.Context, p json.RawMessage, c *pipeline.Call) (json.RawMessage, error) {
		var a struct {
			Ms  int    `json:"ms"`
			Tag string `json:"tag"`
		}
		if err := json.Unmarshal(p, &a); err != nil {
			return nil, err
		}
		if err := sleepCtx(ctx, time.Duration(a.Ms)*time.Millisecond); err != nil {
			return nil, err
		}
		return json.Marshal(map[string]string{"tag": a.Tag})
	})
	x.add(pipeline.Tool{Name: "list",
		Parameters:   json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`),
		ReturnSchema: json.RawMessage(`{"type":"object","properties":{"files":{"type":"array","items":{"$ref":"#/$defs/file"}}},"additionalProperties":false,"$defs":{"file":{"type":"object","properties":{"name":{"type":"string"},"size":{"type":"integer"}},"additionalProperties":false}}}`),
	}, func(ctx context.Context, p json.RawMessage, c *pipeline.Call) (json.RawMessage, error) {
		var a struct{ N int }
		if err := json.Unmarshal(p, &a); err != nil {
			return nil, err
		}
		files := []map[string]any{}
		for i := range a.N {
			files = append(files, map[string]any{"name": fmt.Sprintf("f%d", i), "size": i})
		}
		return json.Marshal(map[string]any{"files": files})
	})
	x.add(pipeline.Tool{Name: "upper",
		Parameters:   json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"},"delay_ms":{"type":"integer"}},"required":["text"],"additionalProperties":false}`),
		ReturnSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`),
	}, func(ctx context.Context, p json.RawMessage, c *pipeline.Call) (json.RawMessage, error) {
		var a struct {
			Text    string `json:"text"`
			DelayMs int    `json:"delay_ms"`
		}
		if err := json.Unmarshal(p, &a); err != nil {
			return nil, err
		}
		if err := sleepCtx(ctx, time.Duration(a.DelayMs)*time.Millisecond); err != nil {
			return nil, err
		}
		up := []rune(a.Text)
		for i, r := range up {
			if r >= 'a' && r <= 'z' {
				up[i] = r - 'a' + 'A'
			}
		}
		return json.Marshal(map[string]string{"text": string(up)})
	})
	x.add(pipeline.Tool{Name: "count",
		Parameters:   json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"],"additionalProperties":false}`),
		ReturnSchema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}}}`),
	}, func(ctx context.Context, p json.RawMessage, c *pipeline.Call) (json.RawMessage, error) {
		return p, nil
	})
	x.add(pipeline.Tool{Name: "fail"}, func(ctx context.Context, p json.RawMessage, c *pipeline.Call) (json.RawMessage, error) {
		return nil, errors.New("boom")
	})
	x.add(pipeline.Tool{Name: "secret", CapabilityRequired: []pipeline.Capability{{Kind: "Admin", Arg: "*"}}}, func(ctx context.Context, p json.RawMessage, c *pipeline.Call) (json.RawMessage, error) {
		return json.RawMessage(`"s3cr3t"`), nil
	})
	x.grants["root"] = []pipeline.Capability{{Kind: "Admin", Arg: "*"}}
}

func stdExec() *testExec {
	x := newTestExec()
	stdTools(x)
	return x
}

func opts(x *testExec) Options {
	return Options{Executor: x, Catalog: x, Caller: "alice", MaxParallel: 8}
}

func mustParse(t testing.TB, src string) *Chain {
	t.Helper()
	c, err := Parse("test.yaml", []byte(src))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return c
}

func jsonEq(t testing.TB, got json.RawMessage, want string) {
	t.Helper()
	g, err := decodeJSON(got)
	if err != nil {
		t.Fatalf("bad JSON %s: %v", got, err)
	}
	w, err := decodeJSON([]byte(want))
	if err != nil {
		t.Fatalf("bad want %s: %v", want, err)
	}
	gb, _ := json.Marshal(g)
	wb, _ := json.Marshal(w)
	if !bytes.Equal(gb, wb) {
		t.Errorf("got %s, want %s", gb, wb)
	}
}
