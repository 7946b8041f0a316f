package grammar

import (
	"encoding/json"
	"os"
	"testing"
	"time"
)

// planRefPattern is selector.RefPattern (copied: grammar imports nothing
// from AIRS).
const planRefPattern = `^\{\{(steps\.[a-z][a-z0-9_]{0,31}\.output(\.[A-Za-z0-9_$-]{1,32}|\[[0-9]{1,4}\]){0,4}|input\.[A-Za-z0-9_-]{1,32})\}\}$`

// planSchema builds the single-pass plan schema AIRS generated plans under
// before the planner moved to two passes (selector.OutlineSchema, then
// selector.PlanSchema over that outline, with constant step ids, one
// prefixItems entry per step and bounded literals): up to 8 steps, each any
// of the builtin tools in testdata/builtin_tools.json (dumped from
// builtin.Tools), every top-level argument anyOf [its schema, a reference
// string]. selector no longer produces it; it stays here as a compile
// stress test, the union of unbounded strings and reference patterns that
// once ran for minutes.
func planSchema(t testing.TB) []byte {
	raw, err := os.ReadFile("testdata/builtin_tools.json")
	if err != nil {
		t.Fatal(err)
	}
	var tools []struct {
		Name       string         `json:"name"`
		Parameters map[string]any `json:"parameters"`
	}
	if err := json.Unmarshal(raw, &tools); err != nil {
		t.Fatal(err)
	}
	ref := map[string]any{"type": "string", "pattern": planRefPattern}
	var branches []any
	for _, tl := range tools {
		params := map[string]any{}
		for k, v := range tl.Parameters {
			params[k] = v
		}
		if props, ok := tl.Parameters["properties"].(map[string]any); ok {
			np := map[string]any{}
			for name, ps := range props {
				np[name] = map[string]any{"anyOf": []any{ps, ref}}
			}
			params["properties"] = np
		}
		branches = append(branches, map[string]any{
			"type": "object",
			"properties": map[string]any{
				"id":        map[string]any{"type": "string", "pattern": `^[a-z][a-z0-9_]{0,31}$`},
				"function":  map[string]any{"const": tl.Name},
				"arguments": params,
			},
			"required":             []string{"id", "function", "arguments"},
			"additionalProperties": false,
		})
	}
	s := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"steps": map[string]any{"type": "array", "minItems": 1, "maxItems": 8, "items": map[string]any{"anyOf": branches}},
		},
		"required":             []string{"steps"},
		"additionalProperties": false,
	}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestPlanSchema: the single-pass plan schema over the builtin tools, with
// flexible whitespace, compiles (it used to run for minutes; the time is
// logged, and the bound below only catches that regression: speed lives in
// benchmarks).
func TestPlanSchema(t *testing.T) {
	schema := planSchema(t)
	t0 := time.Now()
	g, err := Compile(schema, Options{Whitespace: WhitespaceFlexible, MaxWhitespace: 32, Lenient: true})
	el := time.Since(t0)
	if err != nil {
		t.Fatalf("compile: %v (%v)", err, el)
	}
	t.Logf("plan schema: %v, %v", el, g.Stats())
	ok := `{"steps":[{"id":"a","function":"calculator","arguments":{"expression":"1+1"}},` +
		`{"id":"b","function":"summarize","arguments":{"text":"{{steps.a.output}}"}}]}`
	if !g.Match([]byte(ok)) {
		t.Errorf("plan rejected: %s", ok)
	}
	bad := `{"steps":[{"id":"a","function":"list-files","arguments":{"space":"docs","limit":"{{steps.a}}"}}]}`
	if g.Match([]byte(bad)) {
		t.Errorf("bad reference accepted")
	}
	if el > 60*time.Second {
		t.Errorf("plan schema took %v", el)
	}
}
