package mcpapi

import (
	"context"
	"slices"
	"testing"

	"github.com/airs-dev/airs/internal/engine/enginetest"
	mcpserver "github.com/airs-dev/airs/mcp/server"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMCPToolSearchOverTheIndex: with tool search on, the engine's MCP
// server lists search_tools alone, finds the caller's tools with the tool
// index, lists what it found and calls it through the pipeline (the audit
// log has the call); a tool the caller may not call is never found.
func TestMCPToolSearchOverTheIndex(t *testing.T) {
	e, cfg := enginetest.New(t, enginetest.Options{})
	ctx := context.Background()
	connect := func(caller string) *mcp.ClientSession {
		st, ct := mcp.NewInMemoryTransports()
		s := mcpserver.New(New(e), caller, mcpserver.Options{ToolSearch: true, SearchLimit: 3})
		t.Cleanup(s.Close)
		if _, err := s.Connect(ctx, st, nil); err != nil {
			t.Fatal(err)
		}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "t"}, nil).Connect(ctx, ct, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	find := func(cs *mcp.ClientSession, query string) []string {
		r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: mcpserver.SearchToolName, Arguments: map[string]any{"query": query}})
		if err != nil || r.IsError {
			t.Fatalf("search %q = %+v, %v", query, r, err)
		}
		var got []string
		if sc, ok := r.StructuredContent.(map[string]any); ok {
			tools, _ := sc["tools"].([]any)
			for _, tl := range tools {
				got = append(got, tl.(map[string]any)["name"].(string))
			}
		}
		return got
	}

	web := connect("web")
	res, err := web.ListTools(ctx, nil)
	if err != nil || !slices.Equal(names(res.Tools), []string{mcpserver.SearchToolName}) {
		t.Fatalf("first tools/list = %v, %v", names(res.Tools), err)
	}
	got := find(web, "list the files in my documents folder")
	if len(got) == 0 || got[0] != "list-files" {
		t.Fatalf("search = %v, want list-files first", got)
	}
	res, err = web.ListTools(ctx, nil)
	if err != nil || !slices.Contains(names(res.Tools), "list-files") || len(res.Tools) != len(got)+1 {
		t.Fatalf("tools/list after the search = %v (found %v)", names(res.Tools), got)
	}
	r, err := web.CallTool(ctx, &mcp.CallToolParams{Name: "list-files", Arguments: map[string]any{"space": "documents"}})
	if err != nil || r.IsError {
		t.Fatalf("list-files = %+v, %v", r, err)
	}
	if calls := enginetest.AuditCalls(t, cfg); !slices.Contains(calls, "web:list-files:ok") {
		t.Errorf("audit = %v, want web:list-files:ok", calls)
	}

	// nobody holds no ReadSpace: list-files is not theirs to find.
	if got := find(connect("nobody"), "list the files in my documents folder"); slices.Contains(got, "list-files") {
		t.Errorf("nobody found %v", got)
	}
}

func names(tools []*mcp.Tool) []string {
	var out []string
	for _, t := range tools {
		out = append(out, t.Name)
	}
	return out
}
