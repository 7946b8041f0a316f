package pipeline

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"
)

// BenchmarkSpeculation is the cost speculation adds to a real call of a
// read-only no-op tool (audit off: the pipeline's own CPU), and what a hit
// costs. Modes: off, speculation disabled (the hook only checks the tool);
// miss, enabled with nothing cached (no key computed); miss-busy, another
// caller's result cached (the key, the canonical params hash, is computed
// and looked up); hit, the real call answered from a speculation made just
// before (the speculation itself is outside the timer).
//
//	go test -run x -bench BenchmarkSpeculation -benchtime 20000x -count 5 ./pipeline/
func BenchmarkSpeculation(b *testing.B) {
	for _, mode := range []string{"off", "miss", "miss-busy", "hit"} {
		b.Run(mode, func(b *testing.B) {
			reg := NewRegistry(RegistryConfig{})
			tl := Tool{Name: "look", Version: "1.0.0", Trust: TL3, LatencyClass: Fast, Idempotent: true, ReadOnly: true,
				Parameters: objSchema(`{"path":{"type":"string"},"n":{"type":"integer"}}`)}
			if err := reg.Register("local", tl, HandlerFunc(func(context.Context, json.RawMessage, *Call) (json.RawMessage, error) {
				return json.RawMessage(`{"text":"hello"}`), nil
			})); err != nil {
				b.Fatal(err)
			}
			m, err := NewManager(Config{Registry: reg, Speculation: SpeculationConfig{Enabled: mode != "off", PerMinute: 1 << 30}})
			if err != nil {
				b.Fatal(err)
			}
			defer m.Close()
			ctx := context.Background()
			if mode == "miss-busy" {
				if _, err := m.Speculate(ctx, Request{Tool: "look", Params: []byte(`{"path":"x"}`), Caller: "bob"}); err != nil {
					b.Fatal(err)
				}
			}
			hits := 0
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				req := Request{Tool: "look", Params: []byte(`{"path":"docs/a.txt","n":` + strconv.Itoa(i) + `}`), Caller: "alice"}
				if mode == "hit" {
					b.StopTimer()
					if _, err := m.Speculate(ctx, req); err != nil {
						b.Fatal(err)
					}
					b.StartTimer()
				}
				res, err := m.Call(ctx, req)
				if err != nil {
					b.Fatal(err)
				}
				if res.SpeculativeHit {
					hits++
				}
			}
			b.StopTimer()
			if (mode == "hit") != (hits == b.N) {
				b.Fatalf("%s: %d hits of %d", mode, hits, b.N)
			}
		})
	}
}
