// Package client makes the tools of outside MCP servers pipeline providers:
// every call still takes the Tool Manager's seven stages, with the server's
// inputSchema as the schema stage's schema.
package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airs-dev/airs/pipeline"
)

// Server is one configured MCP server as the registry sees it.
type Server struct {
	Name      string                // provider id and default namespace (tools are NS.tool: the registry allows no "/")
	Namespace string                // "" = Name
	Requires  []pipeline.Capability // what a caller must hold for every tool
	MaxTools  int                   // 0 = 1000
}

// ToolFromMCP maps an MCP tool onto the registry's description. The hints
// take the MCP spec's defaults when absent (readOnly false, destructive
// true, idempotent false); destructive and idempotent mean something only
// for a tool that is not read-only, as the spec says.
func ToolFromMCP(s Server, t *mcp.Tool) (pipeline.Tool, error) {
	schema, err := json.Marshal(t.InputSchema)
	if err != nil || t.InputSchema == nil {
		return pipeline.Tool{}, fmt.Errorf("mcp server %s: tool %q has no usable inputSchema", s.Name, t.Name)
	}
	ns := s.Namespace
	if ns == "" {
		ns = s.Name
	}
	out := pipeline.Tool{
		Name:               ns + "." + t.Name,
		Version:            "1.0.0",
		Description:        t.Description,
		Parameters:         schema,
		CapabilityRequired: append([]pipeline.Capability(nil), s.Requires...),
		Trust:              pipeline.TL0,
		LatencyClass:       pipeline.Fast,
		Destructive:        true,
	}
	if a := t.Annotations; a != nil {
		out.ReadOnly = a.ReadOnlyHint
		if a.DestructiveHint != nil {
			out.Destructive = *a.DestructiveHint
		}
		out.Idempotent = a.IdempotentHint
	}
	if out.ReadOnly {
		out.Destructive = false
		out.Idempotent = true // reading twice changes nothing
	}
	return out, nil
}

// Provider registers one connected server's tools.
type Provider struct {
	srv     Server
	session *mcp.ClientSession
}

// Unavailable is a tool the server lists that AIRS cannot offer, and why.
type Unavailable struct {
	Tool, Reason string
}

// Register lists the session's tools and registers each under the server's
// namespace. A name a different provider already registers is a collision
// and an error naming both; a tool whose schema does not compile is left
// out with its reason and the others are registered.
func Register(ctx context.Context, reg *pipeline.Registry, s Server, sess *mcp.ClientSession) (*Provider, []Unavailable, error) {
	max := s.MaxTools
	if max <= 0 {
		max = 1000
	}
	p := &Provider{srv: s, session: sess}
	var tools []*mcp.Tool
	for t, err := range sess.Tools(ctx, nil) {
		if err != nil {
			return nil, nil, fmt.Errorf("mcp server %s: list tools: %w", s.Name, err)
		}
		if len(tools) == max {
			return nil, nil, fmt.Errorf("mcp server %s lists more than %d tools: raise max_tools in airs.yaml if that is intended", s.Name, max)
		}
		tools = append(tools, t)
	}
	var skipped []Unavailable
	for _, mt := range tools {
		t, err := ToolFromMCP(s, mt)
		if err != nil {
			skipped = append(skipped, Unavailable{mt.Name, err.Error()})
			continue
		}
		for _, o := range reg.Providers(t.Name) {
			if o.Provider != s.Name {
				return nil, nil, fmt.Errorf("mcp server %s: tool %s collides with %s of provider %s: set namespace: for the server in airs.yaml", s.Name, t.Name, o.Tool.Name, o.Provider)
			}
		}
		name := mt.Name
		if err := reg.Register(s.Name, t, pipeline.HandlerFunc(func(ctx context.Context, params json.RawMessage, call *pipeline.Call) (json.RawMessage, error) {
			return p.invoke(ctx, name, params)
		})); err != nil {
			skipped = append(skipped, Unavailable{mt.Name, err.Error()})
		}
	}
	reg.SetRuntime(s.Name, pipeline.RuntimeMCP) // a hop per call: the latency model's runtime feature
	return p, skipped, nil
}

// invoke calls one tool. The go-sdk sends notifications/cancelled when ctx
// ends; a connection that closes mid-call is the provider dying.
func (p *Provider) invoke(ctx context.Context, name string, params json.RawMessage) (json.RawMessage, error) {
	res, err := p.session.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: params})
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if errors.Is(err, mcp.ErrConnectionClosed) || errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("mcp server %s: %v: %w", p.srv.Name, err, pipeline.ErrProviderDead)
		}
		return nil, pipeline.Reject("mcp_error", err.Error())
	}
	if res.IsError {
		b, _ := json.Marshal(res.Content)
		return nil, pipeline.Reject("tool_error", string(b))
	}
	if res.StructuredContent != nil {
		return json.Marshal(res.StructuredContent)
	}
	return json.Marshal(res.Content)
}
