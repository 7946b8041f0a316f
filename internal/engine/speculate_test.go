package engine

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/airs-dev/airs/config"
	"github.com/airs-dev/airs/internal/demodata"
	"github.com/airs-dev/airs/pipeline"
	"github.com/airs-dev/airs/pipeline/audit"
	"github.com/airs-dev/airs/recommender"
	"github.com/airs-dev/airs/speculation"
)

// newSpecEngine is the real engine over the built-in tools and the demo
// documents with guard.speculation on (recommend: on or off).
func newSpecEngine(t *testing.T, recommend bool) (*Engine, *config.Config) {
	t.Helper()
	dir := t.TempDir()
	if err := demodata.Write(filepath.Join(dir, "docs")); err != nil {
		t.Fatal(err)
	}
	yaml := "home: ./state\nspaces:\n  documents: ./docs\nagents:\n  web: {capabilities: [\"ReadSpace(documents)\"]}\n" +
		"guard:\n  speculation: {enabled: true, top: 3, per_minute: 100}\n"
	if !recommend {
		yaml += "recommend: {enabled: false}\n"
	}
	cfg := writeConfig(t, dir, yaml)
	return testEngine(t, cfg, testBuild{opts: Options{Channel: "serve", Model: "none"}}).Engine, cfg
}

// waitHit calls req until a call is answered from a speculation (the
// speculator works in the background after the previous call), at most
// a few seconds.
func waitStored(t *testing.T, m *pipeline.Manager, n uint64) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for m.SpeculationStats().Stored < n {
		if time.Now().After(deadline) {
			t.Fatalf("no speculation stored: %+v", m.SpeculationStats())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// With suggestions off, affinity alone predicts: an agent reading one file
// over and over has its next read run ahead, and that read is answered
// from it; the audit log links the two.
func TestSpeculatorAffinityRepeat(t *testing.T) {
	e, cfg := newSpecEngine(t, false)
	if e.Speculator() == nil {
		t.Fatal("speculation on, yet no speculator")
	}
	req := pipeline.Request{Tool: "pdf-extract", Caller: "web", Params: []byte(`{"space":"documents","path":"quotes/acme-2024.pdf"}`)}
	for range 3 { // the affinity threshold
		if _, err := e.Call(context.Background(), req); err != nil {
			t.Fatal(err)
		}
	}
	waitStored(t, e.manager, 1)
	res, err := e.Call(context.Background(), req)
	if err != nil || !res.SpeculativeHit {
		t.Fatalf("the fourth read was not served from the speculation: %v %+v (%+v)", err, res, e.manager.SpeculationStats())
	}
	recs, err := audit.Tail(cfg.AuditPath(), 100)
	if err != nil {
		t.Fatal(err)
	}
	used, _ := audit.Speculations(recs)
	i := slices.IndexFunc(recs, func(r audit.Record) bool { return r.CallID == res.CallID })
	if len(used) != 1 || i < 0 || !recs[i].SpeculativeHit || recs[i].SpeculationOf != used[0] {
		t.Fatalf("audit: used %v, records %+v", used, recs)
	}
	// Predictions never name a tool that writes, even one the caller uses.
	e.Speculator().Observe(pipeline.CallEvent{Caller: "web", Tool: "delete-file", Outcome: pipeline.OutcomeOK, At: time.Now(),
		Params: []byte(`{"space":"documents","path":"x"}`)})
	for range 3 {
		e.Speculator().Observe(pipeline.CallEvent{Caller: "web", Tool: "delete-file", Outcome: pipeline.OutcomeOK, At: time.Now(),
			Params: []byte(`{"space":"documents","path":"x"}`)})
	}
	for _, p := range e.Speculator().Predict("web") {
		if p.Tool == "delete-file" {
			t.Fatalf("predicted a destructive call: %+v", p)
		}
	}
}

// With suggestions on, the recommender's suggestion (a PDF that appeared
// in the space) is speculated after the caller's next call, with the
// suggestion's arguments, and a real call of it is served at once.
func TestSpeculatorRunsSuggestions(t *testing.T) {
	e, _ := newSpecEngine(t, true)
	r := e.recommender
	r.Known("web")
	r.ObserveFile(recommender.FileEvent{Space: "documents", Rel: "papers/attention.pdf", Op: "create"})
	var rec *recommender.Recommendation
	for _, x := range r.Peek("web") {
		if x.Tool == "pdf-extract" {
			rec = &x
		}
	}
	if rec == nil {
		t.Fatalf("no pdf-extract suggestion: %+v", r.Peek("web"))
	}
	preds := e.Speculator().Predict("web")
	if !slices.ContainsFunc(preds, func(p speculation.Prediction) bool {
		return p.Tool == "pdf-extract" && p.Source == speculation.SourceRecommender && string(p.Arguments) == string(rec.Arguments)
	}) {
		t.Fatalf("predictions %+v", preds)
	}
	// Any delivered call makes the speculator act.
	if _, err := e.Call(context.Background(), pipeline.Request{Tool: "calculator", Caller: "web", Params: []byte(`{"expression":"1+1"}`)}); err != nil {
		t.Fatal(err)
	}
	waitStored(t, e.manager, 1)
	res, err := e.Call(context.Background(), pipeline.Request{Tool: "pdf-extract", Caller: "web", Params: rec.Arguments})
	if err != nil || !res.SpeculativeHit {
		t.Fatalf("suggested call not served from its speculation: %v %+v (%+v)", err, res, e.manager.SpeculationStats())
	}
	var out map[string]any
	if json.Unmarshal(res.Output, &out) != nil || len(out) == 0 {
		t.Fatalf("output %s", res.Output)
	}
}

// A speculative audit record is nobody's call: the recommender's recent
// calls, read back from the audit log at start, leave it out.
func TestRecentCallsSkipSpeculative(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l, err := audit.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	for _, r := range []*audit.Record{
		{Time: now, CallID: "spec-1", Caller: "web", Tool: "pdf-extract", Outcome: "ok", Speculative: true},
		{Time: now, CallID: "c-2", Caller: "web", Tool: "calculator", Outcome: "ok"},
	} {
		if err := l.Append(r); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()
	got := recentCalls(path, "web", now.Add(-time.Minute))
	if len(got) != 1 || got[0].CallID != "c-2" {
		t.Fatalf("recent calls %+v", got)
	}
}
