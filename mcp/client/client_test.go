package client

import (
	"context"
	"encoding/json"
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
	}
}

func TestRegisterAndCall(t *testing.T) {
	ctx := context.Background()
	srv := mcp.NewServer(&mcp.Implementation{Name: "echo", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "echo", InputSchema: map[string]any{"type": "object", "properties": map[string]any{"s": map[string]any{"type": "string"}}, "required": []any{"s"}},
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(ctx context.Context, r *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var a struct{ S string }
			json.Unmarshal(r.Params.Arguments, &a)
			return &mcp.CallToolResult{StructuredContent: map[string]any{"echo": a.S}}, nil
		})
	ct, st := mcp.NewInMemoryTransports()
	if _, err := srv.Connect(ctx, st, nil); err != nil {
		t.Fatal(err)
	}
	sess, err := mcp.NewClient(&mcp.Implementation{Name: "airs", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	reg := pipeline.NewRegistry(pipeline.RegistryConfig{})
	if _, skipped, err := Register(ctx, reg, Server{Name: "e"}, sess); err != nil || len(skipped) > 0 {
		t.Fatal(err, skipped)
	}
	m, err := pipeline.NewManager(pipeline.Config{Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	res, err := m.Call(ctx, pipeline.Request{Tool: "e.echo", Params: []byte(`{"s":"hi"}`), Caller: "u"})
	if err != nil || string(res.Output) != `{"echo":"hi"}` {
		t.Fatalf("call: %v %s", err, res.Output)
	}
	// The schema stage uses the server's inputSchema.
	if _, err := m.Call(ctx, pipeline.Request{Tool: "e.echo", Params: []byte(`{}`), Caller: "u"}); pipeline.KindOf(err) != pipeline.KindSchemaValidationFailed {
		t.Fatalf("missing s: %v", err)
	}
}
