package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"hash/crc32"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkFairness: one Manager, two agents. The quiet agent calls a
// calculator (Instant) and compares two short texts (Fast), each with
// room to spare; the hostile agent sends huge texts (as large as the
// default MaxPayload lets in) to compare with a 20 ms timeout, from four
// goroutines, as fast as it is answered. The quiet agent's workload runs
// three times in the same benchmark: alone, with the hostile agent, and
// alone again (so a drift of the machine's load over the run does not pass
// for the hostile agent's doing). Its p99 latency and success rate alone
// (both alone runs pooled) and with the hostile agent are reported, and
// the ratio of the p99s (1: the hostile agent changed nothing for it).
//
//	go test -run '^$' -bench BenchmarkFairness -count 5 ./pipeline/
func BenchmarkFairness(b *testing.B) {
	reg := NewRegistry(RegistryConfig{})
	calc := Tool{Name: "calculator", Version: "1.0.0", Trust: TL3, LatencyClass: Instant, Idempotent: true,
		Parameters: objSchema(`{"a":{"type":"number"},"b":{"type":"number"}}`, "a", "b")}
	cmpTool := Tool{Name: "compare", Version: "1.0.0", Trust: TL3, LatencyClass: Fast, Idempotent: true,
		Parameters: objSchema(`{"left":{"type":"string"},"right":{"type":"string"}}`, "left", "right")}
	if err := reg.Register("builtin", calc, HandlerFunc(benchCalculator)); err != nil {
		b.Fatal(err)
	}
	if err := reg.Register("builtin", cmpTool, HandlerFunc(benchCompare)); err != nil {
		b.Fatal(err)
	}
	m, err := NewManager(Config{Registry: reg})
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()

	huge := strings.Repeat("lorem ipsum dolor sit amet ", 19_000) // ~510 kB a side
	hostileParams, _ := json.Marshal(map[string]string{"left": huge, "right": huge + "!"})
	quietCalls := []Request{
		{Tool: "calculator", Params: []byte(`{"a":2,"b":2}`), Caller: "quiet"},
		{Tool: "compare", Params: []byte(`{"left":"the cat sat","right":"the cat sat down"}`), Caller: "quiet", Timeout: 5 * time.Second},
	}
	b.ResetTimer()
	alone := runQuiet(b, m, quietCalls, b.N)

	stop := make(chan struct{})
	var hostileWG sync.WaitGroup
	var hTimeouts, hLimited, hOther atomic.Int64
	for range 4 {
		hostileWG.Add(1)
		go func() {
			defer hostileWG.Done()
			req := Request{Tool: "compare", Params: hostileParams, Caller: "hostile", Timeout: 20 * time.Millisecond}
			for {
				select {
				case <-stop:
					return
				default:
				}
				_, err := m.Call(context.Background(), req)
				switch {
				case errors.Is(err, ErrTimeout):
					hTimeouts.Add(1)
				case errors.Is(err, ErrRateLimited):
					hLimited.Add(1)
					time.Sleep(time.Millisecond) // a refusal's round trip
				default:
					if hOther.Add(1) == 1 {
						b.Logf("a hostile call neither timed out nor was limited: %v", err)
					}
				}
			}
		}()
	}
	// The hostile agent's first calls are running before the quiet
	// agent's second run starts.
	for hTimeouts.Load()+hLimited.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	under := runQuiet(b, m, quietCalls, b.N)
	close(stop)
	hostileWG.Wait()
	again := runQuiet(b, m, quietCalls, b.N)
	b.StopTimer()
	alone = pool(alone, again)

	b.ReportMetric(alone.p99(), "quiet-alone-p99-µs")
	b.ReportMetric(under.p99(), "quiet-hostile-p99-µs")
	b.ReportMetric(under.p99()/alone.p99(), "p99-ratio")
	b.ReportMetric(100*alone.ok(), "quiet-alone-ok-%")
	b.ReportMetric(100*under.ok(), "quiet-hostile-ok-%")
	b.ReportMetric(float64(hTimeouts.Load()), "hostile-timeouts")
	b.ReportMetric(float64(hLimited.Load()), "hostile-limited")
	b.ReportMetric(float64(hOther.Load()), "hostile-other")
}

type quietRun struct {
	lat    []time.Duration // sorted
	failed int
}

func (r quietRun) p99() float64 {
	if len(r.lat) == 0 {
		return 0
	}
	return float64(r.lat[int(0.99*float64(len(r.lat)-1))].Nanoseconds()) / 1e3 // µs
}

// ok is the fraction of calls that succeeded.
func (r quietRun) ok() float64 { return 1 - float64(r.failed)/float64(max(len(r.lat), 1)) }

func pool(a, b quietRun) quietRun {
	all := slices.Concat(a.lat, b.lat)
	slices.Sort(all)
	return quietRun{lat: all, failed: a.failed + b.failed}
}

// runQuiet makes n calls, cycling through reqs, from two goroutines.
func runQuiet(b *testing.B, m *Manager, reqs []Request, n int) quietRun {
	const workers = 2
	lat := make([][]time.Duration, workers)
	var next, failed atomic.Int64
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1)
				if i > int64(n) {
					return
				}
				t0 := time.Now()
				if _, err := m.Call(context.Background(), reqs[int(i)%len(reqs)]); err != nil {
					failed.Add(1)
					if failed.Load() == 1 {
						b.Logf("quiet call failed: %v", err)
					}
				}
				lat[w] = append(lat[w], time.Since(t0))
			}
		}()
	}
	wg.Wait()
	all := slices.Concat(lat...)
	slices.Sort(all)
	return quietRun{lat: all, failed: int(failed.Load())}
}

func benchCalculator(_ context.Context, p json.RawMessage, _ *Call) (json.RawMessage, error) {
	var in struct{ A, B float64 }
	if err := json.Unmarshal(p, &in); err != nil {
		return nil, err
	}
	return json.Marshal(in.A + in.B)
}

// benchCompare does work in proportion to its input (eight checksum passes
// over both texts), checking its context between 64 kB chunks, as a
// well-behaved handler does.
func benchCompare(ctx context.Context, p json.RawMessage, _ *Call) (json.RawMessage, error) {
	var in struct{ Left, Right string }
	if err := json.Unmarshal(p, &in); err != nil {
		return nil, err
	}
	var sum uint32
	for range 8 {
		for _, s := range []string{in.Left, in.Right} {
			for off := 0; off < len(s); off += 64 << 10 {
				if err := ctx.Err(); err != nil {
					return nil, err
				}
				sum = crc32.Update(sum, crc32.IEEETable, []byte(s[off:min(off+64<<10, len(s))]))
			}
		}
	}
	return json.Marshal(map[string]any{"equal": in.Left == in.Right, "sum": sum})
}
