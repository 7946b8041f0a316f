package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airs-dev/airs/scoring"
)

// settle waits for background refits so the next prediction uses every
// call made so far.
func settle(e *env) { e.m.lat.refits.Wait() }

// trainHistory gives entry ent the history of calls that took d with
// inflight others running on its provider: its latency histogram (the p50
// rule's evidence, the p50 feature) and, with prediction on, its tool's
// latency model, as a finished call feeds them. Each refit is waited for, so
// no observation is dropped and the model is a function of the samples alone.
func trainHistory(e *env, ent *entry, inflight int, d time.Duration) {
	observeHistory(e, ent, inflight, len(`{}`), d)
}

// observeHistory is trainHistory for a call whose input (params and what
// the handler reads) is payload bytes.
func observeHistory(e *env, ent *entry, inflight, payload int, d time.Duration) {
	ent.stats.dispatched(false, d)
	if e.m.lat == nil {
		return
	}
	x := scoring.MakeLatencyFeatures(int(ent.prov.runtime.Load()), 0, payload, inflight, ent.stats.latency.p50())
	e.m.lat.observe(ent, &x, d)
	settle(e)
}

// A busy provider loses its place to an idle one: "a" runs one call at a
// time (2 ms each: a call waits for those before it, so k calls ahead of it
// make it take 2 ms × (k+1)), "b" takes 10 ms whatever the load. That
// history is given to the latency model directly (trainHistory), not timed,
// so what is ranked is the model's own state: idle, "a" is predicted faster
// and is tried first (as the p50 rule would also do); with 8 calls held on
// it, "b" is — which the p50 rule, blind to load, would not do. The
// decision is read from events (which handler the call entered), never
// from how long anything took.
func TestLatencyRankByPrediction(t *testing.T) {
	for _, off := range []bool{false, true} {
		e := newEnv(t, func(c *Config) {
			c.Latency = LatencyConfig{Off: off, MinSamples: 16, RefitEvery: 8, RefitInterval: time.Nanosecond, RefitCostFactor: -1}
		})
		hold := make(chan struct{})
		entered := make(chan struct{}, 16) // a call reached a's handler while held
		var holding atomic.Bool
		e.register(t, "a", tool("work"), HandlerFunc(func(context.Context, json.RawMessage, *Call) (json.RawMessage, error) {
			if holding.Load() {
				entered <- struct{}{}
				<-hold
			}
			return json.RawMessage(`{}`), nil
		}))
		e.register(t, "b", tool("work"), echo)
		ents := map[string]*entry{}
		for _, ent := range e.reg.candidates("work", "") {
			ents[ent.prov.id] = ent
		}
		const aCost, bCost = 2 * time.Millisecond, 10 * time.Millisecond
		// Each provider's history first: calls alone, so the p50 (and the
		// p50 feature) is its base cost throughout.
		for range 32 {
			trainHistory(e, ents["a"], 0, aCost)
			trainHistory(e, ents["b"], 0, bCost)
		}
		if pa, pb := ents["a"].stats.latency.p50(), ents["b"].stats.latency.p50(); pa >= pb {
			t.Fatalf("p50 a %v, b %v: a must be the faster on record", pa, pb)
		}
		// Then "a" at 1…8 concurrent callers, "b" one at a time.
		for range 3 {
			for _, conc := range []int{1, 2, 4, 8} {
				for k := range conc {
					trainHistory(e, ents["a"], k, time.Duration(k+1)*aCost)
				}
				trainHistory(e, ents["b"], 0, bCost)
			}
		}
		if !off {
			// The last fit over every sample, and no refit after it: the
			// real calls below (instant handlers) are too few to be due.
			e.m.lat.models["work"].model.Refit()
			if e.m.lat.models["work"].model.Fallback() {
				t.Fatal("the model fell back to the p50 on an exact history")
			}
		}
		call := func(prov string) *Result {
			r, err := e.m.Call(context.Background(), Request{Tool: "work", Provider: prov, Params: []byte(`{}`), Caller: "alice"})
			if err != nil {
				t.Error(err)
				return &Result{}
			}
			return r
		}
		if got := call("").Provider; got != "a" {
			t.Fatalf("off=%v: idle, the call went to %s, want a", off, got)
		}
		holding.Store(true)
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() { call("a") })
		}
		for range 8 {
			<-entered
		}
		if n := ents["a"].prov.inflight.Load(); n != 8 {
			t.Fatalf("a has %d calls in flight, want 8", n)
		}
		// Ranked now, while a is busy: it either answers from b at once or
		// reaches a's handler behind the 8.
		picked := make(chan string, 1)
		go func() { picked <- call("").Provider }()
		var got string
		select {
		case got = <-picked:
			close(hold)
		case <-entered:
			close(hold)
			got = <-picked
		}
		wg.Wait()
		want := "b"
		if off {
			want = "a" // p50 ranking: a is faster on record
		}
		if got != want {
			t.Errorf("off=%v: with 8 calls on a, the call went to %s, want %s", off, got, want)
		}
	}
}

