package chains

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/airs-dev/airs/pipeline"
)

// Executor runs one tool call. pipeline's Tool Manager satisfies it; chains
// depends on nothing else of it. Call returns a Result whose Outcome says how
// the call ended (an error is for calls that could not even be made, such as
// an unknown tool or invalid params); Cancel stops the in-flight call with
// that id and reports whether there was one.
type Executor interface {
	Call(ctx context.Context, req pipeline.Request) (*pipeline.Result, error)
	Cancel(callID string) bool
}

// DefaultMaxParallel bounds concurrent calls when Options.MaxParallel is 0.
const DefaultMaxParallel = 8

// OutcomeSkipped marks, in a trace, a step that never called its tool.
const OutcomeSkipped pipeline.Outcome = "skipped"

// Options configure one Run.
type Options struct {
	Executor Executor // required
	Catalog  Catalog  // required: Run validates the chain first
	Caller   string   // agent id, from the channel; passed to every call
	// Intent is the user's request the chain serves (a plan), passed to
	// every call: level 2 tells the user's own values from the data.
	Intent string

	// MaxParallel bounds the calls in flight at once, across branches and
	// foreach items (0: DefaultMaxParallel).
	MaxParallel int
	// Timeout is the whole chain's budget (0: Chain.Timeout, and if that is
	// 0 too, only ctx's deadline, if any). See Run for how it is shared.
	Timeout time.Duration
	// OnFailure overrides the chain's failure policy when set.
	OnFailure FailurePolicy
	// RunID prefixes every call id ("RUNID/step" or "RUNID/step[3]");
	// random when empty.
	RunID string
	// OnNode, if set, receives each trace entry as its node ends. Calls are
	// serialised; keep it quick (it runs on the scheduler's goroutines).
	OnNode func(NodeTrace)
}

// NodeTrace is one node of a run: a call of a step (Item -1), a call for
// one foreach element (Item ≥ 0), the summary of a foreach step (Item -1,
// no CallID), or a step that never ran (Outcome skipped).
type NodeTrace struct {
	Node    string           `json:"node"` // "extract" or "extract[3]"
	Step    string           `json:"step"`
	Item    int              `json:"item"`
	Tool    string           `json:"tool"`
	CallID  string           `json:"call_id,omitempty"`
	Start   time.Time        `json:"start"`
	End     time.Time        `json:"end"`
	Outcome pipeline.Outcome `json:"outcome"`
	// Latency is the executor's measure when it reports one, else End-Start.
	Latency time.Duration `json:"latency_ns"`
	// Budget is the timeout the call was given (0: the tool's default).
	Budget time.Duration `json:"budget_ns,omitempty"`
	Error  string        `json:"error,omitempty"`
}

// StepStatus is how a step ended.
type StepStatus string

const (
	StatusOK        StepStatus = "ok"
	StatusFailed    StepStatus = "failed"    // its call (or one of its foreach calls) failed
	StatusCancelled StepStatus = "cancelled" // it was running when the run was cancelled or stopped
	StatusSkipped   StepStatus = "skipped"   // it never started; Error says why
)

// StepResult is one step's part of a Result.
type StepResult struct {
	ID     string          `json:"id"`
	Tool   string          `json:"tool"`
	Status StepStatus      `json:"status"`
	Output json.RawMessage `json:"output,omitempty"` // only when Status is ok
	Error  string          `json:"error,omitempty"`
}

// Result is what a run produced. After a cancellation or a stop it holds
// exactly the outputs of the steps that finished.
type Result struct {
	Chain  string                 `json:"chain"`
	RunID  string                 `json:"run_id"`
	Output json.RawMessage        `json:"output,omitempty"` // the chain's output, when everything it needs finished
	Steps  map[string]*StepResult `json:"steps"`
	Trace  []NodeTrace            `json:"trace"` // ordered by start time
}

// Outputs returns the outputs of the steps that finished.
func (r *Result) Outputs() map[string]json.RawMessage {
	out := map[string]json.RawMessage{}
	for id, s := range r.Steps {
		if s.Status == StatusOK {
			out[id] = s.Output
		}
	}
	return out
}

