// Package temporal runs chains (DSL pipelines and plans) as Temporal
// workflows, so that a chain survives the loss of the AIRS replica running
// it.
//
// The workflow is a thin, deterministic scheduler: it asks a Prepare
// activity to validate the chain (the worker's catalog, the caller's
// capabilities) and describe its steps, starts each step once its
// dependencies have finished, and runs every call — each plain step, each
// foreach element — as one Call activity. A Call activity runs
// chains.Prepared.Call, the same per-call code chains.Run uses, through the
// worker's pipeline.Manager (capability checks, schema, audit as usual).
//
// Idempotency. Each call's activity id, and the call id the pipeline sees,
// is "RUNID/step" or "RUNID/step[i]": its idempotency key. Temporal records
// each finished activity's result in the workflow's history, so a replica
// that takes a chain over replays the finished steps from history and never
// calls them again. A call whose worker was lost mid-call (its heartbeats
// stop) is retried only when its tool is idempotent; a non-idempotent
// call gets MaximumAttempts 1 and, on the activity side, a ledger refuses a
// key that was already started; the workflow then reports that step as
// interrupted — it may or may not have taken effect — and never repeats it.
package temporal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/airs-dev/airs/chains"
	"github.com/airs-dev/airs/pipeline"
)

// Names under which the workflow and activities are registered.
const (
	WorkflowName        = "airs.chain"
	PrepareActivityName = "airs.chain.prepare"
	ItemsActivityName   = "airs.chain.items"
	CallActivityName    = "airs.chain.call"
	OutputActivityName  = "airs.chain.output"
)

// Error types of application errors raised by the activities; the workflow
// retries none of them.
const (
	ErrTypeInvalid     = "AIRSChainInvalid"  // the chain or its input does not validate
	ErrTypeToolFailure = "AIRSToolFailure"   // the call ran and failed (tool error, denied, timeout)
	ErrTypeNotRepeated = "AIRSNotRepeated"   // a non-idempotent call was started before: not run again
	ErrTypeInterrupted = "AIRSCallInterrupt" // reported by the workflow: a non-idempotent call was lost
)

// Defaults for RunRequest's zero values.
const (
	DefaultHeartbeatTimeout = 10 * time.Second
	DefaultMaxAttempts      = 5
	// DefaultCallTimeout bounds a call whose step has no timeout: the
	// pipeline's maximum plus a margin for the worker.
	DefaultCallTimeout = 11 * time.Minute
)

// RunRequest is one chain run: the workflow's input.
type RunRequest struct {
	// Source is the chain: the YAML DSL (Format "dsl", the default) or a
	// model's plan JSON (Format "plan"). Filename names it in errors.
	Source   string `json:"source"`
	Format   string `json:"format,omitempty"`
	Filename string `json:"filename,omitempty"`

	Input  map[string]any `json:"input,omitempty"`
	Caller string         `json:"caller"` // agent id, from the channel
	// RunID is the chain run id; the workflow id is the same. Empty: the
	// workflow id.
	RunID     string               `json:"run_id,omitempty"`
	OnFailure chains.FailurePolicy `json:"on_failure,omitempty"`
	// MaxParallel bounds the calls in flight (0: chains.DefaultMaxParallel).
	MaxParallel int `json:"max_parallel,omitempty"`
	// HeartbeatTimeout is how long a call may go without its worker's
	// heartbeat before it counts as lost (0: DefaultHeartbeatTimeout).
	HeartbeatTimeout time.Duration `json:"heartbeat_timeout,omitempty"`
	// MaxAttempts bounds the attempts of an idempotent call whose worker
	// was lost (0: DefaultMaxAttempts). Non-idempotent calls get 1.
	MaxAttempts int `json:"max_attempts,omitempty"`
	// Timeout is the whole chain's budget, counted from the workflow's
	// start (0: none). When it runs out the calls in flight are cancelled
	// and nothing more starts, as chains.Run does at its deadline; each
	// call's own deadline is what is left of it.
	Timeout time.Duration `json:"timeout,omitempty"`
}

