package server

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Tool search: a client whose agent may call a thousand tools should not
// send them all to its model. With Options.ToolSearch, tools/list starts
// with search_tools alone; each search answers the caller's tools nearest
// to a query, with their schemas, and adds them to tools/list (the SDK
// sends notifications/tools/list_changed). A call of a tool the caller may
// call but has not found yet is served too, and adds it: the list is what
// the model has been shown, not a permission (the pipeline decides that,
// as for every call).
//
// The found set belongs to the Server: over stdio (airs mcp) that is the
// client's one session; over HTTP it is the agent's (NewHTTPHandler keeps
// one Server per agent), shared by its sessions.

// Searcher is an optional Backend method: the names of the tools caller may
// call nearest to query, best first, at most k.
type Searcher interface {
	SearchTools(ctx context.Context, caller, query string, k int) ([]string, error)
}

// SearchToolName is the tool that searches the caller's tools.
const SearchToolName = "search_tools"

// DefaultSearchLimit and MaxSearchLimit bound how many tools one search
// returns (Options.SearchLimit; a client's limit argument).
const (
	DefaultSearchLimit = 5
	MaxSearchLimit     = 50
)

const searchInstructions = "Only " + SearchToolName + " is listed at first: call it with what you need done " +
	"(e.g. {\"query\": \"read a PDF and summarise it\"}); the tools it finds are returned with their input schemas " +
	"and added to the tool list, and can then be called by name."

var searchSchema = json.RawMessage(fmt.Sprintf(`{"type":"object","properties":{`+
	`"query":{"type":"string","description":"what the tool should do, in the user's words"},`+
	`"limit":{"type":"integer","minimum":1,"maximum":%d,"description":"how many tools to return"}},`+
	`"required":["query"],"additionalProperties":false}`, MaxSearchLimit))

// SearchResult is search_tools' structured result: the tools found, best
// first, as tools/list describes them.
type SearchResult struct {
	Tools []*mcp.Tool `json:"tools"`
}

// addSearch registers search_tools and the middleware that adds a called
// tool to the list, when tool search is on.
func (s *Server) addSearch() {
	if s.search == nil {
		return
	}
	notDestructive := false
	s.Server.AddTool(&mcp.Tool{
		Name: SearchToolName,
		Description: fmt.Sprintf("Find the tools for a task among all the tools you may call: returns the best %d (or limit) "+
			"with their input schemas, and adds them to your tool list.", s.opts.SearchLimit),
		InputSchema: searchSchema,
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, DestructiveHint: &notDestructive},
	}, s.searchTools)
	s.Server.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if r, ok := req.(*mcp.CallToolRequest); ok && r.Params != nil && r.Params.Name != SearchToolName {
				s.show([]string{r.Params.Name})
			}
			return next(ctx, method, req)
		}
	})
}

func (s *Server) searchTools(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var in struct {
		Query string `json:"query"`
		Limit *int   `json:"limit"`
	}
	if len(req.Params.Arguments) > 0 {
		if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
			return toolError("the arguments are {\"query\": \"what the tool should do\", \"limit\": 5}: " + err.Error()), nil
		}
	}
	if strings.TrimSpace(in.Query) == "" {
		return toolError("give a query: what the tool should do, e.g. {\"query\": \"convert a date to another time zone\"}"), nil
	}
	k := s.opts.SearchLimit
	if in.Limit != nil {
		if *in.Limit < 1 || *in.Limit > MaxSearchLimit {
			return toolError(fmt.Sprintf("limit %d: want 1 to %d", *in.Limit, MaxSearchLimit)), nil
		}
		k = *in.Limit
	}
	names, err := s.search.SearchTools(ctx, s.caller, in.Query, k)
	if err != nil {
		return toolError("the search failed: " + err.Error()), nil
	}
	res := SearchResult{Tools: s.show(names)}
	if res.Tools == nil {
		res.Tools = []*mcp.Tool{} // [] rather than null in structuredContent
	}
	if len(res.Tools) > k {
		res.Tools = res.Tools[:k]
	}
	text, err := json.Marshal(res)
	if err != nil {
		return nil, err
	}
	out := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(text)}}, StructuredContent: res}
	if len(res.Tools) == 0 {
		out.Content = []mcp.Content{&mcp.TextContent{Text: "no tool you may call fits this query: try other words"}}
	}
	return out, nil
}

// show adds the named tools the caller may call to tools/list (the SDK
// then tells the client) and returns them in the order given; names the
// caller may not call are skipped.
func (s *Server) show(names []string) []*mcp.Tool {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*mcp.Tool
	for _, name := range names {
		mt := s.callable[name]
		if mt == nil {
			continue
		}
		out = append(out, mt)
		s.found[name] = true
		if s.listed[name] == nil {
			s.Server.AddTool(mt, s.handlers[name])
			s.listed[name] = mt
		}
	}
	return out
}

func toolError(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}
