package recommender

import (
	"fmt"
	"testing"

	"github.com/airs-dev/airs/pipeline"
	"github.com/airs-dev/airs/pipeline/builtin"
	"github.com/airs-dev/airs/selector"
)

// Agents that share a space each get one suggestion per file event, and
// one agent's suggestions never spend another's per-minute limit: with the
// limit at 6, six files make six suggestions for every one of four agents
// at once, and the seventh is held back for each alike.
func TestSharedSpaceOneSuggestionPerAgentPerEvent(t *testing.T) {
	w := newWorld(t)
	agents := []string{"a1", "a2", "a3", "a4"}
	caps := map[string][]pipeline.Capability{}
	for _, a := range agents {
		caps[a] = []pipeline.Capability{{Kind: "ReadSpace", Arg: "documents"}}
	}
	pol := &pipeline.StaticPolicy{Channels: map[string][]string{"*": {"*"}}, Capabilities: caps}
	reg := pipeline.NewRegistry(pipeline.RegistryConfig{})
	if err := builtin.Register(reg, builtin.Options{Spaces: map[string]string{"documents": w.docs}, Policy: pol}); err != nil {
		t.Fatal(err)
	}
	m, err := pipeline.NewManager(pipeline.Config{Registry: reg, Policy: pol})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	r, err := New(Config{Catalog: &selector.RegistryCatalog{Registry: reg, Policy: pol}, Validate: m.Validate,
		Spaces: []string{"documents"}, Now: w.clock.Now, PerMinute: 6, MaxActive: 10})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	for _, a := range agents {
		r.Known(a)
	}
	for i := range 7 {
		before := r.Stats()
		r.ObserveFile(FileEvent{Space: "documents", Rel: fmt.Sprintf("in/%d.pdf", i), Op: "create"})
		after := r.Stats()
		if after.Updates-before.Updates != uint64(len(agents)) {
			t.Fatalf("file %d: %d updates for %d agents, want one each", i, after.Updates-before.Updates, len(agents))
		}
		want := uint64(len(agents))
		if i == 6 {
			want = 0 // the seventh in a minute: every agent's own limit
		}
		if got := after.Issued - before.Issued; got != want {
			t.Fatalf("file %d: %d suggestions issued, want %d (one per agent within its limit)", i, got, want)
		}
	}
	for _, a := range agents {
		if n := len(r.List(a)); n != 6 {
			t.Errorf("%s holds %d suggestions, want 6", a, n)
		}
	}
}