// Prepared is the Prepare activity's answer.
type Prepared struct {
	Name   string               `json:"name"`
	Steps  []chains.StepInfo    `json:"steps"`
	Policy chains.FailurePolicy `json:"policy"`
}

// CallRequest is one call: the Call activity's input.
type CallRequest struct {
	Run  RunRequest `json:"run"`
	Step int        `json:"step"`
	Item int        `json:"item"` // -1 for a plain step
	// Outputs of the step's dependencies, by step id.
	Outputs    map[string]json.RawMessage `json:"outputs"`
	Idempotent bool                       `json:"idempotent"`
	// Deadline is the chain's deadline (zero: none): the call must end by
	// then, as in chains.Run.
	Deadline time.Time `json:"deadline,omitzero"`
}

// CallResult is a Call activity's answer: the call's output and its trace
// entry (the same entry chains.Run records).
type CallResult struct {
	Output json.RawMessage  `json:"output"`
	Trace  chains.NodeTrace `json:"trace"`
}

// CallFailure is the detail of a Call activity's ToolFailure error: what
// the workflow needs to give the caller the same error chains.Run would.
type CallFailure struct {
	Outcome pipeline.Outcome `json:"outcome"`
	Kind    string           `json:"kind,omitempty"` // pipeline.KindOf the call's error
	Message string           `json:"message"`        // the call's error, without the "step X: outcome:" prefix
	Trace   chains.NodeTrace `json:"trace"`
}

// Failure is one failed call of a run, with the pipeline's error kind.
type Failure struct {
	Step    string           `json:"step"`
	Node    string           `json:"node"`
	Outcome pipeline.Outcome `json:"outcome"`
	Kind    string           `json:"kind,omitempty"`
	Message string           `json:"message"`
}

// Err is the failure as chains.Run reports it: a *chains.StepError whose
// cause has the original kind (pipeline.RemoteError).
func (f Failure) Err() error {
	return &chains.StepError{Step: f.Step, Node: f.Node, Outcome: f.Outcome, Err: &pipeline.RemoteError{ErrKind: f.Kind, Message: f.Message}}
}

// Why a run ended before every step finished (RunResult.Stopped).
const (
	StoppedDeadline  = "deadline"  // RunRequest.Timeout ran out
	StoppedCancelled = "cancelled" // the workflow was cancelled
)

// Key is the call's idempotency key (also its pipeline call id).
func (c CallRequest) Key(stepID string) string {
	if c.Item >= 0 {
		return c.Run.RunID + "/" + stepID + "[" + strconv.Itoa(c.Item) + "]"
	}
	return c.Run.RunID + "/" + stepID
}

// RunResult is the workflow's result. The workflow fails only when the
// chain cannot start (invalid); a step's failure is reported here.
type RunResult struct {
	Chain  string                        `json:"chain"`
	RunID  string                        `json:"run_id"`
	Output json.RawMessage               `json:"output,omitempty"`
	Steps  map[string]*chains.StepResult `json:"steps"`
	// Trace is every node's trace entry, ordered by start, as in
	// chains.Result.
	Trace []chains.NodeTrace `json:"trace"`
	// Policy is the failure policy the run had; Failures its failed calls
	// (the first one stopped it under stop-on-failure).
	Policy   chains.FailurePolicy `json:"policy,omitempty"`
	Failures []Failure            `json:"failures,omitempty"`
	// Stopped is StoppedDeadline or StoppedCancelled when the run ended
	// before its steps did.
	Stopped string `json:"stopped,omitempty"`
	// Interrupted lists the keys of non-idempotent calls whose worker was
	// lost mid-call: they may have taken effect and were not repeated.
	Interrupted []string `json:"interrupted,omitempty"`
	// Error is the chain's error ("" when every step finished).
	Error string `json:"error,omitempty"`
}

