package pipeline

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/airs-dev/airs/pipeline/audit"
)

// MaxTimeout is the system maximum for a caller's timeout: 600 s.
// A caller asking for more (or for nothing) gets the latency-class default.
const MaxTimeout = 600 * time.Second

// ClassTimeouts are the latency-class default budgets.
var ClassTimeouts = [...]time.Duration{
	Instant:     100 * time.Millisecond,
	Fast:        5 * time.Second,
	Slow:        60 * time.Second,
	LongRunning: 300 * time.Second,
}

// DefaultStragglerGrace is Config.StragglerGrace's default.
const DefaultStragglerGrace = 500 * time.Millisecond

// AuditSink receives one record per call and returns once it is durable.
// *audit.Log is the implementation; tests may use others.
type AuditSink interface {
	Append(*audit.Record) error
}

// Config configures a Manager. Only Registry is required.
type Config struct {
	Registry *Registry

	// Audit gets a record for every call, before its result is delivered.
	// nil disables auditing (tests, dry runs) — `airs` always sets it.
	Audit AuditSink
	// Policy answers capability levels 1 and 3; nil means AllowAll.
	Policy AccessPolicy
	// Intent is capability level 2's judge of a call against the user's
	// words; nil skips it.
	Intent IntentVerifier
	// Observer watches each call's stages (tracing: observe.go); nil: none.
	Observer CallObserver

	// Gate is level 2's person: it holds destructive calls until someone
	// confirms them and queues calls for review (package guard); nil
	// skips it.
	Gate IntentGate
	// Level2 checks where each argument came from, the flow policies and
	// the intent verifier before the Gate (level2.go); nil skips them.
	Level2 *Level2
	// Claims, when set, makes a non-idempotent call with a client-given
	// call_id run at most once, whichever replica a retry reaches
	// (claim.go); nil claims nothing.
	Claims CallClaims
	// Scorer is the anomaly gate's model (guard.AnomalyScorer): every call
	// that passed the schema stage is scored before the intent gate, the
	// score and the model's version go to its audit record, and
	// AnomalyThresholds say what a score means (warn, queue for review,
	// hold for a person; the levels reach the Gate as IntentCheck.Anomaly).
	// nil scores nothing.
	Scorer CallScorer
	// AnomalyThresholds: the zero value is DefaultAnomalyThresholds.
	AnomalyThresholds AnomalyThresholds
	// IntentQueue and IntentWorkers size the background checks of calls of
	// tools that are not destructive (defaults 1024 and 2). When the queue is full a check is dropped
	// and counted, never blocking the call.
	IntentQueue, IntentWorkers int
	// IntentTimeout bounds one background check (default 30 s).
	IntentTimeout time.Duration

	// MaxPayload is the largest params size in bytes (default 1 MiB).
	MaxPayload int
	// CancelGrace is how long a cancelled or timed-out handler may take to
	// hand back partial output before the call is answered without it
	// (default 20 ms).
	CancelGrace time.Duration
	// StragglerGrace is how long after its context ended a handler may
	// still run before it is counted as a straggler (the tool's
	// airs_handler_stragglers_total, a warning in the log with the tool's
	// name): it is not honouring cancellation (default 500 ms; see the
	// handler contract in the package doc).
	StragglerGrace time.Duration

	Breaker BreakerConfig
	// CallerTimeouts limits a caller whose own short deadlines keep
	// expiring (they do not count in the provider's breaker); the zero
	// value is on with its defaults.
	CallerTimeouts CallerTimeoutLimit
	// RateLimit applies to every caller, RateLimits overrides it per caller.
	// The zero value is unlimited.
	RateLimit  RateLimit
	RateLimits map[string]RateLimit

	// Speculation bounds speculative execution (speculate.go); the zero
	// value is off.
	Speculation SpeculationConfig

	// Logger receives crashes, dead providers and asynchronous intent
	// misalignments; nil discards.
	Logger *slog.Logger
	// Now is the wall clock for sunsets, breakers and rate limits (tests
	// move it); nil is time.Now. Budgets always use the monotonic clock.
	Now func() time.Time

	// Latency configures latency prediction (latency.go): provider choice,
	// default budgets and the WouldTimeout advisory. The zero value is on.
	Latency LatencyConfig
}

// Manager is the Tool Manager: it runs calls through the 7 stages.
// It is safe for concurrent use.
type Manager struct {
	cfg     Config
	reg     *Registry
	policy  AccessPolicy
	limiter *limiter
	// timeouts: callers limited for their own expiring deadlines (nil: off)
	timeouts *callerTimeouts
	flights  *inflight
	log      *slog.Logger
	now      func() time.Time

	anomalyT AnomalyThresholds // cfg.AnomalyThresholds with defaults

	handlers sync.WaitGroup // handler goroutines still running
	active   atomic.Int64   // calls inside Call
	closed   atomic.Bool

	ctx      context.Context // cancelled by Close: stops background intent checks
	stop     context.CancelFunc
	intentQ  chan IntentCheck
	intentWG sync.WaitGroup

	ids     atomic.Uint64
	idBase  string
	metrics managerMetrics
	events  eventBus          // Subscribe's readers
	lat     *latencyPredictor // nil: Config.Latency.Off
	spec    *speculation
}

