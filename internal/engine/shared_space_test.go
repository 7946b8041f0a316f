package engine

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/airs-dev/airs/config"
	"github.com/airs-dev/airs/internal/demodata"
	"github.com/airs-dev/airs/pipeline"
	"github.com/airs-dev/airs/pipeline/audit"
	"github.com/airs-dev/airs/pipeline/builtin"
	"github.com/airs-dev/airs/recommender"
	"github.com/airs-dev/airs/server"
)

// Spaces that nest or share a folder, as airs serve builds them (the
// engine, its watcher, the agents of http.tokens made known, each agent's
// stream from the server's backend): one PDF dropped in the inner folder is
// one suggestion for every agent that may read it under any of its names,
// named in a space that agent may read, and nothing for one that may not.
// The next file's suggestion is each agent's next update: no agent got a
// second one for the first file.
func TestOverlappingSpacesOneSuggestionPerAgentPerFile(t *testing.T) {
	t.Setenv("AIRS_HOME", "")
	dir := t.TempDir()
	inner := filepath.Join(dir, "docs", "reports")
	if err := os.MkdirAll(inner, 0o755); err != nil {
		t.Fatal(err)
	}
	yaml := `home: ./state
spaces:
  documents: ./docs
  reports: ./docs/reports
  mirror: ./docs
agents:
  outer: {capabilities: ["ReadSpace(documents)"]}
  inner: {capabilities: ["ReadSpace(reports)"]}
  mirrored: {capabilities: ["ReadSpace(mirror)"]}
  all: {capabilities: ["ReadSpace(*)"]}
  nobody: {capabilities: []}
`
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
	policy := cfg.Policy()
	reg := pipeline.NewRegistry(pipeline.RegistryConfig{})
	if err := builtin.Register(reg, builtin.Options{Spaces: cfg.Spaces, Policy: policy}); err != nil {
		t.Fatal(err)
	}
	log, err := audit.Open(cfg.AuditPath())
	if err != nil {
		t.Fatal(err)
	}
	mc := cfg.ManagerConfig()
	mc.Registry, mc.Audit, mc.Policy = reg, log, policy
	m, err := pipeline.NewManager(mc)
	if err != nil {
		t.Fatal(err)
	}
	e, err := New(context.Background(), cfg, reg, m, policy, Options{Channel: "serve", Model: "none"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		e.Close()
		m.Close()
		log.Close()
	})
	// Where each agent may find docs/reports/<name>, by space.
	readable := map[string]map[string]string{
		"outer":    {"documents": "reports/"},
		"inner":    {"reports": ""},
		"mirrored": {"mirror": "reports/"},
		"all":      {"documents": "reports/", "reports": "", "mirror": "reports/"},
	}
	agents := []string{"outer", "inner", "mirrored", "all", "nobody"}
	for _, a := range agents {
		e.Recommender.Known(a) // as airs serve does for http.tokens
	}
	if err := e.WatchSpaces(); err != nil {
		t.Fatal(err)
	}
	rb := e.Backend().(server.RecommendBackend)
	streams := map[string]<-chan recommender.Update{}
	for _, a := range agents {
		ch, cancel := rb.SubscribeRecommendations(a)
		t.Cleanup(cancel)
		streams[a] = ch
	}

	next := func(agent, file string) {
		t.Helper()
		select {
		case u, ok := <-streams[agent]:
			if !ok {
				t.Fatalf("%s: the stream closed", agent)
			}
			var args struct{ Space, Path string }
			if u.Type != "new" || u.Recommendation == nil || json.Unmarshal(u.Recommendation.Arguments, &args) != nil {
				t.Fatalf("%s: got %+v, want the new suggestion for %s", agent, u, file)
			}
			prefix, ok := readable[agent][args.Space]
			if !ok || args.Path != prefix+file {
				t.Fatalf("%s: suggested %s(%s), want %s named in a space it may read (%v)", agent, u.Recommendation.Tool, u.Recommendation.Arguments, file, readable[agent])
			}
		case <-time.After(15 * time.Second):
			t.Fatalf("%s: no suggestion for %s (it may read %v)", agent, file, readable[agent])
		}
	}
	for _, file := range []string{"q1.pdf", "q2.pdf"} {
		if err := demodata.WritePDF(filepath.Join(inner, file), []string{"Quarterly report", "Revenue 12"}); err != nil {
			t.Fatal(err)
		}
		for a := range readable {
			next(a, file)
		}
	}
	// Every agent's update for a file runs in the one ObserveFile call:
	// nobody's ran before the others' second suggestions were published.
	select {
	case u := <-streams["nobody"]:
		t.Fatalf("nobody, who may read no space, got %+v", u)
	default:
	}
}
