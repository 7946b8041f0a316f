// Package relay carries what the pipeline's JSON output does not across a
// call: an outside MCP server's whole tool result (content blocks of every
// type, structuredContent) and its progress notifications, from the
// client provider (mcp/client) that called it to AIRS's own MCP server
// (mcp/server) that was asked, so that /mcp and `airs mcp` pass them on
// as the server sent them.
//
// The channel puts a Call in the request's context; the provider, finding
// it, reports progress to it and records its result. Nothing else reads
// it: every other channel gets the pipeline's output, and a call the
// pipeline did not hand to the provider (a speculative hit, a replay)
// records nothing, so the channel falls back to that output.
package relay

import (
	"bytes"
	"context"
	"encoding/json"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Call is one call's relay.
type Call struct {
	// Progress, when set by the channel, receives the provider's progress
	// notifications (the downstream client asked for them).
	Progress func(ctx context.Context, p *mcp.ProgressNotificationParams)

	mu     sync.Mutex
	tool   string
	output json.RawMessage
	result *mcp.CallToolResult
}

type key struct{}

// NewContext returns ctx carrying c.
func NewContext(ctx context.Context, c *Call) context.Context {
	return context.WithValue(ctx, key{}, c)
}

// FromContext is the Call ctx carries, or nil.
func FromContext(ctx context.Context) *Call {
	c, _ := ctx.Value(key{}).(*Call)
	return c
}

// SetResult records the provider's result r of tool, which it delivered
// to the pipeline as output.
func (c *Call) SetResult(tool string, output json.RawMessage, r *mcp.CallToolResult) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.tool, c.output, c.result = tool, output, r
}

// Result is the provider's result of tool if the pipeline delivered
// exactly what the provider gave it (output): a result the pipeline
// changed, or one of another tool (a migration's), is not the answer.
func (c *Call) Result(tool string, output json.RawMessage) *mcp.CallToolResult {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.result == nil || c.tool != tool || !bytes.Equal(c.output, output) {
		return nil
	}
	return c.result
}
