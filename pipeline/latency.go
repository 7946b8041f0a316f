package pipeline

import (
	"encoding/json"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/airs-dev/airs/scoring"
)

// Runtime is how a provider runs its tools: one of the latency model's
// features (a Go handler in this process costs no hop; an MCP server pays
// one per call). Registry.SetRuntime sets it; RuntimeInProcess is the
// default.
type Runtime int

const (
	RuntimeInProcess Runtime = iota // a Go handler in this process (built-ins, manifests)
	RuntimeMCP                      // an outside MCP server (package mcp/client)
	RuntimeExternal                 // any other out-of-process provider
)

// SetRuntime records how provider id runs its tools (for latency
// prediction).
func (r *Registry) SetRuntime(id string, rt Runtime) {
	r.mu.Lock()
	defer r.mu.Unlock()
	p := r.providers[id]
	if p == nil {
		p = &provider{id: id}
		r.providers[id] = p
	}
	p.runtime.Store(int32(rt))
}

// LatencyConfig configures latency prediction: a regression of
// handler time on the provider's CPU load, the input size (the params'
// bytes plus what the handler says it will read, InputSizer: a named
// file's size), the provider's in-flight calls, the tool's p50 and the
// provider's runtime, per tool name, refitted in the background as calls
// finish (scoring.OnlineLatency). Once a tool has MinSamples calls it is
// used three ways: among providers of the tool the one predicted fastest
// is tried first (after the explicit provider and trust; health and
// breaker still decide who may serve); a call with no timeout gets its
// class budget, or TimeoutFactor × the prediction when that is more (a
// large input gets the time it needs; a prediction never shortens a
// budget); and a call whose remaining budget is surely too short is
// answered WouldTimeout before it is dispatched (WouldTimeoutStats counts
// how often, and how often the model's "surely" was wrong). The zero
// value turns it on with the defaults.
type LatencyConfig struct {
	// Off disables prediction: ranking, budgets and dispatch are as
	// without it.
	Off bool
	// MinSamples: a tool's predictions are used once this many of its
	// calls finished (default 32).
	MinSamples int
	// Window: the fit uses a tool's last Window calls (default 512).
	Window int
	// RefitEvery: a tool's model is refitted, in the background, after
	// this many new calls (default 16) and RefitInterval (default 10 ms,
	// stretched to 50× the last refit's cost: ≤ 2% of a core) since its
	// last refit.
	RefitEvery      int
	RefitInterval   time.Duration
	RefitCostFactor float64
	// TimeoutFactor × predicted is a call's default budget when that is
	// more than its class budget (default 3), at most MaxTimeout.
	TimeoutFactor float64
	// NoWouldTimeout turns the WouldTimeout advisory off: such calls are
	// dispatched and time out as before.
	NoWouldTimeout bool
	// WouldTimeoutSigmas is the advisory's margin: a call is refused only
	// when even the prediction divided by e^(k·σ), σ the model's residual
	// spread, exceeds what is left of the budget (default 3: were the
	// model's log-normal errors exact, one call in ~740 that would have
	// finished in time is refused).
	WouldTimeoutSigmas float64
	// WouldTimeoutMinSamples: the advisory waits for more evidence than
	// the other uses (default 128 calls of the tool).
	WouldTimeoutMinSamples int
}

func (c LatencyConfig) withDefaults() LatencyConfig {
	if c.MinSamples <= 0 {
		c.MinSamples = 32
	}
	if c.Window <= 0 {
		c.Window = 512
	}
	if c.TimeoutFactor <= 0 {
		c.TimeoutFactor = 3
	}
	if c.WouldTimeoutSigmas <= 0 {
		c.WouldTimeoutSigmas = 3
	}
	if c.WouldTimeoutMinSamples <= 0 {
		c.WouldTimeoutMinSamples = 128
	}
	c.WouldTimeoutMinSamples = max(c.WouldTimeoutMinSamples, c.MinSamples)
	return c
}

