package engine

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airs-dev/airs/config"
	"github.com/airs-dev/airs/guard"
	"github.com/airs-dev/airs/internal/settings"
	"github.com/airs-dev/airs/pipeline"
	"github.com/airs-dev/airs/pipeline/audit"
	"github.com/airs-dev/airs/pipeline/builtin"
)

// The setup this package's tests share. (internal/engine/enginetest does
// the same for the adapters' tests; a test of this package cannot import
// it: enginetest imports the engine.)

// writeConfig writes yaml as dir/airs.yaml and parses it as airs does
// (relative paths are dir's), its home made. AIRS_HOME is cleared so the
// file's home is the one used.
func writeConfig(t testing.TB, dir, yaml string) *config.Config {
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

// testBuild says what testEngine builds besides the builtins.
type testBuild struct {
	register func(reg *pipeline.Registry) // more tools, after the builtins
	gate     *guard.Guard                 // the Manager's intent gate and the engine's guard
	opts     Options                      // the engine's options (Guard is set from gate)
}

// builtEngine is an engine with the parts it was built from.
type builtEngine struct {
	*Engine
	reg    *pipeline.Registry
	policy *pipeline.StaticPolicy
}

// testEngine is the real engine over cfg: the builtin tools over its
// spaces, an audit log at cfg.AuditPath(), a Manager configured from cfg;
// the engine, the Manager and the log are closed when the test ends.
func testEngine(t testing.TB, cfg *config.Config, b testBuild) builtEngine {
	t.Helper()
	policy := settings.Policy(cfg)
	reg := pipeline.NewRegistry(pipeline.RegistryConfig{})
	if err := builtin.Register(reg, builtin.Options{Spaces: cfg.Spaces, Policy: policy}); err != nil {
		t.Fatal(err)
	}
	if b.register != nil {
		b.register(reg)
	}
	log, err := audit.Open(cfg.AuditPath())
	if err != nil {
		t.Fatal(err)
	}
	mc := settings.ManagerConfig(cfg)
	mc.Registry, mc.Audit, mc.Policy = reg, log, policy
	if b.gate != nil {
		mc.Gate = b.gate
		b.opts.Guard = b.gate
	}
	m, err := pipeline.NewManager(mc)
	if err != nil {
		t.Fatal(err)
	}
	e, err := New(context.Background(), cfg, reg, m, policy, b.opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		e.Close()
		m.Close()
		log.Close()
	})
	return builtEngine{Engine: e, reg: reg, policy: policy}
}

// auditOf is what show makes of each record of tool in cfg's audit log,
// in order.
func auditOf(t testing.TB, cfg *config.Config, tool string, show func(audit.Record) string) []string {
	t.Helper()
	raw, err := os.ReadFile(cfg.AuditPath())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		var r audit.Record
		if json.Unmarshal([]byte(line), &r) == nil && r.Tool == tool {
			got = append(got, show(r))
		}
	}
	return got
}
