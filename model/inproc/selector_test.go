//go:build inproc

package inproc

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/airs-dev/airs/grammar"
	"github.com/airs-dev/airs/selector"
)

// TestSelectorModel runs Model (the selector.Model) on the built-in tools'
// schemas the way the selector does: the format it exports for Ollama
// drives the masks, and the selector's stream check over its own
// tool-call grammar must accept every byte and end complete.
func TestSelectorModel(t *testing.T) {
	e := tinyEngine(t)
	raw, err := os.ReadFile("../../grammar/testdata/builtin_tools.json")
	if err != nil {
		t.Fatal(err)
	}
	var tools []struct {
		Name       string          `json:"name"`
		Parameters json.RawMessage `json:"parameters"`
	}
	if err := json.Unmarshal(raw, &tools); err != nil {
		t.Fatal(err)
	}
	var ts []grammar.ToolSchema
	for _, x := range tools {
		ts = append(ts, grammar.ToolSchema{Name: x.Name, Parameters: x.Parameters})
	}
	format, _, err := selector.FormatFor(ts, true)
	if err != nil {
		t.Fatal(err)
	}
	g, err := grammar.ToolCall(ts, selector.ToolCallGrammar)
	if err != nil {
		t.Fatal(err)
	}
	m := &Model{Engine: e, Name: "tiny"}
	for seed := 0; seed < 6; seed++ {
		check := selector.NewOutputChecker(g)
		var out strings.Builder
		err := m.Generate(context.Background(), selector.ModelRequest{
			Messages: []selector.Message{{Role: "user", Content: "what's 2 * (3 + 4)?"}},
			Format:   format, Seed: seed, NumPredict: 1024,
		}, func(c string) error {
			out.WriteString(c)
			_, err := check.Write([]byte(c))
			return err
		})
		if err != nil {
			t.Fatalf("seed %d: %v after %q", seed, err, out.String())
		}
		if !check.Complete() {
			t.Fatalf("seed %d: %q is not a complete call for the selector's check", seed, out.String())
		}
		t.Logf("seed %d: %s (forced %d of %d tokens)", seed, out.String(), m.Last().Forced, m.Last().Forced+m.Last().Sampled)
	}
}