// StepError is a step's failure.
type StepError struct {
	Step    string
	Node    string // the failing node: the step, or "step[i]" for a foreach element
	Outcome pipeline.Outcome
	Err     error
}

func (e *StepError) Error() string {
	return fmt.Sprintf("step %s: %s: %v", e.Node, e.Outcome, e.Err)
}

func (e *StepError) Unwrap() error { return e.Err }

// Run validates the chain for opts.Caller and executes it through
// opts.Executor.
//
// Scheduling. A step starts as soon as every step it depends on has
// finished; independent steps run in parallel, and at most
// opts.MaxParallel calls are in flight at once. A foreach step resolves its
// array, calls its tool once per element (in parallel, within the same
// bound) and gathers the outputs in element order.
//
// Budget. With a chain budget (opts.Timeout, Chain.Timeout or ctx's
// deadline, the earliest), a step that starts at time t gets
//
//	share = (deadline − t) / depth
//
// where depth is the number of steps on the longest path from this step to
// the end of the chain, itself included. A step on a three-deep critical
// path thus gets a third of what is left, and whatever it does not use
// flows to the steps after it; a step nothing waits for gets all that is
// left. Step.Timeout caps the share. Every call of the step (each foreach
// element) must end by the step's deadline, t + share; its Request.Timeout
// is what remains of that when the call starts. Without a budget, calls get
// Step.Timeout (0: the tool's latency-class default).
//
// Failures. With StopOnFailure, the first failed call cancels every call in
// flight (through ctx and Executor.Cancel) and nothing more starts; Run
// returns that *StepError. With ContinueOnFailure, steps that depend on a
// failed step are skipped with a reason and everything else runs; Run
// returns every *StepError joined.
//
// Cancellation. When ctx is cancelled (or the budget runs out), every call
// in flight is cancelled through ctx and Executor.Cancel, Run waits for them
// to return, and returns the Result (the outputs of exactly the steps that
// finished) with ctx's error. Run never leaves a goroutine behind.
//
// The Result is non-nil whenever the chain was valid; err is nil only when
// every step finished.
func Run(ctx context.Context, c *Chain, input map[string]any, opts Options) (*Result, error) {
	if opts.Executor == nil {
		return nil, errors.New("chains: Run: no executor")
	}
	cp, err := c.compile(opts.Catalog, opts.Caller)
	if err != nil {
		return nil, err
	}
	in, err := c.bindInputs(input)
	if err != nil {
		return nil, err
	}
	r := newRunner(cp, in, opts)
	return r.run(ctx)
}

// bindInputs applies defaults and declared types to the caller's input.
// A string given for a declared number, integer or boolean input is parsed
// (so `--input n=3` works from a command line).
func (c *Chain) bindInputs(input map[string]any) (map[string]any, error) {
	raw, err := json.Marshal(input)
	if err != nil {
		return nil, fmt.Errorf("chains: input: %v", err)
	}
	v, err := decodeJSON(raw)
	if err != nil {
		return nil, fmt.Errorf("chains: input: %v", err)
	}
	in, _ := v.(map[string]any)
	if in == nil {
		in = map[string]any{}
	}
	if c.Inputs == nil {
		return in, nil
	}
	var errs errorList
	for name := range in {
		if _, ok := c.Inputs[name]; !ok {
			errs.add(c.Pos, "", "input %s: not declared", name)
		}
	}
	for name, decl := range c.Inputs {
		val, ok := in[name]
		if !ok {
			if !decl.HasDefault {
				errs.add(decl.Pos, "", "input %s: required", name)
				continue
			}
			in[name] = decl.Default
			continue
		}
		if s, isStr := val.(string); isStr && decl.Type != "" && decl.Type != "string" {
			switch decl.Type {
			case "integer", "number":
				if v, err := decodeJSON([]byte(s)); err == nil {
					if n, ok := v.(json.Number); ok {
						val = n
					}
				}
			case "boolean":
				if b, err := strconv.ParseBool(s); err == nil {
					val = b
				}
			}
			in[name] = val
		}
		if decl.Type != "" && !hasType(val, decl.Type) {
			errs.add(decl.Pos, "", "input %s: %s given, %s wanted", name, jsonTypeOf(val), decl.Type)
		}
	}
	if err := errs.err(); err != nil {
		return nil, err
	}
	return in, nil
}

