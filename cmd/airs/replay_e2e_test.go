//go:build e2e

package main

// End-to-end test: a session log recorded through the real engine with the
// tiny random-weight model of internal/tinymodel behind a real Ollama
// server (scripts/e2e.sh exports OLLAMA_HOST, AIRS_E2E=1 and
// AIRS_E2E_MODEL; without them the test skips), then replayed against a
// --baseline configuration and tuned. The model's choices mean nothing;
// what must hold is that its requests are recorded with the model's output
// and are replayable, the comparison carries a bootstrap interval around
// its difference, and tune reports held-out accuracy.

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/airs-dev/airs/evals/replay"
	"github.com/airs-dev/airs/grammar"
	"github.com/airs-dev/airs/internal/engine"
	"github.com/airs-dev/airs/internal/settings"
	"github.com/airs-dev/airs/pipeline"
	"github.com/airs-dev/airs/selector"
	"github.com/airs-dev/airs/session"
)

// e2eServer returns the server's address and the tiny model's name, or
// skips when no server was started for the tests.
func replayE2EServer(t *testing.T) (host, model string) {
	t.Helper()
	host = os.Getenv("OLLAMA_HOST")
	if os.Getenv("AIRS_E2E") == "" || host == "" {
		t.Skip("e2e: AIRS_E2E/OLLAMA_HOST are not set; run `bash scripts/e2e.sh ./cmd/airs/` (make e2e), which starts Ollama with the tiny model")
	}
	model = os.Getenv("AIRS_E2E_MODEL")
	if model == "" {
		model = "airs-tiny"
	}
	return host, model
}

// replayDeclineUI is a channel that confirms nothing (idempotent builtins run
// without asking, as in `airs serve`).
type replayDeclineUI struct{}

func (replayDeclineUI) Selected(*selector.Selection, *pipeline.Tool) {}
func (replayDeclineUI) Confirm(context.Context, pipeline.Tool, json.RawMessage) bool {
	return false
}
func (replayDeclineUI) Running(string)                 {}
func (replayDeclineUI) Result(*pipeline.Result, error) {}
func (replayDeclineUI) Note(string)                    {}
func (replayDeclineUI) Token(string) error             { return nil }

