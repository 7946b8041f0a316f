package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/airs-dev/airs/config"
	"github.com/airs-dev/airs/guard/affinity"
	"github.com/airs-dev/airs/internal/settings"
	"github.com/airs-dev/airs/pipeline"
	"github.com/airs-dev/airs/selector"
)

// BenchmarkToolLookup is a chain step's or CallableTool's lookup of one
// tool for one caller: RegistryCatalog.Tool (which lists and narrows every
// tool the caller may call) against the affinity hot cache in front of it,
// for a pair with an affinity and for one without. The registry holds the
// builtins over two spaces plus extra tools, as with a few MCP servers.
func BenchmarkToolLookup(b *testing.B) {
	for _, extra := range []int{0, 200} {
		cat := benchCatalog(b, extra)
		tr := affinity.New(affinity.Config{})
		for range 3 {
			tr.Observe("tester", "read-file", time.Now())
		}
		hc := affinity.NewHotCache(cat, tr.Hot)
		run := func(name string, look func() (pipeline.Tool, error)) {
			b.Run(fmt.Sprintf("tools=%d/%s", extra+7, name), func(b *testing.B) {
				for b.Loop() {
					if t, err := look(); err != nil || t.Name != "read-file" {
						b.Fatal(t.Name, err)
					}
				}
			})
		}
		run("catalog", func() (pipeline.Tool, error) { return cat.Tool("tester", "read-file") })
		run("hot-cache", func() (pipeline.Tool, error) { return hc.Tool("tester", "read-file") })
		run("cold-pair-through-cache", func() (pipeline.Tool, error) { return hc.Tool("other", "read-file") })
		// The pipeline's own lookup stage (Registry.candidates, here through
		// Providers) is a map lookup under a read lock: nothing to cache.
		run("registry-providers", func() (pipeline.Tool, error) { return cat.Registry.Providers("read-file")[0].Tool, nil })
	}
}

func benchCatalog(b *testing.B, extra int) *selector.RegistryCatalog {
	dir := b.TempDir()
	os.MkdirAll(filepath.Join(dir, "docs"), 0o755)
	os.MkdirAll(filepath.Join(dir, "private"), 0o755)
	cfg, err := config.Parse(filepath.Join(dir, "airs.yaml"), []byte("home: ./state\nspaces: {documents: ./docs, private: ./private}\n"+
		"agents:\n  tester: {capabilities: [\"ReadSpace(documents)\"]}\n  other: {capabilities: [\"ReadSpace(documents)\"]}\n"))
	if err != nil {
		b.Fatal(err)
	}
	policy := settings.Policy(cfg)
	reg, err := Registry(cfg, policy)
	if err != nil {
		b.Fatal(err)
	}
	h := pipeline.HandlerFunc(func(context.Context, json.RawMessage, *pipeline.Call) (json.RawMessage, error) { return nil, nil })
	for i := range extra {
		err := reg.Register(fmt.Sprintf("mcp%d", i%4), pipeline.Tool{Name: fmt.Sprintf("tool-%03d", i), Version: "1.0.0",
			Description: "an extra tool", Parameters: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}}}`),
			Trust: pipeline.TL1, LatencyClass: pipeline.Fast}, h)
		if err != nil {
			b.Fatal(err)
		}
	}
	return &selector.RegistryCatalog{Registry: reg, Policy: policy}
}
