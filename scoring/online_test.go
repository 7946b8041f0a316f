package scoring

import (
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"
)

// synth is a call whose true latency follows a known law: base 200 µs,
// ×(payload)^0.5, ×(1+inflight), ×e^(0.8·cpu), with log-normal noise σ.
func synth(r *rand.Rand, sigma float64) (LatencyFeatures, time.Duration) {
	payload := int(math.Exp(r.Float64()*math.Log(100_000))) + 10
	inflight := r.IntN(32)
	cpu := r.Float64()
	x := MakeLatencyFeatures(0, cpu, payload, inflight, 2*time.Millisecond)
	us := 200 * math.Pow(float64(payload), 0.5) * float64(1+inflight) * math.Exp(0.8*cpu+sigma*r.NormFloat64())
	return x, time.Duration(us * float64(time.Microsecond))
}

func feed(m *OnlineLatency, r *rand.Rand, n int, sigma float64) {
	for range n {
		x, d := synth(r, sigma)
		if m.Observe(&x, d) {
			m.Refit()
		}
	}
}

// The fit recovers the law: predictions within 5% of the noise-free
// latency, and σ close to the noise's.
func TestOnlineLatencyRecoversLaw(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	m := NewOnlineLatency(OnlineLatencyConfig{RefitInterval: time.Nanosecond, RefitCostFactor: -1})
	feed(m, r, 2000, 0.1)
	for _, c := range []struct {
		payload, inflight int
		cpu               float64
	}{{100, 0, 0}, {10_000, 3, 0.5}, {90_000, 31, 1}} {
		x := MakeLatencyFeatures(0, c.cpu, c.payload, c.inflight, 2*time.Millisecond)
		got, sigma, ok := m.Predict(&x)
		want := 200 * math.Pow(float64(c.payload+1), 0.5) * float64(1+c.inflight) * math.Exp(0.8*c.cpu)
		// log1p(payload) ≈ log(payload): the law in the model's own terms.
		if !ok || math.Abs(float64(got)/float64(time.Microsecond)/want-1) > 0.05 {
			t.Errorf("%+v: predicted %v (ok %v), want %.0f µs", c, got, ok, want)
		}
		if sigma < 0.08 || sigma > 0.12 {
			t.Errorf("sigma %.3f, want ≈ 0.1", sigma)
		}
	}
	if m.Samples() != 2000 {
		t.Errorf("samples %d", m.Samples())
	}
}

// No prediction before MinSamples, nor for a runtime the window never had.
func TestOnlineLatencyNotReady(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	m := NewOnlineLatency(OnlineLatencyConfig{MinSamples: 50, RefitInterval: time.Nanosecond, RefitCostFactor: -1})
	x, _ := synth(r, 0)
	for i := range 49 {
		if _, _, ok := m.Predict(&x); ok {
			t.Fatalf("prediction after %d samples, MinSamples 50", i)
		}
		feed(m, r, 1, 0.1)
	}
	feed(m, r, 1, 0.1)
	if _, _, ok := m.Predict(&x); !ok {
		t.Fatal("no prediction after MinSamples")
	}
	other := MakeLatencyFeatures(1, 0, 100, 0, time.Millisecond)
	if d, _, ok := m.Predict(&other); ok {
		t.Fatalf("predicted %v for a runtime never observed", d)
	}
}

// The window makes the model follow a provider whose cost changes: after
// Window calls at 10× the cost, predictions are 10× too.
func TestOnlineLatencyFollowsChange(t *testing.T) {
	m := NewOnlineLatency(OnlineLatencyConfig{Window: 256, RefitEvery: 16, RefitInterval: time.Nanosecond, RefitCostFactor: -1})
	x := MakeLatencyFeatures(0, 0.1, 1000, 0, time.Millisecond)
	for range 300 {
		if m.Observe(&x, time.Millisecond) {
			m.Refit()
		}
	}
	for range 300 {
		if m.Observe(&x, 10*time.Millisecond) {
			m.Refit()
		}
	}
	if d, _, ok := m.Predict(&x); !ok || d < 9*time.Millisecond || d > 11*time.Millisecond {
		t.Fatalf("predicted %v (ok %v) after the change, want ≈ 10ms", d, ok)
	}
}

