package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airs-dev/airs/pipeline"
)

// Resources: a server that declares the resources capability gets two
// tools of AIRS's making beside its own, NS.resources_list and
// NS.resource_read (read-only, idempotent), which go to resources/list
// and resources/read. They are tools rather than a space because
// pipeline/builtin's spaces are folders; the capability is the one a
// space would ask for, ReadSpace(mcp-NAME), beside MCP(NAME) and the
// server's requires. A server tool of the same name keeps the name, and
// AIRS's is left out (Unavailable says so).

// Names of the resource tools (after the server's namespace).
const (
	ResourcesListTool = "resources_list"
	ResourceReadTool  = "resource_read"
)

// ResourceSpace is the space name a server's resources are read as:
// ReadSpace(ResourceSpace(name)) grants them.
func ResourceSpace(name string) string { return "mcp-" + name }

// maxResources bounds one resources_list: a server listing more is asked
// for less, as with max_tools.
const maxResources = 1000

// local is a tool AIRS adds for the server, with its own handler.
type local struct {
	tool pipeline.Tool
	h    pipeline.Handler
}

// resourceTools are the resource tools of the server on l, or none when
// it does not declare resources.
func (c *Conn) resourceTools(l *link) []local {
	r := l.sess.InitializeResult()
	if r == nil || r.Capabilities == nil || r.Capabilities.Resources == nil {
		return nil
	}
	s := c.srv
	ns := s.Namespace
	if ns == "" {
		ns = s.Name
	}
	req := append([]pipeline.Capability{Capability(s.Name), {Kind: "ReadSpace", Arg: ResourceSpace(s.Name)}}, s.Requires...)
	mk := func(name, desc, schema string, h pipeline.HandlerFunc) local {
		return local{pipeline.Tool{Name: ns + "." + name, Version: "1.0.0", Description: desc, Parameters: json.RawMessage(schema),
			CapabilityRequired: req, Trust: pipeline.TL0, LatencyClass: latencyClass(s.Timeout), ReadOnly: true, Idempotent: true}, h}
	}
	return []local{
		mk(ResourcesListTool, fmt.Sprintf("List the resources of MCP server %s (uri, name, description, mimeType).", s.Name),
			`{"type":"object","properties":{}}`,
			func(ctx context.Context, _ json.RawMessage, _ *pipeline.Call) (json.RawMessage, error) {
				return c.listResources(ctx)
			}),
		mk(ResourceReadTool, fmt.Sprintf("Read one resource of MCP server %s by its uri (from %s.%s).", s.Name, ns, ResourcesListTool),
			`{"type":"object","properties":{"uri":{"type":"string","minLength":1}},"required":["uri"],"additionalProperties":false}`,
			func(ctx context.Context, params json.RawMessage, _ *pipeline.Call) (json.RawMessage, error) {
				var p struct{ URI string }
				if err := json.Unmarshal(params, &p); err != nil {
					return nil, pipeline.Reject("bad_params", err.Error())
				}
				return c.readResource(ctx, p.URI)
			}),
	}
}

// resourceCall runs f on the live link with the server's timeout, and
// classifies its error as invoke does.
func (c *Conn) resourceCall(ctx context.Context, f func(context.Context, *mcp.ClientSession) (any, error)) (json.RawMessage, error) {
	l, err := c.get(ctx)
	if err != nil {
		return nil, err
	}
	callCtx, cancel := c.callContext(ctx)
	defer cancel()
	v, err := f(callCtx, l.sess)
	if err != nil {
		if ferr, ok := c.callFailed(ctx, callCtx, l, err); ok {
			return nil, ferr
		}
		var re *resourceError
		if errors.As(err, &re) {
			return nil, pipeline.Reject(re.code, re.msg)
		}
		return nil, c.broken(l, err)
	}
	return c.encodeResult(v)
}

type resourceError struct{ code, msg string }

func (e *resourceError) Error() string { return e.msg }

func (c *Conn) listResources(ctx context.Context) (json.RawMessage, error) {
	return c.resourceCall(ctx, func(ctx context.Context, s *mcp.ClientSession) (any, error) {
		list := []*mcp.Resource{}
		for r, err := range s.Resources(ctx, nil) {
			if err != nil {
				return nil, err
			}
			if len(list) == maxResources {
				return nil, &resourceError{"too_many_resources", fmt.Sprintf("mcp server %s lists more than %d resources: read one by its uri instead", c.srv.Name, maxResources)}
			}
			list = append(list, r)
		}
		return map[string]any{"resources": list}, nil
	})
}

func (c *Conn) readResource(ctx context.Context, uri string) (json.RawMessage, error) {
	return c.resourceCall(ctx, func(ctx context.Context, s *mcp.ClientSession) (any, error) {
		r, err := s.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		if err != nil {
			return nil, err
		}
		return map[string]any{"contents": r.Contents}, nil
	})
}
