//go:build inproc

package inproc

import (
	"context"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/airs-dev/airs/grammar"
	"github.com/airs-dev/airs/selector"
)

// TestPrefixReuse: a prompt that shares a prefix with the last sequence
// decodes only the rest, and its logits are those of decoding it whole.
func TestPrefixReuse(t *testing.T) {
	e, closeE, err := Open(tinyGGUF(t), Options{ContextLen: 2048, Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer closeE()
	b := e.b.(*llamaBackend)
	system := selector.Message{Role: "system", Content: "You choose one tool call for the user's request among calculator, read-file and list-files, with its arguments as JSON."}
	prompt := func(user string) []int {
		toks, err := b.Tokenize(ChatPrompt([]selector.Message{system, {Role: "user", Content: user}}), true)
		if err != nil {
			t.Fatal(err)
		}
		return toks
	}
	a, bt := prompt("what's 2 * (3 + 4)?"), prompt("list the pdf files in my documents")
	shared := 0
	for shared < len(a) && shared < len(bt) && a[shared] == bt[shared] {
		shared++
	}
	eval := func(toks []int) []float32 {
		b.Reset()
		l, err := b.Eval(toks)
		if err != nil {
			t.Fatal(err)
		}
		return slices.Clone(l)
	}
	eval(a)
	t0 := time.Now()
	reused := eval(bt)
	dReused := time.Since(t0)
	if b.ReusedPrompt() != shared || shared == 0 {
		t.Fatalf("reused %d tokens, the prompts share %d", b.ReusedPrompt(), shared)
	}
	again := eval(bt) // the same prompt: all but its last token kept
	if b.ReusedPrompt() != len(bt)-1 {
		t.Fatalf("the same prompt again reused %d of %d", b.ReusedPrompt(), len(bt))
	}
	b.noReuse = true
	t0 = time.Now()
	whole := eval(bt)
	dWhole := time.Since(t0)
	b.noReuse = false
	if b.ReusedPrompt() != 0 {
		t.Fatalf("NoPrefixReuse reused %d", b.ReusedPrompt())
	}
	for name, l := range map[string][]float32{"a shared prefix": reused, "the same prompt": again} {
		maxDiff, scale := 0.0, 0.0
		for i := range whole {
			maxDiff = math.Max(maxDiff, math.Abs(float64(l[i]-whole[i])))
			scale = math.Max(scale, math.Abs(float64(whole[i])))
		}
		if maxDiff > 1e-3*scale+1e-4 || argmax(l) != argmax(whole) {
			t.Fatalf("%s: logits differ from decoding the prompt whole by up to %g (scale %g), argmax %d vs %d", name, maxDiff, scale, argmax(l), argmax(whole))
		}
		t.Logf("%s: logits within %.2g of the whole decode (scale %.3g)", name, maxDiff, scale)
	}
	t.Logf("prompt of %d tokens, %d shared: %s with the prefix kept, %s decoded whole", len(bt), shared, dReused, dWhole)

	// Through the engine: a selection after another reports what it kept,
	// and its output is still a complete call.
	ts := []grammar.ToolSchema{{Name: "calculator", Parameters: []byte(`{"type":"object","properties":{"expression":{"type":"string","maxLength":20}},"required":["expression"]}`)}}
	format, _, _ := selector.FormatFor(ts, true)
	m := &Model{Engine: e}
	for i, q := range []string{"what's 2 * (3 + 4)?", "what's 5 - 1?"} {
		err := m.Generate(context.Background(), selector.ModelRequest{Messages: []selector.Message{system, {Role: "user", Content: q}}, Format: format, NumPredict: 256}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if r := m.Last(); i == 1 && (r.PromptReused == 0 || r.PromptReused >= r.PromptTokens) {
			t.Fatalf("the second selection kept %d of %d prompt tokens", r.PromptReused, r.PromptTokens)
		}
	}
}

func argmax(l []float32) int {
	best := 0
	for i, x := range l {
		if x > l[best] {
			best = i
		}
	}
	return best
}
