package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/airs-dev/airs/grammar"
	"github.com/airs-dev/airs/pipeline"
	"github.com/airs-dev/airs/server"
)

// Backend is the engine as `airs serve` serves it.
func (e *Engine) Backend() server.Backend { return backend{e} }

type backend struct{ e *Engine }

func (b backend) Call(ctx context.Context, req pipeline.Request) (*pipeline.Result, error) {
	return b.e.Call(ctx, req)
}

func (b backend) Select(ctx context.Context, caller, text string) (any, error) {
	return b.e.Select(ctx, caller, text)
}

func (b backend) Plan(ctx context.Context, caller, text string) (any, error) {
	return b.e.Plan(ctx, caller, text)
}

func (b backend) RunPipeline(ctx context.Context, caller string, yaml []byte, input map[string]any) (any, error) {
	res, err := b.e.RunPipeline(ctx, caller, "request", yaml, input, false)
	if err != nil && res == nil {
		return nil, err
	}
	return res, err
}

// ToolInfo is one tool as GET /v1/tools lists it.
type ToolInfo struct {
	Name        string          `json:"name"`
	Provider    string          `json:"provider"`
	Version     string          `json:"version"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
	Idempotent  bool            `json:"idempotent"`
}

func (b backend) Tools(caller string) any {
	out := []ToolInfo{}
	for _, t := range b.e.Catalog.Callable(caller) {
		out = append(out, ToolInfo{t.Tool.Name, t.Provider, t.Tool.Version, t.Tool.Description, t.Tool.Parameters, t.Tool.Idempotent})
	}
	return out
}

func (b backend) WriteMetrics(w io.Writer) error {
	return b.e.WriteMetrics(w)
}

// Chat over HTTP: select, run the call when it is idempotent (an HTTP
// client cannot be asked to confirm mid-stream, so a destructive call is
// proposed, not run: the client confirms by POSTing it to /v1/call), and
// stream the result.
func (b backend) Chat(ctx context.Context, caller, text string, emit func(string, any) error) error {
	sel, err := b.e.Select(ctx, caller, text)
	if err != nil {
		return err
	}
	if err := emit("selection", sel); err != nil {
		return err
	}
	if sel.Function == grammar.NoneTool {
		return emit("message", map[string]string{"text": "no tool fits this request"})
	}
	var tool pipeline.Tool
	for _, c := range b.e.Catalog.Callable(caller) {
		if c.Tool.Name == sel.Function {
			tool = c.Tool
		}
	}
	if !tool.Idempotent {
		return emit("confirm", map[string]any{"tool": sel.Function, "arguments": sel.Arguments,
			"message": fmt.Sprintf("%s is not idempotent: POST it to /v1/call to run it", sel.Function)})
	}
	res, err := b.e.Call(ctx, pipeline.Request{Tool: sel.Function, Provider: sel.Provider, Params: sel.Arguments, Caller: caller})
	if err != nil {
		return err
	}
	return emit("result", res)
}
