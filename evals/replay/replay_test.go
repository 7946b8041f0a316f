package replay

import (
	"bytes"
	"context"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/airs-dev/airs/config"
	"github.com/airs-dev/airs/internal/engine"
	"github.com/airs-dev/airs/internal/settings"
	"github.com/airs-dev/airs/pipeline"
	"github.com/airs-dev/airs/scoring"
	"github.com/airs-dev/airs/session"
)

// testEnv is an AIRS installation with recording on: a documents space,
// one agent, the builtins and the extra-tools manifest.
type testEnv struct {
	cfg    *config.Config
	reg    *pipeline.Registry
	eng    *engine.Engine
	caller string
	log    string
}

func newTestEnv(t testing.TB) *testEnv {
	t.Helper()
	dir := t.TempDir()
	docs := filepath.Join(dir, "docs")
	os.MkdirAll(docs, 0o755)
	// Every file BuiltinRequests names is there: a request naming a
	// missing file is an error before selection (engine.CheckObjects).
	for _, f := range []string{"notes.txt", "prices.csv", "todo.md", "report.pdf", "invoice-2024.pdf", "contract_v2.pdf", "paper.pdf", "readme.md"} {
		os.WriteFile(filepath.Join(docs, f), []byte("apples 3\npears 4\n"), 0o644)
	}
	manifest, err := filepath.Abs("testdata/extra_tools.json")
	if err != nil {
		t.Fatal(err)
	}
	yaml := `home: ` + filepath.Join(dir, "state") + `
spaces:
  documents: ` + docs + `
agents:
  tester:
    capabilities: ["ReadSpace(documents)"]
cli:
  users:
    "*": tester
manifests:
  - ` + manifest + `
recording:
  enabled: true
  dir: ` + filepath.Join(dir, "sessions") + `
`
	cfg, reg, m := assemble(t, dir, yaml)
	e, err := engine.New(context.Background(), cfg, reg, m, settings.Policy(cfg), engine.Options{Channel: "chat", Model: "none"})
	if err != nil {
		t.Fatal(err)
	}
	if e.SessionLog() == nil {
		t.Fatal("recording is enabled but the engine opened no recorder")
	}
	return &testEnv{cfg: cfg, reg: reg, eng: e, caller: "tester", log: e.RecordingPath()}
}

// record serves reqs through the engine, closes the recorder and returns
// the labelled items.
func (te *testEnv) record(t testing.TB, reqs []Request) []Item {
	t.Helper()
	if _, err := Generate(context.Background(), te.eng, te.caller, reqs); err != nil {
		t.Fatal(err)
	}
	if err := te.eng.Close(); err != nil {
		t.Fatal(err)
	}
	items, unl, err := Items(te.log, false)
	if err != nil {
		t.Fatal(err)
	}
	if unl != 0 || len(items) != len(reqs) {
		t.Fatalf("%d items, %d unlabelled, for %d requests", len(items), unl, len(reqs))
	}
	return items
}

func (te *testEnv) options() Options {
	return Options{Registry: te.reg, Policy: settings.Policy(te.cfg), K: 3, Env: te.eng.Selector().Env}
}

// knownRequests are requests with a known right tool, over the builtins,
// the manifest's tools and "none".
func knownRequests(n int, seed uint64) []Request {
	r := rand.New(rand.NewPCG(seed, 1))
	var extra []pipeline.Tool
	m, err := pipeline.LoadManifest("testdata/extra_tools.json")
	if err != nil {
		panic(err)
	}
	for _, t := range m.Tools {
		extra = append(extra, t.Tool)
	}
	reqs := BuiltinRequests(r, n*5/10, "documents")
	reqs = append(reqs, ToolRequests(r, n*4/10, extra)...)
	reqs = append(reqs, NoneRequests(r, n-len(reqs))...)
	r.Shuffle(len(reqs), func(i, j int) { reqs[i], reqs[j] = reqs[j], reqs[i] })
	return reqs
}

