//go:build airs_chattest

package main

import (
	"context"
	"encoding/json"
	"time"

	"github.com/airs-dev/airs/pipeline"
)

// Test-only tools for the pseudo-terminal test of `airs chat`, compiled in
// only with -tags airs_chattest.
func init() { chatTestTools = registerChatTestTools }

func registerChatTestTools(reg *pipeline.Registry) error {
	return reg.Register("test", pipeline.Tool{
		Name:         "slow",
		Version:      "1.0.0",
		Description:  "Wait slowly: count seconds one by one for a long time (a slow, long-running wait).",
		Parameters:   json.RawMessage(`{"type":"object","properties":{"seconds":{"type":"integer","minimum":1,"maximum":600}},"required":["seconds"]}`),
		Trust:        pipeline.TL2,
		LatencyClass: pipeline.Slow,
		Idempotent:   true,
	}, pipeline.HandlerFunc(slowTool))
}

// slowTool counts ticks until its seconds pass or it is cancelled; then it
// hands back how far it got, as partial output.
func slowTool(ctx context.Context, params json.RawMessage, call *pipeline.Call) (json.RawMessage, error) {
	var p struct{ Seconds int }
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, err
	}
	done := time.After(time.Duration(p.Seconds) * time.Second)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	ticks := 0
	for {
		select {
		case <-tick.C:
			ticks++
		case <-done:
			return json.Marshal(map[string]any{"ticks": ticks, "partial": false})
		case <-ctx.Done():
			out, _ := json.Marshal(map[string]any{"ticks": ticks, "partial": true})
			return out, ctx.Err()
		}
	}
}