// latencyPredictor holds one model per tool name (shared by the tool's
// providers and versions: the runtime, in-flight and p50 features tell
// them apart) and the CPU sampler.
type latencyPredictor struct {
	cfg LatencyConfig

	mu     sync.Mutex
	models map[string]*toolLatency

	cpu    cpuSampler
	refits sync.WaitGroup // background refits, waited for by Close

	// The WouldTimeout advisory's record (WouldTimeoutStats).
	judged, refused, wrong atomic.Int64
}

// InputSizer is implemented by a Handler that reads more than its params
// (a file named by path): InputSize is how many bytes the call with these
// params will read, 0 when unknown. The latency model adds it to the
// params' size, so a call on a large file is predicted as one.
type InputSizer interface {
	InputSize(params json.RawMessage) int64
}

// inputSize is the call's input size for the latency model.
func inputSize(cs *callState) int {
	n := len(cs.params.json)
	if s, ok := cs.entry.handler.(InputSizer); ok {
		n += int(min(max(s.InputSize(cs.params.json), 0), 1<<40))
	}
	return n
}

// WouldTimeoutStats measure the WouldTimeout advisory. Judged counts the
// answered calls for which the model was sure enough to judge (the tool
// past WouldTimeoutMinSamples); Wrong counts those of them that took less
// than the advisory's lower bound (predicted / e^(k·σ)): a call with a
// budget between the two would have been refused though it would have
// finished in time. Refused counts the calls answered WouldTimeout.
type WouldTimeoutStats struct {
	Judged, Wrong, Refused int64
}

// WouldTimeoutStats is the advisory's record since the Manager started.
func (m *Manager) WouldTimeoutStats() WouldTimeoutStats {
	if m.lat == nil {
		return WouldTimeoutStats{}
	}
	return WouldTimeoutStats{Judged: m.lat.judged.Load(), Wrong: m.lat.wrong.Load(), Refused: m.lat.refused.Load()}
}

// toolLatency is one tool's model and how many of its calls it has seen.
type toolLatency struct {
	model   *scoring.OnlineLatency
	samples atomic.Int64
}

// p50Every: an entry's p50 feature is re-read from its histogram every
// this many of its calls (a snapshot of 32 counters is most of a
// prediction's cost, and a median moves slowly).
const p50Every = 16

func newLatencyPredictor(cfg LatencyConfig) *latencyPredictor {
	if cfg.Off {
		return nil
	}
	p := &latencyPredictor{cfg: cfg.withDefaults(), models: map[string]*toolLatency{}}
	p.cpu.epoch = time.Now()
	return p
}

// modelFor returns the tool's model, cached in the entry after the first
// look-up so the hot path takes no lock.
func (p *latencyPredictor) modelFor(e *entry) *toolLatency {
	if t := e.lat.Load(); t != nil {
		return t
	}
	p.mu.Lock()
	t := p.models[e.tool.Name]
	if t == nil {
		t = &toolLatency{model: scoring.NewOnlineLatency(scoring.OnlineLatencyConfig{
			MinSamples: p.cfg.MinSamples, Window: p.cfg.Window, RefitEvery: p.cfg.RefitEvery,
			RefitInterval: p.cfg.RefitInterval, RefitCostFactor: p.cfg.RefitCostFactor})}
		p.models[e.tool.Name] = t
	}
	p.mu.Unlock()
	e.lat.Store(t)
	return t
}

// features builds the call's feature vector; false while the entry has no
// history (no p50 yet: nothing to scale from).
func (p *latencyPredictor) features(e *entry, payload int, now time.Time) (scoring.LatencyFeatures, bool) {
	p50 := time.Duration(e.latP50.Load())
	if p50 == 0 {
		if p50 = e.stats.latency.p50(); p50 == 0 {
			return scoring.LatencyFeatures{}, false
		}
		e.latP50.Store(int64(p50))
	}
	return scoring.MakeLatencyFeatures(int(e.prov.runtime.Load()), p.cpu.load(now), payload,
		int(e.prov.inflight.Load()), p50), true
}