// Err returns the chain's error, nil when every step finished: the error
// chains.Run returns for the same ending (a *chains.StepError with the
// call's kind, their join under continue-on-failure, or the chain's
// deadline or cancellation wrapping context.DeadlineExceeded or
// context.Canceled).
func (r *RunResult) Err() error {
	stopped := func() error {
		if r.Stopped == StoppedDeadline {
			return fmt.Errorf("chain %s: %w", r.Chain, context.DeadlineExceeded)
		}
		return fmt.Errorf("chain %s: %w", r.Chain, context.Canceled)
	}
	switch {
	case r.Stopped != "" && r.Policy == chains.StopOnFailure && len(r.Failures) > 0:
		return r.Failures[0].Err()
	case r.Stopped != "":
		return stopped()
	case len(r.Failures) > 0 && r.Policy != chains.ContinueOnFailure:
		return r.Failures[0].Err()
	case len(r.Failures) > 0:
		errs := make([]error, len(r.Failures))
		for i, f := range r.Failures {
			errs[i] = f.Err()
		}
		return errors.Join(errs...)
	case r.Error != "":
		return errors.New(r.Error)
	}
	return nil
}

// Result is the run as a *chains.Result, the shape chains.Run returns.
func (r *RunResult) Result() *chains.Result {
	steps := r.Steps
	if steps == nil {
		steps = map[string]*chains.StepResult{}
	}
	return &chains.Result{Chain: r.Chain, RunID: r.RunID, Output: r.Output, Steps: steps, Trace: r.Trace}
}

type stepState struct {
	done   workflow.Settable
	doneF  workflow.Future
	status chains.StepStatus
	output json.RawMessage
}

// Workflow runs a chain. See the package comment.
func Workflow(ctx workflow.Context, req RunRequest) (*RunResult, error) {
	if req.RunID == "" {
		req.RunID = workflow.GetInfo(ctx).WorkflowExecution.ID
	}
	// The bookkeeping after a cancellation (the result, the chain's
	// output) must still run: it uses a context the cancellation does not
	// reach.
	after, _ := workflow.NewDisconnectedContext(ctx)
	popts := workflow.ActivityOptions{
		StartToCloseTimeout: time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 3, NonRetryableErrorTypes: []string{ErrTypeInvalid}},
	}
	pctx := workflow.WithActivityOptions(ctx, popts)
	var prep Prepared
	if err := workflow.ExecuteActivity(pctx, PrepareActivityName, req).Get(ctx, &prep); err != nil {
		return nil, err
	}
	r := &wfRun{ctx: ctx, req: req, prep: prep, popts: popts,
		res: &RunResult{Chain: prep.Name, RunID: req.RunID, Steps: map[string]*chains.StepResult{}, Policy: prep.Policy}}
	var cancel workflow.CancelFunc
	r.runCtx, cancel = workflow.WithCancel(ctx)
	r.cancel = cancel
	defer cancel()
	r.startBudget()
	par := req.MaxParallel
	if par <= 0 {
		par = chains.DefaultMaxParallel
	}
	r.sem = workflow.NewSemaphore(r.runCtx, int64(par))
	r.states = make([]*stepState, len(prep.Steps))
	for i := range r.states {
		f, s := workflow.NewFuture(ctx)
		r.states[i] = &stepState{done: s, doneF: f}
	}
	for i := range prep.Steps {
		workflow.Go(r.runCtx, func(gctx workflow.Context) { r.step(gctx, i) })
	}
	for _, s := range r.states {
		_ = s.doneF.Get(after, nil)
	}
	cancel() // stops the budget's timer
	return r.end(after), nil
}

