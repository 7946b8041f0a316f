//go:build inproc

package inproc

import (
	"context"
	"testing"

	"github.com/airs-dev/airs/grammar"
)

func TestSmoke(t *testing.T) {
	e := tinyEngine(t)
	g, err := grammar.ToolCall([]grammar.ToolSchema{{Name: "get_weather", Parameters: []byte(`{"type":"object","properties":{"city":{"type":"string","maxLength":40},"days":{"type":"integer","minimum":1,"maximum":7}},"required":["city"]}`)}}, grammar.ToolCallOptions{AllowNone: true, Options: grammar.Options{Strict: true}})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []Sampling{{}, {Temperature: 0.8, TopP: 0.95, Seed: 1}, {NoFastForward: true}} {
		r, err := e.Constrained(context.Background(), "<|im_start|>user\nweather in Paris<|im_end|>\n<|im_start|>assistant\n", g, s, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%+v %q forced %.2f", *r, r.Text, r.ForcedFraction())
	}
}
