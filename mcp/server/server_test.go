package server

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/airs-dev/airs/pipeline"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// fakeBackend gives each caller its own tools and records the caller of
// every call, so the test sees that identity comes from the channel.
type fakeBackend struct {
	tools   map[string][]pipeline.Tool
	callers []string
	err     error
}

func (f *fakeBackend) Tools(caller string) []pipeline.Tool { return f.tools[caller] }

func (f *fakeBackend) Call(_ context.Context, req pipeline.Request) (*pipeline.Result, error) {
	f.callers = append(f.callers, req.Caller)
	if f.err != nil {
		return nil, f.err
	}
	return &pipeline.Result{Tool: req.Tool, Output: json.RawMessage(`{"echo":` + string(req.Params) + `}`)}, nil
}

func connect(t *testing.T, b Backend, caller string) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	if _, err := New(b, caller, Options{Version: "test"}).Connect(ctx, st, nil); err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func TestToolsListPerCallerWithAnnotations(t *testing.T) {
	b := &fakeBackend{tools: map[string][]pipeline.Tool{
		"alice": {{Name: "read-file", ReadOnly: true, Idempotent: true, Parameters: json.RawMessage(`{"type":"object"}`)},
			{Name: "delete-file", Destructive: true}},
		"bob": {{Name: "calculator", ReadOnly: true}},
	}}
	ctx := context.Background()
	res, err := connect(t, b, "alice").ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]*mcp.Tool{}
	for _, tl := range res.Tools {
		got[tl.Name] = tl
	}
	if len(got) != 2 || got["read-file"] == nil || got["delete-file"] == nil {
		t.Fatalf("alice's tools = %v", got)
	}
	if a := got["read-file"].Annotations; !a.ReadOnlyHint || !a.IdempotentHint || a.DestructiveHint == nil || *a.DestructiveHint {
		t.Errorf("read-file annotations = %+v", a)
	}
	if a := got["delete-file"].Annotations; a.ReadOnlyHint || a.DestructiveHint == nil || !*a.DestructiveHint {
		t.Errorf("delete-file annotations = %+v", a)
	}
	res, err = connect(t, b, "bob").ListTools(ctx, nil)
	if err != nil || len(res.Tools) != 1 || res.Tools[0].Name != "calculator" {
		t.Fatalf("bob's tools = %v, %v", res, err)
	}
}

func TestCallCarriesChannelCaller(t *testing.T) {
	b := &fakeBackend{tools: map[string][]pipeline.Tool{"alice": {{Name: "calculator"}}}}
	r, err := connect(t, b, "alice").CallTool(context.Background(), &mcp.CallToolParams{Name: "calculator", Arguments: map[string]any{"expression": "1+1"}})
	if err != nil || r.IsError {
		t.Fatalf("call = %+v, %v", r, err)
	}
	if len(b.callers) != 1 || b.callers[0] != "alice" {
		t.Errorf("callers = %v", b.callers)
	}
	if txt := r.Content[0].(*mcp.TextContent).Text; !strings.Contains(txt, `"expression"`) {
		t.Errorf("content = %s", txt)
	}
}

