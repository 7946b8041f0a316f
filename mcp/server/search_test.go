package server

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/airs-dev/airs/pipeline"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// searchBackend is a fakeBackend that searches by shared words and, to
// show the server does not trust it, also answers names of tools the
// caller may not call.
type searchBackend struct {
	fakeBackend
	extra []string // answered before the real hits
}

func (b *searchBackend) SearchTools(_ context.Context, caller, query string, k int) ([]string, error) {
	type hit struct {
		name  string
		score int
	}
	var hits []hit
	for _, t := range b.tools[caller] {
		n := 0
		for _, w := range strings.Fields(strings.ToLower(query)) {
			if strings.Contains(strings.ToLower(t.Description), w) {
				n++
			}
		}
		if n > 0 {
			hits = append(hits, hit{t.Name, n})
		}
	}
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].score > hits[j].score })
	out := slices.Clone(b.extra)
	for _, h := range hits {
		out = append(out, h.name)
	}
	return out[:min(k+len(b.extra), len(out))], nil
}

// manyTools are n tools "tool-000"… with distinct words "wordNNN" in their
// descriptions, and one currency converter.
func manyTools(n int) []pipeline.Tool {
	tools := []pipeline.Tool{{Name: "convert-currency", Description: "convert an amount of money between currencies",
		Parameters: json.RawMessage(`{"type":"object","properties":{"amount":{"type":"number"}},"required":["amount"]}`)}}
	for i := range n {
		tools = append(tools, pipeline.Tool{Name: fmt.Sprintf("tool-%03d", i), Description: fmt.Sprintf("does word%03d things", i)})
	}
	return tools
}

// connectSearch connects an SDK client to a tool-search server of caller;
// changed receives after each notifications/tools/list_changed.
func connectSearch(t *testing.T, b Backend, caller string) (*mcp.ClientSession, <-chan struct{}) {
	t.Helper()
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	s := New(b, caller, Options{Version: "test", ToolSearch: true, SearchLimit: 3})
	t.Cleanup(s.Close)
	if _, err := s.Connect(ctx, st, nil); err != nil {
		t.Fatal(err)
	}
	changed := make(chan struct{}, 16)
	c := mcp.NewClient(&mcp.Implementation{Name: "t"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	})
	cs, err := c.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs, changed
}

func listed(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	var names []string
	for tl, err := range cs.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tl.Name)
	}
	sort.Strings(names)
	return names
}

func search(t *testing.T, cs *mcp.ClientSession, args map[string]any) (*mcp.CallToolResult, SearchResult) {
	t.Helper()
	r, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: SearchToolName, Arguments: args})
	if err != nil {
		t.Fatal(err)
	}
	// The structured result, as the client decoded it.
	var out SearchResult
	if !r.IsError && r.StructuredContent != nil {
		b, _ := json.Marshal(r.StructuredContent)
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatalf("structuredContent %s: %v", b, err)
		}
	}
	return r, out
}

// TestToolSearchListsOnlyWhatWasFound: among a thousand tools, tools/list
// starts with search_tools alone; a search returns the caller's best tools
// with their schemas, adds them to tools/list and the client is told; a
// call of a found tool goes through the backend as the channel's caller.
func TestToolSearchListsOnlyWhatWasFound(t *testing.T) {
	b := &searchBackend{fakeBackend: fakeBackend{tools: map[string][]pipeline.Tool{"alice": manyTools(1000)}}}
	cs, changed := connectSearch(t, b, "alice")
	if got := listed(t, cs); !slices.Equal(got, []string{SearchToolName}) {
		t.Fatalf("first tools/list = %v, want only %s", got, SearchToolName)
	}
	if !strings.Contains(cs.InitializeResult().Instructions, SearchToolName) {
		t.Errorf("instructions do not say to search: %q", cs.InitializeResult().Instructions)
	}

	r, res := search(t, cs, map[string]any{"query": "convert money to another currency"})
	if r.IsError || len(res.Tools) != 1 || res.Tools[0].Name != "convert-currency" {
		t.Fatalf("search = %+v %+v", r, res)
	}
	if schema, _ := json.Marshal(res.Tools[0].InputSchema); !strings.Contains(string(schema), `"amount"`) {
		t.Errorf("the tool found comes without its schema: %s", schema)
	}
	<-changed
	if got := listed(t, cs); !slices.Equal(got, []string{"convert-currency", SearchToolName}) {
		t.Fatalf("tools/list after one search = %v", got)
	}

	_, res = search(t, cs, map[string]any{"query": "word007 word008", "limit": 2})
	if len(res.Tools) != 2 || res.Tools[0].Name != "tool-007" && res.Tools[0].Name != "tool-008" {
		t.Fatalf("second search = %+v", res.Tools)
	}
	<-changed
	if got := listed(t, cs); len(got) != 4 {
		t.Fatalf("tools/list after two searches = %v (search_tools and three found)", got)
	}

	c, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "convert-currency", Arguments: map[string]any{"amount": 3}})
	if err != nil || c.IsError {
		t.Fatalf("call = %+v, %v", c, err)
	}
	if !slices.Equal(b.callers, []string{"alice"}) {
		t.Errorf("callers = %v", b.callers)
	}
}

