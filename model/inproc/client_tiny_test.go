//go:build inproc

package inproc

import (
	"context"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/airs-dev/airs/selector"
)

// TestClientTiny: a free answer on the tiny model through llama.cpp ends
// at NumPredict (or the end of turn), as text, and says how fast it went.
func TestClientTiny(t *testing.T) {
	c := &Client{Engine: tinyEngine(t), Name: "tiny"}
	var chunks int
	for _, seed := range []int{1, 2, 3} {
		t0 := time.Now()
		resp, err := c.chat(context.Background(), selector.ModelRequest{
			Messages:   []selector.Message{{Role: "system", Content: "Answer briefly."}, {Role: "user", Content: "Tool result: 3 files. What is in my documents?"}},
			NumPredict: 128, Sample: &selector.Sampling{Seed: &seed},
		}, func(string) error { chunks++; return nil })
		if err != nil {
			t.Fatal(err)
		}
		d := time.Since(t0)
		if !resp.Done || resp.EvalCount > 128 || resp.DoneReason == "length" && resp.EvalCount != 128 {
			t.Fatalf("seed %d: %+v", seed, resp)
		}
		if !utf8.ValidString(resp.Content) || strings.Contains(resp.Content, "<|im_start|>") {
			t.Fatalf("seed %d: %q", seed, resp.Content)
		}
		t.Logf("seed %d: %d prompt + %d generated tokens (%s) in %s: %.2f ms a generated token after the prefill",
			seed, resp.PromptEvalCount, resp.EvalCount, resp.DoneReason, d.Round(time.Millisecond),
			float64(resp.EvalDuration.Microseconds())/1000/float64(max(1, resp.EvalCount-1)))
	}
}
