package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/airs-dev/airs/chains"
	"github.com/airs-dev/airs/chains/temporal"
)

// runOnTemporal runs a pipeline as a Temporal workflow (chains.engine:
// temporal); the replicas' `airs worker`s run its calls.
func runOnTemporal(ctx context.Context, a *app, caller, file string, data []byte, in map[string]any, cont, asJSON bool) error {
	cc := a.cfg.Chains
	c, err := temporal.Dial(cc.Address, cc.Namespace, nil)
	if err != nil {
		return err
	}
	defer c.Close()
	req := temporal.RunRequest{Source: string(data), Filename: file, Input: in, Caller: caller,
		HeartbeatTimeout: cc.HeartbeatTimeout, MaxAttempts: cc.MaxAttempts}
	if cont {
		req.OnFailure = chains.ContinueOnFailure
	}
	run, err := temporal.Start(ctx, c, cc.TaskQueue, req)
	if err != nil {
		return fmt.Errorf("start chain on Temporal at %s: %v", cc.Address, err)
	}
	fmt.Fprintf(a.stderr, "chain run %s on Temporal (%s, task queue %s): waiting for it; an 'airs worker' must be running on that queue\n",
		run.GetID(), cc.Address, cc.TaskQueue)
	var res temporal.RunResult
	if err := run.Get(ctx, &res); err != nil {
		return fmt.Errorf("chain run %s: %v", run.GetID(), err)
	}
	if asJSON {
		enc := json.NewEncoder(a.stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(res)
	} else {
		for _, s := range res.Steps {
			if s.Status != chains.StatusOK {
				fmt.Fprintf(a.stderr, "  %-24s %-14s %s: %s\n", s.ID, s.Tool, s.Status, s.Error)
			}
		}
		if len(res.Output) > 0 {
			var v any
			if json.Unmarshal(res.Output, &v) == nil {
				b, _ := json.MarshalIndent(v, "", "  ")
				fmt.Fprintln(a.stdout, string(b))
			}
		}
	}
	return res.Err()
}
