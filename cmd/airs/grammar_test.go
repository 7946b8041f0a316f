package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGrammarCLI: `airs grammar bench|compile|suite` parse their flags
// here and print what grammar/bench computes.
func TestGrammarCLI(t *testing.T) {
	e := newEnv(t, "")
	mini, _ := filepath.Abs("../../grammar/bench/testdata/mini.jsonl.gz")
	vocab, _ := filepath.Abs("../../grammar/testdata/qwen3.vocab.jsonl.gz")
	b, err := os.ReadFile(mini)
	if err != nil {
		t.Fatal(err)
	}
	// --data takes several paths, flags come anywhere, further arguments
	// are data too: three copies of the 12-schema file.
	data := t.TempDir()
	for _, n := range []string{"a", "b", "c"} {
		os.WriteFile(filepath.Join(data, n+".jsonl.gz"), b, 0o644)
	}
	p := func(n string) string { return filepath.Join(data, n+".jsonl.gz") }
	r := e.run("grammar", "bench", "--data", p("a"), p("b"), "--vocab="+vocab, "--json", "--limit", "3", p("c"))
	r.expect(t, 0, `{"summary":true,"schemas":3,`, "3 of 36 schemas from 3 files")
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(lines) != 4 {
		t.Fatalf("%d lines:\n%s", len(lines), r.stdout)
	}
	var first struct {
		ID     string `json:"id"`
		Status string `json:"status"`
	}
	if err := json.Unmarshal([]byte(lines[0]), &first); err != nil || first.ID == "" || first.Status == "" {
		t.Errorf("per-schema line %q: %v", lines[0], err)
	}
	// Without --json: the text summary; --quiet: nothing on stderr.
	r = e.run("grammar", "bench", "--data", p("a"), "--vocab", vocab, "--limit", "2", "--quiet")
	r.expect(t, 0, "schemas 2  compiled 2", "")
	if r.stderr != "" {
		t.Errorf("--quiet: stderr %q", r.stderr)
	}
	e.run("grammar", "bench", "--vocab", vocab).expect(t, 2, "", "--data and --vocab are required")
	e.run("grammar", "bench", "--data", p("a"), "--vocab", vocab, "--limit", "-1").expect(t, 2, "", "non-negative")

	schema := filepath.Join(e.dir, "s.json")
	os.WriteFile(schema, []byte(`{"type":"object","properties":{"a":{"type":"string","pattern":"(?<=a)b"}}}`), 0o644)
	e.run("grammar", "compile", schema).expect(t, 1, "", "lookbehind is not supported")
	e.run("grammar", "compile", "--lenient", schema).expect(t, 0, "compiled in ", `loosened: pattern at "/properties/a/pattern"`)
	e.run("grammar", "compile", schema, "--lenient", "--export", "gbnf").expect(t, 0, "root ::=", "loosened: pattern")
	e.run("grammar", "compile", schema, "--export", "yaml").expect(t, 2, "", "want gbnf or json-schema")
	e.run("grammar", "compile").expect(t, 2, "", "give one SCHEMA.json or --tools TOOLS.json")
	tools, _ := filepath.Abs("../../grammar/testdata/builtin_tools.json")
	e.run("grammar", "compile", "--tools", tools, "--export", "json-schema").expect(t, 0, `"anyOf"`, "")
	e.run("grammar", "compile", "--tools", tools).expect(t, 0, "tools lowered, root built", "")

	suite := t.TempDir()
	os.WriteFile(filepath.Join(suite, "type.json"), []byte(`[{"description":"int","schema":{"type":"integer"},"tests":[{"description":"s","data":"s","valid":false}]}]`), 0o644)
	e.run("grammar", "suite", "--dir", suite).expect(t, 0, "| type | 1 | 1 | 1 | 0 | 0/0 | 1/1 | 0 |", "")
	e.run("grammar", "suite", "--dir", suite, "--json").expect(t, 0, `{"file":"type","groups":1`, "")
	e.run("grammar", "suite", "--dir", t.TempDir()).expect(t, 1, "", "no *.json in")
	e.run("grammar", "bench", "--help").expect(t, 0, "-vocab", "")
}