// predict is the predicted handler time of a call of e with features x,
// and the model's spread σ; ok only once the tool has MinSamples finished
// calls. samples is how many.
func (p *latencyPredictor) predict(e *entry, x *scoring.LatencyFeatures) (d time.Duration, sigma float64, samples int64, ok bool) {
	t := p.modelFor(e)
	samples = t.samples.Load()
	if samples < int64(p.cfg.MinSamples) {
		return 0, 0, samples, false
	}
	d, sigma, ok = t.model.Predict(x)
	return d, sigma, samples, ok
}

// observe feeds a finished call back; a due refit runs in the background.
func (p *latencyPredictor) observe(e *entry, x *scoring.LatencyFeatures, handler time.Duration) {
	t := p.modelFor(e)
	if t.samples.Add(1)%p50Every == 0 {
		e.latP50.Store(int64(e.stats.latency.p50()))
	}
	if t.model.Observe(x, handler) {
		p.refits.Add(1)
		go func() {
			defer p.refits.Done()
			t.model.Refit()
		}()
	}
}

// budget is the default budget for a call with no timeout of its own:
// its class budget, or TimeoutFactor × predicted when that is more, at
// most MaxTimeout. A prediction never shortens a budget: a model fitted
// on small inputs, or on an idle machine, must not time out a large call
// on a busy one.
func (p *latencyPredictor) budget(predicted, class time.Duration) time.Duration {
	b := time.Duration(p.cfg.TimeoutFactor * float64(predicted))
	return min(max(b, class), max(class, MaxTimeout))
}

// wouldTimeout reports whether the call is surely too slow for what is
// left of its budget: even the prediction's lower bound (predicted /
// e^(k·σ)) exceeds it.
func (p *latencyPredictor) wouldTimeout(predicted time.Duration, sigma float64, samples int64, remaining time.Duration) (atLeast time.Duration, refuse bool) {
	if p.cfg.NoWouldTimeout || samples < int64(p.cfg.WouldTimeoutMinSamples) {
		return 0, false
	}
	atLeast = time.Duration(float64(predicted) * math.Exp(-p.cfg.WouldTimeoutSigmas*sigma))
	return atLeast, atLeast > remaining
}

// cpuSampler measures the process's CPU load over the last ~100 ms:
// process-wide, from getrusage, because the providers it matters for are
// goroutines of this process and Go attributes no CPU time to a goroutine;
// whatever else runs here (other tools, the selector, the server)
// contends with them for the same cores. Samples are taken by calls
// themselves, at most one per 10 ms (the first caller past the interval
// takes it; the others read the last value), so an idle process costs
// nothing and a busy one one system call per 10 ms. After an idle spell
// the first reading spans the whole spell, which is as idle as the last
// 100 ms were.
type cpuSampler struct {
	epoch  time.Time    // monotonic base of the sample times
	lastNs atomic.Int64 // when the newest sample was taken (ns since epoch)
	value  atomic.Uint64

	mu   sync.Mutex // held by the caller taking a sample
	ring [16]cpuSample
	head int // next slot
	n    int
}

type cpuSample struct {
	at, cpu time.Duration
}

const (
	cpuInterval = 10 * time.Millisecond
	cpuWindow   = 100 * time.Millisecond
)

// load is the fraction of GOMAXPROCS cores the process kept busy over the
// last ~100 ms (0 where the platform has no getrusage).
func (s *cpuSampler) load(now time.Time) float64 {
	at := now.Sub(s.epoch)
	if at-time.Duration(s.lastNs.Load()) >= cpuInterval && s.mu.TryLock() {
		if cpu, ok := processCPU(); ok {
			procs := float64(runtime.GOMAXPROCS(0))
			s.ring[s.head] = cpuSample{at, cpu}
			s.head = (s.head + 1) % len(s.ring)
			s.n = min(s.n+1, len(s.ring))
			// The newest sample at least cpuWindow older than this one, or
			// the oldest there is.
			old := s.ring[(s.head-s.n+len(s.ring))%len(s.ring)]
			for i := 1; i <= s.n; i++ {
				c := s.ring[(s.head-i+len(s.ring))%len(s.ring)]
				if i > 1 && at-c.at >= cpuWindow {
					old = c
					break
				}
			}
			if dt := at - old.at; dt > 0 {
				v := float64(cpu-old.cpu) / float64(dt) / procs
				s.value.Store(math.Float64bits(min(max(v, 0), 1)))
			}
		}
		s.lastNs.Store(int64(at))
		s.mu.Unlock()
	}
	return math.Float64frombits(s.value.Load())
}