// NewManager checks cfg, fills defaults and starts the background workers.
func NewManager(cfg Config) (*Manager, error) {
	if cfg.Registry == nil {
		return nil, errors.New("pipeline: Config.Registry is required")
	}
	if cfg.MaxPayload <= 0 {
		cfg.MaxPayload = DefaultMaxPayload
	}
	if cfg.CancelGrace <= 0 {
		cfg.CancelGrace = 20 * time.Millisecond
	}
	if cfg.StragglerGrace <= 0 {
		cfg.StragglerGrace = DefaultStragglerGrace
	}
	if cfg.IntentQueue <= 0 {
		cfg.IntentQueue = 1024
	}
	if cfg.IntentWorkers <= 0 {
		cfg.IntentWorkers = 2
	}
	if cfg.IntentTimeout <= 0 {
		cfg.IntentTimeout = 30 * time.Second
	}
	if cfg.Breaker.Failures >= 0 {
		cfg.Breaker = cfg.Breaker.withDefaults()
	}
	m := &Manager{
		cfg:      cfg,
		reg:      cfg.Registry,
		policy:   cfg.Policy,
		limiter:  newLimiter(cfg.RateLimit, cfg.RateLimits),
		timeouts: newCallerTimeouts(cfg.CallerTimeouts),
		flights:  newInflight(),
		log:      cfg.Logger,
		now:      cfg.Now,
		idBase:   "call-" + strconv.FormatInt(time.Now().UnixNano(), 36) + "-",

		anomalyT: cfg.AnomalyThresholds.withDefaults(),
		lat:      newLatencyPredictor(cfg.Latency),
	}
	if m.policy == nil {
		m.policy = AllowAll{}
	}
	if m.log == nil {
		m.log = slog.New(slog.DiscardHandler)
	}
	if m.now == nil {
		m.now = time.Now
	}
	m.metrics.init()
	m.spec = newSpeculation(cfg.Speculation)
	m.ctx, m.stop = context.WithCancel(context.Background())
	if cfg.Intent != nil {
		m.intentQ = make(chan IntentCheck, cfg.IntentQueue)
		for range cfg.IntentWorkers {
			m.intentWG.Add(1)
			go m.intentWorker()
		}
	}
	return m, nil
}

// Registry is the registry the Manager calls into.
func (m *Manager) Registry() *Registry { return m.reg }

// Cancel cancels every in-flight call with callID: a dispatched call's
// handler sees its context cancelled; a call still in stages 1–4 stops at
// the next stage. It reports whether such a call was in flight. The call
// itself answers Cancelled (with the handler's partial output, if any).
func (m *Manager) Cancel(callID string) bool { return m.flights.cancel(callID) }

// InFlight is the number of calls between stage 1 and delivery.
func (m *Manager) InFlight() int { return m.flights.count() }

// Close refuses new calls, waits for the calls in flight to be answered,
// stops background intent checks and waits for every handler goroutine to
// return. Handlers that ignore their context
// make Close wait for them; that is deliberate — a handler still running
// after Close would outlive the resources it uses. Close does not close the
// audit sink: whoever opened it closes it, after Close.
func (m *Manager) Close() error {
	return m.CloseWithin(0)
}

// CloseWithin is Close with a bound on the wait for handlers that ignore
// their context (0: no bound). Calls themselves answer within their budget
// whatever their handler does, so only such stragglers can hold a shutdown;
// past d they are left running, the error names how many, and the process
// may exit (a server's drain timeout is the natural d).
func (m *Manager) CloseWithin(d time.Duration) error {
	if m.closed.Swap(true) {
		return nil
	}
	// A Call increments active before it reads closed, and Close sets closed
	// before it reads active, so every call either sees closed or is waited
	// for here; after this no handler goroutine can be added.
	for m.active.Load() > 0 {
		time.Sleep(time.Millisecond)
	}
	m.stop()
	m.intentWG.Wait()
	if m.lat != nil {
		// No call is left to start a refit; one running takes < 1 ms.
		m.lat.refits.Wait()
	}
	if d <= 0 {
		m.handlers.Wait()
		return nil
	}
	done := make(chan struct{})
	go func() { m.handlers.Wait(); close(done) }()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-done:
		return nil
	case <-t.C:
		n := m.metrics.overrunning.Load()
		m.log.Error("closing with handlers still running past their calls' end", "overrunning", n, "waited", d)
		return fmt.Errorf("pipeline: handlers still running %v after close began, %d of them past the straggler grace: they ignore their context (see airs_handler_stragglers_total)", d, n)
	}
}

// ErrClosed is returned by Call after Close.
var ErrClosed = errors.New("pipeline: manager closed")

func (m *Manager) newCallID() string {
	return m.idBase + strconv.FormatUint(m.ids.Add(1), 36)
}

func (m *Manager) breakerFor(e *entry) *breaker {
	if m.cfg.Breaker.Failures < 0 {
		return nil
	}
	if b := e.brk.Load(); b != nil {
		return b
	}
	e.brk.CompareAndSwap(nil, newBreaker(m.cfg.Breaker))
	return e.brk.Load()
}

func (m *Manager) intentWorker() {
	defer m.intentWG.Done()
	for {
		select {
		case <-m.ctx.Done():
			return
		case c := <-m.intentQ:
			ctx, cancel := context.WithTimeout(m.ctx, m.cfg.IntentTimeout)
			err := m.cfg.Intent.Verify(ctx, c)
			cancel()
			if err != nil {
				m.metrics.intentAsyncMisaligned.Add(1)
				m.log.Warn("intent misaligned (idempotent call went ahead)", "call_id", c.CallID,
					"caller", c.Caller, "provider", c.Provider, "tool", c.Tool.Name, "reason", asMisaligned(err).Reason)
			} else {
				m.metrics.intentAsyncChecked.Add(1)
			}
		}
	}
}