// A call with no timeout gets its class budget, never less, and
// TimeoutFactor × the prediction when that is more; one with a timeout
// keeps it; with prediction off the class default stays. The model is
// given a history of 30 ms calls (trainHistory), and the budget is read
// from the handler's deadline less the time the test saw pass before
// dispatch, so a slow machine cannot move it out of its range.
func TestLatencyDefaultBudget(t *testing.T) {
	for _, c := range []struct {
		name     string
		cfg      LatencyConfig
		class    LatencyClass
		timeout  time.Duration
		min, max time.Duration // the budget's
	}{
		{"class, never less", LatencyConfig{MinSamples: 8}, Slow, 0, ClassTimeouts[Slow], ClassTimeouts[Slow]},
		{"fast class, never less", LatencyConfig{MinSamples: 8}, Fast, 0, ClassTimeouts[Fast], ClassTimeouts[Fast]},
		{"more when predicted", LatencyConfig{MinSamples: 8, TimeoutFactor: 1000}, Fast, 0, 20 * time.Second, MaxTimeout},
		{"caller's timeout", LatencyConfig{MinSamples: 8}, Slow, 7 * time.Second, 7 * time.Second, 7 * time.Second},
		{"off", LatencyConfig{Off: true, MinSamples: 8}, Slow, 0, ClassTimeouts[Slow], ClassTimeouts[Slow]},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, func(cfg *Config) { cfg.Latency = c.cfg })
			var left, spent time.Duration
			var t0 time.Time
			tl := tool("w")
			tl.LatencyClass = c.class
			e.register(t, "p", tl, HandlerFunc(func(ctx context.Context, _ json.RawMessage, _ *Call) (json.RawMessage, error) {
				dl, _ := ctx.Deadline()
				left, spent = time.Until(dl), time.Since(t0)
				return json.RawMessage(`{}`), nil
			}))
			ent := e.reg.candidates("w", "")[0]
			for range 2*scoring.NumLatencyFeatures + 8 {
				trainHistory(e, ent, 0, 30*time.Millisecond)
			}
			if e.m.lat != nil {
				e.m.lat.models["w"].model.Refit()
			}
			t0 = time.Now()
			r, err := e.m.Call(context.Background(), Request{Tool: "w", Params: []byte(`{}`), Caller: "alice", Timeout: c.timeout})
			if err != nil {
				t.Fatal(err)
			}
			if left > c.max || left < c.min-spent {
				t.Errorf("budget left at dispatch %v, %v after the call began: want a budget in [%v, %v] (predicted %v)", left, spent, c.min, c.max, r.Predicted)
			}
		})
	}
}

