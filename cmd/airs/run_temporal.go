package main

import (
	"context"
	"fmt"

	"github.com/airs-dev/airs/chains"
	"github.com/airs-dev/airs/chains/temporal"
	"github.com/airs-dev/airs/config"
	"github.com/airs-dev/airs/internal/engine"
)

// chainsRunner is the engine's runner of chains on Temporal when airs.yaml
// says chains.engine: temporal — `airs run`, `airs plan --run`, POST
// /v1/pipelines/run, chat plans — (nil: they run in process) and what
// releases its client. The worker's own engine runs the calls, never whole
// chains: it gets none.
func (a *app) chainsRunner(channel string) (engine.ChainRunner, func()) {
	cc := a.cfg.Chains
	if cc.Engine != config.ChainsTemporal || channel == "worker" {
		return nil, func() {}
	}
	r := &temporal.Runner{Address: cc.Address, Namespace: cc.Namespace, TaskQueue: cc.TaskQueue,
		HeartbeatTimeout: cc.HeartbeatTimeout, MaxAttempts: cc.MaxAttempts}
	if channel != "serve" && channel != "mcp" && channel != "chat" { // a server does not narrate each run on stderr, chat notes it in its UI
		r.OnStart = func(id string) {
			fmt.Fprintf(a.stderr, "chain run %s on Temporal (%s, task queue %s): waiting for it; the replicas' 'airs worker's run its calls\n",
				id, cc.Address, cc.TaskQueue)
		}
	}
	return temporalChains{r}, r.Close
}

// temporalChains is the engine's ChainRunner on chains/temporal.
type temporalChains struct{ r *temporal.Runner }

func (t temporalChains) RunChain(ctx context.Context, run engine.ChainRun) (*chains.Result, error) {
	return t.r.Run(ctx, temporal.RunRequest{Source: string(run.Source), Format: run.Format, Filename: run.Filename,
		Input: run.Input, Caller: run.Caller, OnFailure: run.OnFailure, Timeout: run.Timeout})
}
