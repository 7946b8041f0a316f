package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/airs-dev/airs/evals/session"
	"github.com/airs-dev/airs/grammar"
	"github.com/airs-dev/airs/internal/ollama"
	"github.com/airs-dev/airs/pipeline"
	"github.com/airs-dev/airs/selector"
)

// TurnUI is what a channel (the chat REPL, an HTTP stream) shows and asks
// during one Turn. Turn calls its methods from its own goroutine, in the
// order of the turn: Selected, then Confirm (only for a tool that is not
// idempotent), Running, Result, then Note and Token while the model writes
// the final answer.
type TurnUI interface {
	// Selected reports the chosen call. sel.Function is grammar.NoneTool
	// when no tool fits; tool is nil then.
	Selected(sel *selector.Selection, tool *pipeline.Tool)
	// Confirm asks whether to run a call of a tool that is not idempotent.
	// Only true runs it; a channel that cannot ask must answer false.
	Confirm(ctx context.Context, tool pipeline.Tool, args json.RawMessage) bool
	// Running gives the call's ID just before the call enters the
	// pipeline, so the channel can cancel it (Manager.Cancel) as well as
	// its context.
	Running(callID string)
	// Result reports the call's outcome: res is never nil, err is the
	// pipeline's error (res.Output may hold partial output with it).
	Result(res *pipeline.Result, err error)
	// Note is a remark for the user about the answer, e.g. that the result
	// was truncated for the model's context.
	Note(msg string)
	// Token is one streamed piece of the model's final answer. An error
	// stops the stream.
	Token(chunk string) error
}

// TurnOptions add a channel's context to a Turn.
type TurnOptions struct {
	// Session groups the turns of one conversation in the session log.
	Session string
}

// TurnResult is what happened in a Turn.
type TurnResult struct {
	// RecordID is the session record's ID (set even when recording is off,
	// so feedback can refer to it); "" when nothing was recorded.
	RecordID  string
	Selection *selector.Selection // nil when selection failed outright
	Tool      *pipeline.Tool      // the chosen tool; nil for "none"
	// Declined: the user did not confirm a call of a tool that is not
	// idempotent, so it did not run.
	Declined bool
	// Skipped says why a chosen call did not run, when it did not (declined,
	// invalid arguments).
	Skipped string
	Result  *pipeline.Result // nil when no call ran
	CallErr error
	// Answer is the model's final answer ("" in no-LLM mode).
	Answer string
	// Truncated: the result given to the model was cut (with a note).
	Truncated bool
	// RecordErr is the session recorder's error, if recording this turn
	// failed (the channel should say so: nothing is lost silently).
	RecordErr error
}

// Ran reports whether a call went through the pipeline.
func (r *TurnResult) Ran() bool { return r != nil && r.Result != nil }

