package guard

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/airs-dev/airs/guard/anomaly"
	"github.com/airs-dev/airs/guard/anomaly/traffic"
	"github.com/airs-dev/airs/pipeline"
	"github.com/airs-dev/airs/pipeline/audit"
)

// BenchmarkPipelineAnomaly is the anomaly gate's cost on the pipeline's
// throughput: the same calls (the traffic model's held-out normal days,
// replayed in order with the clock at each call's time) through the same
// Manager set-up — the guard as intent gate, a no-op handler — with the
// scorer off and on (a model trained on the 28 days before, the bounded
// history), in one run. audit=off isolates the CPU cost; audit=fsync is
// the durable log airs runs with. flagged/op is the share of calls the
// gate queued or held (the normal traffic's false positives; each costs a
// review-store write).
//
//	go test -run x -bench PipelineAnomaly -count 6 ./guard/
func BenchmarkPipelineAnomaly(b *testing.B) {
	model, train, test := benchTraffic(b)
	for _, mode := range []string{"off", "fsync"} {
		b.Run("audit="+mode, func(b *testing.B) {
			benchAnomaly(b, mode == "fsync", model, train, test)
		})
	}
}

func benchTraffic(b *testing.B) (*anomaly.Model, []anomaly.Features, []traffic.Call) {
	start := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
	all := traffic.Normal(start, 42, 1)
	split := start.AddDate(0, 0, 28)
	z := traffic.NewFeaturizer()
	var train []anomaly.Features
	i := 0
	for ; all[i].At.Before(split); i++ {
		train = append(train, z.Features(all[i], true))
	}
	model, err := anomaly.Train(train)
	if err != nil {
		b.Fatal(err)
	}
	return model, train, all[i:]
}

// benchSide is one of the two Managers a paired benchmark compares.
type benchSide struct {
	m   *pipeline.Manager
	g   *Guard
	clk *clock
	ns  time.Duration
}

func newBenchSide(b *testing.B, durable, scored bool, model *anomaly.Model, train []anomaly.Features, at time.Time) *benchSide {
	reg := pipeline.NewRegistry(pipeline.RegistryConfig{})
	ok := pipeline.HandlerFunc(func(context.Context, json.RawMessage, *pipeline.Call) (json.RawMessage, error) {
		return json.RawMessage(`{}`), nil
	})
	for _, name := range []string{"read-file", "search", "list-dir", "write-file", "delete-file", "summarize"} {
		tl := pipeline.Tool{Name: name, Version: "1.0.0", Trust: pipeline.TL2, LatencyClass: pipeline.Fast, Idempotent: true,
			Parameters: json.RawMessage(`{"type":"object","properties":{"p":{"type":"string"}}}`)}
		if err := reg.Register("local", tl, ok); err != nil {
			b.Fatal(err)
		}
	}
	s := &benchSide{clk: &clock{t: at}}
	g, err := New(Config{Dir: b.TempDir(), Now: s.clk.now})
	if err != nil {
		b.Fatal(err)
	}
	s.g = g
	cfg := pipeline.Config{Registry: reg, Gate: g, Now: s.clk.now}
	if durable {
		log, err := audit.Open(filepath.Join(b.TempDir(), "audit.jsonl"))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { log.Close() })
		cfg.Audit = log
	}
	if scored {
		var h anomaly.Holder
		h.Set(model)
		sc := NewAnomalyScorer(&h, pipeline.DefaultAnomalyThresholds.Block)
		for _, c := range train[len(train)-2000:] { // the tools already seen, as WarmHistory gives
			sc.History.Observe(c.Caller, c.Tool, anomaly.Folders{}, time.Time{})
		}
		cfg.Scorer = sc
	}
	m, err := pipeline.NewManager(cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { m.Close() })
	s.m = m
	return s
}

func (s *benchSide) call(c traffic.Call, at time.Time, params []byte) error {
	s.clk.mu.Lock()
	s.clk.t = at
	s.clk.mu.Unlock()
	t0 := time.Now()
	_, err := s.m.Call(context.Background(), pipeline.Request{Tool: c.Tool, Caller: c.Caller, Params: params})
	s.ns += time.Since(t0)
	return err
}

// benchAnomaly runs each call through both Managers, in alternating
// order, timing each: the two figures are paired (the same moment, the
// same load on a shared machine), which a pair of separate benchmarks on
// a busy machine is not.
func benchAnomaly(b *testing.B, durable bool, model *anomaly.Model, train []anomaly.Features, test []traffic.Call) {
	off := newBenchSide(b, durable, false, model, train, test[0].At)
	on := newBenchSide(b, durable, true, model, train, test[0].At)
	params := make([][]byte, len(test))
	for i, c := range test {
		params[i] = paramsOf(c.Size)
	}
	span := 14 * 24 * time.Hour
	held := 0
	n := 0
	for b.Loop() {
		j := n % len(test)
		c := test[j]
		// each pass over the two held-out weeks two weeks later, so the
		// clock only moves forward and the weekdays stay where they were
		at := c.At.Add(time.Duration(n/len(test)) * span)
		first, second := off, on
		if n%2 == 1 {
			first, second = on, off
		}
		if err := first.call(c, at, params[j]); err != nil && first == on {
			held++
		}
		if err := second.call(c, at, params[j]); err != nil && second == on {
			held++
		}
		n++
	}
	b.StopTimer()
	queued, _ := on.g.List(Filter{})
	b.ReportMetric(float64(off.ns)/float64(n), "off-ns/call")
	b.ReportMetric(float64(on.ns)/float64(n), "on-ns/call")
	b.ReportMetric(float64(on.ns)/float64(off.ns), "on/off")
	b.ReportMetric(float64(held+len(queued))/float64(n), "flagged/call")
}

// BenchmarkAnomalyScorer is the scorer alone, per call, as the pipeline
// calls it: the folders of the params, the history's look-up and record,
// the model's score. cpu-ns/op is the process's CPU time per call (one
// goroutine: on a shared machine ns/op also counts the waits for a core).
func BenchmarkAnomalyScorer(b *testing.B) {
	model, train, test := benchTraffic(b)
	var h anomaly.Holder
	h.Set(model)
	sc := NewAnomalyScorer(&h, pipeline.DefaultAnomalyThresholds.Block)
	for _, c := range train {
		sc.History.Observe(c.Caller, c.Tool, anomaly.Folders{}, time.Time{})
	}
	fs := make([]pipeline.CallFeatures, len(test))
	for i, c := range test {
		params := []byte(fmt.Sprintf(`{"space":"docs","path":"%s/f%d.md"}`, c.Caller, i%50))
		fs[i] = pipeline.CallFeatures{Caller: c.Caller, Provider: "local", Tool: c.Tool, At: c.At, ParamSizeBytes: c.Size, Params: params}
	}
	b.ReportAllocs()
	n := 0
	cpu := processCPU()
	for b.Loop() {
		sc.ScoreCall(fs[n%len(fs)])
		n++
	}
	if c := processCPU() - cpu; c > 0 {
		b.ReportMetric(float64(c)/float64(n), "cpu-ns/op")
	}
}