// wfRun is one run of Workflow: what its steps' coroutines share. Temporal
// runs a workflow's coroutines one at a time, so no lock guards it.
type wfRun struct {
	ctx    workflow.Context // the workflow's
	runCtx workflow.Context // the steps': cancelled at a stop, a cancellation or the budget's end
	cancel workflow.CancelFunc
	req    RunRequest
	prep   Prepared
	popts  workflow.ActivityOptions // of the pure activities
	res    *RunResult
	states []*stepState
	sem    workflow.Semaphore

	deadline time.Time // the chain's budget, if any
	expired  bool      // the budget ran out
	stopped  bool      // a failure stopped the chain (StopOnFailure)
	fails    []string
}

// startBudget starts the chain's budget, counted from the workflow's start
// (the same instant on every replay).
func (r *wfRun) startBudget() {
	if r.req.Timeout <= 0 {
		return
	}
	r.deadline = workflow.GetInfo(r.ctx).WorkflowStartTime.Add(r.req.Timeout)
	workflow.Go(r.runCtx, func(tctx workflow.Context) {
		// A call running at the deadline ends there itself, with the
		// pipeline's timeout error (its context has the deadline); the
		// timer, a little later, stops whatever did not.
		d := r.deadline.Sub(workflow.Now(tctx)) + budgetGrace
		if d > 0 && workflow.NewTimer(tctx, d).Get(tctx, nil) != nil {
			return // the run ended first
		}
		r.expired = true
		r.cancel()
	})
}

// why a call did not start or was cancelled.
func (r *wfRun) why() string {
	switch {
	case r.stopped:
		return "chain stopped after a step failed"
	case r.expired:
		return "the chain's budget ran out"
	}
	return "run cancelled"
}

func (r *wfRun) fail(f Failure, msg string) {
	r.fails = append(r.fails, msg)
	r.res.Failures = append(r.res.Failures, f)
	if r.prep.Policy == chains.StopOnFailure && !r.stopped {
		r.stopped = true
		r.cancel()
	}
}

func (r *wfRun) trace(t chains.NodeTrace) { r.res.Trace = append(r.res.Trace, t) }

// finish records step i's end and releases the steps waiting for it.
func (r *wfRun) finish(i int, st chains.StepStatus, out json.RawMessage, msg string) {
	s := r.prep.Steps[i]
	r.states[i].status, r.states[i].output = st, out
	sr := &chains.StepResult{ID: s.ID, Tool: s.Tool, Status: st, Error: msg}
	if st == chains.StatusOK {
		sr.Output = out
	}
	if st == chains.StatusSkipped {
		now := workflow.Now(r.ctx)
		r.trace(chains.NodeTrace{Node: s.ID, Step: s.ID, Item: -1, Tool: s.Tool, Start: now, End: now, Outcome: chains.OutcomeSkipped, Error: msg})
	}
	r.res.Steps[s.ID] = sr
	r.states[i].done.Set(nil, nil)
}

