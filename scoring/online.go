package scoring

import (
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"gonum.org/v1/gonum/mat"
)

// The features of one call, as OnlineLatency takes them (the pipeline's
// latency predictor). Latencies are multiplicative — twice the payload of a
// quadratic handler costs four times, twice the callers on a busy core
// twice — so the model is linear in log space: log(latency) = β·x. Every
// feature is chosen so that its effect is roughly additive there.
const (
	// FeatRuntime0 … FeatRuntime0+NumRuntimes-1: the provider's runtime
	// type, one-hot. They are the model's intercepts (there is no separate
	// bias column), one per runtime, so an in-process Go handler and an
	// MCP server each get their own base cost.
	FeatRuntime0 = 0
	// FeatCPU: the fraction of the process's CPU capacity used over the
	// last ~100 ms (0 idle … 1 every core busy).
	FeatCPU = NumRuntimes + iota - 1
	// FeatPayload: log(1 + parameter bytes).
	FeatPayload
	// FeatInFlight: log(1 + calls the provider is running now).
	FeatInFlight
	// FeatP50: log of the tool's historical p50 on this provider, in µs.
	FeatP50
	// FeatPayloadInFlight: payload × in-flight (both as above).
	// Contention does not add a constant in log space: a call of a few µs
	// finishes inside one time slice however many wait, a call of 30 ms
	// shares the cores with all of them — its slowdown grows with its own
	// size — and behind a queue the wait matters less the larger the call
	// is itself. The product lets the load's effect vary with the payload.
	// (A run-queue length from the Go scheduler, and its product with the
	// payload, were tried as further load features: replaying recorded
	// traces they made predictions worse — noisier than the in-flight
	// count they duplicate — and were dropped.)
	FeatPayloadInFlight
	// FeatPayload2: log(1 + payload)²: cost is convex in log space — a
	// fixed overhead for small params, then the handler's own growth
	// (quadratic for TextRank) — which one slope cannot follow.
	FeatPayload2
	// NumLatencyFeatures is the length of LatencyFeatures.
	NumLatencyFeatures
)

// NumRuntimes is how many runtime types the one-hot block has room for
// (the pipeline's Runtime values 0…NumRuntimes-1).
const NumRuntimes = 3

// LatencyFeatures is one call's feature vector; MakeLatencyFeatures fills
// it. A fixed-size array so that building and scoring one allocates nothing.
type LatencyFeatures [NumLatencyFeatures]float64

// MakeLatencyFeatures builds the vector: runtime in [0, NumRuntimes) (out
// of range counts as the last), cpu as a fraction of capacity, the payload
// in bytes, the provider's in-flight calls, the tool's p50 (0: none yet).
func MakeLatencyFeatures(runtime int, cpu float64, payload, inflight int, p50 time.Duration) LatencyFeatures {
	var x LatencyFeatures
	if runtime < 0 || runtime >= NumRuntimes {
		runtime = NumRuntimes - 1
	}
	x[FeatRuntime0+runtime] = 1
	x[FeatCPU] = cpu
	x[FeatPayload] = math.Log1p(float64(max(payload, 0)))
	x[FeatInFlight] = math.Log1p(float64(max(inflight, 0)))
	if p50 > 0 {
		x[FeatP50] = math.Log(float64(p50) / float64(time.Microsecond))
	}
	x[FeatPayloadInFlight] = x[FeatPayload] * x[FeatInFlight]
	x[FeatPayload2] = x[FeatPayload] * x[FeatPayload]
	return x
}

func (x *LatencyFeatures) runtime() int {
	for r := range NumRuntimes {
		if x[FeatRuntime0+r] != 0 {
			return r
		}
	}
	return -1
}

// OnlineLatencyConfig sizes an OnlineLatency; zero fields take the defaults.
type OnlineLatencyConfig struct {
	// MinSamples: no prediction before this many observations (default
	// 32, at least 2 × NumLatencyFeatures).
	MinSamples int
	// Window: the fit uses the last Window observations (default 512), so
	// the model follows a provider whose cost changes. Replaying recorded
	// traces, 512 followed a load that changes every few seconds better
	// than 1024 or 2048 (one hyperplane in log space fits one load regime
	// better than several) and better than 256 (too noisy).
	Window int
	// RefitEvery: a refit is due after this many new observations
	// (default 16: fresher fits were the largest gain on recorded traces;
	// RefitCostFactor bounds what they cost).
	RefitEvery int
	// RefitInterval: and at least this long after the last one (default
	// 10 ms). Refits are further spaced to RefitCostFactor times what the
	// last one took, so a tool called thousands of times a second spends
	// at most 1/RefitCostFactor of a core refitting while a model still
	// follows a load that changes within a second (a fixed spacing of a
	// second would leave predictions seconds stale after a jump in
	// callers).
	RefitInterval time.Duration
	// RefitCostFactor: see RefitInterval (default 50: ≤ 2% of a core;
	// negative: refits are spaced by RefitInterval alone).
	RefitCostFactor float64
	// Ridge is added to the diagonal of XᵀX (default 1e-3): it keeps the
	// system solvable when a column is constant zero (a runtime never seen)
	// and is negligible against the other columns' n·x².
	Ridge float64
}