type runner struct {
	cp     *compiled
	c      *Chain
	exec   Executor
	opts   Options
	policy FailurePolicy
	input  map[string]any
	runID  string
	sem    chan struct{}

	ctx    context.Context // cancelled on a stop or by the caller
	cancel context.CancelCauseFunc
	done   []chan struct{} // closed when step i ends, whatever the status

	mu      sync.Mutex
	status  []StepStatus
	outputs map[string]any // decoded outputs of finished steps
	results map[string]*StepResult
	trace   []NodeTrace
	fails   []error
}

// errStopped is the cause of the run context's cancellation under
// StopOnFailure.
type errStopped struct{ step string }

func (e *errStopped) Error() string { return "chain stopped after step " + e.step + " failed" }

func newRunner(cp *compiled, input map[string]any, opts Options) *runner {
	n := len(cp.c.Steps)
	r := &runner{
		cp: cp, c: cp.c, exec: opts.Executor, opts: opts, input: input,
		policy:  opts.OnFailure,
		runID:   opts.RunID,
		done:    make([]chan struct{}, n),
		status:  make([]StepStatus, n),
		outputs: map[string]any{},
		results: map[string]*StepResult{},
	}
	if r.policy == "" {
		r.policy = cp.c.OnFailure
	}
	if r.policy == "" {
		r.policy = StopOnFailure
	}
	if r.runID == "" {
		var b [6]byte
		_, _ = rand.Read(b[:])
		r.runID = "chain-" + hex.EncodeToString(b[:])
	}
	p := opts.MaxParallel
	if p <= 0 {
		p = DefaultMaxParallel
	}
	r.sem = make(chan struct{}, p)
	for i := range r.done {
		r.done[i] = make(chan struct{})
	}
	return r
}

func (r *runner) run(parent context.Context) (*Result, error) {
	ctx := parent
	timeout := r.opts.Timeout
	if timeout == 0 {
		timeout = r.c.Timeout
	}
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	var cancel context.CancelCauseFunc
	r.ctx, cancel = context.WithCancelCause(ctx)
	r.cancel = cancel
	defer cancel(nil)

	var wg sync.WaitGroup
	for i := range r.c.Steps {
		wg.Go(func() { r.runStep(i) })
	}
	wg.Wait()

	res := &Result{Chain: r.c.Name, RunID: r.runID, Steps: r.results, Trace: r.trace}
	sort.SliceStable(res.Trace, func(a, b int) bool { return res.Trace[a].Start.Before(res.Trace[b].Start) })
	outErr := r.renderOutput(res)

	switch {
	case ctx.Err() != nil && r.policy == StopOnFailure && len(r.fails) > 0:
		// A failure came first; the deadline or cancellation only ended what was left.
		return res, r.fails[0]
	case ctx.Err() != nil:
		return res, fmt.Errorf("chain %s: %w", r.c.Name, ctx.Err())
	case len(r.fails) > 0 && r.policy == StopOnFailure:
		return res, r.fails[0]
	case len(r.fails) > 0:
		return res, errors.Join(r.fails...)
	}
	return res, outErr
}

// renderOutput fills res.Output when every step the output needs finished.
func (r *runner) renderOutput(res *Result) error {
	if r.c.Output == nil {
		last := r.c.Steps[r.cp.output].ID
		if s := r.results[last]; s != nil && s.Status == StatusOK {
			res.Output = s.Output
		}
		return nil
	}
	for _, ref := range r.c.Output.Refs() {
		if ref.Root == RootStep && r.results[ref.Step].Status != StatusOK {
			return nil
		}
	}
	v, err := r.c.Output.render(&env{input: r.input, steps: r.outputs})
	if err != nil {
		return fmt.Errorf("chain %s: output: %w", r.c.Name, err)
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("chain %s: output: %w", r.c.Name, err)
	}
	res.Output = raw
	return nil
}