func TestE2ERecordWithModelReplayCompareTune(t *testing.T) {
	host, model := replayE2EServer(t)
	// a deadline, so that a server that stops answering fails the test
	// in minutes, not at go test's timeout
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	dir := t.TempDir()
	yaml := replayYAML(t, dir, "ollama:\n  host: "+host+"\n  model: "+model+"\n")
	cfg, reg, m := replayAssemble(t, dir, yaml)

	// 1. Record with the model (ollama.model from airs.yaml).
	e, err := engine.New(ctx, cfg, reg, m, settings.Policy(cfg), engine.Options{Channel: "chat", ProbeTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if e.AnswerModel() == nil || e.ModelName() != model {
		t.Fatalf("the engine is not using the model %s: %s", model, e.ModelNotice())
	}
	if e.SessionLog() == nil {
		t.Fatal("recording is enabled but the engine opened no recorder")
	}
	logPath := e.RecordingPath()
	// Few, short generations: the tiny model costs tens of ms per token.
	e.Selector().Config.NumPredict = 96
	e.Selector().Config.NumCtx = 2048
	e.Selector().Config.TopK = 4
	r := rand.New(rand.NewPCG(11, 2))
	reqs := append(replay.BuiltinRequests(r, 2, "documents"), replay.NoneRequests(r, 1)...)
	start := time.Now()
	for i, rq := range reqs {
		t0 := time.Now()
		tr, err := e.Turn(ctx, "tester", rq.Text, replayDeclineUI{}, engine.TurnOptions{Session: "e2e-model"})
		if tr == nil {
			t.Fatalf("turn %q: %v", rq.Text, err)
		}
		if tr.RecordErr != nil {
			t.Fatalf("turn %q: recording: %v", rq.Text, tr.RecordErr)
		}
		if tr.RecordID == "" {
			t.Fatalf("turn %q recorded nothing (err %v)", rq.Text, err)
		}
		got := "(selection failed)"
		if tr.First().Selection != nil {
			got = fmt.Sprintf("%s %s mode=%s validation=%q", tr.First().Selection.Function, tr.First().Selection.Arguments, tr.First().Selection.Mode, tr.First().Selection.Validation)
		}
		t.Logf("turn %d %q (want %q) → %s err=%v skipped=%q in %v", i, rq.Text, rq.Tool, got, err, tr.First().Skipped, time.Since(t0).Round(time.Millisecond))
		// Every request is labelled by an explicit correction to its known
		// right call (a correction to the same call when the model chose
		// it), so the label does not depend on the random model.
		var fix *session.Call
		if rq.Tool != "" {
			want := rq.Args
			if want == nil {
				want = map[string]any{}
				if tl, terr := e.CallableTool("tester", rq.Tool); terr == nil {
					if a, err := selector.ExtractArguments(tl.Parameters, rq.Text, e.Hints()); err == nil {
						want = a
					}
				}
			}
			fix = &session.Call{Tool: rq.Tool, Arguments: want}
		}
		if err := e.SessionLog().Feedback(ctx, tr.RecordID, session.Feedback{Verdict: session.Corrected, Corrected: fix}); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("recorded %d requests with %s in %v", len(reqs), model, time.Since(start).Round(time.Millisecond))
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	modelItems, unl, err := replay.Items(logPath, false)
	if err != nil {
		t.Fatal(err)
	}
	if unl != 0 || len(modelItems) != len(reqs) {
		t.Fatalf("%d items, %d unlabelled, for %d model requests", len(modelItems), unl, len(reqs))
	}
	for _, it := range modelItems {
		rec := it.Recorded
		if rec.Model == nil || rec.Model.Name != model {
			t.Errorf("record %s: model %+v, want %s", rec.ID, rec.Model, model)
		}
		if rec.Call != nil && rec.Call.Tool != grammar.NoneTool && rec.RawOutput == "" {
			t.Errorf("record %s: a model call without the raw output", rec.ID)
		}
	}

	// 2. replay.Tune needs more decisions than a few model requests give: append
	// labelled no-LLM sessions (same airs.yaml, same log) with the
	// package's generator.
	e2, err := engine.New(ctx, cfg, reg, m, settings.Policy(cfg), engine.Options{Channel: "chat", Model: "none"})
	if err != nil {
		t.Fatal(err)
	}
	if e2.SessionLog() == nil || e2.RecordingPath() != logPath {
		t.Fatalf("the no-LLM engine records elsewhere: %v", e2.SessionLog())
	}
	extra := replayKnownRequests(60, 5)
	if _, err := replay.Generate(ctx, replayService{e2}, "tester", extra); err != nil {
		t.Fatal(err)
	}
	if err := e2.Close(); err != nil {
		t.Fatal(err)
	}
	items, unl, err := replay.Items(logPath, false)
	if err != nil {
		t.Fatal(err)
	}
	if unl != 0 || len(items) != len(reqs)+len(extra) {
		t.Fatalf("%d items, %d unlabelled, for %d+%d requests", len(items), unl, len(reqs), len(extra))
	}

	// 3. Replay (no-LLM) against a --baseline configuration file.
	basePath := filepath.Join(dir, "baseline.json")
	if err := os.WriteFile(basePath, []byte(`{"name": "trust-only", "weights": {"trust": 1}, "model": "none"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	baseCfg, err := replay.LoadConfig(basePath)
	if err != nil {
		t.Fatal(err)
	}
	opts := replay.Options{Registry: reg, Policy: settings.Policy(cfg), K: 3}
	for _, set := range []struct {
		name  string
		items []replay.Item
	}{{"model-recorded", modelItems}, {"whole log", items}} {
		def, err := replay.Run(ctx, set.items, replay.Config{Name: "default"}, opts)
		if err != nil {
			t.Fatal(err)
		}
		base, err := replay.Run(ctx, set.items, baseCfg, opts)
		if err != nil {
			t.Fatal(err)
		}
		if def.Metrics.N != len(set.items) || base.Metrics.N != len(set.items) {
			t.Fatalf("%s: scored %d and %d of %d", set.name, def.Metrics.N, base.Metrics.N, len(set.items))
		}
		t.Logf("%s default: %+v", set.name, def.Metrics)
		t.Logf("%s %s: %+v", set.name, base.Config.Label(), base.Metrics)
		diffs, err := replay.Compare(base, def)
		if err != nil {
			t.Fatal(err)
		}
		if len(diffs) == 0 {
			t.Fatalf("%s: no comparison lines", set.name)
		}
		for _, d := range diffs {
			t.Logf("%s: %s default − trust-only: %+.3f [%+.3f, %+.3f]", set.name, d.Metric, d.Diff, d.Lo, d.Hi)
			if !(d.Lo <= d.Diff+1e-12 && d.Diff <= d.Hi+1e-12) {
				t.Errorf("%s: %s: the difference %g is outside its interval [%g, %g]", set.name, d.Metric, d.Diff, d.Lo, d.Hi)
			}
		}
	}

	// 4. replay.Tune with a held-out split, reporting held-out accuracy.
	tr, err := replay.Tune(items, 0.3, 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("tune: train %d, held out %d, skipped %d; held-out top-1 default %.3f, tuned %.3f, diff %+.3f [%+.3f, %+.3f]; weights %+v",
		tr.Train, tr.Test, tr.Skipped, tr.DefaultTop1, tr.TunedTop1, tr.Diff.Mean, tr.Diff.Lo, tr.Diff.Hi, tr.Weights)
	if tr.Test == 0 || tr.Train == 0 || tr.Weights.Validate() != nil {
		t.Errorf("tune result %+v", tr)
	}
	if tr.TunedTop1 < 0 || tr.TunedTop1 > 1 || tr.DefaultTop1 < 0 || tr.DefaultTop1 > 1 || !(tr.Diff.Lo <= tr.Diff.Mean+1e-12 && tr.Diff.Mean <= tr.Diff.Hi+1e-12) {
		t.Errorf("implausible held-out figures %+v", tr)
	}
}