func (c OnlineLatencyConfig) withDefaults() OnlineLatencyConfig {
	if c.MinSamples <= 0 {
		c.MinSamples = 32
	}
	// Fewer calls than twice the features fit anything, noise included,
	// and say so with a σ near 0: no fit before that.
	c.MinSamples = max(c.MinSamples, 2*NumLatencyFeatures)
	if c.Window <= 0 {
		c.Window = 512
	}
	if c.Window < c.MinSamples {
		c.Window = c.MinSamples
	}
	if c.RefitEvery <= 0 {
		c.RefitEvery = 16
	}
	if c.Ridge <= 0 {
		c.Ridge = 1e-3
	}
	if c.RefitInterval <= 0 {
		c.RefitInterval = 10 * time.Millisecond
	}
	if c.RefitCostFactor == 0 {
		c.RefitCostFactor = 50
	}
	return c
}

// OnlineLatency is a linear regression of log latency on LatencyFeatures,
// refitted online over a bounded window: Observe appends to a ring and says
// when a refit is due; Refit (least squares with gonum, off the caller's
// path) publishes new coefficients; Predict reads them without a lock or an
// allocation. It is safe for concurrent use, and never makes a caller wait
// behind another: Observe runs on every finished call, and with many
// callers on few cores a lock they queue on would convoy them (a holder
// preempted mid-section parks every other caller behind it), so an
// observation that finds the ring busy is dropped instead. The window is a
// sample of recent calls either way; a dropped one is counted (Dropped).
type OnlineLatency struct {
	cfg OnlineLatencyConfig

	mu       sync.Mutex
	xs       []LatencyFeatures // ring of the last Window observations
	ys       []float64         // their log latency (µs)
	n        int               // observations in the ring
	next     int               // ring write position
	total    atomic.Uint64     // observations ever (recorded or dropped)
	dropped  atomic.Uint64     // observations dropped: the ring was busy
	sinceFit int
	lastFit  time.Time
	spacing  time.Duration // least time between refits: RefitInterval, or RefitCostFactor × the last refit's cost
	refit    atomic.Bool   // a Refit is due or running

	// The self-check: exponentially weighted mean absolute errors, on the
	// calls observed since the first fit, of the model (as fitted when
	// the call finished, on the calls before it) and of the call's own
	// p50 feature. While the model's is the larger, Predict answers the
	// p50: a fit gone wrong (a load regime the window never saw, a
	// feature that extrapolates) costs at most a short lag, never a run
	// of wild predictions.
	errModel, errBase float64
	compared          int
	fallback          atomic.Bool

	// Published coefficients: a sequence lock (odd while Refit writes) over
	// atomics, so Predict neither blocks nor races with a refit.
	seq   atomic.Uint64
	coef  [NumLatencyFeatures]atomic.Uint64 // float64 bits
	sigma atomic.Uint64                     // residual std. dev. in log space, float64 bits
	lo    atomic.Uint64                     // the window's least log latency, float64 bits
	hi    atomic.Uint64                     // and its greatest
	seen  atomic.Uint32                     // bit r: runtime r was in the fitted window
	ready atomic.Bool
}

// NewOnlineLatency returns an empty model.
func NewOnlineLatency(cfg OnlineLatencyConfig) *OnlineLatency {
	cfg = cfg.withDefaults()
	return &OnlineLatency{cfg: cfg, xs: make([]LatencyFeatures, cfg.Window), ys: make([]float64, cfg.Window),
		spacing: cfg.RefitInterval}
}

// logMicros is the regression target: log of d in µs (at least 1 µs).
func logMicros(d time.Duration) float64 {
	return math.Log(max(float64(d)/float64(time.Microsecond), 1))
}