// TestToolSearchOnlyTheCallersTools: a name the backend answers that the
// caller may not call is neither returned nor listed, and cannot be called.
func TestToolSearchOnlyTheCallersTools(t *testing.T) {
	b := &searchBackend{fakeBackend: fakeBackend{tools: map[string][]pipeline.Tool{
		"alice": manyTools(10),
		"bob":   {{Name: "delete-everything", Destructive: true, Description: "convert money"}},
	}}, extra: []string{"delete-everything"}}
	cs, _ := connectSearch(t, b, "alice")
	_, res := search(t, cs, map[string]any{"query": "convert money"})
	for _, tl := range res.Tools {
		if tl.Name == "delete-everything" {
			t.Fatal("a tool of another agent was returned")
		}
	}
	if got := listed(t, cs); slices.Contains(got, "delete-everything") {
		t.Fatalf("tools/list = %v", got)
	}
	if r, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "delete-everything", Arguments: map[string]any{}}); err == nil && !r.IsError {
		t.Fatal("a tool of another agent was called")
	}
	if len(b.callers) != 0 {
		t.Errorf("backend calls = %v", b.callers)
	}
}

// TestToolSearchDirectCallIsServedAndListed: a client that knows a tool's
// name (from an earlier search) calls it without searching: served, and
// listed from then on.
func TestToolSearchDirectCallIsServedAndListed(t *testing.T) {
	b := &searchBackend{fakeBackend: fakeBackend{tools: map[string][]pipeline.Tool{"alice": manyTools(10)}}}
	cs, changed := connectSearch(t, b, "alice")
	r, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "tool-004", Arguments: map[string]any{}})
	if err != nil || r.IsError {
		t.Fatalf("call = %+v, %v", r, err)
	}
	<-changed
	if got := listed(t, cs); !slices.Equal(got, []string{SearchToolName, "tool-004"}) {
		t.Fatalf("tools/list = %v", got)
	}
}

// TestToolSearchBadArguments say what to send.
func TestToolSearchBadArguments(t *testing.T) {
	b := &searchBackend{fakeBackend: fakeBackend{tools: map[string][]pipeline.Tool{"alice": manyTools(3)}}}
	cs, _ := connectSearch(t, b, "alice")
	for args, want := range map[string]string{
		`{}`:                          "give a query",
		`{"query":"x","limit":0}`:     "limit 0: want 1 to 50",
		`{"query":"x","limit":"ten"}`: `{"query": "what the tool should do"`,
	} {
		var a map[string]any
		_ = json.Unmarshal([]byte(args), &a)
		r, _ := search(t, cs, a)
		if !r.IsError || !strings.Contains(r.Content[0].(*mcp.TextContent).Text, want) {
			t.Errorf("%s: %v %+v, want an error saying %q", args, r.IsError, r.Content, want)
		}
	}
	r, res := search(t, cs, map[string]any{"query": "nothing matches this"})
	if r.IsError || len(res.Tools) != 0 || !strings.Contains(r.Content[0].(*mcp.TextContent).Text, "no tool") {
		t.Errorf("empty search = %+v", r.Content)
	}
}

// TestToolSearchNeedsASearcher: a backend that cannot search gets the
// whole list, not an empty one.
func TestToolSearchNeedsASearcher(t *testing.T) {
	b := &fakeBackend{tools: map[string][]pipeline.Tool{"alice": manyTools(4)}}
	cs, _ := connectSearch(t, b, "alice")
	if got := listed(t, cs); len(got) != 5 || slices.Contains(got, SearchToolName) {
		t.Fatalf("tools/list = %v, want the 5 tools", got)
	}
}