// WouldTimeout answers only when the model is sure: not before
// WouldTimeoutMinSamples, not for a budget the call may still meet, not
// when turned off — those calls run (and time out, if they must). The
// model is given a history of 60 ms calls (trainHistory), so what is
// judged is its own state, not how fast this machine runs a sleep; the
// handler answers at once, or waits for its context to end.
func TestLatencyWouldTimeoutOnlyWhenSure(t *testing.T) {
	const took = 60 * time.Millisecond
	hang := HandlerFunc(func(ctx context.Context, _ json.RawMessage, _ *Call) (json.RawMessage, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	})
	trained := func(cfg LatencyConfig, h Handler) *env {
		e := newEnv(t, func(c *Config) { c.Latency = cfg })
		e.register(t, "p", tool("slow"), h)
		ent := e.reg.candidates("slow", "")[0]
		for range max(cfg.MinSamples, 2*scoring.NumLatencyFeatures) + 8 {
			trainHistory(e, ent, 0, took)
		}
		e.m.lat.models["slow"].model.Refit()
		x := scoring.MakeLatencyFeatures(0, 0, len(`{}`), 0, ent.stats.latency.p50())
		if d, _, _, ok := e.m.lat.predict(ent, &x); !ok || d < took/2 {
			t.Fatalf("after its history the model predicts %v (ok %v), want about %v", d, ok, took)
		}
		return e
	}
	callWith := func(e *env, timeout time.Duration) error {
		_, err := e.m.Call(context.Background(), Request{Tool: "slow", Params: []byte(`{}`), Caller: "alice", Timeout: timeout})
		return err
	}
	t.Run("enough room", func(t *testing.T) {
		e := trained(LatencyConfig{MinSamples: 8, WouldTimeoutMinSamples: 8}, echo)
		if err := callWith(e, 10*took); err != nil {
			t.Fatalf("a call with 10x the time it needs: %v", err)
		}
		if err := callWith(e, took/6); !errors.Is(err, ErrWouldTimeout) {
			t.Fatalf("a call with a sixth of the time: %v, want would_timeout", err)
		}
		if st := e.m.WouldTimeoutStats(); st.Refused != 1 || st.Judged != 1 {
			t.Fatalf("advisory stats %+v: want 1 refused, the one dispatched call judged", st)
		}
	})
	t.Run("too few samples", func(t *testing.T) {
		e := trained(LatencyConfig{MinSamples: 8, WouldTimeoutMinSamples: 1000}, hang)
		if err := callWith(e, 2*time.Millisecond); !errors.Is(err, ErrTimeout) {
			t.Fatalf("%v, want timeout (dispatched: the advisory waits for 1000 samples)", err)
		}
	})
	t.Run("off", func(t *testing.T) {
		e := trained(LatencyConfig{MinSamples: 8, WouldTimeoutMinSamples: 8, NoWouldTimeout: true}, hang)
		if err := callWith(e, 2*time.Millisecond); !errors.Is(err, ErrTimeout) {
			t.Fatalf("%v, want timeout (NoWouldTimeout)", err)
		}
	})
}

// Only calls whose handler answered train the model: a timeout's handler
// time is censored. The provider's in-flight count is back to 0 after.
func TestLatencyObservesAnsweredCalls(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.Latency = LatencyConfig{MinSamples: 1000} })
	e.register(t, "p", tool("w"), HandlerFunc(func(ctx context.Context, p json.RawMessage, _ *Call) (json.RawMessage, error) {
		if string(p) == `{"hang":true}` {
			<-ctx.Done()
			return nil, ctx.Err()
		}
		return json.RawMessage(`{}`), nil
	}))
	for range 5 {
		if _, err := e.call("w", `{}`); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.m.Call(context.Background(), Request{Tool: "w", Params: []byte(`{"hang":true}`), Caller: "alice", Timeout: 5 * time.Millisecond}); !errors.Is(err, ErrTimeout) {
		t.Fatal(err)
	}
	// The first call has no p50 yet (no features): 4 samples.
	tl := e.m.lat.models["w"]
	if n := tl.samples.Load(); n != 4 {
		t.Errorf("samples %d, want 4 (5 answered calls less the first; the timeout not)", n)
	}
	// The timed-out handler's goroutine returns just after its call did.
	for i := 0; e.reg.providers["p"].inflight.Load() != 0; i++ {
		if i == 1000 {
			t.Fatalf("in flight %d after every handler returned", e.reg.providers["p"].inflight.Load())
		}
		time.Sleep(time.Millisecond)
	}
}

