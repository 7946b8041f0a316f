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
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/airs-dev/airs/chains"
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
}

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
	// Interrupted lists the keys of non-idempotent calls whose worker was
	// lost mid-call: they may have taken effect and were not repeated.
	Interrupted []string `json:"interrupted,omitempty"`
	// Error is the chain's error ("" when every step finished).
	Error string `json:"error,omitempty"`
}

// Err returns the chain's error, nil when every step finished.
func (r *RunResult) Err() error {
	if r.Error == "" {
		return nil
	}
	return errors.New(r.Error)
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
	pctx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 3, NonRetryableErrorTypes: []string{ErrTypeInvalid}},
	})
	var prep Prepared
	if err := workflow.ExecuteActivity(pctx, PrepareActivityName, req).Get(ctx, &prep); err != nil {
		return nil, err
	}
	res := &RunResult{Chain: prep.Name, RunID: req.RunID, Steps: map[string]*chains.StepResult{}}

	runCtx, cancel := workflow.WithCancel(ctx)
	defer cancel()
	par := req.MaxParallel
	if par <= 0 {
		par = chains.DefaultMaxParallel
	}
	sem := workflow.NewSemaphore(runCtx, int64(par))
	states := make([]*stepState, len(prep.Steps))
	for i := range states {
		f, s := workflow.NewFuture(ctx)
		states[i] = &stepState{done: s, doneF: f}
	}
	var fails []string
	stopped := false
	fail := func(msg string) {
		fails = append(fails, msg)
		if prep.Policy == chains.StopOnFailure && !stopped {
			stopped = true
			cancel()
		}
	}
	finish := func(i int, st chains.StepStatus, out json.RawMessage, msg string) {
		s := prep.Steps[i]
		states[i].status, states[i].output = st, out
		sr := &chains.StepResult{ID: s.ID, Tool: s.Tool, Status: st, Error: msg}
		if st == chains.StatusOK {
			sr.Output = out
		}
		res.Steps[s.ID] = sr
		states[i].done.Set(nil, nil)
	}

	// call runs one call as an activity and maps its end to a step status.
	// cctx is the calling coroutine's context (a child of runCtx: blocking
	// calls must use their own coroutine's context).
	call := func(cctx workflow.Context, i, item int, outputs map[string]json.RawMessage) (json.RawMessage, chains.StepStatus, string) {
		s := prep.Steps[i]
		cr := CallRequest{Run: req, Step: i, Item: item, Outputs: outputs, Idempotent: s.Idempotent}
		key := cr.Key(s.ID)
		if err := sem.Acquire(cctx, 1); err != nil {
			return nil, chains.StatusSkipped, "not started: " + stopReason(stopped)
		}
		defer sem.Release(1)
		actx := workflow.WithActivityOptions(cctx, callOptions(req, key, s.Idempotent))
		var out json.RawMessage
		err := workflow.ExecuteActivity(actx, CallActivityName, cr).Get(cctx, &out)
		if err == nil {
			return out, chains.StatusOK, ""
		}
		if runCtx.Err() != nil && !isApplication(err) {
			return nil, chains.StatusCancelled, "cancelled: " + stopReason(stopped)
		}
		msg := callError(err, s, key)
		var ae *temporal.ApplicationError
		if !s.Idempotent && (lost(err) || errors.As(err, &ae) && ae.Type() == ErrTypeNotRepeated) {
			res.Interrupted = append(res.Interrupted, key)
		}
		fail(fmt.Sprintf("step %s: %s", nodeName(s.ID, item), msg))
		return nil, chains.StatusFailed, msg
	}

	for i := range prep.Steps {
		workflow.Go(runCtx, func(gctx workflow.Context) {
			s := prep.Steps[i]
			for _, d := range s.Deps {
				_ = states[d].doneF.Get(gctx, nil)
			}
			for _, d := range s.Deps {
				if st := states[d].status; st != chains.StatusOK {
					finish(i, chains.StatusSkipped, nil, fmt.Sprintf("not started: dependency %s %s", prep.Steps[d].ID, st))
					return
				}
			}
			if runCtx.Err() != nil {
				finish(i, chains.StatusSkipped, nil, "not started: "+stopReason(stopped))
				return
			}
			outputs := make(map[string]json.RawMessage, len(s.Deps))
			for _, d := range s.Deps {
				outputs[prep.Steps[d].ID] = states[d].output
			}
			if !s.Foreach {
				out, st, msg := call(gctx, i, -1, outputs)
				finish(i, st, out, msg)
				return
			}
			// Foreach: resolve the array (a pure activity), then one
			// activity per element, in parallel within MaxParallel.
			ictx := workflow.WithActivityOptions(gctx, workflow.ActivityOptions{
				StartToCloseTimeout: time.Minute,
				RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 3, NonRetryableErrorTypes: []string{ErrTypeInvalid}},
			})
			var n int
			if err := workflow.ExecuteActivity(ictx, ItemsActivityName, CallRequest{Run: req, Step: i, Item: -1, Outputs: outputs}).Get(gctx, &n); err != nil {
				msg := "foreach: " + rootMessage(err)
				if runCtx.Err() != nil && !isApplication(err) {
					finish(i, chains.StatusCancelled, nil, "cancelled: "+stopReason(stopped))
					return
				}
				fail(fmt.Sprintf("step %s: %s", s.ID, msg))
				finish(i, chains.StatusFailed, nil, msg)
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
					outs[k], sts[k], msgs[k] = call(kctx, i, k, outputs)
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
			if st != chains.StatusOK {
				finish(i, st, nil, msg)
				return
			}
			raw, _ := json.Marshal(outs)
			finish(i, chains.StatusOK, raw, "")
		})
	}
	for _, s := range states {
		_ = s.doneF.Get(ctx, nil)
	}

	if len(fails) > 0 {
		res.Error = fails[0]
		if prep.Policy != chains.StopOnFailure {
			res.Error = joinLines(fails)
		}
		return res, nil
	}
	// Every step finished: render the chain's output (pure, on a worker).
	outputs := map[string]json.RawMessage{}
	for i, s := range prep.Steps {
		outputs[s.ID] = states[i].output
	}
	var out json.RawMessage
	if err := workflow.ExecuteActivity(pctx, OutputActivityName, CallRequest{Run: req, Step: -1, Item: -1, Outputs: outputs}).Get(ctx, &out); err != nil {
		res.Error = "output: " + rootMessage(err)
		return res, nil
	}
	res.Output = out
	return res, nil
}

// callOptions: the idempotency key is the activity id; idempotent calls are
// retried when their worker is lost, non-idempotent ones never.
func callOptions(req RunRequest, key string, idempotent bool) workflow.ActivityOptions {
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
	return workflow.ActivityOptions{
		ActivityID:          key,
		StartToCloseTimeout: DefaultCallTimeout,
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

func nodeName(id string, item int) string {
	if item >= 0 {
		return id + "[" + strconv.Itoa(item) + "]"
	}
	return id
}

func stopReason(stopped bool) string {
	if stopped {
		return "chain stopped after a step failed"
	}
	return "run cancelled"
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
