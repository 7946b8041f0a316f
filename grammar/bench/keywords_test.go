package bench

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWriteKeywords: the per-keyword section counts the keywords of the
// run's schemas (not property names), the compiled ones, and groups the
// refusals by form with why.
func TestWriteKeywords(t *testing.T) {
	dir := t.TempDir()
	lines := `{"id":"a","schema":{"type":"array","contains":{"const":1},"properties":{"uniqueItems":{}}},"tests":[]}
{"id":"b","schema":{"type":"array","items":{"type":"string"},"uniqueItems":true},"tests":[]}
{"id":"c","schema":{"allOf":[{"type":"array","uniqueItems":true,"items":{"type":"string","pattern":"x"}}]},"tests":[]}
`
	if err := os.WriteFile(filepath.Join(dir, "S.jsonl"), []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	rows := []map[string]any{
		{"id": "a", "file": "S.jsonl", "status": StatusOK, "compiled": true},
		{"id": "b", "file": "S.jsonl", "status": StatusCompileError, "compiled": false,
			"error": `grammar: uniqueItems at "/uniqueItems": uniqueItems is not supported here: the items may be more than 64 different values`},
		{"id": "c", "file": "S.jsonl", "status": StatusCompileError, "compiled": false,
			"error": `grammar: uniqueItems at "/allOf/0/uniqueItems": uniqueItems is not supported here: the items may be more than 64 different values`},
	}
	var sb strings.Builder
	if err := writeKeywords(&sb, rows, dir); err != nil {
		t.Fatal(err)
	}
	out := sb.String()
	for _, want := range []string{
		"| `uniqueItems` | 2 | 0 | 2 |", // a's "uniqueItems" is a property name
		"| `contains` | 1 | 1 | 0 |",
		"| `type` | 3 | 1 | 0 |",
		"| `pattern` | 1 | 0 | 0 |",
		"- `uniqueItems` 2:\n  - 2: uniqueItems is not supported here: the items may be more than N different values — an unbounded domain",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in:\n%s", want, out)
		}
	}
}
