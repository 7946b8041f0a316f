package engine

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/airs-dev/airs/config"
	"github.com/airs-dev/airs/guard/anomaly"
	"github.com/airs-dev/airs/guard/anomaly/traffic"
	"github.com/airs-dev/airs/pipeline"
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
	time.Sleep(20 * time.Millisecond) // a new mtime even on coarse clocks
	if err := b.Save(cfg.Guard.Anomaly.Model); err != nil {
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
