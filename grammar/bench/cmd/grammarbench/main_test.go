package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestScriptsPath runs what scripts/conformance.sh and peer-xgrammar.sh
// run: bench to a file, suite, report from both, compare.
func TestScriptsPath(t *testing.T) {
	dir := t.TempDir()
	benchOut := filepath.Join(dir, "bench.jsonl")
	var stdout, stderr bytes.Buffer
	call := func(want int, args ...string) string {
		t.Helper()
		stdout.Reset()
		stderr.Reset()
		if code := run(args, &stdout, &stderr); code != want {
			t.Fatalf("grammarbench %q: exit %d, want %d; stderr:\n%s", args, code, want, stderr.String())
		}
		return stdout.String()
	}
	call(0, "bench", "--data", "../../testdata/mini.jsonl.gz", "--vocab", "../../../testdata/qwen3.vocab.jsonl.gz", "--limit", "4", "--json", "--out", benchOut, "--quiet")
	b, err := os.ReadFile(benchOut)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 5 || !strings.HasPrefix(lines[4], `{"summary":true,"schemas":4,`) || stderr.Len() != 0 {
		t.Fatalf("bench --out --quiet: %d lines, last %q, stderr %q", len(lines), lines[len(lines)-1], stderr.String())
	}

	suiteDir := t.TempDir()
	os.WriteFile(filepath.Join(suiteDir, "type.json"), []byte(`[{"description":"int","schema":{"type":"integer"},"tests":[{"description":"1","data":1,"valid":true}]}]`), 0o644)
	suiteOut := filepath.Join(dir, "suite.jsonl")
	js := call(0, "suite", "--dir", suiteDir, "--json")
	if !strings.HasPrefix(js, `{"file":"type","groups":1,"compiled":1,`) {
		t.Fatalf("suite --json: %q", js)
	}
	os.WriteFile(suiteOut, []byte(js), 0o644)

	md := call(0, "report", "--bench", benchOut, "--suite", suiteOut, "--vocab", "qwen3", "--command", "grammarbench bench X")
	for _, want := range []string{"# Conformance", "Command: `grammarbench bench X`", "(4 schemas, vocab qwen3", "## JSON Schema Test Suite", "| type | 1 | 1 |"} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
	if cmp := call(0, "compare", "--ours", benchOut, "--peer", benchOut); !strings.Contains(cmp, "| | AIRS | XGrammar") {
		t.Errorf("compare: %q", cmp)
	}

	// Mistakes: one line and a hint, exit 2; a failure, exit 1.
	call(2, "bench", "--bogus")
	if !strings.Contains(stderr.String(), "Run 'grammarbench bench --help'") {
		t.Errorf("bad flag: %q", stderr.String())
	}
	call(2, "report")
	call(2, "compile", "x.json")
	call(1, "compare", "--ours", benchOut, "--peer", filepath.Join(dir, "missing.jsonl"))
	if h := call(0, "bench", "--help"); !strings.Contains(h, "-vocab") {
		t.Errorf("--help: %q", h)
	}
}