// The CPU sampler sees this process's load: higher with two goroutines
// spinning than asleep, and always within [0, 1].
func TestCPUSampler(t *testing.T) {
	if _, ok := processCPU(); !ok {
		t.Skip("no getrusage on this platform")
	}
	var s cpuSampler
	s.epoch = time.Now()
	measure := func(busy bool) float64 {
		stop := make(chan struct{})
		var wg sync.WaitGroup
		if busy {
			for range 2 {
				wg.Go(func() {
					for {
						select {
						case <-stop:
							return
						default:
						}
					}
				})
			}
		}
		s.load(time.Now())
		time.Sleep(150 * time.Millisecond)
		v := s.load(time.Now()) // over the 150 ms since the sample before
		close(stop)
		wg.Wait()
		return v
	}
	idle, busy := measure(false), measure(true)
	if idle < 0 || busy > 1 || busy <= idle || busy < 0.05 {
		t.Fatalf("load idle %.3f, busy %.3f", idle, busy)
	}
	t.Logf("load idle %.3f, busy %.3f", idle, busy)
}

// BenchmarkLatencyPredict is the prediction's cost on a call's path, as
// lookup and dispatch pay it: the features (the entry's p50, the CPU
// sampler, in-flight, runtime) and the model's prediction.
//
//	go test -run x -bench LatencyPredict -benchmem -count 5 ./pipeline/
func BenchmarkLatencyPredict(b *testing.B) {
	reg := NewRegistry(RegistryConfig{})
	if err := reg.Register("p", tool("w"), echo); err != nil {
		b.Fatal(err)
	}
	m, err := NewManager(Config{Registry: reg, Latency: LatencyConfig{MinSamples: 8}})
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	for range 64 {
		if _, err := m.Call(context.Background(), Request{Tool: "w", Params: []byte(`{}`), Caller: "a"}); err != nil {
			b.Fatal(err)
		}
	}
	m.lat.refits.Wait()
	e := reg.candidates("w", "")[0]
	b.ReportAllocs()
	b.ResetTimer()
	var sink time.Duration
	for b.Loop() {
		x, ok := m.lat.features(e, 1000, time.Now())
		d, _, _, ok2 := m.lat.predict(e, &x)
		if !ok || !ok2 {
			b.Fatal("no prediction")
		}
		sink += d
	}
	_ = sink
}