func TestDestructiveHeldSaysHowToApprove(t *testing.T) {
	b := &fakeBackend{tools: map[string][]pipeline.Tool{"alice": {{Name: "delete-file", Destructive: true}}},
		err: &pipeline.IntentVerificationRequired{ID: "c-42"}}
	r, err := connect(t, b, "alice").CallTool(context.Background(), &mcp.CallToolParams{Name: "delete-file", Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	txt := r.Content[0].(*mcp.TextContent).Text
	if !r.IsError || !strings.Contains(txt, "airs review approve c-42") {
		t.Errorf("result = %v %q", r.IsError, txt)
	}
}

func TestSchemaWithoutTypeIsAnObjectAndAnotherTypeIsLeftOut(t *testing.T) {
	b := &fakeBackend{tools: map[string][]pipeline.Tool{"alice": {
		{Name: "untyped", Parameters: json.RawMessage(`{"properties":{"x":{"type":"string"}}}`)},
		{Name: "stringy", Parameters: json.RawMessage(`{"type":"string"}`)},
		{Name: "typed", Parameters: json.RawMessage(`{"type":"object","properties":{"y":{"type":"integer"}}}`)},
	}}}
	res, err := connect(t, b, "alice").ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, tl := range res.Tools {
		s, _ := json.Marshal(tl.InputSchema)
		got[tl.Name] = string(s)
	}
	if len(got) != 2 || !strings.Contains(got["untyped"], `"type":"object"`) || !strings.Contains(got["untyped"], `"x"`) || !strings.Contains(got["typed"], `"y"`) {
		t.Errorf("tools = %v (untyped as an object, typed as is, stringy left out)", got)
	}
}

// TestMCPSpacesAreNotResources: an outside server's space mcp-NAME is in
// list-files' enum but is not listed again as airs:// resources.
func TestMCPSpacesAreNotResources(t *testing.T) {
	lf := pipeline.Tool{Name: "list-files", Version: "1.0.0", ReadOnly: true,
		Parameters: json.RawMessage(`{"type":"object","properties":{"space":{"type":"string","enum":["mcp-fs","docs"]}}}`)}
	s := New(&fakeBackend{tools: map[string][]pipeline.Tool{"u": {lf}}}, "u", Options{})
	if got := s.readableSpaces(); len(got) != 1 || got[0] != "docs" {
		t.Fatalf("readable spaces = %v, want [docs]", got)
	}
}

// TestUnavailableCarriesRetryAfter: a provider out of service for now is
// an error result that says when to call again, in its text and its _meta.
func TestUnavailableCarriesRetryAfter(t *testing.T) {
	b := &fakeBackend{tools: map[string][]pipeline.Tool{"alice": {{Name: "x.echo"}}},
		err: &pipeline.ProviderUnavailable{Provider: "mcp:x", Tool: "x.echo", Reason: "resting", RetryAfter: 1500 * time.Millisecond}}
	r, err := connect(t, b, "alice").CallTool(context.Background(), &mcp.CallToolParams{Name: "x.echo", Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	txt := r.Content[0].(*mcp.TextContent).Text
	if !r.IsError || !strings.Contains(txt, "provider_unavailable") || !strings.Contains(txt, "retry after 1.5s") {
		t.Errorf("result = %v %q", r.IsError, txt)
	}
	if ms, _ := r.Meta[RetryAfterMeta].(float64); ms != 1500 {
		t.Errorf("_meta = %v, want %s: 1500", r.Meta, RetryAfterMeta)
	}
}

// TestEveryUnavailableAndRateLimitSaysWhen: a provider that is down (no
// known end) and a rate limit are error results with a retry-after hint
// too, as every HTTP 503 and 429 carries Retry-After.
func TestEveryUnavailableAndRateLimitSaysWhen(t *testing.T) {
	for _, c := range []struct {
		err  error
		kind string
		ms   float64
	}{
		{&pipeline.ProviderUnavailable{Provider: "mcp:x", Tool: "x.echo", Reason: pipeline.ReasonProviderDead}, "provider_unavailable", 1000},
		{&pipeline.RateLimited{RetryAfterMs: 250}, "rate_limited", 250},
	} {
		b := &fakeBackend{tools: map[string][]pipeline.Tool{"alice": {{Name: "x.echo"}}}, err: c.err}
		r, err := connect(t, b, "alice").CallTool(context.Background(), &mcp.CallToolParams{Name: "x.echo", Arguments: map[string]any{}})
		if err != nil {
			t.Fatal(err)
		}
		if txt := r.Content[0].(*mcp.TextContent).Text; !r.IsError || !strings.Contains(txt, c.kind) {
			t.Errorf("%T: result %v %q, want an error result of kind %s", c.err, r.IsError, txt, c.kind)
		}
		if ms, _ := r.Meta[RetryAfterMeta].(float64); ms != c.ms {
			t.Errorf("%T: _meta = %v, want %s: %v", c.err, r.Meta, RetryAfterMeta, c.ms)
		}
	}
}