// Observe records one finished call and reports whether a refit is now
// due; the caller then runs Refit (once: later Observe calls say false
// until that Refit has finished). It never blocks: when another Observe or
// a Refit's copy of the window holds the ring, it yields once (the holder
// is usually running on another core and done within that) and then drops
// the observation rather than wait.
func (m *OnlineLatency) Observe(x *LatencyFeatures, latency time.Duration) (refit bool) {
	model, modelOK := m.raw(x)
	m.total.Add(1)
	if !m.mu.TryLock() {
		runtime.Gosched()
		if !m.mu.TryLock() {
			m.dropped.Add(1)
			return false
		}
	}
	if modelOK && x[FeatP50] != 0 {
		actual := float64(latency) / float64(time.Microsecond)
		const a = 1.0 / selfCheckSpan
		m.errModel += a * (math.Abs(model-actual) - m.errModel)
		m.errBase += a * (math.Abs(math.Exp(x[FeatP50])-actual) - m.errBase)
		m.compared++
		m.fallback.Store(m.compared >= selfCheckSpan && m.errModel > m.errBase)
	}
	m.xs[m.next], m.ys[m.next] = *x, logMicros(latency)
	m.next = (m.next + 1) % len(m.xs)
	m.n = min(m.n+1, len(m.xs))
	m.sinceFit++
	due := m.n >= m.cfg.MinSamples && (!m.ready.Load() ||
		m.sinceFit >= m.cfg.RefitEvery && time.Since(m.lastFit) >= m.spacing)
	m.mu.Unlock()
	return due && m.refit.CompareAndSwap(false, true)
}

// Samples is the number of observations ever made, dropped ones included.
func (m *OnlineLatency) Samples() uint64 { return m.total.Load() }

// Dropped is how many of them Observe dropped because the ring was busy.
func (m *OnlineLatency) Dropped() uint64 { return m.dropped.Load() }

// Refit fits the window by ridge least squares — β = (XᵀX + λI)⁻¹ Xᵀy by
// a Cholesky factorisation (gonum) — and publishes β and the residual
// standard deviation. It allocates; it is meant for a background
// goroutine, after Observe said it is due.
func (m *OnlineLatency) Refit() {
	defer m.refit.Store(false)
	start := time.Now()
	defer func() {
		// In float, clamped: a large factor times a slow refit would overflow
		// the conversion to a Duration (negative on amd64: no spacing at all).
		cost := time.Duration(min(m.cfg.RefitCostFactor*float64(time.Since(start)), float64(math.MaxInt64/2)))
		m.mu.Lock()
		m.spacing = max(m.cfg.RefitInterval, cost)
		m.mu.Unlock()
	}()
	// The window is copied out under the lock (two memmoves, allocated
	// before it) and the matrix built outside, so Observe finds the ring
	// busy as briefly as possible.
	xs, ys := make([]LatencyFeatures, len(m.xs)), make([]float64, len(m.ys))
	m.mu.Lock()
	n := m.n
	if n < m.cfg.MinSamples {
		m.mu.Unlock()
		return
	}
	copy(xs, m.xs[:n])
	copy(ys, m.ys[:n])
	m.sinceFit = 0
	m.lastFit = time.Now()
	m.mu.Unlock()

	X := mat.NewDense(n, NumLatencyFeatures, nil)
	y := mat.NewVecDense(n, nil)
	var seen uint32
	lo, hi := math.Inf(1), math.Inf(-1)
	for i := range n {
		X.SetRow(i, xs[i][:])
		y.SetVec(i, ys[i])
		lo, hi = min(lo, ys[i]), max(hi, ys[i])
		if r := xs[i].runtime(); r >= 0 {
			seen |= 1 << r
		}
	}

	beta, ok := ridge(X, y, nil, m.cfg.Ridge)
	if !ok {
		return // not positive definite even with the ridge: keep the old fit
	}
	// Least absolute deviations by iteratively reweighted least squares:
	// the fit of the conditional median of log latency, which is the
	// median of latency — what minimises the absolute error, where
	// latencies' heavy tail would drag a least-squares fit up.
	var res mat.VecDense
	w := mat.NewVecDense(n, nil)
	for range ladIterations {
		res.MulVec(X, beta)
		res.SubVec(y, &res)
		for i := range n {
			w.SetVec(i, 1/max(math.Abs(res.AtVec(i)), ladFloor))
		}
		b, ok := ridge(X, y, w, m.cfg.Ridge)
		if !ok {
			break
		}
		beta = b
	}
	res.MulVec(X, beta)
	res.SubVec(y, &res)
	dof := max(n-NumLatencyFeatures, 1)
	sigma := math.Sqrt(mat.Dot(&res, &res) / float64(dof))

	m.seq.Add(1)
	for i := range NumLatencyFeatures {
		m.coef[i].Store(math.Float64bits(beta.AtVec(i)))
	}
	m.sigma.Store(math.Float64bits(sigma))
	m.lo.Store(math.Float64bits(lo))
	m.hi.Store(math.Float64bits(hi))
	m.seen.Store(seen)
	m.seq.Add(1)
	m.ready.Store(true)
}

