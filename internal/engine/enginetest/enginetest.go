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
	dir := t.TempDir()
	if err := demodata.Write(filepath.Join(dir, "docs")); err != nil {
		t.Fatal(err)
	}
	cfg := WriteConfig(t, dir, "home: ./state\nspaces:\n  documents: ./docs\nagents:\n  web: {capabilities: [\"ReadSpace(documents)\"]}\n  nobody: {capabilities: []}\nrecording: {enabled: true}\n")
	if o.TTL > 0 {
		cfg.Recommend.TTL = o.TTL // recommend.ttl in airs.yaml
	}
	cfg.Guard.SelfApprove = o.SelfApprove
	b := Build{Register: o.Register, Engine: engine.Options{Channel: "serve", Model: "none"}}
	if o.Guard {
		g, err := guard.New(guard.Config{Dir: cfg.GuardDir(), Reviewers: []string{"web"}})
		if err != nil {
			t.Fatal(err)
		}
		b.Gate = g
	}
	if o.Model != nil {
		b.Engine.Local, b.Engine.Client, b.Engine.LocalName = o.Model, o.Model, "fake"
	}
	e := b.New(t, cfg)
	e.Recommender().Known("web")
	e.Recommender().Known("nobody")
	return e, cfg
}

// WriteConfig writes yaml as dir/airs.yaml and parses it as airs does
// (relative paths are dir's), its home made. AIRS_HOME is cleared so the
// file's home is the one used.
func WriteConfig(t testing.TB, dir, yaml string) *config.Config {
	t.Helper()
	t.Setenv("AIRS_HOME", "")
	path := filepath.Join(dir, "airs.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse(path, []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.EnsureHome(); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// Build is an engine over a configuration: the builtin tools over its
// spaces and Register's, an audit log at its AuditPath, a Manager
// configured from it.
type Build struct {
	Register func(reg *pipeline.Registry, cfg *config.Config) // more tools, after the builtins
	Gate     *guard.Guard                                     // the Manager's intent gate and the engine's guard
	Engine   engine.Options                                   // the engine's options (Guard is set from Gate)
}

// New builds the engine over cfg; the engine, its Manager and the audit
// log are closed when the test ends.
func (b Build) New(t testing.TB, cfg *config.Config) *engine.Engine {
	t.Helper()
	policy := settings.Policy(cfg)
	reg := pipeline.NewRegistry(pipeline.RegistryConfig{})
	if err := builtin.Register(reg, builtin.Options{Spaces: cfg.Spaces, Policy: policy}); err != nil {
		t.Fatal(err)
	}
	if b.Register != nil {
		b.Register(reg, cfg)
	}
	log, err := audit.Open(cfg.AuditPath())
	if err != nil {
		t.Fatal(err)
	}
	mc := settings.ManagerConfig(cfg)
	mc.Registry, mc.Audit, mc.Policy = reg, log, policy
	if b.Gate != nil {
		mc.Gate = b.Gate
		b.Engine.Guard = b.Gate
	}
	m, err := pipeline.NewManager(mc)
	if err != nil {
		t.Fatal(err)
	}
	e, err := engine.New(context.Background(), cfg, reg, m, policy, b.Engine)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		e.Close()
		m.Close()
		log.Close()
	})
	return e
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
