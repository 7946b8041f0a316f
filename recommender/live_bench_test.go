package recommender

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/airs-dev/airs/pipeline"
	"github.com/airs-dev/airs/selector"
)

// benchWorld registers n synthetic tools (a third of them taking a file in
// a space) behind the real registry, catalog and schema stage.
func benchWorld(b *testing.B, n int) (*Recommender, *pipeline.Manager) {
	b.Helper()
	reg := pipeline.NewRegistry(pipeline.RegistryConfig{})
	rng := rand.New(rand.NewPCG(1, 2))
	words := []string{"pdf", "text", "invoice", "report", "search", "web", "weather", "stock", "price", "email",
		"message", "calendar", "event", "file", "folder", "image", "resize", "translate", "summary", "table",
		"csv", "data", "query", "database", "vehicle", "flight", "booking", "ticket", "note", "todo"}
	for i := range n {
		desc := ""
		for range 12 {
			desc += words[rng.IntN(len(words))] + " "
		}
		params := `{"type":"object","properties":{"query":{"type":"string","description":"what to look for"}},"required":["query"]}`
		if i%3 == 0 {
			params = `{"type":"object","properties":{"space":{"type":"string","enum":["documents"]},"path":{"type":"string","minLength":1}},"required":["space","path"],"additionalProperties":false}`
		}
		t := pipeline.Tool{Name: fmt.Sprintf("tool-%04d", i), Version: "1.0.0", Description: desc, Parameters: []byte(params),
			Trust: pipeline.TL2, LatencyClass: pipeline.Fast, Idempotent: true}
		if err := reg.Register("p", t, pipeline.HandlerFunc(nil)); err != nil {
			b.Fatal(err)
		}
	}
	m, err := pipeline.NewManager(pipeline.Config{Registry: reg})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { m.Close() })
	r, err := New(Config{Catalog: &selector.RegistryCatalog{Registry: reg}, Validate: m.Validate, Spaces: []string{"documents"},
		PerMinute: 1 << 30, MaxActive: 5})
	if err != nil {
		b.Fatal(err)
	}
	// History: a few thousand calls seen.
	var calls []string
	var at []time.Time
	now := time.Now()
	for i := range 5000 {
		calls = append(calls, fmt.Sprintf("tool-%04d", rng.IntN(n)))
		at = append(at, now.Add(time.Duration(i-5000)*time.Second))
	}
	r.TrainHistory(calls, at)
	for i := range 200 {
		r.TrainText("find the "+words[i%len(words)]+" "+words[(i*7)%len(words)], fmt.Sprintf("tool-%04d", i%n))
	}
	_ = r.SetTask("me", "research invoice prices in the report data")
	for i := range 5 {
		r.ObserveTurn("me", "show me the "+words[i]+" "+words[i+5])
	}
	for i := range 8 {
		r.ObserveCall(pipeline.CallEvent{Caller: "me", Tool: fmt.Sprintf("tool-%04d", i*3), Outcome: pipeline.OutcomeOK, At: now,
			Params: []byte(`{"space":"documents","path":"a.pdf"}`)})
	}
	return r, m
}

// BenchmarkUpdate1000 is one recommendation update after a signal event
// (a file landing in a space) with 1,000 registered tools: every signal
// scored for every callable tool, fused, the best prefilled and checked by
// the schema stage. It reports the p50 and p99 of the updates it timed.
func BenchmarkUpdate1000(b *testing.B) {
	r, _ := benchWorld(b, 1000)
	durs := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		r.mu.Lock() // forget the last round's, untimed, so that each round builds afresh
		r.callers["me"].active = nil
		r.mu.Unlock()
		t0 := time.Now()
		r.ObserveFile(FileEvent{Space: "documents", Rel: fmt.Sprintf("in/%d.pdf", i), Op: "create"})
		durs = append(durs, time.Since(t0))
	}
	b.StopTimer()
	if st := r.Stats(); st.Issued < uint64(len(durs)) {
		b.Fatalf("%d recommendations issued over %d updates: the benchmark builds none", st.Issued, len(durs))
	}
	slices.Sort(durs)
	if len(durs) > 0 {
		b.ReportMetric(float64(durs[len(durs)/2].Microseconds()), "p50-µs")
		b.ReportMetric(float64(durs[len(durs)*99/100].Microseconds()), "p99-µs")
	}
}