// selfCheckSpan: the self-check's errors weigh about the last this many
// calls, and it decides nothing before it has compared that many.
const selfCheckSpan = 32

// IRLS for the median fit: iterations, and the least residual a weight is
// computed from (so a point on the line does not get an infinite weight).
const (
	ladIterations = 6
	ladFloor      = 0.05
)

// ridge solves (XᵀWX + λI)β = XᵀWy by Cholesky (w nil: W = I).
func ridge(X *mat.Dense, y, w *mat.VecDense, lambda float64) (*mat.VecDense, bool) {
	A, b := mat.Matrix(X), mat.Vector(y)
	if w != nil {
		n, _ := X.Dims()
		var xw mat.Dense
		xw.CloneFrom(X)
		yw := mat.NewVecDense(n, nil)
		for i := range n {
			s := math.Sqrt(w.AtVec(i))
			for j := range NumLatencyFeatures {
				xw.Set(i, j, xw.At(i, j)*s)
			}
			yw.SetVec(i, y.AtVec(i)*s)
		}
		A, b = &xw, yw
	}
	var xtx mat.SymDense
	xtx.SymOuterK(1, A.T())
	for i := range NumLatencyFeatures {
		xtx.SetSym(i, i, xtx.At(i, i)+lambda)
	}
	var xty mat.VecDense
	xty.MulVec(A.T(), b)
	var ch mat.Cholesky
	if !ch.Factorize(&xtx) {
		return nil, false
	}
	var beta mat.VecDense
	if err := ch.SolveVecTo(&beta, &xty); err != nil {
		return nil, false
	}
	return &beta, true
}

// Predict returns the predicted latency of a call with features x (the
// median of the fitted log-normal) and the residual standard deviation in
// log space (how far off a prediction typically is: a factor of e^σ); ok
// is false before the first fit and for a runtime the fitted window never
// had. While the self-check finds the model worse than the p50 on recent
// calls, it returns x's p50 feature with σ = +Inf (no confidence claimed:
// nothing is refused on it). It takes no lock and allocates nothing.
func (m *OnlineLatency) Predict(x *LatencyFeatures) (latency time.Duration, sigma float64, ok bool) {
	us, ok := m.raw(x)
	if !ok {
		return 0, 0, false
	}
	sigma = math.Float64frombits(m.sigma.Load())
	if m.fallback.Load() && x[FeatP50] != 0 {
		us, sigma = math.Exp(x[FeatP50]), math.Inf(1)
	}
	if math.IsNaN(us) || us > float64(math.MaxInt64/int64(time.Microsecond)) {
		return 0, 0, false
	}
	return time.Duration(us * float64(time.Microsecond)), sigma, true
}

// Fallback reports whether the self-check has Predict answering the p50.
func (m *OnlineLatency) Fallback() bool { return m.fallback.Load() }

// raw is the fitted model's prediction for x, in µs.
func (m *OnlineLatency) raw(x *LatencyFeatures) (us float64, ok bool) {
	if !m.ready.Load() {
		return 0, false
	}
	var z float64
	for {
		s := m.seq.Load()
		if s&1 == 1 {
			runtime.Gosched() // a refit is publishing: a few stores, momentary
			continue
		}
		if r := x.runtime(); r < 0 || m.seen.Load()&(1<<r) == 0 {
			return 0, false
		}
		z = 0
		for i := range NumLatencyFeatures {
			z += math.Float64frombits(m.coef[i].Load()) * x[i]
		}
		// Never further than a factor e outside what the window saw: the
		// products and the square extrapolate fast, and a prediction sets
		// budgets and refuses calls.
		z = min(max(z, math.Float64frombits(m.lo.Load())-1), math.Float64frombits(m.hi.Load())+1)
		if m.seq.Load() == s {
			break
		}
	}
	return math.Exp(z), true
}
