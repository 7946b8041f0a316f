package client

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airs-dev/airs/pipeline"
)

func TestToolFromMCPAnnotations(t *testing.T) {
	f := false
	s := Server{Name: "fs"}
	schema := map[string]any{"type": "object"}
	cases := []struct {
		name            string
		ann             *mcp.ToolAnnotations
		ro, destr, idem bool
	}{
		{"absent: spec defaults", nil, false, true, false},
		{"read-only", &mcp.ToolAnnotations{ReadOnlyHint: true}, true, false, true},
		{"not destructive", &mcp.ToolAnnotations{DestructiveHint: &f, IdempotentHint: true}, false, false, true},
	}
	for _, c := range cases {
		got, err := ToolFromMCP(s, &mcp.Tool{Name: "t", InputSchema: schema, Annotations: c.ann})
		if err != nil {
			t.Fatal(err)
		}
		if got.Name != "fs.t" || got.ReadOnly != c.ro || got.Destructive != c.destr || got.Idempotent != c.idem {
			t.Errorf("%s: got %+v", c.name, got)
		}
		if len(got.CapabilityRequired) != 1 || got.CapabilityRequired[0] != Capability("fs") {
			t.Errorf("%s: requires %v, want MCP(fs)", c.name, got.CapabilityRequired)
		}
	}
}

// inMemory connects a go-sdk server in this process.
func inMemory(t *testing.T, srv *mcp.Server) mcp.Transport {
	ct, st := mcp.NewInMemoryTransports()
	if _, err := srv.Connect(context.Background(), st, nil); err != nil {
		t.Fatal(err)
	}
	return ct
}

func TestConnectAndCall(t *testing.T) {
	ctx := context.Background()
	srv := mcp.NewServer(&mcp.Implementation{Name: "echo", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "echo", InputSchema: map[string]any{"type": "object", "properties": map[string]any{"s": map[string]any{"type": "string"}}, "required": []any{"s"}},
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(ctx context.Context, r *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var a struct{ S string }
			json.Unmarshal(r.Params.Arguments, &a)
			return &mcp.CallToolResult{StructuredContent: map[string]any{"echo": a.S}}, nil
		})
	reg := pipeline.NewRegistry(pipeline.RegistryConfig{})
	c, err := Connect(ctx, reg, Server{Name: "e", Transport: inMemory(t, srv), Requires: []pipeline.Capability{{Kind: "Network", Arg: "x"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if len(c.Unavailable()) > 0 {
		t.Fatal(c.Unavailable())
	}
	policy := &pipeline.StaticPolicy{Channels: map[string][]string{"*": {"*"}},
		Capabilities: map[string][]pipeline.Capability{"u": {Capability("e"), {Kind: "Network", Arg: "*"}}, "v": {{Kind: "Network", Arg: "*"}}}}
	m, err := pipeline.NewManager(pipeline.Config{Registry: reg, Policy: policy})
	if err != nil {
		t.Fatal(err)
	}
	res, err := m.Call(ctx, pipeline.Request{Tool: "e.echo", Params: []byte(`{"s":"hi"}`), Caller: "u"})
	if err != nil || string(res.Output) != `{"echo":"hi"}` || res.Provider != "mcp:e" {
		t.Fatalf("call: %v %+v", err, res)
	}
	// The schema stage uses the server's inputSchema.
	if _, err := m.Call(ctx, pipeline.Request{Tool: "e.echo", Params: []byte(`{}`), Caller: "u"}); pipeline.KindOf(err) != pipeline.KindSchemaValidationFailed {
		t.Fatalf("missing s: %v", err)
	}
	// Nothing is callable without MCP(e), whatever else the caller holds.
	if _, err := m.Call(ctx, pipeline.Request{Tool: "e.echo", Params: []byte(`{"s":"hi"}`), Caller: "v"}); pipeline.KindOf(err) != pipeline.KindToolCapabilityDenied {
		t.Fatalf("caller without MCP(e): %v", err)
	}
}

func TestCollisionNamesBoth(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "x", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "calc", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return nil, nil })
	reg := pipeline.NewRegistry(pipeline.RegistryConfig{})
	if err := reg.Register("builtin", pipeline.Tool{Name: "b.calc", Version: "1", Parameters: []byte(`{"type":"object"}`)},
		pipeline.HandlerFunc(func(context.Context, json.RawMessage, *pipeline.Call) (json.RawMessage, error) { return nil, nil })); err != nil {
		t.Fatal(err)
	}
	_, err := Connect(context.Background(), reg, Server{Name: "b", Transport: inMemory(t, srv)})
	if err == nil || !strings.Contains(err.Error(), "b.calc collides with b.calc of provider builtin") {
		t.Fatalf("err = %v", err)
	}
	if len(reg.Providers("b.calc")) != 1 {
		t.Fatal("the colliding server registered something")
	}
}
