package httpapi

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/airs-dev/airs/internal/demodata"
	"github.com/airs-dev/airs/internal/engine"
	"github.com/airs-dev/airs/internal/engine/enginetest"
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
	dir := t.TempDir()
	inner := filepath.Join(dir, "docs", "reports")
	if err := os.MkdirAll(inner, 0o755); err != nil {
		t.Fatal(err)
	}
	_, e := newSharedServed(t, dir, `home: ./state
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
`)
	// Where each agent may find docs/reports/<name>, by space.
	readable := map[string]map[string]string{
		"outer":    {"documents": "reports/"},
		"inner":    {"reports": ""},
		"mirrored": {"mirror": "reports/"},
		"all":      {"documents": "reports/", "reports": "", "mirror": "reports/"},
	}
	streams := subscribeAll(t, e, "outer", "inner", "mirrored", "all", "nobody")

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

// An agent's openings (PUT /v1/context "files") are its own context: the
// agents sharing the space are not suggested the files it opens, so its
// openings never spend their per-minute suggestions. With the limit at 2,
// three openings by one agent leave the other's own opening its
// suggestion, at once, and the first agent gets none for it.
func TestOpeningsAreTheOpenersOwn(t *testing.T) {
	dir := t.TempDir()
	docs := filepath.Join(dir, "docs")
	if err := os.MkdirAll(docs, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"x1.pdf", "x2.pdf", "x3.pdf", "y.pdf"} {
		if err := demodata.WritePDF(filepath.Join(docs, f), []string{"Invoice", "Total 9"}); err != nil {
			t.Fatal(err)
		}
	}
	base, e := newSharedServed(t, dir, `home: ./state
spaces:
  documents: ./docs
agents:
  ann: {capabilities: ["ReadSpace(documents)"]}
  bob: {capabilities: ["ReadSpace(documents)"]}
recommend: {per_minute: 2}
`)
	streams := subscribeAll(t, e, "ann", "bob")
	open := func(token, file string) []map[string]any {
		t.Helper()
		code, v := do(t, "PUT", base+"/v1/context", token, `{"files":[{"space":"documents","path":"`+file+`"}]}`)
		if code != 200 {
			t.Fatalf("PUT /v1/context %s as %s: %d %v", file, token, code, v)
		}
		return recList(v)
	}
	for _, f := range []string{"x1.pdf", "x2.pdf", "x3.pdf"} {
		open("t-ann", f)
	}
	recs := open("t-bob", "y.pdf")
	select {
	case u := <-streams["bob"]:
		if u.Type != "new" || !strings.Contains(string(u.Recommendation.Arguments), `"y.pdf"`) {
			t.Fatalf("bob's first update %s %s; want the suggestion of his own opening, y.pdf", u.Type, u.Recommendation.Arguments)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("bob's stream got nothing for his opening")
	}
	// The opening's suggestion is made before PUT /v1/context answers.
	if len(recs) != 1 || !strings.Contains(string(mustJSON(recs[0]["arguments"])), `"y.pdf"`) {
		t.Fatalf("bob's suggestions in the answer to his opening of y.pdf: %v; want the one for y.pdf", recs)
	}
	// ann's: her first two openings (her limit), nothing of bob's.
	for i, want := range []string{"x1.pdf", "x2.pdf"} {
		select {
		case u := <-streams["ann"]:
			if u.Type != "new" || !strings.Contains(string(u.Recommendation.Arguments), `"`+want+`"`) {
				t.Fatalf("ann's update %d: %s %s; want %s", i, u.Type, u.Recommendation.Arguments, want)
			}
		default:
			t.Fatalf("ann's stream has no suggestion for %s", want)
		}
	}
	select {
	case u := <-streams["ann"]:
		t.Fatalf("ann got %s %s: past her limit, or bob's opening", u.Type, u.Recommendation.Arguments)
	default:
	}
}

// newSharedServed starts the engine of airs.yaml text yaml (in dir) as
// airs serve does: the agents made known, the spaces watched, the HTTP
// server in front with the token "t-NAME" for each agent NAME.
func newSharedServed(t testing.TB, dir, yaml string) (base string, e *engine.Engine) {
	t.Helper()
	cfg := enginetest.WriteConfig(t, dir, yaml)
	e = enginetest.Build{Engine: engine.Options{Channel: "serve", Model: "none"}}.New(t, cfg)
	var toks []server.Token
	for a := range cfg.Agents {
		toks = append(toks, server.Token{SHA256: server.HashToken("t-" + a), Agent: a})
		e.Recommender().Known(a) // as airs serve does for http.tokens
	}
	if err := e.WatchSpaces(); err != nil {
		t.Fatal(err)
	}
	s := server.New(New(e), server.Config{Tokens: toks})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, l) }()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return "http://" + l.Addr().String(), e
}

// subscribeAll opens each agent's suggestion stream as the server's
// stream handlers do.
func subscribeAll(t testing.TB, e *engine.Engine, agents ...string) map[string]<-chan recommender.Update {
	rb := New(e).(server.RecommendBackend)
	streams := map[string]<-chan recommender.Update{}
	for _, a := range agents {
		ch, cancel := rb.SubscribeRecommendations(a)
		t.Cleanup(cancel)
		streams[a] = ch
	}
	return streams
}
