package injection

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/airs-dev/airs/pipeline"
	"github.com/airs-dev/airs/pipeline/builtin"
)

// BenchmarkVerifierNoModel is level 2's cost per call without a model —
// provenance, the flow policies and the verifier (package understand
// reading the request, cached per request; the retrieval model's purpose
// match, cached per agent and tool) — over the suite's benign calls of
// the built-in tools. It reports the p99 of one check (goal ≤ 1 ms).
// NewRequest: every call has words never seen before (understand reads
// each one), the cost of a turn's first call.
func BenchmarkVerifierNoModel(b *testing.B) { benchVerifier(b, false) }

func BenchmarkVerifierNoModelNewRequest(b *testing.B) { benchVerifier(b, true) }

func benchVerifier(b *testing.B, fresh bool) {
	l := pipeline.NewLevel2(Level2Options(), nil)
	entries, err := builtin.Tools(builtin.Options{Spaces: map[string]string{spaceDocs: b.TempDir()}, HTTPFetch: &builtin.HTTPFetchOptions{}})
	if err != nil {
		b.Fatal(err)
	}
	tools := map[string]*pipeline.Tool{}
	for _, e := range entries {
		tools[e.Tool.Name] = &e.Tool
	}
	type one struct {
		c pipeline.Level2Call
	}
	var calls []one
	for _, t := range benignTasks("http://127.0.0.1:8080") {
		for _, st := range t.Plan {
			tl := tools[st.Tool]
			if tl == nil {
				continue // the fixture's MCP tools
			}
			var params any
			b, _ := json.Marshal(st.Args)
			json.Unmarshal(b, &params)
			calls = append(calls, one{pipeline.Level2Call{Caller: Agent, Provider: "builtin", Intent: t.Text, Turn: "t", Tool: tl, Params: params}})
		}
	}
	ctx := context.Background()
	for _, c := range calls { // warm the per-(agent, tool) caches, as a running server has them
		l.Judge(ctx, c.c)
	}
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		c := calls[i%len(calls)]
		if fresh {
			c.c.Intent += " #" + strconv.Itoa(i)
		}
		t0 := time.Now()
		l.Judge(ctx, c.c)
		lat = append(lat, time.Since(t0))
	}
	b.StopTimer()
	slices.Sort(lat)
	if len(lat) > 0 {
		b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds()), "p99-ns")
		b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds()), "p50-ns")
	}
}
