package engine_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/airs-dev/airs/config"
	"github.com/airs-dev/airs/internal/engine"
	"github.com/airs-dev/airs/internal/settings"
	"github.com/airs-dev/airs/pipeline"
)

// learnEnv is an AIRS_HOME and an airs.yaml; open starts an engine on them
// (no model), as `airs chat` or `airs serve` would.
type learnEnv struct {
	t   *testing.T
	cfg *config.Config
}

func newLearnEnv(t *testing.T, extraYAML string) *learnEnv {
	t.Helper()
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "docs"), 0o755)
	t.Setenv("AIRS_HOME", "")
	yaml := "home: ./state\nspaces:\n  documents: ./docs\nagents:\n  tester:\n    capabilities: [\"ReadSpace(documents)\"]\ncli:\n  users:\n    \"*\": tester\n" + extraYAML
	cfg, err := config.Parse(filepath.Join(dir, "airs.yaml"), []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.EnsureHome(); err != nil {
		t.Fatal(err)
	}
	return &learnEnv{t: t, cfg: cfg}
}

func (le *learnEnv) open() *engine.Engine {
	le.t.Helper()
	e, err := le.openErr()
	if err != nil {
		le.t.Fatal(err)
	}
	return e
}

func (le *learnEnv) openErr() (*engine.Engine, error) {
	policy := settings.Policy(le.cfg)
	reg, err := engine.Registry(le.cfg, policy)
	if err != nil {
		return nil, err
	}
	mc := settings.ManagerConfig(le.cfg)
	mc.Policy, mc.Registry = policy, reg
	m, err := pipeline.NewManager(mc)
	if err != nil {
		return nil, err
	}
	le.t.Cleanup(func() { m.Close() })
	return engine.New(context.Background(), le.cfg, reg, m, policy, engine.Options{Channel: "chat", Model: "none"})
}

// learnRequest is ambiguous between two tools (read-file and pdf-extract
// score close), so what the engine learns decides which comes first.
const learnRequest = "what does this document say"

// ranking is the engine's ranking of learnRequest: each candidate with all
// its score components.
func ranking(t *testing.T, e *engine.Engine) string {
	t.Helper()
	sel, err := e.Select(context.Background(), "tester", learnRequest)
	if err != nil {
		t.Fatal(err)
	}
	if len(sel.Candidates) < 2 {
		t.Fatalf("%d candidates: the request must retrieve several tools", len(sel.Candidates))
	}
	var b strings.Builder
	for _, c := range sel.Candidates {
		fmt.Fprintf(&b, "%s composite=%.9f success=%.9f latency=%.9f preference=%.9f\n", c.Name,
			c.Score["composite"], c.Score["success_rate"], c.Score["latency_score"], c.Score["preference_score"])
	}
	return b.String()
}

// learn feeds the engine what a user's sessions would: the top tool fails
// and is dismissed, the runner-up works, fast, and is accepted.
func learn(e *engine.Engine, top, second string) {
	for range 12 {
		e.Ranker().Observe(top, &pipeline.Result{Latency: 900 * time.Millisecond}, errors.New("tool failed"))
		e.Ranker().Observe(second, &pipeline.Result{Latency: 2 * time.Millisecond}, nil)
		e.Ranker().Prefs().Dismiss(top)
		e.Ranker().Prefs().Accept(second)
	}
}

// TestRankingSurvivesRestart: what an engine learned (call outcomes and
// latencies, verdicts) changes its ranking; a new engine on the same
// AIRS_HOME ranks the same request exactly the same, while one on a fresh
// home (no persisted state) does not.
func TestRankingSurvivesRestart(t *testing.T) {
	le := newLearnEnv(t, "")
	e1 := le.open()
	before := ranking(t, e1)
	sel, _ := e1.Select(context.Background(), "tester", learnRequest)
	top, second := sel.Candidates[0].Name, sel.Candidates[1].Name
	learn(e1, top, second)
	learned := ranking(t, e1)
	if !strings.HasPrefix(learned, second+" ") {
		t.Fatalf("learning did not put %s first:\n%s", second, learned)
	}
	if err := e1.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(le.cfg.Home, engine.LearnedFile)); err != nil {
		t.Fatalf("no learned state in AIRS_HOME: %v", err)
	}

	e2 := le.open()
	defer e2.Close()
	if after := ranking(t, e2); after != learned {
		t.Fatalf("ranking after restart differs:\nbefore restart:\n%s\nafter:\n%s", learned, after)
	}
	fresh := newLearnEnv(t, "").open()
	defer fresh.Close()
	if got := ranking(t, fresh); got != before {
		t.Fatalf("a fresh home must rank as an engine that learned nothing:\n%s\nvs\n%s", got, before)
	}
	t.Logf("before learning:\n%safter learning and after restart:\n%s", before, learned)
}

// Two engines on one AIRS_HOME at once (`airs serve` and `airs chat`):
// each saves only what it learned, so the next start sees both.
func TestLearningOfTwoProcessesMerges(t *testing.T) {
	le := newLearnEnv(t, "")
	a, b := le.open(), le.open()
	for range 3 {
		a.Ranker().Prefs().Accept("calculator")
	}
	b.Ranker().Prefs().Accept("calculator")
	b.Ranker().Prefs().Dismiss("compare")
	a.Ranker().Observe("compare", &pipeline.Result{Latency: time.Millisecond}, nil)
	b.Ranker().Observe("compare", &pipeline.Result{Latency: time.Millisecond}, errors.New("failed"))
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	c := le.open()
	defer c.Close()
	// 4 accepts, 0 dismissals: (4+1)/(4+2); 0 accepts, 1 dismissal: 1/3.
	if got := c.Ranker().Prefs().Score("calculator"); got != 5.0/6 {
		t.Errorf("calculator preference %v, want 5/6 (both processes' accepts)", got)
	}
	if got := c.Ranker().Prefs().Score("compare"); got != 1.0/3 {
		t.Errorf("compare preference %v, want 1/3", got)
	}
	// One success and one failure: (1+1)/(2+2).
	if rate := successRate(t, c, "compare"); rate != 0.5 {
		t.Errorf("compare success rate %v, want 0.5 (one call from each process)", rate)
	}
}

func successRate(t *testing.T, e *engine.Engine, tool string) float64 {
	t.Helper()
	sel, err := e.Select(context.Background(), "tester", learnRequest)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range sel.Candidates {
		if c.Name == tool {
			return c.Score["success_rate"]
		}
	}
	t.Fatalf("%s not among the candidates", tool)
	return 0
}

// selection.weights in airs.yaml is what the ranker uses: with all weight
// on trust, every composite is the trust weight.
func TestConfigWeightsAreUsed(t *testing.T) {
	e := newLearnEnv(t, "selection:\n  weights: {trust: 1}\n").open()
	defer e.Close()
	sel, err := e.Select(context.Background(), "tester", learnRequest)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range sel.Candidates {
		if c.Score["composite"] != c.Score["trust_weight"] {
			t.Errorf("%s: composite %v, want its trust weight %v", c.Name, c.Score["composite"], c.Score["trust_weight"])
		}
	}
}

func TestUnreadableLearnedStateIsAClearError(t *testing.T) {
	le := newLearnEnv(t, "")
	os.WriteFile(filepath.Join(le.cfg.Home, engine.LearnedFile), []byte(`{"v":1,"stats":{"x":{"total":1,"ok":[true]}}`), 0o600)
	_, err := le.openErr()
	if err == nil || !strings.Contains(err.Error(), "delete it") {
		t.Fatalf("error %v: want one naming the file and what to do", err)
	}
}
