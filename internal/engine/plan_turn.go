package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/airs-dev/airs/chains"
	"github.com/airs-dev/airs/guard"
	"github.com/airs-dev/airs/pipeline"
	"github.com/airs-dev/airs/selector"
	"github.com/airs-dev/airs/session"
)

// planTurn serves a request of several parts in no-LLM mode as a plan
// (selector.PlanParts) run through chains, each call through the pipeline,
// and reports done=false when the request is not one (it is then served by
// one call). A request whose parts cannot all be planned is served by one
// call too, with a note that says which part could not be. At most
// maxSteps steps run (a foreach step counts once); a longer plan stops
// there with a note.
func (e *Engine) planTurn(ctx context.Context, caller, text string, ui TurnUI, maxSteps int, tr *TurnResult, rec *session.Record, start time.Time) (bool, error) {
	// A plan from the request's interpretation (a file read, then
	// summarized or compared) first; one step of it is served as one call.
	pr, err := e.sel.PlanUnderstood(ctx, caller, text, e.catalog)
	if err != nil || pr == nil || len(pr.Outline) < 2 {
		pr, err = e.sel.PlanParts(ctx, caller, text, e.catalog)
	}
	if err != nil {
		if ctx.Err() != nil {
			return false, nil
		}
		ui.Note(err.Error() + " — serving it as one call instead")
		return false, nil
	}
	if pr == nil {
		return false, nil
	}
	plan := pr.Plan
	steps := plan.Steps
	if len(steps) > maxSteps {
		steps = steps[:maxSteps]
		tr.Stopped = fmt.Sprintf("the plan has %d steps, more than max_steps (%d): only the first %d run — raise max_steps in airs.yaml, or ask for the rest in a new request", len(plan.Steps), maxSteps, maxSteps)
	}

	ui.Note(fmt.Sprintf("the request runs as a plan of %d steps, each call through the pipeline", len(plan.Steps)))

	// Show each step and confirm the ones whose tool is destructive; a
	// declined step and every step after it do not run.
	sels := make([]*selector.Selection, len(steps))
	tools := make([]*pipeline.Tool, len(steps))
	answered := planAnswers{}
	run := len(steps)
	for i, st := range steps {
		if i > 0 {
			if su, ok := ui.(StepUI); ok {
				su.Step(i+1, len(steps))
			}
		}
		sel := &selector.Selection{Mode: selector.ModeNoLLM, Function: st.Function, Arguments: st.Arguments, Validation: "ok"}
		if i == 0 {
			sel.Notice, sel.Candidates, sel.Latency = pr.Notice, pr.Candidates, pr.Latency
		}
		if st.Foreach != "" {
			sel.Notice = "once for each element of " + st.Foreach
		}
		tool, needsConfirm := e.lookup(caller, st.Function, "")
		sels[i], tools[i] = sel, tool
		ui.Selected(sel, tool)
		if needsConfirm {
			t := pipeline.Tool{Name: st.Function}
			if tool != nil {
				t = *tool
			}
			if !e.confirmStep(ctx, ui, caller, t, st.Arguments, text, answered) {
				run = i
				break
			}
		}
	}
	fillSelection(rec, sels[0], nil)
	rec.Call = nil // a plan's calls are Steps
	for _, st := range steps {
		rec.Steps = append(rec.Steps, session.Call{Tool: st.Function, Arguments: decodeArgs(st.Arguments)})
	}
	if run < len(steps) {
		tr.Stopped = fmt.Sprintf("step %d not run: declined by the user; the plan stops there", run+1)
		ui.Note(tr.Stopped)
	} else if tr.Stopped != "" {
		ui.Note(tr.Stopped)
	}
	if run == 0 {
		tr.Steps = []TurnStep{{Selection: sels[0], Tool: tools[0], Skipped: "declined by the user", Declined: true}}
		rec.Execution = &session.Execution{Outcome: session.OutcomeSkipped, Error: tr.Steps[0].Skipped}
		e.record(rec, tr, start)
		return true, nil
	}

	// The plan that runs: its first run steps (references only point back).
	cut, _ := json.Marshal(map[string]any{"steps": steps[:run]})
	c, err := chains.ParsePlan(cut)
	if err == nil {
		err = c.Validate(e.toolCatalog(), caller)
	}
	if err != nil { // PlanParts validated the whole plan; a prefix stays valid
		return false, nil
	}
	ex := &uiExec{e: e, ui: ui}
	if e.chainRunner != nil {
		// On the workers: the UI sees the steps' results below, not each
		// call as it runs.
		ui.Note("the plan runs on the chain workers (chains.engine: temporal)")
	}
	if len(answered) > 0 { // the answers settle the gate's holds of the steps' calls (confirm.go)
		ctx = guard.WithAsker(ctx, e.reviewer(caller), answered.ask)
	}
	res, rerr := e.runChain(ctx, c, cut, "plan", "", nil, chains.Options{Executor: ex, Catalog: e.toolCatalog(), Caller: caller, Intent: text})
	tr.Run = res
	if e.chainRunner != nil && res != nil {
		showCalls(ui, res) // the workers ran them: the UI hears of each now
	}

	var recSteps []session.TurnStep
	for i, st := range steps {
		step, rs := planStepOutcome(ui, i, st, run, sels[i], tools[i], res, rerr)
		if i == len(steps)-1 && tr.Stopped != "" {
			rs.Note = tr.Stopped
		}
		tr.Steps = append(tr.Steps, step)
		recSteps = append(recSteps, rs)
	}
	recordPlanSteps(rec, recSteps, rerr)
	if rerr != nil && ctx.Err() == nil {
		ui.Note("the plan stopped: " + rerr.Error())
	}
	var aerr error
	if e.model != nil && ctx.Err() == nil {
		aerr = e.answerFromSteps(ctx, ui, text, steps, tr)
	}
	e.record(rec, tr, start)
	return true, aerr
}

