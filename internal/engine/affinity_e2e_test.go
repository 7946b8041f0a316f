//go:build e2e

package engine_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/airs-dev/airs/config"
	"github.com/airs-dev/airs/internal/engine"
	"github.com/airs-dev/airs/internal/ollama"
	"github.com/airs-dev/airs/internal/settings"
	"github.com/airs-dev/airs/pipeline"
	"github.com/airs-dev/airs/pipeline/builtin"
)

// TestAffinityPrewarmFirstCallLatency measures what pre-warming buys for a
// provider with a real start cost, the selector's Ollama model: the first
// request to the model of a fresh `airs chat` whose AIRS_HOME holds an
// affinity for the caller, with pre-warm (the engine loads the model at
// start; the request is made once that is done, as when the user's first
// request comes after it) and without (guard.affinity off), the model
// unloaded before each start. The request is the selector's (same model,
// same num_ctx, so a pre-warmed runner serves it) with a one-token answer:
// a whole selection of the tiny random model babbles for seconds that vary
// from run to run by more than the start cost, and the model's start is
// what pre-warming takes off any first call. Runs alternate, same server,
// same run; the medians, and the load time the server reported for each
// request, are logged for BENCHMARKS.md ("Tool affinity").
func TestAffinityPrewarmFirstCallLatency(t *testing.T) {
	host, model := e2eServer(t)
	const runs = 5
	base, err := ollama.ParseHost(host)
	if err != nil {
		t.Fatal(err)
	}
	raw := api.NewClient(base, http.DefaultClient)
	var cold, warm, coldLoad, warmLoad, prewarm []time.Duration
	for i := range runs * 2 {
		pre := i%2 == 1
		unload(t, raw, model)
		e := affinityEngine(t, host, model, pre)
		if pre {
			pw, err := e.WaitPrewarm(ctxFor(t, 2*time.Minute))
			if err != nil || pw.Err != nil || pw.Model != model {
				t.Fatalf("pre-warm: %+v %v; want the model %s loaded", pw, err, model)
			}
			prewarm = append(prewarm, pw.Took)
		}
		zero := 0.0
		req := ollama.ChatRequest{Model: e.ModelName(), Messages: []ollama.Message{{Role: "user", Content: "read the file notes.txt in docs"}},
			Options: ollama.Options{Temperature: &zero, NumCtx: e.Selector().Config.WithDefaults().NumCtx, NumPredict: 1}}
		// The same server, asked directly: its reply says how long loading took.
		direct, err := ollama.New(ollama.Config{Host: host})
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		res, err := direct.Chat(ctxFor(t, 2*time.Minute), req, nil)
		d := time.Since(start)
		if err != nil {
			t.Fatalf("first request: %v", err)
		}
		if pre {
			warm, warmLoad = append(warm, d), append(warmLoad, res.LoadDuration)
		} else {
			cold, coldLoad = append(cold, d), append(coldLoad, res.LoadDuration)
		}
		e.Close()
	}
	mc, mw, mp := median(cold), median(warm), median(prewarm)
	t.Logf("affinity pre-warm, %d runs each: first model request median %v without pre-warm, %v with (pre-warm itself %v); server-reported load %v without, %v with; without %v, with %v",
		runs, mc.Round(time.Millisecond), mw.Round(time.Millisecond), mp.Round(time.Millisecond),
		median(coldLoad).Round(time.Millisecond), median(warmLoad).Round(time.Millisecond), cold, warm)
	if mw >= mc {
		t.Errorf("the first request after a pre-warm (median %v) is not faster than without (%v)", mw, mc)
	}
	// The runner the pre-warm started is the one that served the request:
	// had the options differed (num_ctx), Ollama would have reloaded.
	if lw, lc := median(warmLoad), median(coldLoad); lw*4 > lc {
		t.Errorf("server-reported load time %v after a pre-warm, %v without: the pre-warmed runner was not reused", lw, lc)
	}
}

func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// unload asks Ollama to unload model (keep_alive 0) and waits until no
// runner holds it.
func unload(t *testing.T, c *api.Client, model string) {
	t.Helper()
	ctx := ctxFor(t, time.Minute)
	if err := c.Generate(ctx, &api.GenerateRequest{Model: model, KeepAlive: &api.Duration{}}, func(api.GenerateResponse) error { return nil }); err != nil {
		t.Fatalf("unloading %s: %v", model, err)
	}
	for {
		ps, err := c.ListRunning(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(ps.Models) == 0 {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s still loaded: %v", model, ps.Models)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// affinityEngine starts an engine as `airs chat` does, over the builtins
// and one space, with an AIRS_HOME whose affinity file says alice used
// read-file just now; with prewarm false, guard.affinity is off.
func affinityEngine(t *testing.T, host, model string, prewarm bool) *engine.Engine {
	t.Helper()
	dir := t.TempDir()
	docs := filepath.Join(dir, "docs")
	os.MkdirAll(docs, 0o755)
	os.WriteFile(filepath.Join(docs, "notes.txt"), []byte("Buy milk.\n"), 0o644)
	yaml := fmt.Sprintf("home: %s\nspaces: {docs: %s}\nagents:\n  %s: {capabilities: [\"ReadSpace(docs)\"]}\nollama: {host: %s, model: %q}\nguard:\n  affinity: {enabled: %v}\n",
		filepath.Join(dir, "home"), docs, alice, host, model, prewarm)
	t.Setenv("AIRS_HOME", "")
	cfg, err := config.Parse(filepath.Join(dir, "airs.yaml"), []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.EnsureHome(); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(cfg.GuardDir(), 0o700)
	saved, _ := json.Marshal(map[string]any{"version": 1, "saved_at": time.Now().UTC(),
		"affinities": []map[string]any{{"caller": alice, "tool": "read-file", "count": 5, "last": time.Now().UTC()}}})
	if err := os.WriteFile(cfg.AffinityFile(), saved, 0o600); err != nil {
		t.Fatal(err)
	}
	policy := settings.Policy(cfg)
	reg := pipeline.NewRegistry(pipeline.RegistryConfig{})
	if err := builtin.Register(reg, builtin.Options{Spaces: cfg.Spaces, Policy: policy}); err != nil {
		t.Fatal(err)
	}
	mc := settings.ManagerConfig(cfg)
	mc.Policy, mc.Registry = policy, reg
	m, err := pipeline.NewManager(mc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	e, err := engine.New(ctxFor(t, 2*time.Minute), cfg, reg, m, policy, engine.Options{Channel: "chat"})
	if err != nil {
		t.Fatal(err)
	}
	if e.AnswerModel() == nil {
		t.Fatalf("no model: %s", e.ModelNotice())
	}
	return e
}
