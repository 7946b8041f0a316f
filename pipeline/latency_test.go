package pipeline

import (
	"context"
	"testing"
	"time"
)

// trainUntilPredicted calls tool (no timeout) until the latency model
// predicts it: the first MinSamples calls train it, and the first refit
// runs in the background.
func trainUntilPredicted(t *testing.T, e *env, tool, params string) *Result {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		r, err := e.m.Call(context.Background(), Request{Tool: tool, Params: []byte(params), Caller: "alice"})
		if err != nil {
			t.Fatal(err)
		}
		if r.Predicted > 0 {
			return r
		}
	}
	t.Fatal("the latency model never predicted")
	return nil
}
