package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airs-dev/airs/pipeline/audit"
)

// BenchmarkCallNoop measures a call of a no-op tool through all seven stages
// (rate limiter, decoding, lookup, capability checks, schema validation,
// dispatch with a deadline, execution in its own goroutine, metrics, audit)
// with 1, 8 and 64 concurrent callers. audit=fsync is the durable log
// (group commit, one fdatasync per batch): the configuration the goal is
// stated for. audit=off isolates the pipeline's own CPU cost.
//
// Reported: calls/s, and p50/p99 of the per-call latency, which for a
// no-op handler is the pipeline's overhead (including the fsync wait).
//
//	go test -run x -bench . -count 5 ./pipeline/
func BenchmarkCallNoop(b *testing.B) {
	for _, mode := range []string{"fsync", "off"} {
		for _, callers := range []int{1, 8, 64} {
			b.Run(fmt.Sprintf("audit=%s/callers=%d", mode, callers), func(b *testing.B) {
				benchCalls(b, mode == "fsync", callers)
			})
		}
	}
}

func benchCalls(b *testing.B, durable bool, callers int) {
	reg := NewRegistry(RegistryConfig{})
	noop := HandlerFunc(func(context.Context, json.RawMessage, *Call) (json.RawMessage, error) {
		return json.RawMessage(`{}`), nil
	})
	tl := Tool{Name: "noop", Version: "1.0.0", Trust: TL3, LatencyClass: Fast, Idempotent: true,
		Parameters:         objSchema(`{"x":{"type":"integer","minimum":0},"s":{"type":"string","pattern":"^[a-z]+$"}}`, "x"),
		CapabilityRequired: []Capability{{Kind: "ReadSpace", Arg: "bench"}}}
	if err := reg.Register("local", tl, noop); err != nil {
		b.Fatal(err)
	}
	cfg := Config{Registry: reg, Policy: &StaticPolicy{
		Channels:     map[string][]string{"*": {"*"}},
		Capabilities: map[string][]Capability{"*": {{Kind: "ReadSpace", Arg: "*"}}},
	}}
	var log *audit.Log
	if durable {
		var err error
		if log, err = audit.Open(filepath.Join(b.TempDir(), "audit.jsonl")); err != nil {
			b.Fatal(err)
		}
		cfg.Audit = log
	}
	m, err := NewManager(cfg)
	if err != nil {
		b.Fatal(err)
	}
	params := []byte(`{"x":42,"s":"hello"}`)
	lat := make([][]time.Duration, callers)
	var next atomic.Int64
	var wg sync.WaitGroup
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for g := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req := Request{Tool: "noop", Params: params, Caller: "bench", CallID: fmt.Sprintf("b%d", g)}
			ctx := context.Background()
			mine := make([]time.Duration, 0, b.N/callers+1)
			for next.Add(1) <= int64(b.N) {
				t0 := time.Now()
				if _, err := m.Call(ctx, req); err != nil {
					b.Error(err)
					return
				}
				mine = append(mine, time.Since(t0))
			}
			lat[g] = mine
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	all := slices.Concat(lat...)
	slices.Sort(all)
	if len(all) > 0 {
		q := func(p float64) float64 { return float64(all[int(p*float64(len(all)-1))].Nanoseconds()) / 1e3 }
		b.ReportMetric(q(0.50), "p50-µs")
		b.ReportMetric(q(0.99), "p99-µs")
		b.ReportMetric(float64(len(all))/elapsed.Seconds(), "calls/s")
	}
	m.Close()
	if log != nil {
		log.Close()
	}
}
