// Package server makes AIRS an MCP server: a channel like the HTTP API.
// The caller is fixed by the channel that built the server (the CLI's OS
// user, or a bearer token), never by anything a client sends, and every
// tools/call goes through the Tool Manager's seven stages.
package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/airs-dev/airs/pipeline"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Backend is what the MCP server needs of AIRS; internal/engine and
// cmd/airs implement it over pipeline.Manager.
type Backend interface {
	// Tools returns the tools caller may call (capability-filtered).
	Tools(caller string) []pipeline.Tool
	// Call runs one call through the pipeline.
	Call(ctx context.Context, req pipeline.Request) (*pipeline.Result, error)
}

// New returns an MCP server whose tools are those caller may call.
// The list is taken once: a client sees the tools of this moment.
func New(b Backend, caller, version string) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "airs", Version: version}, nil)
	for _, t := range b.Tools(caller) {
		s.AddTool(toolOf(t), handler(b, caller, t.Name))
	}
	return s
}

func toolOf(t pipeline.Tool) *mcp.Tool {
	schema := t.Parameters
	if len(schema) == 0 {
		schema = json.RawMessage(`{"type":"object"}`)
	}
	// MCP's destructiveHint defaults to true when absent, so it is always
	// stated: a tool AIRS does not call destructive is said not to be.
	destructive := t.Destructive
	return &mcp.Tool{
		Name:        t.Name,
		Description: t.Description,
		InputSchema: schema,
		Annotations: &mcp.ToolAnnotations{
			ReadOnlyHint:    t.ReadOnly,
			DestructiveHint: &destructive,
			IdempotentHint:  t.Idempotent,
		},
	}
}

func handler(b Backend, caller, name string) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		params := []byte(req.Params.Arguments)
		if len(params) == 0 || string(params) == "null" {
			params = []byte("{}")
		}
		res, err := b.Call(ctx, pipeline.Request{
			Tool: name, Params: params, Encoding: pipeline.JSON, Caller: caller,
		})
		if err != nil {
			return errorResult(err), nil
		}
		out := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(res.Output)}}}
		var obj map[string]any
		if json.Unmarshal(res.Output, &obj) == nil {
			out.StructuredContent = obj
		}
		return out, nil
	}
}

// errorResult is a pipeline error as an MCP tool error: the model or the
// person behind the client reads the kind and what to do.
func errorResult(err error) *mcp.CallToolResult {
	msg := fmt.Sprintf("%s: %v", pipeline.KindOf(err), err)
	var ivr *pipeline.IntentVerificationRequired
	if errors.As(err, &ivr) {
		msg = fmt.Sprintf("%s: this destructive call waits for a person: run 'airs review approve %s', then call again", pipeline.KindOf(err), ivr.ID)
	}
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: msg}}}
}
