package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/airs-dev/airs/grammar"
	"github.com/airs-dev/airs/pipeline"
	"github.com/airs-dev/airs/selector"
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

// Chat over HTTP is a Turn whose UI streams server-sent events. An HTTP
// client cannot be asked to confirm mid-stream, so a call of a tool that is
// not idempotent is proposed ("confirm" event), not run: the client runs it
// by POSTing it to /v1/call. Every request is recorded like chat's.
func (b backend) Chat(ctx context.Context, caller, text string, emit func(string, any) error) error {
	ui := &sseUI{emit: emit}
	tr, err := b.e.Turn(ctx, caller, text, ui, TurnOptions{})
	if err != nil {
		return err
	}
	if ui.err != nil {
		return ui.err
	}
	if tr.RecordErr != nil {
		return emit("note", map[string]string{"text": "this request was not recorded: " + tr.RecordErr.Error()})
	}
	return nil
}

// sseUI turns a Turn's progress into events: selection, confirm, running,
// result, note, token, and step before each step after the first.
type sseUI struct {
	emit func(string, any) error
	err  error
	step int // the step being served (StepUI), 0 before the second
}

// Step: a "step" event opens each step after the first (a turn may take
// several: max_steps); that step's selection, running, result follow.
func (u *sseUI) Step(n, max int) {
	u.step = n
	u.send("step", map[string]int{"step": n, "max_steps": max})
}

func (u *sseUI) send(event string, data any) {
	if u.err == nil {
		u.err = u.emit(event, data)
	}
}

func (u *sseUI) Selected(sel *selector.Selection, tool *pipeline.Tool) {
	u.send("selection", sel)
	switch {
	case sel.Function == grammar.NoneTool && u.step > 1:
		u.send("note", map[string]string{"text": "no further call needed: the answer follows from the results"})
	case sel.Function == grammar.NoneTool:
		u.send("note", map[string]string{"text": "no tool fits this request"})
	}
}

func (u *sseUI) Confirm(ctx context.Context, tool pipeline.Tool, args json.RawMessage) bool {
	u.send("confirm", map[string]any{"tool": tool.Name, "arguments": args,
		"message": fmt.Sprintf("%s is not idempotent: POST it to /v1/call to run it", tool.Name)})
	return false
}

func (u *sseUI) Running(callID string) { u.send("running", map[string]string{"call_id": callID}) }

func (u *sseUI) Result(res *pipeline.Result, err error) {
	if err != nil {
		u.send("result", map[string]any{"result": res, "error": pipeline.KindOf(err), "message": err.Error(), "hint": pipeline.Hint(err)})
		return
	}
	u.send("result", res)
}

func (u *sseUI) Note(msg string) { u.send("note", map[string]string{"text": msg}) }

func (u *sseUI) Token(chunk string) error {
	u.send("token", map[string]string{"text": chunk})
	return u.err
}