// TestRecordReplayCompareTune records sessions through the real engine
// (no-LLM mode, builtins + a manifest, recording from airs.yaml), replays
// them under the default configuration and under a baseline that ignores
// retrieval, compares the two with a bootstrap interval, and tunes the
// weights with a held-out split.
func TestRecordReplayCompareTune(t *testing.T) {
	te := newTestEnv(t)
	reqs := knownRequests(240, 7)
	items := te.record(t, reqs)

	// The log is what the engine recorded: candidates with components.
	if len(items[0].Recorded.Candidates) == 0 || items[0].Recorded.Candidates[0].Components["semantic_match"] == 0 {
		t.Fatalf("recorded candidates lack score components: %+v", items[0].Recorded.Candidates)
	}
	ctx := context.Background()
	def, err := Run(ctx, items, Config{Name: "default"}, te.options())
	if err != nil {
		t.Fatal(err)
	}
	m := def.Metrics
	t.Logf("default: %+v", m)
	if m.N != len(reqs) || def.MissingTool != 0 {
		t.Fatalf("scored %d of %d, %d missing", m.N, len(reqs), def.MissingTool)
	}
	// The replay reproduces the recorded decisions: accepted records are
	// right again (same engine, same registry, same weights) — up to the
	// success/latency statistics, which the replay rebuilds in log order.
	accepted, again := 0, 0
	for i, it := range items {
		if it.Recorded.Feedback.Verdict == session.Accepted {
			accepted++
			if def.Items[i].Top1 {
				again++
			}
		}
	}
	if float64(again) < 0.95*float64(accepted) {
		t.Errorf("only %d of %d accepted selections reproduced", again, accepted)
	}
	if m.Top1 < 0.5 || m.TopK < m.Top1 || m.Validity < 0.5 || m.P50MS <= 0 {
		t.Errorf("implausible metrics %+v", m)
	}

	// Baseline: trust only (retrieval ignored): clearly worse.
	trustOnly := scoring.SelectionWeights{Trust: 1}
	base, err := Run(ctx, items, Config{Name: "trust-only", Weights: &trustOnly}, te.options())
	if err != nil {
		t.Fatal(err)
	}
	diffs, err := Compare(base, def)
	if err != nil {
		t.Fatal(err)
	}
	top1 := diffs[0]
	t.Logf("top1 default − trust-only: %+.3f [%+.3f, %+.3f]", top1.Diff, top1.Lo, top1.Hi)
	if top1.Metric != "top1" || !(top1.Lo > 0) || top1.Lo > top1.Diff || top1.Diff > top1.Hi {
		t.Errorf("default should beat trust-only with an interval above 0: %+v", top1)
	}
	dir := t.TempDir()
	p, err := WriteReport(dir, def, base, ReportInfo{Command: "airs eval replay test", Log: te.log})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{p, filepath.Join(dir, "compare.md"), filepath.Join(dir, "compare_diff.png"), filepath.Join(dir, "replay_latency.png")} {
		if st, err := os.Stat(f); err != nil || st.Size() == 0 {
			t.Errorf("report file %s: %v", f, err)
		}
	}

	// Tune: held-out top-1 of the fitted weights against the defaults.
	tr, err := Tune(items, 0.3, 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("tune: train %d test %d skipped %d weights %+v default %.3f tuned %.3f diff %+v", tr.Train, tr.Test, tr.Skipped, tr.Weights, tr.DefaultTop1, tr.TunedTop1, tr.Diff)
	if tr.Test == 0 || tr.Weights.Validate() != nil || tr.TunedTop1 < tr.DefaultTop1-0.05 {
		t.Errorf("tune result %+v", tr)
	}
}

// TestFitRecoversWeights: on synthetic decisions generated from known
// weights by a conditional logit, Fit finds weights whose ranking matches.
func TestFitRecoversWeights(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	truth := []float64{6, 0, 3, 0, 0} // semantic and success matter, trust does not
	var cs []Choice
	for i := 0; i < 600; i++ {
		c := Choice{ID: "x"}
		util := []float64{}
		for j := 0; j < 5; j++ {
			f := []float64{r.Float64(), []float64{0.2, 0.5, 0.8, 1}[r.IntN(4)], r.Float64(), 0.5, 0.5}
			c.Features = append(c.Features, f)
			c.Tools = append(c.Tools, string(rune('a'+j)))
			util = append(util, dot(truth, f)-math.Log(-math.Log(r.Float64()+1e-300))) // + a Gumbel draw
		}
		best := 0
		for j := range util {
			if util[j] > util[best] {
				best = j
			}
		}
		c.Gold = best
		cs = append(cs, c)
	}
	w, _, err := Fit(cs, FitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("fitted %+v", w)
	if w.Trust > 0.1 || w.Semantic < 0.45 || w.Success < 0.2 || w.Latency != 0 || w.Preference != 0 {
		t.Errorf("fitted weights %+v, want semantic ≈ 0.67, success ≈ 0.33, trust ≈ 0, constant components 0", w)
	}
	if Top1(cs, w) < Top1(cs, scoring.SelectionWeights{Trust: 1}) {
		t.Error("fitted weights rank worse than trust alone")
	}
}

func TestConfigFiles(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "lexical-trust.json")
	os.WriteFile(good, []byte(`{"weights":{"semantic":0.3,"trust":0.7},"embedder":"lexical","model":"none"}`), 0o644)
	c, err := LoadConfig(good)
	if err != nil {
		t.Fatal(err)
	}
	if c.Name != "lexical-trust" || c.Weights.Trust != 0.7 || c.modelName() != "" {
		t.Errorf("config %+v", c)
	}
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"wieghts":{}}`), 0o644)
	if _, err := LoadConfig(bad); err == nil || !strings.Contains(err.Error(), "wieghts") {
		t.Errorf("misspelt field: %v", err)
	}
	neg := filepath.Join(dir, "neg.json")
	os.WriteFile(neg, []byte(`{"semantic":-1,"trust":1}`), 0o644)
	if _, err := LoadWeights(neg); err == nil {
		t.Error("negative weight accepted")
	}
}

func TestMetricsLine(t *testing.T) {
	r := &Result{Config: Config{Name: "x"}, Metrics: summarize([]ItemResult{
		{ID: "1", Predicted: "a", Top1: true, TopK: true, ArgMatch: true, Valid: true},
		{ID: "2", Predicted: "none", PredNone: true, GoldNone: true, Top1: true, TopK: true, Valid: true},
		{ID: "3", Predicted: "none", PredNone: true, Valid: true},
		{ID: "4", Predicted: "b", Valid: false, TopK: true},
	}, []time.Duration{time.Millisecond, 2 * time.Millisecond, 3 * time.Millisecond, 4 * time.Millisecond}, 3)}
	m := r.Metrics
	if m.Top1 != 0.5 || m.TopK != 0.75 || m.ArgMatch != 1.0/3 || m.Validity != 0.5 || m.NoneRate != 1 || m.FalseNoneRate != 1.0/3 {
		t.Errorf("metrics %+v", m)
	}
	var b bytes.Buffer
	if err := WriteJSON(&b, r.Line()); err != nil || !strings.HasPrefix(b.String(), `{"config":"x","n":4,"k":3,"top1":0.5,`) {
		t.Errorf("json line %s (%v)", b.String(), err)
	}
}

// sessionLog records n sessions (builtins 50%, manifest tools 40%, none
// 10%) through the engine and returns the env and the log's items.
func sessionLog(t testing.TB, n int) (*testEnv, []Item) {
	te := newTestEnv(t)
	return te, te.record(t, knownRequests(n, 11))
}

// TestGenerateSessionLog writes a 1,000-session log for scripts/evals.sh
// when AIRS_GEN_SESSIONS names the output file.
func TestGenerateSessionLog(t *testing.T) {
	out := os.Getenv("AIRS_GEN_SESSIONS")
	if out == "" {
		t.Skip("set AIRS_GEN_SESSIONS=FILE to write a 1,000-session log (scripts/evals.sh does)")
	}
	te, items := sessionLog(t, 1000)
	b, err := os.ReadFile(te.log)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(out, b, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %d sessions to %s", len(items), out)
}

// BenchmarkReplay1000 replays a 1,000-session log in no-LLM mode (the
// issue's goal: under 10 s). One op is the whole replay, index build
// included.
func BenchmarkReplay1000(b *testing.B) {
	te, items := sessionLog(b, 1000)
	o := te.options()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, err := Run(context.Background(), items, Config{}, o)
		if err != nil {
			b.Fatal(err)
		}
		if i == 0 {
			b.ReportMetric(res.Metrics.Top1, "top1")
		}
	}
}

// assemble writes yaml as dir/airs.yaml and builds what an engine runs on
// from it: the config (its home created), the registry, the Manager.
func assemble(t testing.TB, dir, yaml string) (*config.Config, *pipeline.Registry, *pipeline.Manager) {
	t.Helper()
	path := filepath.Join(dir, "airs.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.EnsureHome(); err != nil {
		t.Fatal(err)
	}
	reg, err := Registry(cfg)
	if err != nil {
		t.Fatal(err)
	}
	mc := settings.ManagerConfig(cfg)
	mc.Registry = reg
	m, err := pipeline.NewManager(mc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return cfg, reg, m
}