// call runs one call as an activity and maps its end to a step status.
// cctx is the calling coroutine's context (a child of runCtx: blocking
// calls must use their own coroutine's context).
func (r *wfRun) call(cctx workflow.Context, i, item int, outputs map[string]json.RawMessage) (json.RawMessage, chains.StepStatus, string) {
	s := r.prep.Steps[i]
	cr := CallRequest{Run: r.req, Step: i, Item: item, Outputs: outputs, Idempotent: s.Idempotent, Deadline: r.deadline}
	key := cr.Key(s.ID)
	node := nodeName(s.ID, item)
	if err := r.sem.Acquire(cctx, 1); err != nil {
		return nil, chains.StatusSkipped, "not started: " + r.why()
	}
	defer r.sem.Release(1)
	start := workflow.Now(cctx)
	actx := workflow.WithActivityOptions(cctx, callOptions(r.req, key, s.Idempotent, r.deadline, start))
	var out CallResult
	err := workflow.ExecuteActivity(actx, CallActivityName, cr).Get(cctx, &out)
	if err == nil {
		r.trace(out.Trace)
		return out.Output, chains.StatusOK, ""
	}
	var ae *temporal.ApplicationError
	isApp := errors.As(err, &ae)
	var cf CallFailure
	fromCall := isApp && ae.Type() == ErrTypeToolFailure && ae.HasDetails() && ae.Details(&cf) == nil && cf.Trace.Node != ""
	if !fromCall {
		cf = CallFailure{Outcome: pipeline.OutcomeError, Message: callError(err, s, key),
			Trace: chains.NodeTrace{Node: node, Step: s.ID, Item: item, Tool: s.Tool, CallID: key, Start: start}}
	}
	// Ended by the run's end, not by its own failure: cancelled, as in
	// chains.Run — unless the chain's budget ended it, which chains.Run
	// reports as the call's timeout.
	if r.runCtx.Err() != nil && (!isApp || fromCall && cf.Outcome != pipeline.OutcomeTimeout) {
		if !r.expired || r.stopped {
			if !fromCall {
				cf.Outcome, cf.Message = pipeline.OutcomeCancelled, "cancelled: "+r.why()
			}
			cf.Trace.Outcome, cf.Trace.Error = cf.Outcome, cf.Message
			if cf.Trace.End.IsZero() {
				cf.Trace.End = workflow.Now(cctx)
				cf.Trace.Latency = cf.Trace.End.Sub(start)
			}
			r.trace(cf.Trace)
			return nil, chains.StatusCancelled, cf.Message
		}
		cf.Outcome, cf.Kind = pipeline.OutcomeTimeout, pipeline.KindTimeout
		cf.Message = (&pipeline.Timeout{Budget: r.req.Timeout}).Error() + ": the chain's budget ran out"
	}
	cf.Trace.Outcome, cf.Trace.Error = cf.Outcome, cf.Message
	if cf.Trace.End.IsZero() || !fromCall {
		cf.Trace.End = workflow.Now(cctx)
		cf.Trace.Latency = cf.Trace.End.Sub(start)
	}
	r.trace(cf.Trace)
	if cf.Outcome == pipeline.OutcomeTimeout && cf.Kind == pipeline.KindTimeout && !fromCall {
		r.fail(Failure{Step: s.ID, Node: node, Outcome: cf.Outcome, Kind: cf.Kind, Message: cf.Message}, fmt.Sprintf("step %s: %s", node, cf.Message))
		return nil, chains.StatusFailed, cf.Message
	}
	msg := callError(err, s, key)
	if !s.Idempotent && (lost(err) || isApp && ae.Type() == ErrTypeNotRepeated) {
		r.res.Interrupted = append(r.res.Interrupted, key)
	}
	r.fail(Failure{Step: s.ID, Node: node, Outcome: cf.Outcome, Kind: cf.Kind, Message: cf.Message}, fmt.Sprintf("step %s: %s", node, msg))
	return nil, chains.StatusFailed, msg
}

// step is step i's coroutine: it waits for the steps it depends on, then
// runs its call (or its foreach's calls) unless one of them did not finish
// or the run ended.
func (r *wfRun) step(gctx workflow.Context, i int) {
	s := r.prep.Steps[i]
	for _, d := range s.Deps {
		_ = r.states[d].doneF.Get(gctx, nil)
	}
	for _, d := range s.Deps {
		if st := r.states[d].status; st != chains.StatusOK {
			r.finish(i, chains.StatusSkipped, nil, fmt.Sprintf("not started: dependency %s %s", r.prep.Steps[d].ID, st))
			return
		}
	}
	if r.runCtx.Err() != nil {
		r.finish(i, chains.StatusSkipped, nil, "not started: "+r.why())
		return
	}
	outputs := make(map[string]json.RawMessage, len(s.Deps))
	for _, d := range s.Deps {
		outputs[r.prep.Steps[d].ID] = r.states[d].output
	}
	if !s.Foreach {
		out, st, msg := r.call(gctx, i, -1, outputs)
		r.finish(i, st, out, msg)
		return
	}
	r.foreach(gctx, i, outputs)
}