// Observe, Refit and Predict run concurrently (go test -race), and Observe
// hands out one refit at a time.
func TestOnlineLatencyConcurrent(t *testing.T) {
	m := NewOnlineLatency(OnlineLatencyConfig{RefitEvery: 8, Window: 128, MinSamples: 16, RefitInterval: time.Nanosecond, RefitCostFactor: -1})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(g), 9))
			for range 500 {
				x, d := synth(r, 0.2)
				if m.Observe(&x, d) {
					m.Refit()
				}
				if p, _, ok := m.Predict(&x); ok && (p <= 0 || math.IsNaN(float64(p))) {
					t.Errorf("prediction %v", p)
				}
			}
		})
	}
	wg.Wait()
	if m.Samples() != 4000 {
		t.Fatalf("samples %d, want 4000", m.Samples())
	}
}

// Observe never waits for the ring: while something holds it, an
// observation returns at once, dropped and counted, and the window and
// the refit schedule are as if it had not been made.
func TestOnlineLatencyObserveDropsWhenBusy(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	m := NewOnlineLatency(OnlineLatencyConfig{RefitInterval: time.Nanosecond, RefitCostFactor: -1})
	feed(m, r, 10, 0.1)
	m.mu.Lock() // what a preempted holder looks like to everyone else
	done := make(chan bool)
	go func() {
		x, d := synth(r, 0.1)
		done <- m.Observe(&x, d)
	}()
	refit := <-done // would deadlock here if Observe waited
	n := m.n
	m.mu.Unlock()
	if refit || n != 10 || m.Dropped() != 1 || m.Samples() != 11 {
		t.Fatalf("while busy: refit %v, ring %d, dropped %d, samples %d; want false, 10, 1, 11", refit, n, m.Dropped(), m.Samples())
	}
	feed(m, r, m.cfg.MinSamples-11, 0.1) // one short of the first fit: the dropped one did not count
	if _, _, ok := m.Predict(&x0); ok {
		t.Fatal("fitted before MinSamples recorded observations")
	}
	feed(m, r, 1, 0.1)
	if _, _, ok := m.Predict(&x0); !ok {
		t.Fatal("no fit after MinSamples recorded observations")
	}
	if m.Dropped() != 1 {
		t.Fatalf("dropped %d with nothing holding the ring", m.Dropped())
	}
}

var x0 = MakeLatencyFeatures(0, 0, 100, 0, 2*time.Millisecond)

// Predict allocates nothing (it runs on every call).
func TestOnlineLatencyPredictAllocs(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	m := NewOnlineLatency(OnlineLatencyConfig{RefitInterval: time.Nanosecond, RefitCostFactor: -1})
	feed(m, r, 100, 0.1)
	x, _ := synth(r, 0)
	if a := testing.AllocsPerRun(1000, func() { m.Predict(&x) }); a != 0 {
		t.Fatalf("Predict allocates %v times", a)
	}
}

// BenchmarkOnlineLatencyPredict is the hot-path cost: building the feature
// vector and predicting.
//
//	go test -run x -bench OnlineLatency -benchmem -count 5 ./scoring/
func BenchmarkOnlineLatencyPredict(b *testing.B) {
	r := rand.New(rand.NewPCG(7, 8))
	m := NewOnlineLatency(OnlineLatencyConfig{RefitInterval: time.Nanosecond, RefitCostFactor: -1})
	feed(m, r, 1024, 0.1)
	b.ReportAllocs()
	var sink time.Duration
	for i := 0; b.Loop(); i++ {
		x := MakeLatencyFeatures(0, 0.3, 100+i&1023, i&15, 2*time.Millisecond)
		d, _, _ := m.Predict(&x)
		sink += d
	}
	_ = sink
}

// BenchmarkOnlineLatencyRefit is one refit of a full window (the default
// 512 calls; in the background, every RefitEvery calls of a tool, spaced
// by RefitCostFactor × its cost).
func BenchmarkOnlineLatencyRefit(b *testing.B) {
	r := rand.New(rand.NewPCG(7, 8))
	m := NewOnlineLatency(OnlineLatencyConfig{RefitInterval: time.Nanosecond, RefitCostFactor: -1})
	feed(m, r, 1024, 0.1)
	b.ReportAllocs()
	for b.Loop() {
		m.refit.Store(true)
		m.Refit()
	}
}