// Turn serves one natural-language request for caller: select a call,
// confirm it when its tool is not idempotent (a destructive call never runs
// unconfirmed), run it through the pipeline, give the result to the model
// for the final answer (streamed, truncated with a note when large), and
// record the whole request in the session log when recording is on.
//
// Cancelling ctx stops whatever stage is running; the partial result is in
// the TurnResult. The returned error is selection's (the call's error is
// TurnResult.CallErr, the model's answer's is returned too since the user
// saw it fail).
func (e *Engine) Turn(ctx context.Context, caller, text string, ui TurnUI, opts TurnOptions) (*TurnResult, error) {
	start := time.Now()
	tr := &TurnResult{}
	rec := session.Record{Session: opts.Session, Channel: e.Channel, Caller: caller, Request: text}

	sel, err := e.Select(ctx, caller, text)
	tr.Selection = sel
	if sel == nil {
		rec.Execution = &session.Execution{Outcome: session.OutcomeSkipped, ErrorKind: pipeline.KindOf(err), Error: errString(err)}
		e.record(&rec, tr, start)
		return tr, err
	}
	fillSelection(&rec, sel, e.modelOptions())

	if sel.Function == grammar.NoneTool {
		ui.Selected(sel, nil)
		if err == nil && e.Model != nil {
			tr.Answer, err = e.answer(ctx, ui, directMessages(text))
		}
		e.record(&rec, tr, start)
		return tr, err
	}

	tool, needsConfirm := e.lookup(caller, sel.Function, sel.Provider)
	tr.Tool = tool
	ui.Selected(sel, tool)
	switch {
	case err != nil: // the model's call stayed invalid after repair
		tr.Skipped = "the model's call is invalid"
	case sel.Validation != "ok":
		tr.Skipped = "the arguments do not match the tool's schema: " + sel.Validation
	case needsConfirm:
		t := pipeline.Tool{Name: sel.Function}
		if tool != nil {
			t = *tool
		}
		if !ui.Confirm(ctx, t, sel.Arguments) {
			tr.Declined, tr.Skipped = true, "declined by the user"
		}
	}
	if tr.Skipped != "" {
		rec.Execution = &session.Execution{Outcome: session.OutcomeSkipped, Error: tr.Skipped}
		e.record(&rec, tr, start)
		return tr, err
	}

	callID := "chat-" + session.NewID()[:16]
	if e.Channel != "" {
		callID = e.Channel + "-" + session.NewID()[:16]
	}
	ui.Running(callID)
	res, cerr := e.Call(ctx, pipeline.Request{
		CallID: callID, Tool: sel.Function, Provider: sel.Provider, Params: sel.Arguments,
		Encoding: pipeline.JSON, Caller: caller, Intent: text,
	})
	if res == nil { // Manager.Call always returns one; be safe
		res = &pipeline.Result{CallID: callID, Tool: sel.Function, Outcome: pipeline.OutcomeError, ErrorKind: pipeline.KindOf(cerr)}
	}
	tr.Result, tr.CallErr = res, cerr
	rec.Execution = &session.Execution{
		Outcome: outcomeOf(cerr), ErrorKind: res.ErrorKind, Error: errString(cerr),
		LatencyMS: ms(res.Latency),
	}
	ui.Result(res, cerr)

	// Result integration: the model writes the final answer from the
	// result, unless the user cancelled.
	if e.Model != nil && ctx.Err() == nil {
		max := e.MaxResultBytes
		if max <= 0 {
			max = 8 << 10
		}
		shown, cut := Truncate(res.Output, max)
		if cut {
			tr.Truncated = true
			ui.Note(fmt.Sprintf("the result (%d bytes) was truncated to %d bytes for the model's context", len(res.Output), max))
		}
		tr.Answer, err = e.answer(ctx, ui, resultMessages(text, sel, shown, cerr))
	}
	e.record(&rec, tr, start)
	return tr, err
}

// lookup finds the caller's tool by name (the selected provider's first)
// and says whether running it needs the user's confirmation: it does when
// any provider of that name is not idempotent, since the pipeline may route
// to another provider than the preferred one, and when the tool is unknown.
func (e *Engine) lookup(caller, name, provider string) (*pipeline.Tool, bool) {
	var found *pipeline.Tool
	confirm := false
	for _, c := range e.Catalog.Callable(caller) {
		if c.Tool.Name != name {
			continue
		}
		if !c.Tool.Idempotent {
			confirm = true
		}
		if found == nil || c.Provider == provider {
			t := c.Tool
			found = &t
		}
	}
	return found, confirm || found == nil
}

// modelOptions are the options the selector generates with (its defaults
// for zero values), for the session log.
func (e *Engine) modelOptions() map[string]any {
	c := e.Selector.Config
	or := func(v, d int) int {
		if v <= 0 {
			return d
		}
		return v
	}
	seed := c.Seed
	if seed == 0 {
		seed = 42
	}
	return map[string]any{
		"temperature": 0, "seed": seed, "num_ctx": or(c.NumCtx, 8192),
		"num_predict": or(c.NumPredict, 1024), "top_k_tools": or(c.TopK, 8),
	}
}

const answerSystem = "You are AIRS, an assistant that answers with the help of tools. " +
	"Answer the user's request in plain language, briefly. When a tool result is given, base the answer on it; " +
	"when it says the result was truncated, say that your answer covers only the part shown."

func directMessages(text string) []ollama.Message {
	return []ollama.Message{
		{Role: "system", Content: answerSystem + " No tool fits this request: answer it yourself if you can, or say what you cannot do."},
		{Role: "user", Content: text},
	}
}

func resultMessages(text string, sel *selector.Selection, shown string, callErr error) []ollama.Message {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n\nTool call: %s %s\n", text, sel.Function, compact(sel.Arguments))
	if callErr != nil {
		fmt.Fprintf(&b, "The call failed: %v\n", callErr)
		if h := pipeline.Hint(callErr); h != "" {
			fmt.Fprintf(&b, "Hint: %s\n", h)
		}
	}
	if shown != "" {
		fmt.Fprintf(&b, "Tool result:\n%s\n", shown)
	}
	return []ollama.Message{{Role: "system", Content: answerSystem}, {Role: "user", Content: b.String()}}
}

