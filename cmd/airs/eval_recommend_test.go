package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestEvalRecommend runs `airs eval recommend` on the committed fixture:
// one JSON line per method, a table without --json, a hint on missing data.
func TestEvalRecommend(t *testing.T) {
	e := newEnv(t, "")
	data, _ := filepath.Abs("../../evals/recommend/testdata/conversations.jsonl.gz")
	funcs, _ := filepath.Abs("../../evals/recommend/testdata/functions.jsonl.gz")
	r := e.run("eval", "recommend", "--data", data, "--functions", funcs, "--folds", "3", "--json")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(lines) != 4 || !strings.Contains(lines[0], `"method":"airs"`) || !strings.Contains(lines[0], `"hit@3":`) {
		t.Errorf("%s", r.stdout)
	}
	r = e.run("eval", "recommend", "--train", data, "--data", data, "--functions", funcs)
	if r.code != 0 || !strings.Contains(r.stdout, "trained on") || !strings.Contains(r.stdout, "bm25") {
		t.Errorf("table: %d %s %s", r.code, r.stdout, r.stderr)
	}
	if r := e.run("eval", "recommend", "--data", filepath.Join(e.dir, "nope.jsonl.gz"), "--functions", funcs); r.code != 2 || !strings.Contains(r.stderr, "testdata") {
		t.Errorf("missing data: %d %s", r.code, r.stderr)
	}
	if r := e.run("eval", "recommend", "--help"); r.code != 0 || !strings.Contains(r.stdout, "hit@1") || !strings.Contains(r.stdout, "--learning-curve") {
		t.Errorf("help: %d %s", r.code, r.stdout)
	}
}