// latencyState is what a call carries for the latency model: the features
// at dispatch (the training sample once it finishes) and the prediction.
type latencyState struct {
	x         scoring.LatencyFeatures
	hasX      bool
	at        time.Time // dispatch: what is predicted is the time from here to the answer
	predicted time.Duration
	sigma     float64 // the prediction's spread
	samples   int64   // the tool's calls behind it
}

// predictedBudget is the budget for a call that gave no timeout: class,
// or more once the tool has enough history and the prediction asks for it
// (budget).
func (m *Manager) predictedBudget(cs *callState, class time.Duration) time.Duration {
	if m.lat == nil {
		return class
	}
	x, ok := m.lat.features(cs.entry, inputSize(cs), time.Now())
	if !ok {
		return class
	}
	d, _, _, ok := m.lat.predict(cs.entry, &x)
	if !ok {
		return class
	}
	return m.lat.budget(d, class)
}

// predictDispatch runs just before stage 6: it takes the call's features
// (now, as the handler will meet them), predicts, and answers WouldTimeout
// when the model is sure the rest of the budget cannot be enough.
func (m *Manager) predictDispatch(cs *callState, deadline time.Time) error {
	if m.lat == nil {
		return nil
	}
	now := time.Now()
	x, ok := m.lat.features(cs.entry, inputSize(cs), now)
	if !ok {
		return nil
	}
	cs.lat.x, cs.lat.hasX, cs.lat.at = x, true, now
	d, sigma, n, ok := m.lat.predict(cs.entry, &cs.lat.x)
	if !ok {
		return nil
	}
	cs.lat.predicted, cs.lat.sigma, cs.lat.samples = d, sigma, n
	remaining := deadline.Sub(now)
	if atLeast, refuse := m.lat.wouldTimeout(d, sigma, n, remaining); refuse {
		m.lat.refused.Add(1)
		return &WouldTimeout{Tool: cs.entry.tool.Name, Provider: cs.entry.prov.id,
			Predicted: d, AtLeast: atLeast, Remaining: remaining, Budget: cs.budget}
	}
	return nil
}

// observeLatency feeds a dispatched call back into the model once it is
// answered (the end of stage 7): the time from dispatch to the answer —
// the handler, the wait for a core before and after it, the delivery — is
// what a budget must cover, so it is what is predicted. Only calls whose
// handler answered by itself count: a timeout's or a cancellation's time
// says only that it would have taken longer, and a crash's says nothing.
func (m *Manager) observeLatency(cs *callState, res *Result) {
	res.Predicted = cs.lat.predicted
	if m.lat == nil || !cs.reached || !cs.lat.hasX || cs.failed || res.Outcome == OutcomeCancelled || res.Outcome == OutcomeTimeout {
		return
	}
	took := time.Since(cs.lat.at)
	if cs.lat.predicted > 0 {
		// Measure the advisory on every call it could have judged: would
		// its lower bound have called this call too slow for a budget it
		// in fact met?
		if atLeast, _ := m.lat.wouldTimeout(cs.lat.predicted, cs.lat.sigma, cs.lat.samples, 0); atLeast > 0 {
			m.lat.judged.Add(1)
			if took < atLeast {
				m.lat.wrong.Add(1)
			}
		}
	}
	m.lat.observe(cs.entry, &cs.lat.x, took)
}