func (r *runner) record(t NodeTrace) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.trace = append(r.trace, t)
	if r.opts.OnNode != nil {
		r.opts.OnNode(t)
	}
}

func (r *runner) finish(i int, st StepStatus, out json.RawMessage, decoded any, msg string) {
	s := r.c.Steps[i]
	r.mu.Lock()
	r.status[i] = st
	sr := &StepResult{ID: s.ID, Tool: s.Tool, Status: st, Error: msg}
	if st == StatusOK {
		sr.Output = out
		r.outputs[s.ID] = decoded
	}
	r.results[s.ID] = sr
	r.mu.Unlock()
}

// fail records a failure and, under StopOnFailure, stops the run.
func (r *runner) fail(e *StepError) {
	r.mu.Lock()
	r.fails = append(r.fails, e)
	r.mu.Unlock()
	if r.policy == StopOnFailure {
		r.cancel(&errStopped{step: e.Step})
	}
}

// why explains the run context's end, for nodes that were not run.
func (r *runner) why() string {
	cause := context.Cause(r.ctx)
	var st *errStopped
	if errors.As(cause, &st) {
		return st.Error()
	}
	return "run cancelled: " + cause.Error()
}

func (r *runner) skip(i int, msg string) {
	s := r.c.Steps[i]
	now := time.Now()
	r.record(NodeTrace{Node: s.ID, Step: s.ID, Item: -1, Tool: s.Tool, Start: now, End: now, Outcome: OutcomeSkipped, Error: msg})
	r.finish(i, StatusSkipped, nil, nil, msg)
}

func (r *runner) runStep(i int) {
	defer close(r.done[i])
	s := r.c.Steps[i]
	for _, d := range r.cp.deps[i] {
		select {
		case <-r.done[d]:
		case <-r.ctx.Done():
		}
	}
	if r.ctx.Err() != nil {
		r.skip(i, "not started: "+r.why())
		return
	}
	r.mu.Lock()
	for _, d := range r.cp.deps[i] {
		if st := r.status[d]; st != StatusOK {
			r.mu.Unlock()
			r.skip(i, fmt.Sprintf("not started: dependency %s %s", r.c.Steps[d].ID, st))
			return
		}
	}
	// Every step a reference may name is a dependency, finished: copy
	// their outputs (never modified again) out of the shared map.
	e := &env{input: r.input, steps: make(map[string]any, len(r.cp.deps[i]))}
	for _, d := range r.cp.deps[i] {
		id := r.c.Steps[d].ID
		e.steps[id] = r.outputs[id]
	}
	r.mu.Unlock()

	start := time.Now()
	deadline, budget := r.stepDeadline(i, start)
	if s.Foreach == nil {
		out, dec, st, msg := r.call(i, -1, e, deadline)
		r.finish(i, st, out, dec, msg)
		return
	}

	items, err := e.lookup(s.Foreach.Ref())
	var arr []any
	if err == nil {
		var ok bool
		if arr, ok = items.([]any); !ok {
			err = fmt.Errorf("foreach: %s is %s, not an array", s.Foreach.Ref(), jsonTypeOf(items))
		}
	}
	if err != nil {
		now := time.Now()
		r.record(NodeTrace{Node: s.ID, Step: s.ID, Item: -1, Tool: s.Tool, Start: start, End: now, Outcome: pipeline.OutcomeError, Latency: now.Sub(start), Error: err.Error()})
		r.fail(&StepError{Step: s.ID, Node: s.ID, Outcome: pipeline.OutcomeError, Err: err})
		r.finish(i, StatusFailed, nil, nil, err.Error())
		return
	}

	outs := make([]json.RawMessage, len(arr))
	decs := make([]any, len(arr))
	sts := make([]StepStatus, len(arr))
	msgs := make([]string, len(arr))
	var wg sync.WaitGroup
	started := 0
	for k, item := range arr {
		if r.acquire() != nil {
			break
		}
		started++
		ie := &env{input: e.input, steps: e.steps, item: item, hasItem: true}
		wg.Go(func() {
			defer r.release()
			outs[k], decs[k], sts[k], msgs[k] = r.callHeld(i, k, ie, deadline)
		})
	}
	wg.Wait()

	st, msg := StatusOK, ""
	if started < len(arr) {
		st, msg = StatusCancelled, fmt.Sprintf("%d of %d items not started: %s", len(arr)-started, len(arr), r.why())
	}
	for k := range started {
		if sts[k] == StatusFailed {
			st, msg = StatusFailed, fmt.Sprintf("item %d: %s", k, msgs[k])
			break
		}
		if sts[k] != StatusOK && st == StatusOK {
			st, msg = StatusCancelled, fmt.Sprintf("item %d: %s", k, msgs[k])
		}
	}
	end := time.Now()
	t := NodeTrace{Node: s.ID, Step: s.ID, Item: -1, Tool: s.Tool, Start: start, End: end, Latency: end.Sub(start), Budget: budget, Error: msg}
	switch st {
	case StatusOK:
		t.Outcome = pipeline.OutcomeOK
	case StatusFailed:
		t.Outcome = pipeline.OutcomeError
	default:
		t.Outcome = pipeline.OutcomeCancelled
	}
	r.record(t)
	if st != StatusOK {
		r.finish(i, st, nil, nil, msg)
		return
	}
	raw, err := json.Marshal(outs)
	if err != nil { // cannot happen: every element is valid JSON
		r.finish(i, StatusFailed, nil, nil, err.Error())
		return
	}
	r.finish(i, StatusOK, raw, decs, "")
}

