package engine

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/airs-dev/airs/config"
	"github.com/airs-dev/airs/guard"
	"github.com/airs-dev/airs/guard/anomaly"
	"github.com/airs-dev/airs/guard/anomaly/traffic"
	"github.com/airs-dev/airs/pipeline"
	"github.com/airs-dev/airs/pipeline/audit"
)

func trainedModel(t *testing.T, seed uint64) *anomaly.Model {
	t.Helper()
	z := traffic.NewFeaturizer()
	var fs []anomaly.Features
	for _, c := range traffic.Normal(time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC), 7, seed) {
		fs = append(fs, z.Features(c, true))
	}
	m, err := anomaly.Train(fs)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// No model file: the reduced mode, named, calls unscored; a model written
// later is picked up by the watcher without a restart, and a newer one
// replaces it; a broken file keeps the model in use.
func TestAnomalyGateFollowsTheModelFile(t *testing.T) {
	home := t.TempDir()
	t.Setenv("AIRS_HOME", home)
	cfg, err := config.Parse("airs.yaml", []byte("guard:\n  anomaly:\n    block: 0.97\n"))
	if err != nil {
		t.Fatal(err)
	}
	old := AnomalyWatchInterval
	AnomalyWatchInterval = 20 * time.Millisecond
	defer func() { AnomalyWatchInterval = old }()
	g := StartAnomaly(cfg, nil, true)
	defer g.Close()
	if !g.NoModel || !strings.Contains(g.Notice, NoAnomalyModel) || !strings.Contains(g.Notice, "airs guard train") {
		t.Fatalf("no model: notice %q", g.Notice)
	}
	if g.Thresholds != (pipeline.AnomalyThresholds{Warn: 204, Review: 230, Block: 248}) {
		t.Fatalf("thresholds %v", g.Thresholds)
	}
	f := pipeline.CallFeatures{Caller: "alice", Tool: "read-file", At: time.Now(), ParamSizeBytes: 80}
	if _, v := g.Scorer.ScoreCall(f); v != "" {
		t.Fatalf("scored with no model: %q", v)
	}
	os.MkdirAll(filepath.Join(home, "guard"), 0o700)
	wait := func(want string) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			if v, _ := g.Models.Versions(); v == want {
				return
			}
			if time.Now().After(deadline) {
				v, _ := g.Models.Versions()
				t.Fatalf("model %q after 10 s, want %q", v, want)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	a, b := trainedModel(t, 1), trainedModel(t, 2)
	if err := a.Save(cfg.Guard.Anomaly.Model); err != nil {
		t.Fatal(err)
	}
	wait(a.Version())
	if _, v := g.Scorer.ScoreCall(f); v != a.Version() {
		t.Fatalf("scored by %q, want %q", v, a.Version())
	}
	first, err := os.Stat(cfg.Guard.Anomaly.Model)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Save(cfg.Guard.Anomaly.Model); err != nil {
		t.Fatal(err)
	}
	// A new mtime even on a coarse clock, set rather than slept for.
	later := first.ModTime().Add(time.Second)
	if err := os.Chtimes(cfg.Guard.Anomaly.Model, later, later); err != nil {
		t.Fatal(err)
	}
	wait(b.Version())
	os.WriteFile(cfg.Guard.Anomaly.Model, []byte("{"), 0o600)
	if err := g.Reload(); err == nil || !strings.Contains(err.Error(), "stays") {
		t.Fatalf("broken file: %v", err)
	}
	if v, _ := g.Models.Versions(); v != b.Version() {
		t.Fatalf("a broken file replaced the model: %q", v)
	}
}

// UpdateModel learns the audit log's calls newer than the model file's
// newest into it: the same model as training on the whole log.
func TestAnomalyUpdateModelIsIncremental(t *testing.T) {
	home := t.TempDir()
	t.Setenv("AIRS_HOME", home)
	cfg, err := config.Parse("airs.yaml", []byte("guard:\n  anomaly:\n    block: 0.97\n"))
	if err != nil {
		t.Fatal(err)
	}
	var recs []audit.Record
	for _, c := range traffic.Normal(time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC), 10, 4) {
		recs = append(recs, audit.Record{Time: c.At, CallID: "c", Caller: c.Caller, Provider: "builtin", Tool: c.Tool,
			ParamsSHA256: strings.Repeat("0", 64), ParamsBytes: c.Size, Outcome: "ok"})
	}
	writeLog := func(rs []audit.Record) {
		var buf []byte
		for i := range rs {
			b, _ := json.Marshal(rs[i])
			buf = append(append(buf, b...), '\n')
		}
		if err := os.WriteFile(cfg.AuditPath(), buf, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	os.MkdirAll(filepath.Join(home, "guard"), 0o700)
	half := len(recs) / 2
	writeLog(recs[:half])
	ts, err := guard.ReadTrainingSet(cfg.AuditPath(), 0.97)
	if err != nil {
		t.Fatal(err)
	}
	first, err := anomaly.Train(ts.Calls)
	if err != nil {
		t.Fatal(err)
	}
	first.Save(cfg.Guard.Anomaly.Model)
	g := StartAnomaly(cfg, nil, false)
	defer g.Close()
	if n, err := g.UpdateModel(); n != 0 || err != nil {
		t.Fatalf("nothing new: %d calls learned, %v", n, err)
	}
	writeLog(recs)
	n, err := g.UpdateModel()
	if err != nil || n != len(recs)-half {
		t.Fatalf("update: %d calls learned (%v), want %d", n, err, len(recs)-half)
	}
	all, _ := guard.ReadTrainingSet(cfg.AuditPath(), 0.97)
	want, _ := anomaly.Train(all.Calls)
	got, err := anomaly.Load(cfg.Guard.Anomaly.Model)
	if err != nil || got.Version() != want.Version() {
		t.Fatalf("updated model %v (%v), want the model of the whole log %s", got.Version(), err, want.Version())
	}
}

type fixedGate struct{ d pipeline.IntentDecision }

func (f fixedGate) Gate(context.Context, pipeline.IntentCheck) (pipeline.IntentDecision, error) {
	return f.d, nil
}

// A held call a person approved teaches the scorer its tool and folder at
// once; a denied one does not.
func TestAnomalyLearningGate(t *testing.T) {
	t.Setenv("AIRS_HOME", t.TempDir())
	cfg, err := config.Parse("airs.yaml", []byte("guard: {}\n"))
	if err != nil {
		t.Fatal(err)
	}
	g := StartAnomaly(cfg, nil, false)
	defer g.Close()
	tool := &pipeline.Tool{Name: "send-email"}
	c := pipeline.IntentCheck{Caller: "dave", Tool: tool, Params: []byte(`{"path":"hr/x.txt"}`), Anomaly: pipeline.AnomalyBlock}
	var f anomaly.Features
	f.SetFolders(c.Params)
	known := func() anomaly.Recent {
		return g.scorer.History.Peek("dave", "send-email", anomaly.FoldersOfFeatures(&f), time.Now())
	}
	g.Learning(fixedGate{pipeline.IntentDecision{Decision: pipeline.IntentDenied}}).Gate(context.Background(), c)
	if r := known(); r.KnownTool || r.KnownFolders != 0 {
		t.Fatalf("a denied call was learned: %+v", r)
	}
	g.Learning(fixedGate{pipeline.IntentDecision{Decision: pipeline.IntentApproved}}).Gate(context.Background(), c)
	if r := known(); !r.KnownTool || r.KnownFolders != 1 {
		t.Fatalf("an approved held call was not learned: %+v", r)
	}
}
