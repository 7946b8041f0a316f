// Package httpapi is the engine as `airs serve` serves it: the
// server.Backend (and its optional Recommend, Review, Grant and UI
// backends) over an *engine.Engine. It decides and runs nothing itself:
// every call, selection, plan and turn is the engine's.
package httpapi

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/airs-dev/airs/grammar"
	"github.com/airs-dev/airs/internal/engine"
	"github.com/airs-dev/airs/pipeline"
	"github.com/airs-dev/airs/selector"
	"github.com/airs-dev/airs/server"
	"github.com/airs-dev/airs/understand"
)

// New is the engine as `airs serve` serves it; with suggestions on
// (a recommender) it is also a server.RecommendBackend and UIBackend.
func New(e *engine.Engine) server.Backend {
	if e.Recommender() == nil {
		return backend{e}
	}
	return recBackend{backend{e}}
}

type backend struct{ e *engine.Engine }

func (b backend) Call(ctx context.Context, req pipeline.Request) (*pipeline.Result, error) {
	return b.e.Call(ctx, req)
}

// Admit charges a costly request to the caller's rate limit (the
// Manager's per-agent bucket, the one calls take from).
func (b backend) Admit(caller string) error { return b.e.Admit(caller) }

// CallerRefused lets the server refuse a held-back caller's call before
// it reads the body (pipeline.Manager.CallerRefused).
func (b backend) CallerRefused(caller string) error { return b.e.CallerRefused(caller) }

// recordedSelection and recordedPlan are the answers of /v1/select and
// /v1/plan: the decision with its session record's ID or why it was not
// recorded.
type recordedSelection struct {
	*selector.Selection
	engine.RecordInfo
}

type recordedPlan struct {
	*selector.PlanResult
	engine.RecordInfo
}

// Select over HTTP chooses a call without running it, and records the
// request in the session log like a chat turn (execution "skipped": the
// client runs the call, if it wants, through /v1/call).
func (b backend) Select(ctx context.Context, caller, text string) (any, error) {
	sel, info, err := b.e.SelectRecorded(ctx, caller, text, "POST /v1/select")
	if sel == nil {
		return nil, err
	}
	return recordedSelection{sel, info}, err
}

// Plan over HTTP plans without running, and records the request with the
// plan's steps (each step's tool and its arguments as planned, references
// to earlier steps included as {{…}} strings).
func (b backend) Plan(ctx context.Context, caller, text string) (any, error) {
	// No-LLM planning costs a selection per part: the server says how many
	// parts a request may have, more are refused before any work, and each
	// part past the first is charged to the caller's rate limit.
	n := len(understand.ParsePlain(text).Parts)
	if max := server.PlanParts(ctx); max > 0 && n > max {
		return nil, &server.TooLarge{Endpoint: "POST /v1/plan", What: `the parts of "text" (sentences, or steps joined by "then")`,
			Unit: "parts", Actual: n, Max: max, Setting: "http.limits.plan_parts"}
	}
	server.Owe(ctx, n-1)
	pr, info, err := b.e.PlanRecorded(ctx, caller, text, "POST /v1/plan")
	if pr == nil {
		return nil, err
	}
	return recordedPlan{pr, info}, err
}

func (b backend) RunPipeline(ctx context.Context, caller string, yaml []byte, input map[string]any) (any, error) {
	res, err := b.e.RunPipeline(ctx, caller, "request", yaml, input, false)
	if err != nil && res == nil {
		return nil, err
	}
	return res, err
}

// HostPaths are the directories an error text over HTTP names by name
// instead (server.HostPaths): each space's, AIRS's state directory, and
// the home directory of the user running airs.
func (b backend) HostPaths() map[string]string {
	m := map[string]string{}
	if home, err := os.UserHomeDir(); err == nil {
		m[home] = "~"
	}
	if c := b.e.Config(); c != nil {
		if c.Home != "" {
			m[c.Home] = "<AIRS_HOME>"
		}
		for name, dir := range c.Spaces {
			m[dir] = "<" + name + ">"
		}
	}
	return m
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
	for _, t := range b.e.CallableTools(caller) {
		out = append(out, ToolInfo{t.Tool.Name, t.Provider, t.Tool.Version, t.Tool.Description, t.Tool.Parameters, t.Tool.Idempotent})
	}
	return out
}