// stepDeadline computes step i's share of the remaining budget (see Run).
func (r *runner) stepDeadline(i int, now time.Time) (time.Time, time.Duration) {
	s := r.c.Steps[i]
	dl, ok := r.ctx.Deadline()
	if !ok {
		if s.Timeout > 0 {
			return now.Add(s.Timeout), s.Timeout
		}
		return time.Time{}, 0
	}
	share := dl.Sub(now) / time.Duration(r.cp.depth[i])
	if s.Timeout > 0 && s.Timeout < share {
		share = s.Timeout
	}
	return now.Add(share), share
}

func (r *runner) acquire() error {
	select {
	case r.sem <- struct{}{}:
		return nil
	case <-r.ctx.Done():
		return r.ctx.Err()
	}
}

func (r *runner) release() { <-r.sem }

// call runs one call of step i (item -1 for a plain step) within the
// concurrency bound.
func (r *runner) call(i, item int, e *env, deadline time.Time) (json.RawMessage, any, StepStatus, string) {
	if r.acquire() != nil {
		s := r.c.Steps[i]
		msg := "not started: " + r.why()
		now := time.Now()
		r.record(NodeTrace{Node: s.ID, Step: s.ID, Item: -1, Tool: s.Tool, Start: now, End: now, Outcome: OutcomeSkipped, Error: msg})
		return nil, nil, StatusSkipped, msg
	}
	defer r.release()
	return r.callHeld(i, item, e, deadline)
}

