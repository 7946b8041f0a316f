package main

// The replay evaluation over a session log recorded through the real
// engine: evals/replay drives a Service it owns, and the program wires the
// engine in (replayService), so these tests live here.

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/airs-dev/airs/config"
	"github.com/airs-dev/airs/evals/replay"
	"github.com/airs-dev/airs/internal/engine"
	"github.com/airs-dev/airs/internal/settings"
	"github.com/airs-dev/airs/pipeline"
	"github.com/airs-dev/airs/scoring"
	"github.com/airs-dev/airs/session"
)

// replayEnv is an AIRS installation with recording on: a documents space,
// one agent, the builtins and the extra-tools manifest.
type replayEnv struct {
	cfg    *config.Config
	reg    *pipeline.Registry
	eng    *engine.Engine
	caller string
	log    string
}

func newReplayEnv(t testing.TB) *replayEnv {
	t.Helper()
	dir := t.TempDir()
	yaml := replayYAML(t, dir, "")
	cfg, reg, m := replayAssemble(t, dir, yaml)
	e, err := engine.New(context.Background(), cfg, reg, m, settings.Policy(cfg), engine.Options{Channel: "chat", Model: "none"})
	if err != nil {
		t.Fatal(err)
	}
	if e.SessionLog() == nil {
		t.Fatal("recording is enabled but the engine opened no recorder")
	}
	return &replayEnv{cfg: cfg, reg: reg, eng: e, caller: "tester", log: e.RecordingPath()}
}

// record serves reqs through the engine, closes the recorder and returns
// the labelled items.
func (te *replayEnv) record(t testing.TB, reqs []replay.Request) []replay.Item {
	t.Helper()
	if _, err := replay.Generate(context.Background(), replayService{te.eng}, te.caller, reqs); err != nil {
		t.Fatal(err)
	}
	if err := te.eng.Close(); err != nil {
		t.Fatal(err)
	}
	items, unl, err := replay.Items(te.log, false)
	if err != nil {
		t.Fatal(err)
	}
	if unl != 0 || len(items) != len(reqs) {
		t.Fatalf("%d items, %d unlabelled, for %d requests", len(items), unl, len(reqs))
	}
	return items
}

func (te *replayEnv) options() replay.Options {
	return replay.Options{Registry: te.reg, Policy: settings.Policy(te.cfg), K: 3, Env: te.eng.Selector().Env}
}

// replayKnownRequests are requests with a known right tool, over the builtins,
// the manifest's tools and "none".
func replayKnownRequests(n int, seed uint64) []replay.Request {
	r := rand.New(rand.NewPCG(seed, 1))
	var extra []pipeline.Tool
	m, err := pipeline.LoadManifest("../../evals/replay/testdata/extra_tools.json")
	if err != nil {
		panic(err)
	}
	for _, t := range m.Tools {
		extra = append(extra, t.Tool)
	}
	reqs := replay.BuiltinRequests(r, n*5/10, "documents")
	reqs = append(reqs, replay.ToolRequests(r, n*4/10, extra)...)
	reqs = append(reqs, replay.NoneRequests(r, n-len(reqs))...)
	r.Shuffle(len(reqs), func(i, j int) { reqs[i], reqs[j] = reqs[j], reqs[i] })
	return reqs
}