// showCalls tells ui of each call of a chain that ran elsewhere (a chain
// runner), in the order they started, as uiExec does for calls made here:
// Running, then Result with the call's output (a foreach element's from
// its step's array).
func showCalls(ui TurnUI, res *chains.Result) {
	for _, n := range res.Trace {
		if n.CallID == "" {
			continue
		}
		r := &pipeline.Result{CallID: n.CallID, Tool: n.Tool, Outcome: n.Outcome, Latency: n.Latency}
		var err error
		if sr := res.Steps[n.Step]; n.Outcome == pipeline.OutcomeOK && sr != nil && sr.Status == chains.StatusOK {
			r.Output = sr.Output
			if n.Item >= 0 {
				var items []json.RawMessage
				if json.Unmarshal(sr.Output, &items) == nil && n.Item < len(items) {
					r.Output = items[n.Item]
				}
			}
		} else if n.Outcome != pipeline.OutcomeOK {
			err = &pipeline.RemoteError{Message: n.Error}
			r.ErrorKind = pipeline.KindOf(err)
		}
		ui.Running(n.CallID)
		ui.Result(r, err)
	}
}

// stepLatency sums the pipeline latency of a step's calls.
func stepLatency(res *chains.Result, id string) time.Duration {
	var d time.Duration
	for _, n := range res.Trace {
		if n.Step == id && n.CallID != "" {
			d += n.Latency
		}
	}
	return d
}

func planOutcome(s chains.StepStatus) string {
	switch s {
	case chains.StatusOK:
		return session.OutcomeOK
	case chains.StatusCancelled:
		return session.OutcomeCancelled
	case chains.StatusSkipped:
		return session.OutcomeSkipped
	}
	return session.OutcomeError
}

// uiExec runs a plan's calls through the engine and shows each on the
// turn's UI. chains calls it from several goroutines; the UI is told one
// thing at a time.
type uiExec struct {
	e  *Engine
	ui TurnUI
	mu sync.Mutex
}

// ItemUI is a TurnUI that can say which foreach element a call of a
// plan's step is for ("papers/bm25.pdf"): Item comes before the call's
// Running, with the same call ID.
type ItemUI interface {
	Item(callID, label string)
}

func (x *uiExec) Call(ctx context.Context, req pipeline.Request) (*pipeline.Result, error) {
	x.mu.Lock()
	if iu, ok := x.ui.(ItemUI); ok {
		if l := chains.ItemLabel(ctx); l != "" {
			iu.Item(req.CallID, l)
		}
	}
	x.ui.Running(req.CallID)
	x.mu.Unlock()
	res, err := x.e.Call(ctx, req)
	shown := res
	if shown == nil {
		shown = &pipeline.Result{CallID: req.CallID, Tool: req.Tool, Outcome: pipeline.OutcomeError, ErrorKind: pipeline.KindOf(err)}
	}
	x.mu.Lock()
	x.ui.Result(shown, err)
	x.mu.Unlock()
	return res, err
}