// BenchmarkCallLatency is one caller's no-op call through the seven stages
// (no audit) with latency prediction on and off: what prediction adds to
// a call.
//
//	go test -run x -bench CallLatency -count 5 ./pipeline/
func BenchmarkCallLatency(b *testing.B) {
	for _, off := range []bool{false, true} {
		b.Run(map[bool]string{false: "prediction=on", true: "prediction=off"}[off], func(b *testing.B) {
			reg := NewRegistry(RegistryConfig{})
			if err := reg.Register("p", tool("w"), echo); err != nil {
				b.Fatal(err)
			}
			m, err := NewManager(Config{Registry: reg, Latency: LatencyConfig{Off: off}})
			if err != nil {
				b.Fatal(err)
			}
			defer m.Close()
			req := Request{Tool: "w", Params: []byte(`{}`), Caller: "a"}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := m.Call(context.Background(), req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// The cached p50 feature follows the tool's histogram (re-read every
// p50Every calls): after the handler becomes 20× slower for most calls,
// the feature says so.
func TestLatencyP50FeatureRefreshed(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.Latency = LatencyConfig{MinSamples: 1000} })
	var d atomic.Int64
	d.Store(int64(time.Millisecond))
	e.register(t, "p", tool("w"), HandlerFunc(func(context.Context, json.RawMessage, *Call) (json.RawMessage, error) {
		time.Sleep(time.Duration(d.Load()))
		return json.RawMessage(`{}`), nil
	}))
	for i := range 60 {
		if i == 20 {
			d.Store(int64(20 * time.Millisecond))
		}
		if _, err := e.call("w", `{}`); err != nil {
			t.Fatal(err)
		}
	}
	if p50 := time.Duration(e.reg.candidates("w", "")[0].latP50.Load()); p50 < 16*time.Millisecond {
		t.Fatalf("p50 feature %v after 40 of 60 calls took 20ms", p50)
	}
}

// sizedHandler says it reads n KiB, n named by its params, as a
// file-reading tool's InputSize would say.
type sizedHandler struct{}

func (sizedHandler) InputSize(p json.RawMessage) int64 {
	var v struct{ N int64 }
	json.Unmarshal(p, &v)
	return v.N << 10
}

func (sizedHandler) Invoke(context.Context, json.RawMessage, *Call) (json.RawMessage, error) {
	return json.RawMessage(`{}`), nil
}

// The input a handler reads (InputSizer) is a feature: with params of the
// same size, a call on 1 MiB is predicted far slower than one on 1 KiB.
// The model is given a history in which a call's time grows with what it
// reads (1 ms + 40 µs a KiB); the prediction must see the size through
// the handler's InputSize, since the params alone are alike.
func TestLatencyInputSize(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.Latency = LatencyConfig{MinSamples: 16} })
	e.register(t, "p", tool("read"), sizedHandler{})
	ent := e.reg.candidates("read", "")[0]
	sizes := []int{1, 1024, 4, 256, 16, 64, 1024, 1, 512, 2}
	for i := range 48 {
		n := sizes[i%len(sizes)]
		params := fmt.Sprintf(`{"n":%d}`, n)
		payload := len(params) + int(sizedHandler{}.InputSize(json.RawMessage(params)))
		observeHistory(e, ent, 0, payload, time.Millisecond+time.Duration(n)*40*time.Microsecond)
	}
	e.m.lat.models["read"].model.Refit()
	predicted := func(n int) time.Duration {
		r, err := e.m.Call(context.Background(), Request{Tool: "read", Params: []byte(fmt.Sprintf(`{"n":%d}`, n)), Caller: "alice"})
		if err != nil {
			t.Fatal(err)
		}
		return r.Predicted
	}
	small, large := predicted(1), predicted(1024)
	if small <= 0 || large < 5*small {
		t.Fatalf("predicted %v for 1 KiB and %v for 1 MiB: the input size is not in the model", small, large)
	}
}

// The advisory is measured on every call it could judge: with handler
// times spread log-normally (σ 0.5 around 4 ms), the share of calls that
// finished faster than the lower bound it would refuse on stays small.
func TestLatencyWouldTimeoutMeasured(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.Latency = LatencyConfig{MinSamples: 16, WouldTimeoutMinSamples: 32} })
	var n atomic.Int64
	e.register(t, "p", tool("spread"), HandlerFunc(func(ctx context.Context, _ json.RawMessage, _ *Call) (json.RawMessage, error) {
		i := n.Add(1)
		z := float64(int64(i*7919)%2001-1000) / 1000 * 1.5 // spread over ±1.5σ, deterministic
		time.Sleep(time.Duration(4e6 * math.Exp(0.5*z)))
		return json.RawMessage(`{}`), nil
	}))
	call := func() {
		if _, err := e.call("spread", `{}`); err != nil {
			t.Fatal(err)
		}
	}
	// Until the model is fitted and has seen enough calls to judge (the
	// fits run beside the calls, so how many calls that takes depends on
	// the machine), nothing is judged; from then on every call is.
	for i := 0; e.m.WouldTimeoutStats().Judged == 0; i++ {
		if i == 2000 {
			t.Fatalf("no call judged after %d calls: %+v", i, e.m.WouldTimeoutStats())
		}
		call()
		settle(e)
	}
	before := e.m.WouldTimeoutStats()
	const calls = 250
	for range calls {
		call()
	}
	st := e.m.WouldTimeoutStats()
	judged, wrong := st.Judged-before.Judged, st.Wrong-before.Wrong
	t.Logf("advisory: %d of %d calls judged, %d faster than its lower bound, %d refused", judged, calls, wrong, st.Refused)
	if judged < calls*9/10 || st.Refused != 0 || float64(wrong) > 0.01*float64(judged) {
		t.Fatalf("advisory %+v (since it began judging: %d judged, %d wrong): want ≥ 90%% of %d judged, none refused (no timeouts given), at most 1%% wrong", st, judged, wrong, calls)
	}
}
