package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkFairness: one Manager, two agents. The quiet agent calls a
// calculator (Instant, its default budget) and compares two short texts
// (Fast, a 5 s timeout), from two goroutines, a call every millisecond
// each. The hostile agent sends huge texts (as large as the default
// MaxPayload lets in) to compare with a 60 ms timeout, from four
// goroutines, as fast as it is answered (a refusal's round trip, of
// whatever kind, is taken as 1 ms). A round is three phases of
// fairnessPhase each: the quiet agent alone, beside the hostile agent, and
// alone again (so a drift of the machine's load does not pass for the
// hostile agent's doing, and what the hostile agent leaves behind shows).
// Reported, over b.N rounds: the quiet agent's p99 latency alone (both
// alone phases) and beside the hostile agent, their ratio (1: the hostile
// agent changed nothing for it), its success rate in each phase, and what
// became of the hostile agent's calls.
//
//	go test -run '^$' -bench BenchmarkFairness -benchtime 1x -count 5 ./pipeline/
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
	huge := strings.Repeat("lorem ipsum dolor sit amet ", 19_000) // ~510 kB a side
	hostileParams, _ := json.Marshal(map[string]string{"left": huge, "right": huge + "!"})
	quietCalls := []Request{
		{Tool: "calculator", Params: []byte(`{"a":2,"b":2}`), Caller: "quiet"},
		{Tool: "compare", Params: []byte(`{"left":"the cat sat","right":"the cat sat down"}`), Caller: "quiet", Timeout: 5 * time.Second},
	}
	hostile := Request{Tool: "compare", Params: hostileParams, Caller: "hostile", Timeout: 60 * time.Millisecond}

	var before, under, after quietRun
	var hTimeouts, hLimited, hOther atomic.Int64
	b.ResetTimer()
	for range b.N {
		m, err := NewManager(Config{Registry: reg})
		if err != nil {
			b.Fatal(err)
		}
		before = pool(before, runQuiet(b, m, quietCalls, fairnessPhase))
		stop := make(chan struct{})
		var hostileWG sync.WaitGroup
		for range 4 {
			hostileWG.Add(1)
			go func() {
				defer hostileWG.Done()
				for {
					select {
					case <-stop:
						return
					default:
					}
					_, err := m.Call(context.Background(), hostile)
					switch {
					case errors.Is(err, ErrTimeout):
						hTimeouts.Add(1)
					case errors.Is(err, ErrRateLimited):
						hLimited.Add(1)
						time.Sleep(time.Millisecond)
					default:
						if hOther.Add(1) == 1 {
							b.Logf("a hostile call neither timed out nor was limited: %v", err)
						}
						time.Sleep(time.Millisecond)
					}
				}
			}()
		}
		under = pool(under, runQuiet(b, m, quietCalls, fairnessPhase))
		close(stop)
		hostileWG.Wait()
		after = pool(after, runQuiet(b, m, quietCalls, fairnessPhase))
		m.Close()
	}
	b.StopTimer()

	alone := pool(before, after)
	b.ReportMetric(alone.p99(), "quiet-alone-p99-µs")
	b.ReportMetric(under.p99(), "quiet-hostile-p99-µs")
	b.ReportMetric(under.p99()/alone.p99(), "p99-ratio")
	b.ReportMetric(100*before.ok(), "quiet-before-ok-%")
	b.ReportMetric(100*under.ok(), "quiet-hostile-ok-%")
	b.ReportMetric(100*after.ok(), "quiet-after-ok-%")
	b.ReportMetric(float64(hTimeouts.Load())/float64(b.N), "hostile-timeouts/round")
	b.ReportMetric(float64(hLimited.Load())/float64(b.N), "hostile-limited/round")
	b.ReportMetric(float64(hOther.Load())/float64(b.N), "hostile-other/round")
}

// fairnessPhase is how long each phase of a BenchmarkFairness round lasts.
const fairnessPhase = 3 * time.Second

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

// runQuiet calls for d from two goroutines, each a call every millisecond
// (or as soon as the last one is answered), cycling through reqs.
func runQuiet(b *testing.B, m *Manager, reqs []Request, d time.Duration) quietRun {
	const workers = 2
	lat := make([][]time.Duration, workers)
	var failed atomic.Int64
	var wg sync.WaitGroup
	end := time.Now().Add(d)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tick := time.NewTicker(time.Millisecond)
			defer tick.Stop()
			for i := w; time.Now().Before(end); i++ {
				t0 := time.Now()
				if _, err := m.Call(context.Background(), reqs[i%len(reqs)]); err != nil {
					if failed.Add(1) == 1 {
						b.Logf("quiet call failed: %v", err)
					}
				}
				lat[w] = append(lat[w], time.Since(t0))
				<-tick.C
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

// benchCompare does work in proportion to its input (32 hashing passes
// over both texts, a byte at a time: about 30 ns a byte in all), checking its
// context between 64 kB chunks, as a well-behaved handler does.
func benchCompare(ctx context.Context, p json.RawMessage, _ *Call) (json.RawMessage, error) {
	var in struct{ Left, Right string }
	if err := json.Unmarshal(p, &in); err != nil {
		return nil, err
	}
	h := uint32(2166136261)
	for range 32 {
		for _, s := range []string{in.Left, in.Right} {
			for off := 0; off < len(s); off += 64 << 10 {
				if err := ctx.Err(); err != nil {
					return nil, err
				}
				for _, c := range []byte(s[off:min(off+64<<10, len(s))]) {
					h = (h ^ uint32(c)) * 16777619
				}
			}
		}
	}
	return json.Marshal(map[string]any{"equal": in.Left == in.Right, "hash": h})
}
