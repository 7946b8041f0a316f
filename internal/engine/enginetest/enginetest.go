// Package enginetest builds a real engine for the tests of the engine's
// adapters (internal/engine/httpapi, internal/engine/mcpapi): the builtin
// tools over a space of the demo PDFs, the agents web (who may read it)
// and nobody (who may not), recording on, no-LLM mode unless a model is
// given. Nothing but those tests imports it.
package enginetest

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/airs-dev/airs/config"
	"github.com/airs-dev/airs/guard"
	"github.com/airs-dev/airs/internal/demodata"
	"github.com/airs-dev/airs/internal/engine"
	"github.com/airs-dev/airs/internal/settings"
	"github.com/airs-dev/airs/pipeline"
	"github.com/airs-dev/airs/pipeline/audit"
	"github.com/airs-dev/airs/pipeline/builtin"
	"github.com/airs-dev/airs/selector"
)

// Options adjust New's engine.
type Options struct {
	TTL         time.Duration                                    // recommendations' life (0: the default)
	Register    func(reg *pipeline.Registry, cfg *config.Config) // more tools, after the builtins
	Guard       bool                                             // a guard, with web as its reviewer
	SelfApprove bool                                             // guard.self_approve: web may approve its own held calls
	Model       selector.Model                                   // selects and answers, named "fake" (nil: no-LLM mode)
}

// New is the engine (channel "serve") and the configuration it was built
// from, in a fresh home; the engine, its Manager and the audit log are
// closed when the test ends. Both agents are known to the recommender, as
// `airs serve` makes its tokens' agents.
func New(t testing.TB, o Options) (*engine.Engine, *config.Config) {
	t.Helper()
	t.Setenv("AIRS_HOME", "")
	dir := t.TempDir()
	if err := demodata.Write(filepath.Join(dir, "docs")); err != nil {
		t.Fatal(err)
	}
	yaml := "home: ./state\nspaces:\n  documents: ./docs\nagents:\n  web: {capabilities: [\"ReadSpace(documents)\"]}\n  nobody: {capabilities: []}\nrecording: {enabled: true}\n"
	path := filepath.Join(dir, "airs.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse(path, []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	if o.TTL > 0 {
		cfg.Recommend.TTL = o.TTL // recommend.ttl in airs.yaml
	}
	if err := cfg.EnsureHome(); err != nil {
		t.Fatal(err)
	}
	policy := settings.Policy(cfg)
	reg := pipeline.NewRegistry(pipeline.RegistryConfig{})
	if err := builtin.Register(reg, builtin.Options{Spaces: cfg.Spaces, Policy: policy}); err != nil {
		t.Fatal(err)
	}
	if o.Register != nil {
		o.Register(reg, cfg)
	}
	log, err := audit.Open(cfg.AuditPath())
	if err != nil {
		t.Fatal(err)
	}
	mc := settings.ManagerConfig(cfg)
	mc.Registry, mc.Audit, mc.Policy = reg, log, policy
	var g *guard.Guard
	cfg.Guard.SelfApprove = o.SelfApprove
	if o.Guard {
		if g, err = guard.New(guard.Config{Dir: cfg.GuardDir(), Reviewers: []string{"web"}}); err != nil {
			t.Fatal(err)
		}
		mc.Gate = g
	}
	m, err := pipeline.NewManager(mc)
	if err != nil {
		t.Fatal(err)
	}
	eo := engine.Options{Channel: "serve", Model: "none", Guard: g}
	if o.Model != nil {
		eo.Local, eo.Client, eo.LocalName = o.Model, o.Model, "fake"
	}
	e, err := engine.New(context.Background(), cfg, reg, m, policy, eo)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		e.Close()
		m.Close()
		log.Close()
	})
	e.Recommender().Known("web")
	e.Recommender().Known("nobody")
	return e, cfg
}

// AuditCalls are caller:tool:outcome of every record in cfg's audit log.
func AuditCalls(t testing.TB, cfg *config.Config) []string {
	t.Helper()
	f, err := os.Open(cfg.AuditPath())
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r struct{ Caller, Tool, Outcome string }
		if json.Unmarshal(sc.Bytes(), &r) == nil {
			out = append(out, r.Caller+":"+r.Tool+":"+r.Outcome)
		}
	}
	return out
}