func (x *uiExec) Cancel(id string) bool { return x.e.manager.Cancel(id) }

// recordPlanSteps fills the session record of a plan's turn: its steps,
// and as its outcome the first step's that was not ok (or the run's error),
// the steps' latencies summed.
func recordPlanSteps(rec *session.Record, recSteps []session.TurnStep, rerr error) {
	rec.TurnSteps = recSteps
	rec.Execution = &session.Execution{Outcome: session.OutcomeOK}
	for _, rs := range recSteps {
		rec.Execution.LatencyMS += rs.Execution.LatencyMS
		if rs.Execution.Outcome != session.OutcomeOK && rec.Execution.Outcome == session.OutcomeOK {
			rec.Execution.Outcome, rec.Execution.Error = rs.Execution.Outcome, rs.Execution.Error
		}
	}
	if rerr != nil && rec.Execution.Outcome == session.OutcomeOK {
		rec.Execution.Outcome, rec.Execution.Error = outcomeOf(rerr), rerr.Error()
	}
}

// answerFromSteps has a model that writes answers (though it does not
// select) answer from every step's result, as after a model's steps.
func (e *Engine) answerFromSteps(ctx context.Context, ui TurnUI, text string, steps []selector.PlanStep, tr *TurnResult) error {
	var prior []selector.Prior
	for i, st := range tr.Steps {
		if st.Result == nil {
			continue
		}
		p := selector.Prior{Function: steps[i].Function, Arguments: steps[i].Arguments, Result: string(st.Result.Output)}
		if st.CallErr != nil {
			p.Error = st.CallErr.Error()
		}
		prior = append(prior, p)
	}
	if len(prior) > 0 {
		shown, cut, per := e.priorCut(prior)
		for i, c := range cut {
			if c {
				tr.Truncated = true
				ui.Note(fmt.Sprintf("the result of step %d (%d bytes) was truncated to %d bytes for the model's context", i+1, len(prior[i].Result), per))
			}
		}
		var err error
		tr.Answer, err = e.answer(ctx, ui, stepsMessages(text, shown))
		return err
	}
	return nil
}

// planStepOutcome is step i of a plan's turn as the turn and its session
// record show it: not run (declined at step run, or the chain did not reach
// it), or its result in the chain's run res.
func planStepOutcome(ui TurnUI, i int, st selector.PlanStep, run int, sel *selector.Selection, tool *pipeline.Tool, res *chains.Result, rerr error) (TurnStep, session.TurnStep) {
	step := TurnStep{Selection: sel, Tool: tool}
	rs := session.TurnStep{Step: i + 1, Call: &session.Call{Tool: st.Function, Arguments: decodeArgs(st.Arguments)}, Validation: &session.Validation{Valid: true}}
	var sr *chains.StepResult
	if res != nil {
		sr = res.Steps[st.ID]
	}
	switch {
	case i >= run:
		step.Skipped = "declined by the user"
		if i > run {
			step.Skipped = fmt.Sprintf("not run: step %d was declined", run+1)
		}
		rs.Execution = &session.Execution{Outcome: session.OutcomeSkipped, Error: step.Skipped}
	case sr == nil:
		step.Skipped = "not run: " + errString(rerr)
		rs.Execution = &session.Execution{Outcome: session.OutcomeSkipped, Error: step.Skipped}
	default:
		lat := stepLatency(res, st.ID)
		r := &pipeline.Result{Tool: st.Function, Output: sr.Output, Latency: lat, Outcome: pipeline.OutcomeOK}
		var serr error
		if sr.Status != chains.StatusOK {
			r.Outcome = pipeline.OutcomeError
			serr = fmt.Errorf("step %s (%s) %s: %s", st.ID, st.Function, sr.Status, sr.Error)
			if sr.Status == chains.StatusSkipped {
				step.Skipped = sr.Error
			}
		}
		step.Result, step.CallErr = r, serr
		if st.Foreach != "" && sr.Status == chains.StatusOK && string(bytes.TrimSpace(sr.Output)) == "[]" {
			// Nothing failed, but nothing was done either: say so.
			ui.Note(fmt.Sprintf("step %d (%s) ran for no element: %s is empty", i+1, st.Function, st.Foreach))
		}
		rs.Execution = &session.Execution{Outcome: planOutcome(sr.Status), Error: sr.Error, LatencyMS: ms(lat)}
	}
	return step, rs
}