// callHeld runs one call; the caller holds a concurrency slot.
func (r *runner) callHeld(i, item int, e *env, deadline time.Time) (json.RawMessage, any, StepStatus, string) {
	s := r.c.Steps[i]
	node := s.ID
	if item >= 0 {
		node = s.ID + "[" + strconv.Itoa(item) + "]"
	}
	callID := r.runID + "/" + node
	t := NodeTrace{Node: node, Step: s.ID, Item: item, Tool: s.Tool, CallID: callID, Start: time.Now()}
	end := func(outcome pipeline.Outcome, err error) {
		t.End = time.Now()
		if t.Latency == 0 {
			t.Latency = t.End.Sub(t.Start)
		}
		t.Outcome = outcome
		if err != nil {
			t.Error = err.Error()
		}
		r.record(t)
	}
	failed := func(outcome pipeline.Outcome, err error) (json.RawMessage, any, StepStatus, string) {
		if outcome == pipeline.OutcomeCancelled && r.ctx.Err() == context.DeadlineExceeded {
			// The chain's deadline ended the call: its cancellation (below,
			// by call id) races the pipeline's own timeout at the same
			// instant. It is the call's timeout whichever won, in process
			// and on a durable engine alike.
			outcome, err = pipeline.OutcomeTimeout, &pipeline.Timeout{Budget: t.Budget}
		}
		end(outcome, err)
		if r.ctx.Err() != nil && outcome != pipeline.OutcomeTimeout {
			// Ended because the run was cancelled or stopped: not a
			// failure of its own.
			return nil, nil, StatusCancelled, t.Error
		}
		r.fail(&StepError{Step: s.ID, Node: node, Outcome: outcome, Err: err})
		return nil, nil, StatusFailed, t.Error
	}
	if r.ctx.Err() != nil {
		end(pipeline.OutcomeCancelled, errors.New("not started: "+r.why()))
		return nil, nil, StatusCancelled, t.Error
	}

	params, err := s.Params.render(e)
	if err != nil {
		return failed(pipeline.OutcomeError, err)
	}
	payload, err := json.Marshal(params)
	if err != nil {
		return failed(pipeline.OutcomeError, err)
	}
	ctx := r.ctx
	if e.hasItem {
		if l := labelOf(e.item); l != "" {
			ctx = context.WithValue(ctx, itemLabelKey{}, l)
		}
	}
	if !deadline.IsZero() {
		t.Budget = time.Until(deadline)
		if t.Budget <= 0 {
			return failed(pipeline.OutcomeTimeout, errors.New("no budget left for this call"))
		}
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, deadline)
		defer cancel()
	}
	timeout := t.Budget
	if timeout > pipeline.MaxTimeout {
		// The Manager gives a request above its maximum the tool's
		// latency-class default; the most it grants is what we want.
		timeout = pipeline.MaxTimeout
	}
	req := pipeline.Request{CallID: callID, Tool: s.Tool, Params: payload, Encoding: pipeline.JSON, Timeout: timeout, Caller: r.opts.Caller, Intent: r.opts.Intent}

	// On cancellation of the run, also tell the executor by call id; wait
	// for that to finish so no goroutine outlives the call.
	cancelled := make(chan struct{})
	stop := context.AfterFunc(r.ctx, func() {
		defer close(cancelled)
		r.exec.Cancel(callID)
	})
	t.Start = time.Now()
	res, err := r.exec.Call(ctx, req)
	if !stop() {
		<-cancelled
	}

	switch {
	case err == nil && res == nil:
		err = errors.New("executor returned no result")
	case err == nil && res.Outcome != pipeline.OutcomeOK:
		err = fmt.Errorf("outcome %s", res.Outcome)
		if len(res.Output) > 0 && len(res.Output) < 512 {
			err = fmt.Errorf("outcome %s: %s", res.Outcome, res.Output)
		}
	}
	if res != nil && res.Latency > 0 {
		t.Latency = res.Latency
	}
	if err != nil {
		outcome := pipeline.OutcomeError
		switch {
		case res != nil && res.Outcome != "" && res.Outcome != pipeline.OutcomeOK:
			outcome = res.Outcome
		case errors.Is(err, context.DeadlineExceeded):
			outcome = pipeline.OutcomeTimeout
		case errors.Is(err, context.Canceled):
			outcome = pipeline.OutcomeCancelled
		}
		return failed(outcome, err)
	}
	out := res.Output
	if len(out) == 0 {
		out = json.RawMessage("null")
	}
	dec, err := decodeJSON(out)
	if err != nil {
		return failed(pipeline.OutcomeError, fmt.Errorf("output is not JSON: %v", err))
	}
	end(pipeline.OutcomeOK, nil)
	return out, dec, StatusOK, ""
}

// hasType reports whether the JSON value v is of JSON Schema type t.
func hasType(v any, t string) bool {
	vt := jsonTypeOf(v)
	return vt == t || vt == "integer" && t == "number"
}
