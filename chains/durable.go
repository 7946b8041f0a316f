package chains

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/airs-dev/airs/pipeline"
)

// This file lets a durable engine (chains/temporal) run a chain one call at
// a time, on any replica, with the very code Run uses for each call
// (runner.callHeld: params rendering, budget, Executor.Call, outcome
// mapping). The engine owns the scheduling and the record of finished
// steps; everything here is a pure function of the chain, its input and
// the outputs of finished steps, so two replicas compute the same call.

// Prepared is a validated chain bound to its input.
type Prepared struct {
	cp    *compiled
	input map[string]any
	opts  Options
}

// StepInfo is what a scheduler needs to know about one step.
type StepInfo struct {
	ID         string `json:"id"`
	Tool       string `json:"tool"`
	Deps       []int  `json:"deps"`    // indexes of the steps this one waits for
	Foreach    bool   `json:"foreach"` // one call per element of an array
	Idempotent bool   `json:"idempotent"`
}

// Prepare validates c for opts.Caller (opts.Catalog, required) and binds
// input, as Run does before it starts anything. opts.Executor is only
// needed by Call.
func Prepare(c *Chain, input map[string]any, opts Options) (*Prepared, error) {
	cp, err := c.compile(opts.Catalog, opts.Caller)
	if err != nil {
		return nil, err
	}
	in, err := c.bindInputs(input)
	if err != nil {
		return nil, err
	}
	return &Prepared{cp: cp, input: in, opts: opts}, nil
}

// Name is the chain's name.
func (p *Prepared) Name() string { return p.cp.c.Name }

// Steps describes the chain's steps, in their order in the chain.
func (p *Prepared) Steps() []StepInfo {
	out := make([]StepInfo, len(p.cp.c.Steps))
	for i, s := range p.cp.c.Steps {
		out[i] = StepInfo{ID: s.ID, Tool: s.Tool, Deps: append([]int{}, p.cp.deps[i]...),
			Foreach: s.Foreach != nil, Idempotent: p.cp.tools[i].Idempotent}
	}
	return out
}

// FailurePolicy is the chain's policy (opts.OnFailure first).
func (p *Prepared) FailurePolicy() FailurePolicy {
	switch {
	case p.opts.OnFailure != "":
		return p.opts.OnFailure
	case p.cp.c.OnFailure != "":
		return p.cp.c.OnFailure
	}
	return StopOnFailure
}

// env builds what step i's references resolve against from the outputs of
// finished steps (only its dependencies are read).
func (p *Prepared) env(i int, outputs map[string]json.RawMessage) (*env, error) {
	e := &env{input: p.input, steps: map[string]any{}}
	for _, d := range p.cp.deps[i] {
		id := p.cp.c.Steps[d].ID
		raw, ok := outputs[id]
		if !ok {
			return nil, fmt.Errorf("step %s: dependency %s has no output", p.cp.c.Steps[i].ID, id)
		}
		v, err := decodeJSON(raw)
		if err != nil {
			return nil, fmt.Errorf("step %s: output of %s: %v", p.cp.c.Steps[i].ID, id, err)
		}
		e.steps[id] = v
	}
	return e, nil
}

// Items returns the elements a foreach step i runs over.
func (p *Prepared) Items(i int, outputs map[string]json.RawMessage) ([]any, error) {
	s := p.cp.c.Steps[i]
	if s.Foreach == nil {
		return nil, fmt.Errorf("step %s: not a foreach step", s.ID)
	}
	e, err := p.env(i, outputs)
	if err != nil {
		return nil, err
	}
	items, err := e.lookup(s.Foreach.Ref())
	if err != nil {
		return nil, err
	}
	arr, ok := items.([]any)
	if !ok {
		return nil, fmt.Errorf("foreach: %s is %s, not an array", s.Foreach.Ref(), jsonTypeOf(items))
	}
	return arr, nil
}

// Call runs one call of step i (item -1 for a plain step, else the foreach
// element's index) through opts.Executor, with call id "runID/step" or
// "runID/step[item]" — the idempotency key of that call. deadline bounds it
// (zero: Step.Timeout, else the tool's default). It returns the call's
// output, or a *StepError.
func (p *Prepared) Call(ctx context.Context, runID string, i, item int, outputs map[string]json.RawMessage) (json.RawMessage, NodeTrace, error) {
	if p.opts.Executor == nil {
		return nil, NodeTrace{}, errors.New("chains: Prepared.Call: no executor")
	}
	e, err := p.env(i, outputs)
	if err != nil {
		return nil, NodeTrace{}, err
	}
	if item >= 0 {
		arr, err := p.Items(i, outputs)
		if err != nil {
			return nil, NodeTrace{}, err
		}
		if item >= len(arr) {
			return nil, NodeTrace{}, fmt.Errorf("step %s: item %d of %d", p.cp.c.Steps[i].ID, item, len(arr))
		}
		e = &env{input: e.input, steps: e.steps, item: arr[item], hasItem: true}
	}
	o := p.opts
	o.RunID = runID
	o.OnNode = nil
	r := newRunner(p.cp, p.input, o)
	var cancel context.CancelCauseFunc
	r.ctx, cancel = context.WithCancelCause(ctx)
	r.cancel = cancel
	defer cancel(nil)
	deadline, _ := ctx.Deadline()
	if s := p.cp.c.Steps[i]; s.Timeout > 0 && (deadline.IsZero() || time.Until(deadline) > s.Timeout) {
		deadline = time.Now().Add(s.Timeout)
	}
	out, _, st, _ := r.callHeld(i, item, e, deadline)
	var tr NodeTrace
	if len(r.trace) > 0 {
		tr = r.trace[len(r.trace)-1]
	}
	if st == StatusOK {
		return out, tr, nil
	}
	if len(r.fails) > 0 {
		return nil, tr, r.fails[0]
	}
	return nil, tr, &StepError{Step: tr.Step, Node: tr.Node, Outcome: tr.Outcome, Err: errors.New(tr.Error)}
}

// Output renders the chain's output from the outputs of finished steps; nil
// when a step it needs did not finish.
func (p *Prepared) Output(outputs map[string]json.RawMessage) (json.RawMessage, error) {
	c := p.cp.c
	if c.Output == nil {
		return outputs[c.Steps[p.cp.output].ID], nil
	}
	steps := map[string]any{}
	for _, ref := range c.Output.Refs() {
		if ref.Root != RootStep {
			continue
		}
		raw, ok := outputs[ref.Step]
		if !ok {
			return nil, nil
		}
		v, err := decodeJSON(raw)
		if err != nil {
			return nil, fmt.Errorf("chain %s: output of %s: %v", c.Name, ref.Step, err)
		}
		steps[ref.Step] = v
	}
	v, err := c.Output.render(&env{input: p.input, steps: steps})
	if err != nil {
		return nil, fmt.Errorf("chain %s: output: %w", c.Name, err)
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("chain %s: output: %w", c.Name, err)
	}
	return raw, nil
}

// Outcome of a failed durable call, for callers that map it (e.g. to a
// retry decision): the pipeline's outcome when the error is a *StepError.
func OutcomeOf(err error) pipeline.Outcome {
	var se *StepError
	if errors.As(err, &se) {
		return se.Outcome
	}
	return pipeline.OutcomeError
}
