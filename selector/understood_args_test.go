package selector

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/airs-dev/airs/pipeline"
	"github.com/airs-dev/airs/understand"
)

// TestArgumentsUnderstood: a tool's arguments filled from the request's
// interpretation take its typed values (the arithmetic as an expression,
// the given text whole) where extraction from the words finds none or a
// fragment, and keep extraction's answer for the rest.
func TestArgumentsUnderstood(t *testing.T) {
	calc := pipeline.Tool{Name: "calculator", Parameters: json.RawMessage(`{"type":"object","properties":{"expression":{"type":"string","description":"an arithmetic expression"}},"required":["expression"]}`)}
	sum := pipeline.Tool{Name: "summarize", Parameters: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string","description":"the text to summarize"},"max_words":{"type":"integer","description":"at most this many words"}},"required":["text"]}`)}
	for _, c := range []struct {
		tool       pipeline.Tool
		request    string
		param      string
		want       string
		wantAbsent string // a parameter the request gives no value for
	}{
		{calc, "what's 12 times 7 plus 3", "expression", "12 * 7 + 3", ""},
		{calc, "how much is fifteen percent of 80", "expression", "(15 / 100 * 80)", ""},
		{sum, "summarize this: The meeting moved to Tuesday. Bring the 2024 budget and 3 copies.", "text",
			"The meeting moved to Tuesday. Bring the 2024 budget and 3 copies.", "max_words"},
	} {
		in := understand.ParsePlain(c.request)
		args, missing, err := ArgumentsUnderstood(c.tool, in, Hints{})
		if err != nil {
			t.Fatalf("%q: %v", c.request, err)
		}
		if args[c.param] != c.want || slices.Contains(missing, c.param) {
			t.Errorf("%q: %s = %q (missing %v), want %q", c.request, c.param, args[c.param], missing, c.want)
		}
		if c.wantAbsent != "" {
			if _, ok := args[c.wantAbsent]; ok {
				t.Errorf("%q: %s filled (%v) though the request gives none", c.request, c.wantAbsent, args[c.wantAbsent])
			}
		}
	}
	// Nothing typed: extraction's answer stands, its missing list too.
	args, missing, err := ArgumentsUnderstood(calc, understand.ParsePlain("tell me a joke"), Hints{})
	if err != nil || !slices.Contains(missing, "expression") {
		t.Errorf("no arithmetic: args %v, missing %v, err %v; want expression missing", args, missing, err)
	}
}
