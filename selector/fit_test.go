package selector

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/airs-dev/airs/pipeline"
)

func TestDelexicalize(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`summarize this article: "The council met. It raised 4%."`, "summarize this article: text"},
		{"compare old.txt with notes/new.txt", "compare txt file with txt file"},
		{"what's 15% of 240?", "what's number percent of number ?"},
		{"(12.5 + 7) * 3", "arithmetic expression"},
		{"extract page 1 of quote.pdf", "extract page number of pdf file"},
		{"tell me a joke about cats", "tell me a joke about cats"},
	} {
		if got := Delexicalize(c.in); got != c.want {
			t.Errorf("Delexicalize(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestCoverage(t *testing.T) {
	calc := pipeline.Tool{Name: "calculator", Description: "Evaluate an arithmetic expression and return the number. Use it to add, subtract, multiply or divide numbers."}
	for _, c := range []struct {
		text string
		want float64
	}{
		{"calculate 1234 * 56", 1},             // "calculate" shares its stem with "calculator"
		{"multiply 12 by 12", 1},               // multiply + number
		{"book a flight to Tokyo", 0},          // none of its words
		{"subtract the tax from 120", 2.0 / 3}, // subtract, number; not tax
		{"12 + 4", 1},                          // only a value: its type name
		{"", 0},
	} {
		if got := Coverage(c.text, calc); abs(got-c.want) > 1e-9 {
			t.Errorf("Coverage(%q) = %.3f, want %.3f", c.text, got, c.want)
		}
	}
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

// TestFileNamesOnlyForPathParameters: a file name in a request fills a
// parameter that takes a path, never one that takes a text; a required
// text the request does not give is reported missing, not invented.
func TestFileNamesOnlyForPathParameters(t *testing.T) {
	compare := json.RawMessage(`{"type":"object","properties":{
		"a":{"type":"string","description":"The first (old) text."},
		"b":{"type":"string","description":"The second (new) text."}},"required":["a","b"]}`)
	args, missing, err := ExtractArgumentsReport(compare, "compare the pricing in a.pdf and b.pdf", Hints{})
	if err != nil {
		t.Fatal(err)
	}
	if args["a"] == "a.pdf" || args["b"] == "b.pdf" {
		t.Errorf("file names given as texts: %v", args)
	}
	if !slices.Equal(missing, []string{"a", "b"}) {
		t.Errorf("missing = %v, want [a b]", missing)
	}
	read := json.RawMessage(`{"type":"object","properties":{
		"space":{"type":"string","enum":["documents"]},
		"path":{"type":"string","description":"File path inside the space"}},"required":["space","path"]}`)
	args, missing, err = ExtractArgumentsReport(read, "read notes/todo.md", Hints{})
	if err != nil {
		t.Fatal(err)
	}
	if args["path"] != "notes/todo.md" || args["space"] != "documents" || len(missing) != 0 {
		t.Errorf("read: args %v, missing %v", args, missing)
	}
	// Quoted texts still fill text parameters.
	args, missing, _ = ExtractArgumentsReport(compare, `compare "price 10" and "price 12"`, Hints{})
	if args["a"] != "price 10" || args["b"] != "price 12" || len(missing) != 0 {
		t.Errorf("quoted: args %v, missing %v", args, missing)
	}
}