// foreach resolves step i's array (a pure activity), then runs one
// activity per element, in parallel within MaxParallel, and gathers their
// outputs in element order.
func (r *wfRun) foreach(gctx workflow.Context, i int, outputs map[string]json.RawMessage) {
	s := r.prep.Steps[i]
	start := workflow.Now(gctx)
	ictx := workflow.WithActivityOptions(gctx, r.popts)
	var n int
	if err := workflow.ExecuteActivity(ictx, ItemsActivityName, CallRequest{Run: r.req, Step: i, Item: -1, Outputs: outputs}).Get(gctx, &n); err != nil {
		msg := "foreach: " + rootMessage(err)
		if r.runCtx.Err() != nil && !isApplication(err) {
			r.finish(i, chains.StatusCancelled, nil, "cancelled: "+r.why())
			return
		}
		r.fail(Failure{Step: s.ID, Node: s.ID, Outcome: pipeline.OutcomeError, Message: msg}, fmt.Sprintf("step %s: %s", s.ID, msg))
		r.trace(chains.NodeTrace{Node: s.ID, Step: s.ID, Item: -1, Tool: s.Tool, Start: start, End: workflow.Now(gctx), Outcome: pipeline.OutcomeError, Error: msg})
		r.finish(i, chains.StatusFailed, nil, msg)
		return
	}
	outs := make([]json.RawMessage, n)
	sts := make([]chains.StepStatus, n)
	msgs := make([]string, n)
	wg := workflow.NewWaitGroup(gctx)
	for k := range n {
		wg.Add(1)
		workflow.Go(gctx, func(kctx workflow.Context) {
			defer wg.Done()
			outs[k], sts[k], msgs[k] = r.call(kctx, i, k, outputs)
		})
	}
	wg.Wait(gctx)
	st, msg := chains.StatusOK, ""
	for k := range n {
		if sts[k] == chains.StatusFailed {
			st, msg = chains.StatusFailed, fmt.Sprintf("item %d: %s", k, msgs[k])
			break
		}
		if sts[k] != chains.StatusOK && st == chains.StatusOK {
			st, msg = chains.StatusCancelled, fmt.Sprintf("item %d: %s", k, msgs[k])
		}
	}
	// The foreach step's own trace entry (no call id), as chains.Run.
	outcome := pipeline.OutcomeOK
	switch st {
	case chains.StatusFailed:
		outcome = pipeline.OutcomeError
	case chains.StatusCancelled:
		outcome = pipeline.OutcomeCancelled
	}
	end := workflow.Now(gctx)
	r.trace(chains.NodeTrace{Node: s.ID, Step: s.ID, Item: -1, Tool: s.Tool, Start: start, End: end, Latency: end.Sub(start), Outcome: outcome, Error: msg})
	if st != chains.StatusOK {
		r.finish(i, st, nil, msg)
		return
	}
	raw, _ := json.Marshal(outs)
	r.finish(i, chains.StatusOK, raw, "")
}

// end is the run's result once every step finished: how it stopped, its
// errors, or the chain's output (rendered by a pure activity, on after: a
// context the run's cancellation does not reach).
func (r *wfRun) end(after workflow.Context) *RunResult {
	res := r.res
	sort.SliceStable(res.Trace, func(a, b int) bool { return res.Trace[a].Start.Before(res.Trace[b].Start) })
	switch {
	case r.expired && !r.stopped:
		res.Stopped = StoppedDeadline
	case r.ctx.Err() != nil:
		res.Stopped = StoppedCancelled
	}
	if len(r.fails) > 0 || res.Stopped != "" {
		if len(r.fails) > 0 {
			res.Error = r.fails[0]
			if r.prep.Policy != chains.StopOnFailure {
				res.Error = joinLines(r.fails)
			}
		}
		if e := res.Err(); e != nil {
			res.Error = e.Error()
		}
		return res
	}
	// Every step finished: render the chain's output (pure, on a worker).
	outputs := map[string]json.RawMessage{}
	for i, s := range r.prep.Steps {
		outputs[s.ID] = r.states[i].output
	}
	var out json.RawMessage
	if err := workflow.ExecuteActivity(workflow.WithActivityOptions(after, r.popts), OutputActivityName, CallRequest{Run: r.req, Step: -1, Item: -1, Outputs: outputs}).Get(after, &out); err != nil {
		res.Error = "output: " + rootMessage(err)
		return res
	}
	res.Output = out
	return res
}