// TestRecordReplayCompareTune records sessions through the real engine
// (no-LLM mode, builtins + a manifest, recording from airs.yaml), replays
// them under the default configuration and under a baseline that ignores
// retrieval, compares the two with a bootstrap interval, and tunes the
// weights with a held-out split.
func TestRecordReplayCompareTune(t *testing.T) {
	te := newReplayEnv(t)
	reqs := replayKnownRequests(240, 7)
	items := te.record(t, reqs)

	// The log is what the engine recorded: candidates with components.
	if len(items[0].Recorded.Candidates) == 0 || items[0].Recorded.Candidates[0].Components["semantic_match"] == 0 {
		t.Fatalf("recorded candidates lack score components: %+v", items[0].Recorded.Candidates)
	}
	ctx := context.Background()
	def, err := replay.Run(ctx, items, replay.Config{Name: "default"}, te.options())
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
	base, err := replay.Run(ctx, items, replay.Config{Name: "trust-only", Weights: &trustOnly}, te.options())
	if err != nil {
		t.Fatal(err)
	}
	diffs, err := replay.Compare(base, def)
	if err != nil {
		t.Fatal(err)
	}
	top1 := diffs[0]
	t.Logf("top1 default − trust-only: %+.3f [%+.3f, %+.3f]", top1.Diff, top1.Lo, top1.Hi)
	if top1.Metric != "top1" || !(top1.Lo > 0) || top1.Lo > top1.Diff || top1.Diff > top1.Hi {
		t.Errorf("default should beat trust-only with an interval above 0: %+v", top1)
	}
	dir := t.TempDir()
	p, err := replay.WriteReport(dir, def, base, replay.ReportInfo{Command: "airs eval replay test", Log: te.log})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{p, filepath.Join(dir, "compare.md"), filepath.Join(dir, "compare_diff.png"), filepath.Join(dir, "replay_latency.png")} {
		if st, err := os.Stat(f); err != nil || st.Size() == 0 {
			t.Errorf("report file %s: %v", f, err)
		}
	}

	// Tune: held-out top-1 of the fitted weights against the defaults.
	tr, err := replay.Tune(items, 0.3, 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("tune: train %d test %d skipped %d weights %+v default %.3f tuned %.3f diff %+v", tr.Train, tr.Test, tr.Skipped, tr.Weights, tr.DefaultTop1, tr.TunedTop1, tr.Diff)
	// The recorded calls' latencies feed the latency term of both scores,
	// so on 61 held-out items the defaults' top-1 moves with the machine's
	// load (0.85 alone, 0.98 under make test's -race): what must hold is
	// that the fitted weights are not clearly worse, by the bootstrap
	// interval of the paired difference, and never far worse.
	if tr.Test == 0 || tr.Weights.Validate() != nil || tr.Diff.Hi < -0.05 || tr.TunedTop1 < tr.DefaultTop1-0.15 {
		t.Errorf("tune result %+v", tr)
	}
}

// sessionLog records n sessions (builtins 50%, manifest tools 40%, none
// 10%) through the engine and returns the env and the log's items.
func replaySessionLog(t testing.TB, n int) (*replayEnv, []replay.Item) {
	te := newReplayEnv(t)
	return te, te.record(t, replayKnownRequests(n, 11))
}

// TestGenerateSessionLog writes a 1,000-session log for scripts/evals.sh
// when AIRS_GEN_SESSIONS names the output file.
func TestGenerateSessionLog(t *testing.T) {
	out := os.Getenv("AIRS_GEN_SESSIONS")
	if out == "" {
		t.Skip("set AIRS_GEN_SESSIONS=FILE to write a 1,000-session log (scripts/evals.sh does)")
	}
	te, items := replaySessionLog(t, 1000)
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
	te, items := replaySessionLog(b, 1000)
	o := te.options()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, err := replay.Run(context.Background(), items, replay.Config{}, o)
		if err != nil {
			b.Fatal(err)
		}
		if i == 0 {
			b.ReportMetric(res.Metrics.Top1, "top1")
		}
	}
}

// replayDocs writes into docs every file replay.BuiltinRequests names: a
// request naming a missing file is an error before selection
// (engine.CheckObjects).
func replayDocs(t testing.TB, docs string) {
	t.Helper()
	if err := os.MkdirAll(docs, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"notes.txt", "prices.csv", "todo.md", "report.pdf", "invoice-2024.pdf", "contract_v2.pdf", "paper.pdf", "readme.md"} {
		if err := os.WriteFile(filepath.Join(docs, f), []byte("apples 3\npears 4\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// replayYAML is the airs.yaml of an installation in dir with recording on:
// a documents space (dir/docs, replayDocs), the agent tester for every
// CLI user, the builtins and the extra-tools manifest; more is appended.
func replayYAML(t testing.TB, dir, more string) string {
	t.Helper()
	docs := filepath.Join(dir, "docs")
	replayDocs(t, docs)
	manifest, err := filepath.Abs("../../evals/replay/testdata/extra_tools.json")
	if err != nil {
		t.Fatal(err)
	}
	return `home: ` + filepath.Join(dir, "state") + `
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
` + more
}

// replayAssemble writes yaml as dir/airs.yaml and builds what an engine
// runs on from it (assembleConfig).
func replayAssemble(t testing.TB, dir, yaml string) (*config.Config, *pipeline.Registry, *pipeline.Manager) {
	t.Helper()
	path := filepath.Join(dir, "airs.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	return assembleConfig(t, path)
}

// assembleConfig loads the airs.yaml at path and builds what an engine
// runs on from it, as airs does: the config (its home created), the
// registry (builtins, manifests), the Manager, closed when the test ends.
func assembleConfig(t testing.TB, path string) (*config.Config, *pipeline.Registry, *pipeline.Manager) {
	t.Helper()
	cfg, err := config.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.EnsureHome(); err != nil {
		t.Fatal(err)
	}
	reg, err := engine.Registry(cfg, settings.Policy(cfg))
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
