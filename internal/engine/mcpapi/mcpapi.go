// Package mcpapi is the engine as mcp/server serves it: the
// mcpserver.Backend (with its Watcher and Searcher) over the four things
// it needs of the engine (Engine, which *engine.Engine implements). It
// decides and runs nothing itself: every call is the engine's.
package mcpapi

import (
	"context"
	"errors"

	"github.com/airs-dev/airs/embeddings"
	mcpserver "github.com/airs-dev/airs/mcp/server"
	"github.com/airs-dev/airs/pipeline"
	"github.com/airs-dev/airs/selector"
)

// Engine is what the MCP adapter needs of the engine.
type Engine interface {
	// CallableTools are the tools caller may call: the selector's context.
	CallableTools(caller string) []selector.Entry
	// Call runs a call through the pipeline.
	Call(ctx context.Context, req pipeline.Request) (*pipeline.Result, error)
	// WatchTools is the registry's change signal and its stop function.
	WatchTools() (<-chan struct{}, func())
	// ToolIndex is the index the selector retrieves tools from; nil
	// without one.
	ToolIndex() *embeddings.Index
}

// New is the engine as mcp/server serves it (`airs mcp`, /mcp on
// `airs serve`): the tools a caller may call exactly as the selector's
// context assembles them (Catalog.Callable: reachable provider, every
// required capability held, not past its sunset, a space enum narrowed to
// the spaces the caller may read), calls through the engine like any
// channel's (the Manager's seven stages, the ranker's statistics), and the
// registry's change signal so tools/list follows it.
func New(e Engine) mcpserver.Backend { return mcpBackend{e} }

var (
	_ mcpserver.Watcher  = mcpBackend{}
	_ mcpserver.Searcher = mcpBackend{}
)

type mcpBackend struct{ e Engine }

// Tools are the caller's tools, one per name: the registry's preferred
// provider's, which is also the one a call without a provider reaches.
func (b mcpBackend) Tools(caller string) []pipeline.Tool {
	seen := map[string]bool{}
	var out []pipeline.Tool
	for _, en := range b.e.CallableTools(caller) {
		if !seen[en.Tool.Name] {
			seen[en.Tool.Name] = true
			out = append(out, en.Tool)
		}
	}
	return out
}

// Call runs the call as the channel's caller. The MCP server sets
// req.Caller from the channel; nothing a client sends reaches it.
func (b mcpBackend) Call(ctx context.Context, req pipeline.Request) (*pipeline.Result, error) {
	return b.e.Call(ctx, req)
}

// Watch is the registry's change signal (mcpserver.Watcher).
func (b mcpBackend) Watch() (<-chan struct{}, func()) { return b.e.WatchTools() }

// SearchTools is the selector's retrieval (the tool index: the trained
// model, BM25 and the name/schema fields, fused) over the caller's tools
// (mcpserver.Searcher): mcp.serve.tool_search's search_tools.
func (b mcpBackend) SearchTools(ctx context.Context, caller, query string, k int) ([]string, error) {
	index := b.e.ToolIndex()
	if index == nil {
		return nil, errors.New("this AIRS has no tool index")
	}
	tools := b.Tools(caller)
	if len(tools) == 0 {
		return nil, nil
	}
	names := make([]string, len(tools))
	for i, t := range tools {
		names[i] = t.Name
	}
	hits, err := index.Search(ctx, query, k, embeddings.Filter{IDs: names})
	if err != nil {
		return nil, err
	}
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.ID
	}
	return out, nil
}