// answer streams the model's final answer to ui.
func (e *Engine) answer(ctx context.Context, ui TurnUI, msgs []ollama.Message) (string, error) {
	temp := 0.0
	o := e.modelOptions()
	resp, err := e.Model.Chat(ctx, ollama.ChatRequest{
		Model:    e.ModelName,
		Messages: msgs,
		Options:  ollama.Options{Temperature: &temp, NumCtx: o["num_ctx"].(int), NumPredict: o["num_predict"].(int)},
	}, ui.Token)
	if err != nil {
		return resp.Content, fmt.Errorf("the model's answer: %w", err)
	}
	return resp.Content, nil
}

// record appends the turn to the session log (when recording is on).
func (e *Engine) record(rec *session.Record, tr *TurnResult, start time.Time) {
	if rec.Latency == nil {
		rec.Latency = &session.Latency{}
	}
	if rec.Execution != nil {
		rec.Latency.ExecutionMS = rec.Execution.LatencyMS
	}
	rec.Latency.TotalMS = ms(time.Since(start))
	rec.ID = session.NewID()
	tr.RecordID = rec.ID
	if e.Recorder == nil {
		return
	}
	// The user's cancelling a call must not lose its record.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := e.Recorder.Record(ctx, *rec); err != nil {
		tr.RecordErr = err
	}
}

// Feedback records the user's verdict on a turn: the tool's preference
// score moves (accepted up, dismissed down) and, when recording is on, a
// feedback record refers to the turn's request record.
func (e *Engine) Feedback(ctx context.Context, tr *TurnResult, verdict string) error {
	if tr == nil || tr.RecordID == "" {
		return errors.New("no request to give feedback on yet")
	}
	if tr.Selection != nil && tr.Selection.Function != grammar.NoneTool {
		switch verdict {
		case session.Accepted:
			e.Ranker.Prefs().Accept(tr.Selection.Function)
		case session.Dismissed:
			e.Ranker.Prefs().Dismiss(tr.Selection.Function)
		}
	}
	if e.Recorder == nil {
		return nil
	}
	return e.Recorder.Feedback(ctx, tr.RecordID, session.Feedback{Verdict: verdict})
}

// fillSelection copies what selection decided into a session record.
func fillSelection(rec *session.Record, sel *selector.Selection, opts map[string]any) {
	for _, c := range sel.Candidates {
		comps := make(map[string]float64, len(c.Score))
		for k, v := range c.Score {
			if k != "composite" {
				comps[k] = v
			}
		}
		rec.Candidates = append(rec.Candidates, session.Candidate{Tool: c.Name, Score: c.Composite(), Components: comps})
	}
	rec.GrammarHash = sel.GrammarHash
	rec.RawOutput = sel.Raw
	lat := &session.Latency{}
	if sel.Mode == selector.ModeModel {
		rec.Model = &session.Model{Backend: "ollama", Name: sel.Model, Options: opts}
		// The selector reports one figure for retrieval, grammar and
		// generation together.
		lat.GenerationMS = ms(sel.Latency)
	} else {
		lat.RetrievalMS = ms(sel.Latency) // retrieval, ranking and extraction
	}
	rec.Latency = lat
	if sel.Function != grammar.NoneTool {
		rec.Call = &session.Call{Tool: sel.Function, Arguments: decodeArgs(sel.Arguments)}
	}
	v := &session.Validation{Valid: sel.Validation == "ok"}
	if !v.Valid {
		v.Errors = strings.Split(sel.Validation, "\n")
	}
	rec.Validation = v
}

func decodeArgs(raw json.RawMessage) map[string]any {
	m := map[string]any{}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil || m == nil {
		return map[string]any{}
	}
	return m
}

// outcomeOf maps a call's result to the session log's outcome.
func outcomeOf(err error) string {
	switch pipeline.KindOf(err) {
	case "":
		return session.OutcomeOK
	case pipeline.KindChannelCapabilityDenied, pipeline.KindToolCapabilityDenied, pipeline.KindIntentMisaligned:
		return session.OutcomeDenied
	case pipeline.KindCancelled:
		return session.OutcomeCancelled
	case pipeline.KindTimeout:
		return session.OutcomeTimeout
	}
	return session.OutcomeError
}

func compact(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
