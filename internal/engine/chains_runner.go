package engine

import (
	"context"
	"encoding/json"
	"time"

	"github.com/airs-dev/airs/chains"
	"github.com/airs-dev/airs/selector"
)

// ChainRunner runs a chain somewhere other than in this process: with
// chains.engine temporal, cmd/airs passes Options.Chains, chains/temporal's
// Runner, so every chain — `airs run`, POST /v1/pipelines/run, `airs plan
// --run`, a chat turn's plan — runs as a workflow on the workers. It must
// return what chains.Run would: the same *chains.Result (nil when nothing
// started) and the same errors (*chains.StepError with the call's kind, the
// chain's deadline or cancellation wrapping ctx's error).
type ChainRunner interface {
	RunChain(ctx context.Context, run ChainRun) (*chains.Result, error)
}

// ChainRun is one chain for a ChainRunner: its source, already validated
// here for Caller (the workers validate it again against their catalog).
type ChainRun struct {
	Source   []byte
	Format   string // "dsl" (Source is the YAML DSL) or "plan" (a plan's JSON)
	Filename string // names a DSL source in errors
	Input    map[string]any
	Caller   string
	// OnFailure overrides the chain's failure policy when set.
	OnFailure chains.FailurePolicy
	// Timeout is the chain's own budget (its timeout:; 0: none); the runner
	// also holds it to ctx's deadline.
	Timeout time.Duration
}

// runChain runs c (parsed from src) for opts.Caller: in process (chains.Run)
// unless a runner is set (Options.Chains). Validation happens here either way, so an invalid
// chain gets the same error wherever chains run.
func (e *Engine) runChain(ctx context.Context, c *chains.Chain, src []byte, format, file string, input map[string]any, opts chains.Options) (*chains.Result, error) {
	if e.chainRunner == nil {
		return chains.Run(ctx, c, input, opts)
	}
	if _, err := chains.Prepare(c, input, opts); err != nil {
		return nil, err
	}
	timeout := opts.Timeout
	if timeout == 0 {
		timeout = c.Timeout
	}
	return e.chainRunner.RunChain(ctx, ChainRun{Source: src, Format: format, Filename: file, Input: input,
		Caller: opts.Caller, OnFailure: opts.OnFailure, Timeout: timeout})
}

// RunPlan validates and runs a plan (Plan's, as POST /v1/plan returns
// it, or one read with selector.ReadPlan) for the caller, as a chain.
func (e *Engine) RunPlan(ctx context.Context, caller string, plan selector.Plan, continueOnFailure bool) (*chains.Result, error) {
	c, err := plan.Compile()
	if err != nil {
		return nil, err
	}
	src, err := json.Marshal(plan) // what a chain runner (Temporal) is handed
	if err != nil {
		return nil, err
	}
	opts := chains.Options{Executor: e.Executor(), Catalog: e.toolCatalog(), Caller: caller}
	if continueOnFailure {
		opts.OnFailure = chains.ContinueOnFailure
	}
	return e.runChain(ctx, c, src, "plan", "", nil, opts)
}