// WriteMetrics writes the metrics as caller may see them: a series about
// one tool only for the tools caller may call (another agent's tools, and
// how much they are used, are not its business).
func (b backend) WriteMetrics(caller string, w io.Writer) error {
	var buf bytes.Buffer
	if err := b.e.WriteMetrics(&buf); err != nil {
		return err
	}
	mine := map[string]bool{}
	for _, t := range b.e.CallableTools(caller) {
		mine[t.Tool.Name] = true
	}
	return writeToolsOf(w, buf.Bytes(), mine)
}

// writeToolsOf copies Prometheus text, leaving out the samples whose tool
// label names a tool not in mine.
func writeToolsOf(w io.Writer, text []byte, mine map[string]bool) error {
	bw := bufio.NewWriter(w)
	for line := range bytes.Lines(text) {
		if len(line) > 0 && line[0] != '#' {
			if tool, ok := labelValue(line, "tool"); ok && !mine[tool] {
				continue
			}
		}
		bw.Write(line)
	}
	return bw.Flush()
}

// labelValue is the value of label name in a sample line, unescaped.
func labelValue(line []byte, name string) (string, bool) {
	open := bytes.IndexByte(line, '{')
	if open < 0 {
		return "", false
	}
	rest := line[open+1:]
	for len(rest) > 0 {
		eq := bytes.IndexByte(rest, '=')
		if eq < 0 || eq+1 >= len(rest) || rest[eq+1] != '"' {
			return "", false
		}
		key := string(bytes.TrimLeft(rest[:eq], ", "))
		var val strings.Builder
		i := eq + 2
		for ; i < len(rest) && rest[i] != '"'; i++ {
			if rest[i] == '\\' && i+1 < len(rest) {
				i++
				switch rest[i] {
				case 'n':
					val.WriteByte('\n')
				default:
					val.WriteByte(rest[i])
				}
				continue
			}
			val.WriteByte(rest[i])
		}
		if key == name {
			return val.String(), true
		}
		if i+1 >= len(rest) || rest[i+1] == '}' {
			return "", false
		}
		rest = rest[i+1:]
	}
	return "", false
}

// Chat over HTTP is a Turn whose UI streams server-sent events. An HTTP
// client cannot be asked to confirm mid-stream, so a call of a tool that is
// destructive is proposed ("confirm" event), not run: the client runs it
// by POSTing it to /v1/call. Every request is recorded like chat's.
func (b backend) Chat(ctx context.Context, caller, text string, emit func(string, any) error) error {
	ui := &sseUI{emit: emit}
	tr, err := b.e.Turn(ctx, caller, text, ui, engine.TurnOptions{})
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

var _ engine.ProposerUI = (*sseUI)(nil)

// ProposesCalls: an HTTP stream cannot ask mid-turn, so a destructive call
// is proposed to the client by Confirm and never made (engine.ProposerUI).
func (u *sseUI) ProposesCalls() {}

func (u *sseUI) Confirm(ctx context.Context, tool pipeline.Tool, args json.RawMessage) bool {
	u.send("confirm", map[string]any{"tool": tool.Name, "arguments": args,
		"message": fmt.Sprintf("%s is destructive: POST it to /v1/call to run it", tool.Name)})
	return false
}

func (u *sseUI) Running(callID string) { u.send("running", map[string]string{"call_id": callID}) }

func (u *sseUI) Result(res *pipeline.Result, err error) {
	if err != nil {
		b := server.ErrorBody(err, pipeline.KindOf(err)) // bounded, HTTP hints
		b["result"] = res
		u.send("result", b)
		return
	}
	u.send("result", res)
}

func (u *sseUI) Note(msg string) { u.send("note", map[string]string{"text": msg}) }

func (u *sseUI) Token(chunk string) error {
	u.send("token", map[string]string{"text": chunk})
	return u.err
}
