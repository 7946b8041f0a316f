package main

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airs-dev/airs/evals/replay"
	"github.com/airs-dev/airs/internal/engine"
	"github.com/airs-dev/airs/internal/settings"
	"github.com/airs-dev/airs/pipeline"
)

// TestEvalBFCLJSON runs the no-LLM BFCL evaluation on the committed
// fixtures and checks the --json lines have exactly the documented keys
// (category, n, function_acc, ast_acc).
func TestEvalBFCLJSON(t *testing.T) {
	e := newEnv(t, "")
	data, _ := filepath.Abs("../../evals/bfcl/testdata")
	rep := filepath.Join(e.dir, "report")
	r := e.run("eval", "bfcl", "--model", "none", "--data", data, "--categories", "multiple,irrelevance", "--json", "--report", rep)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(lines) != 2 {
		t.Fatalf("want 2 JSON lines, got %q", r.stdout)
	}
	for i, l := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatal(err)
		}
		if len(m) != 4 || m["category"] != []string{"multiple", "irrelevance"}[i] || !(m["n"].(float64) >= 1) {
			t.Errorf("line %q", l)
		}
		for _, k := range []string{"function_acc", "ast_acc"} {
			if v, ok := m[k].(float64); !ok || v < 0 || v > 1 {
				t.Errorf("%s = %v in %q", k, m[k], l)
			}
		}
	}
	var mult map[string]float64
	json.Unmarshal([]byte(strings.Replace(lines[0], `"category":"multiple",`, "", 1)), &mult)
	if mult["function_acc"] < 0.7 { // 3 of the fixture's 4
		t.Errorf("multiple function_acc %.3f on the fixture: the no-LLM path should choose the right function", mult["function_acc"])
	}
	if !strings.Contains(r.stderr, "no-LLM mode") {
		t.Errorf("no mode notice: %s", r.stderr)
	}
	if _, err := os.Stat(filepath.Join(rep, "bfcl.md")); err != nil {
		t.Error(err)
	}
	if r := e.run("eval", "bfcl", "--categories", "nope", "--data", data); r.code != 2 {
		t.Errorf("unknown category: exit %d", r.code)
	}
}

// TestEvalReplayAndTune records sessions through the engine with the same
// airs.yaml the binary reads, then runs `airs eval replay` with a baseline
// and `airs eval tune`.
func TestEvalReplayAndTune(t *testing.T) {
	manifest, _ := filepath.Abs("../../evals/replay/testdata/extra_tools.json")
	e := newEnv(t, "manifests:\n  - "+manifest+"\nrecording:\n  enabled: true\n")
	t.Setenv("AIRS_HOME", e.home)
	cfg, reg, m := assembleConfig(t, e.config)
	eng, err := engine.New(context.Background(), cfg, reg, m, settings.Policy(cfg), engine.Options{Channel: "chat", Model: "none"})
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(5, 5))
	mf, _ := pipeline.LoadManifest(manifest)
	var extra []pipeline.Tool
	for _, mt := range mf.Tools {
		extra = append(extra, mt.Tool)
	}
	replayDocs(t, e.docs)
	reqs := append(replay.BuiltinRequests(r, 60, "documents"), replay.ToolRequests(r, 50, extra)...)
	reqs = append(reqs, replay.NoneRequests(r, 10)...)
	if _, err := replay.Generate(context.Background(), replayService{eng}, "tester", reqs); err != nil {
		t.Fatal(err)
	}
	log := eng.RecordingPath()
	eng.Close()

	base := filepath.Join(e.dir, "trust-only.json")
	os.WriteFile(base, []byte(`{"name":"trust-only","weights":{"trust":1}}`), 0o644)
	rep := filepath.Join(e.dir, "replay-report")
	out := e.run("eval", "replay", log, "--baseline", base, "--json", "--report", rep)
	if out.code != 0 {
		t.Fatalf("replay exit %d: %s", out.code, out.stderr)
	}
	lines := strings.Split(strings.TrimSpace(out.stdout), "\n")
	if len(lines) != 6 { // two configurations, four metrics
		t.Fatalf("replay --json: %q", out.stdout)
	}
	var def replay.MetricLine
	json.Unmarshal([]byte(lines[1]), &def)
	if def.Config != "default" || def.N != len(reqs) || def.Top1 < 0.5 {
		t.Errorf("default line %q", lines[1])
	}
	var d replay.DiffLine
	json.Unmarshal([]byte(lines[2]), &d)
	if d.Metric != "top1" || !(d.Lo > 0) || d.Lo > d.Diff || d.Diff > d.Hi {
		t.Errorf("top1 difference %q: default should beat trust-only with an interval above 0", lines[2])
	}
	for _, f := range []string{"replay.md", "compare.md", "compare_diff.png"} {
		if _, err := os.Stat(filepath.Join(rep, f)); err != nil {
			t.Error(err)
		}
	}

	w := filepath.Join(e.dir, "w.json")
	tune := e.run("eval", "tune", log, "--holdout", "0.3")
	if tune.code != 0 || !strings.Contains(tune.stdout, "held-out top-1: default") || !strings.Contains(tune.stdout, "not written") {
		t.Fatalf("tune exit %d: %s %s", tune.code, tune.stdout, tune.stderr)
	}
	if _, err := os.Stat(w); err == nil {
		t.Error("tune wrote weights without --write")
	}
	tune = e.run("eval", "tune", log, "--write", w, "--json")
	var tr struct {
		Test    int     `json:"test"`
		Default float64 `json:"default_top1"`
		Tuned   float64 `json:"tuned_top1"`
	}
	if tune.code != 0 || json.Unmarshal([]byte(tune.stdout), &tr) != nil || tr.Test == 0 {
		t.Fatalf("tune --json exit %d: %s %s", tune.code, tune.stdout, tune.stderr)
	}
	if _, err := replay.LoadWeights(w); err != nil {
		t.Errorf("written weights: %v", err)
	}
	// The written weights replay.
	if out := e.run("eval", "replay", log, "--weights", w); out.code != 0 || !strings.Contains(out.stdout, "top1") {
		t.Errorf("replay --weights exit %d: %s %s", out.code, out.stdout, out.stderr)
	}
	// Without a SESSIONS.jsonl, replay reads the log airs.yaml records to;
	// with none recorded yet it says how to record one.
	if out := e.run("eval", "replay"); out.code != 0 || !strings.Contains(out.stderr, "from "+log) {
		t.Errorf("replay of the recorded log: exit %d: %s", out.code, out.stderr)
	}
	if out := newEnv(t, "").run("eval", "replay"); out.code != 2 || !strings.Contains(out.stderr, "recording: {enabled: true}") {
		t.Errorf("replay without a log: exit %d: %s", out.code, out.stderr)
	}
}

func TestEvalHelp(t *testing.T) {
	e := newEnv(t, "")
	r := e.run("help", "eval")
	if r.code != 0 || !strings.Contains(r.stdout, "airs eval replay sessions.jsonl --baseline") || !strings.Contains(r.stdout, "Examples:") {
		t.Errorf("help eval: %d %s", r.code, r.stdout)
	}
	if r := e.run("eval", "frobnicate"); r.code != 2 {
		t.Errorf("unknown action: exit %d", r.code)
	}
}