// callOptions: the idempotency key is the activity id; idempotent calls are
// retried when their worker is lost, non-idempotent ones never.
// With a chain deadline the call may run until then, plus a margin so that
// the pipeline's own timeout (the activity applies the deadline) answers
// first, with the call's timeout error.
func callOptions(req RunRequest, key string, idempotent bool, deadline, now time.Time) workflow.ActivityOptions {
	hb := req.HeartbeatTimeout
	if hb <= 0 {
		hb = DefaultHeartbeatTimeout
	}
	attempts := int32(req.MaxAttempts)
	if attempts <= 0 {
		attempts = DefaultMaxAttempts
	}
	if !idempotent {
		attempts = 1
	}
	stc := DefaultCallTimeout
	if !deadline.IsZero() {
		stc = min(stc, max(deadline.Sub(now), 0)+callMargin)
	}
	return workflow.ActivityOptions{
		ActivityID:          key,
		StartToCloseTimeout: stc,
		HeartbeatTimeout:    hb,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval: 200 * time.Millisecond,
			MaximumAttempts: attempts,
			// A call that ran and failed is the tool's answer, not a lost
			// worker: AIRS never retries it (callers decide).
			NonRetryableErrorTypes: []string{ErrTypeInvalid, ErrTypeToolFailure, ErrTypeNotRepeated},
		},
	}
}

// callMargin: see callOptions. budgetGrace: how long after the chain's
// deadline the workflow cancels what still runs (see Workflow).
const (
	callMargin  = 5 * time.Second
	budgetGrace = 2 * time.Second
)

func nodeName(id string, item int) string {
	if item >= 0 {
		return id + "[" + strconv.Itoa(item) + "]"
	}
	return id
}

// lost reports whether err says the call's worker went away (a timeout of
// the activity itself, not an answer from the tool).
func lost(err error) bool {
	var te *temporal.TimeoutError
	return errors.As(err, &te)
}

func isApplication(err error) bool {
	var ae *temporal.ApplicationError
	return errors.As(err, &ae)
}

// callError says what happened to a call, and for a lost non-idempotent
// call what to do.
func callError(err error, s chains.StepInfo, key string) string {
	var ae *temporal.ApplicationError
	if errors.As(err, &ae) && ae.Type() == ErrTypeNotRepeated {
		return ae.Error()
	}
	if lost(err) {
		var te *temporal.TimeoutError
		errors.As(err, &te)
		why := te.TimeoutType().String() + " timeout"
		if !s.Idempotent {
			return fmt.Sprintf("interrupted: tool %s is not idempotent and call %s may have run on a worker that was lost (%s); "+
				"AIRS does not repeat it: check what it did, then re-run the chain or the step by hand", s.Tool, key, why)
		}
		return fmt.Sprintf("call %s lost its worker on every attempt (%s)", key, why)
	}
	return rootMessage(err)
}

// rootMessage strips Temporal's wrapping ("activity error (type: …)") down
// to the activity's own message.
func rootMessage(err error) string {
	for {
		u := errors.Unwrap(err)
		if u == nil {
			return err.Error()
		}
		var ae *temporal.ApplicationError
		if errors.As(err, &ae) && err == error(ae) {
			return ae.Error()
		}
		var te *temporal.TimeoutError
		if errors.As(err, &te) && err == error(te) {
			return "activity timeout: " + te.TimeoutType().String()
		}
		err = u
	}
}

func joinLines(ss []string) string {
	out := ""
	for i, s := range ss {
		if i > 0 {
			out += "\n"
		}
		out += s
	}
	return out
}