// The fit is of the median: with one call in four 20× slower (a stall),
// predictions stay on the law the other three follow, where least squares
// in log space would be pulled up by a factor 20^¼ ≈ 2.1.
func TestOnlineLatencyMedianFit(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	m := NewOnlineLatency(OnlineLatencyConfig{RefitInterval: time.Nanosecond, RefitCostFactor: -1})
	for i := range 2000 {
		x, d := synth(r, 0.05)
		if i%4 == 0 {
			d *= 20
		}
		if m.Observe(&x, d) {
			m.Refit()
		}
	}
	x := MakeLatencyFeatures(0, 0.5, 10_000, 3, 2*time.Millisecond)
	got, _, ok := m.Predict(&x)
	want := 200 * math.Pow(10_001, 0.5) * 4 * math.Exp(0.4)
	if ratio := float64(got) / float64(time.Microsecond) / want; !ok || ratio < 0.85 || ratio > 1.15 {
		t.Fatalf("predicted %v, want ≈ %.0f µs (ratio %.2f)", got, want, ratio)
	}
}

// Refits are spaced by RefitCostFactor × the last one's cost: with a
// factor that makes a ~ms refit cost hours, one fit and no more.
func TestOnlineLatencyRefitCostSpacing(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	m := NewOnlineLatency(OnlineLatencyConfig{MinSamples: 8, RefitEvery: 4, RefitInterval: time.Nanosecond, RefitCostFactor: 1e12})
	due := 0
	for range 200 {
		x, d := synth(r, 0.1)
		if m.Observe(&x, d) {
			due++
			m.Refit()
		}
	}
	if due != 1 {
		t.Fatalf("%d refits, want 1 (the first fit; the cost factor spaces the rest)", due)
	}
	// The default factor lets a refit follow every RefitEvery calls once
	// the spacing has passed.
	m = NewOnlineLatency(OnlineLatencyConfig{MinSamples: 8, RefitEvery: 4, RefitInterval: time.Nanosecond})
	due = 0
	for range 200 {
		x, d := synth(r, 0.1)
		if m.Observe(&x, d) {
			due++
			t0 := time.Now()
			m.Refit()
			time.Sleep(60 * time.Since(t0)) // past the default 50 × its cost
		}
	}
	if due < 40 {
		t.Fatalf("%d refits over 200 calls with refits every 4, want most of 49", due)
	}
}

// After the first fit, refits wait for RefitInterval as well as RefitEvery.
func TestOnlineLatencyRefitInterval(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	m := NewOnlineLatency(OnlineLatencyConfig{MinSamples: 8, RefitEvery: 4, RefitInterval: time.Hour})
	due := 0
	for range 200 {
		x, d := synth(r, 0.1)
		if m.Observe(&x, d) {
			due++
			m.Refit()
		}
	}
	if due != 1 {
		t.Fatalf("%d refits due within an hour's interval, want the first only", due)
	}
}

// The self-check: a model that fits stays in use; one gone stale (the
// cost changed a hundredfold and no refit has followed) gives way to the
// call's p50 until a refit makes it better again.
func TestOnlineLatencySelfCheck(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 18))
	m := NewOnlineLatency(OnlineLatencyConfig{MinSamples: 64, RefitEvery: 1 << 30, RefitInterval: time.Hour})
	feed(m, r, 400, 0.1)
	if m.Fallback() {
		t.Fatal("the self-check fell back to the p50 with a model that fits (p50 feature fixed at 2 ms)")
	}
	// The same law, 1000× slower, and a p50 that knows it: the stale
	// model's predictions stay within a factor e of the latencies its
	// window saw.
	var p50 time.Duration
	{
		var ds []time.Duration
		for range 1001 {
			_, d := synth(r, 0.1)
			ds = append(ds, 1000*d)
		}
		slices.Sort(ds)
		p50 = ds[500]
	}
	slower := func() (LatencyFeatures, time.Duration) {
		x, d := synth(r, 0.1)
		x[FeatP50] = math.Log(float64(p50) / float64(time.Microsecond))
		return x, 1000 * d
	}
	for range 200 {
		x, d := slower()
		m.Observe(&x, d)
	}
	if !m.Fallback() {
		t.Fatal("the model, 1000× off, is still trusted over the p50")
	}
	x, _ := slower()
	d, sigma, ok := m.Predict(&x)
	if !ok || math.Abs(float64(d-p50)) > 0.01*float64(p50) || !math.IsInf(sigma, 1) {
		t.Fatalf("fallback Predict = %v, σ %v, ok %v; want the p50 %v with σ = +Inf", d, sigma, ok, p50)
	}
	// A refit on a window that holds the new law (the p50 feature tells
	// the regimes apart): the model, which knows the payload's and the
	// load's effect, beats the p50 again.
	m.Refit()
	for range 100 {
		x, d := slower()
		m.Observe(&x, d)
	}
	if m.Fallback() {
		t.Fatal("after a refit on the new law the self-check still falls back")
	}
}
