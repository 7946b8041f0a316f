package grammar

import (
	"strings"
	"testing"
)

// Strict can narrow a schema to nothing the lowering sees as empty: here
// every valid instance holds an item object with some property, and Strict
// forbids undeclared ones. Compile says so rather than hand a generator a
// grammar dead before its first token; without Strict the grammar is the
// schema's.
func TestStrictEmptyLanguageRefused(t *testing.T) {
	schema := []byte(`{"type":"array","not":{"items":{"patternProperties":{"ab":false},"additionalProperties":false}},"maxItems":2}`)
	_, err := Compile(schema, Options{Strict: true})
	if err == nil || !strings.Contains(err.Error(), "under Strict") {
		t.Fatalf("Strict: want the empty-language refusal, got %v", err)
	}
	g, err := Compile(schema, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !g.Match([]byte(`[{"x":1}]`)) || g.Match([]byte(`[{}]`)) {
		t.Fatal("without Strict the grammar is not the schema's")
	}
	// A Strict grammar with a non-empty language still compiles.
	if _, err := Compile([]byte(`{"type":"object","properties":{"a":{"type":"integer"}},"required":["a"]}`), Options{Strict: true}); err != nil {
		t.Fatal(err)
	}
}
