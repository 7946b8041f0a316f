package pipeline

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"runtime/debug"
	"slices"
	"time"

	"github.com/airs-dev/airs/pipeline/audit"
)

// callState carries one call through the stages.
type callState struct {
	req     *Request
	start   time.Time // monotonic: budgets and latency
	wall    time.Time // Config.Now: sunsets, breakers, rate limits
	fl      *flight
	entry   *entry
	brk     *breaker // the breaker allow() let us through, to report back to
	params  decodedParams
	budget  time.Duration
	reached bool          // stage 6 ran the handler
	handler time.Duration // handler time, for the tool's histogram
	failed  bool          // the provider failed (crash, dead, overran twice its class budget): breaker and error rate
	// unjudged: the handler was reached but its end says nothing of the
	// provider (cancelled, or a timeout that is not its fault: breaker.go).
	unjudged bool
	// callerShort: the deadline came from the caller (Request.Timeout or
	// its context) and is shorter than the tool's class budget; a timeout
	// then counts against the caller (CallerTimeoutLimit), not the provider.
	callerShort bool
	mig         *migrating     // set by lookup when a migration serves an old version pin
	intent      IntentDecision // the intent gate's decision, for the audit record
	anomaly     anomalyScore   // the anomaly score (Config.Scorer), for the gate and the audit record
	l2          level2State    // level 2's provenance, flows and verdict (Config.Level2; level2_stage.go)
	person      PersonWait     // the intent gate's wait for a person, outside the budget
	lat         latencyState   // the latency model's features and prediction (latency.go)
	specGen     uint64         // speculate.go: the write generation a speculative handler started in
	specOf      string         // speculate.go: the speculative call whose result answered this one
	// clientID: the call_id came with the request (a retry can reuse it), so
	// a non-idempotent call is claimed before it runs (claim.go).
	clientID bool
	// claimed: this attempt holds the call's claim (its outcome is
	// recorded on it); replay: a retry answered from the first attempt.
	claimed, replay bool
	observed        // Config.Observer's view of the call (observe.go)
}

// Call runs req through the seven stages:
//
//  1. request: rate limit, payload limit, params decoding (JSON or MessagePack)
//  2. lookup: provider ranking, liveness, deprecation, circuit breaker
//  3. capabilities: level 1 channel, level 2 intent, level 3 required capabilities
//  4. schema validation (lenient coercion first, for tools that opt in)
//  5. dispatch: the budget, minus the time stages 1–4 took (not a person's
//     answer awaited at the intent gate), as a context deadline
//  6. execution: the handler, with panics contained
//  7. delivery: return_schema check, metrics, a durable audit record, the Result
//
// It always returns a Result (with its Outcome and ErrorKind) and, when the
// outcome is not ok, an error of one of the 16 kinds. An error that is none
// of them means the audit record could not be made durable; the result is
// then withheld (Output nil). Nothing is retried.
func (m *Manager) Call(ctx context.Context, req Request) (*Result, error) {
	if req.Speculative { // not a real call: its own admission and delivery (speculate.go)
		return m.Speculate(ctx, req)
	}
	cs := callState{req: &req, start: time.Now(), wall: m.now(), clientID: req.CallID != ""}
	if req.CallID == "" {
		req.CallID = m.newCallID()
	}
	res := &Result{CallID: req.CallID, Tool: req.Tool, Provider: req.Provider}
	m.active.Add(1)
	defer m.active.Add(-1)
	if m.closed.Load() {
		res.Outcome, res.ErrorKind = OutcomeError, KindOf(ErrClosed)
		return res, ErrClosed
	}
	cs.fl = m.flights.add(req.CallID)
	if o := m.cfg.Observer; o != nil {
		ctx, cs.obs = o.StartCall(ctx, req.Tool, req.Caller)
	}
	err := m.run(ctx, &cs, res)
	m.flights.remove(cs.fl)
	res, err = m.deliver(&cs, res, err)
	if cs.obs != nil {
		cs.obs.Ended(res.Provider, string(res.Outcome), res.ErrorKind)
	}
	return res, err
}

func (m *Manager) run(ctx context.Context, cs *callState, res *Result) error {
	req := cs.req
	// Stage 1: request.
	// A speculative call takes no token: its own budget bounds it (speculate.go).
	if !req.Speculative {
		if wait := m.limiter.take(req.Caller, cs.wall); wait > 0 {
			return &RateLimited{Caller: req.Caller, RetryAfterMs: int64(math.Ceil(float64(wait) / float64(time.Millisecond)))}
		}
		if wait := m.timeouts.limited(req.Caller, cs.wall); wait > 0 {
			return &RateLimited{Caller: req.Caller, RetryAfterMs: int64(math.Ceil(float64(wait) / float64(time.Millisecond))),
				Reason: ReasonOwnTimeouts}
		}
	}
	if len(req.Params) > m.cfg.MaxPayload {
		return &PayloadTooLarge{Max: m.cfg.MaxPayload, Actual: len(req.Params)}
	}
	var err error
	if cs.params, err = decodeParams(req.Tool, req.Params, req.Encoding); err != nil {
		return err
	}
	// The handler gets its own copy: decoded JSON params alias the caller's
	// buffer, and a handler that writes into its params (or keeps writing
	// after its deadline) must not change what the caller holds, nor what the
	// audit record hashes (property 2, property_test.go).
	cs.params.json = bytes.Clone(cs.params.json)
	if err := m.stopped(ctx, cs); err != nil {
		return err
	}

	cs.stageDone(1)
	// Stage 2: lookup.
	if cs.entry, err = m.lookup(cs); err != nil {
		var denied *ChannelCapabilityDenied
		if errors.As(err, &denied) {
			res.Provider = denied.Provider
		}
		return err
	}
	e := cs.entry
	res.Provider, res.Version = e.prov.id, e.tool.Version
	if cs.mig != nil {
		res.MigratedFrom = cs.mig.from
	}
	if d := e.tool.Deprecation; d != nil {
		res.Warning = fmt.Sprintf("%s is deprecated and retires on %s", e.tool.Name, d.Sunset.Format(time.DateOnly))
		if d.Replacement != "" {
			res.Warning += "; use " + d.Replacement
		}
	}

	// The budget is known once the tool is: the caller's timeout, or the
	// latency-class default. Its deadline counts from the start of the call,
	// so the time stages 1–4 take is deducted (a person's answer awaited at
	// the intent gate is not: PersonWait); the context is created now so
	// that a cancellation or the deadline also reaches a synchronous intent
	// verifier.
	cs.budget = req.Timeout
	class := ClassTimeouts[e.tool.LatencyClass]
	own := cs.budget > 0 && cs.budget <= MaxTimeout
	if !own {
		cs.budget = class
		if req.Timeout <= 0 { // none given: the class default, more when the prediction needs it
			cs.budget = m.predictedBudget(cs, cs.budget)
		}
	}
	deadline := cs.start.Add(cs.budget)
	effective := deadline
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		effective, own = d, true
	}
	cs.callerShort = own && effective.Sub(cs.start) < class
	hctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	cs.fl.setCancel(cancel)

	cs.stageDone(2)
	// Stage 3: capabilities.
	if !m.policy.CanReach(req.Caller, e.prov.id) {
		return &ChannelCapabilityDenied{Caller: req.Caller, Provider: e.prov.id}
	}
	if cs.mig != nil { // old-format params become the new version's (migrate.go)
		if err := m.migrate(hctx, cs); err != nil {
			return err
		}
	}
	// Level 2 judges what the user asked for: a speculative call is not
	// asked for, and the real call it may answer is judged here first.
	if m.cfg.Intent != nil && !req.Speculative {
		check := IntentCheck{CallID: req.CallID, Caller: req.Caller, Provider: e.prov.id, Tool: &e.tool,
			Params: cs.params.json, Intent: req.Intent}
		if e.tool.Destructive {
			if err := m.cfg.Intent.Verify(hctx, check); err != nil {
				if err := m.stopped(hctx, cs); err != nil {
					return err
				}
				return asMisaligned(err)
			}
		} else {
			select {
			case m.intentQ <- check:
			default:
				m.metrics.intentAsyncDropped.Add(1)
			}
		}
	}
	var missing []Capability
	for _, c := range e.tool.CapabilityRequired {
		if c = c.Bind(cs.params.value); !m.policy.Holds(req.Caller, c) {
			missing = append(missing, c)
		}
	}
	if missing != nil {
		return &ToolCapabilityDenied{Required: missing}
	}

	cs.stageDone(3)
	// Stage 4: schema validation.
	if e.tool.Lenient && e.params.defaults != nil && e.params.defaults.applyDefaults(cs.params.value) {
		if cs.params.json, err = json.Marshal(cs.params.value); err != nil {
			return paramsError(e.tool.Name, err.Error())
		}
	}
	fes, timedOut := e.params.validate(cs.params.value)
	if timedOut != nil {
		return timedOut.of(e.tool.Name, false)
	}
	if fes != nil {
		sv := &SchemaValidationFailed{Tool: e.tool.Name, Errors: fes}
		if cs.mig != nil {
			sv.Migration = cs.mig.name
		}
		return sv
	}
	if err := m.stopped(hctx, cs); err != nil {
		return err
	}

	// The anomaly score, on a call that passed every other check (so a
	// malformed call neither is scored nor counts in the caller's history);
	// its level reaches the intent gate below.
	if m.cfg.Scorer != nil && !req.Speculative { // a prediction is not the caller's habit
		if err := m.scoreCall(hctx, cs); err != nil {
			return err
		}
	}

	if m.cfg.Level2 != nil && !req.Speculative { // provenance, flow policies, the intent verifier
		if err := m.level2(hctx, cs); err != nil {
			return err
		}
	}

	// Level 2, the person's side: the intent gate, on a call that passed
	// every other check (so nobody is asked about a call that would fail
	// anyway), with the params the handler will see.
	if m.cfg.Gate != nil && !req.Speculative { // (as level 2 above)
		cs.person = PersonWait{ctx: ctx, fl: cs.fl}
		d, err := m.cfg.Gate.Gate(hctx, IntentCheck{CallID: req.CallID, Caller: req.Caller, Provider: e.prov.id,
			Tool: &e.tool, Params: cs.params.json, Intent: req.Intent,
			Anomaly: cs.anomaly.level, AnomalyScore: cs.anomaly.score, AnomalyModel: cs.anomaly.model,
			Hold: cs.l2.res.Hold, Flag: cs.l2.res.Flag, Labels: cs.l2.res.Labels, Person: &cs.person})
		cs.intent = d
		if cs.person.waited > 0 { // a person was asked: the call's clock resumes where it stopped
			cs.start = cs.start.Add(cs.person.waited)
			deadline = cs.start.Add(cs.budget)
			var cancel context.CancelFunc
			hctx, cancel = context.WithDeadline(ctx, deadline)
			defer cancel()
			cs.fl.setCancel(cancel)
		}
		if err != nil {
			if serr := m.stopped(hctx, cs); serr != nil {
				return serr
			}
			if errors.Is(err, ErrIntentVerificationRequired) {
				return cs.l2.held(err)
			}
			return asMisaligned(err)
		}
		if err := cs.l2.unheld(d); err != nil {
			return err
		}
	}

	cs.stageDone(4) // with the anomaly score and the intent gate that follow the schema
	// Stage 5: dispatch, with what is left of the budget.
	if !time.Now().Before(deadline) {
		return &Timeout{Budget: cs.budget}
	}
	if err := m.predictDispatch(cs, deadline); err != nil { // WouldTimeout
		return err
	}
	replay, err := m.claim(hctx, cs) // AlreadyClaimed: the last check before the side effect
	if err != nil {
		return err
	}
	if replay != nil { // a retry of a call that ended: its first attempt's outcome
		cs.replay = true
		return replayed(replay, res)
	}

	cs.stageDone(5)
	// Stage 6: execution — or, for a read-only idempotent tool, the result of
	// a speculative run of this very call, looked up only now that every
	// check above has passed (speculate.go).
	out, err := m.executeOrSpeculated(hctx, cs)
	res.Output = out
	if err != nil {
		if len(out) > 0 && !json.Valid(out) {
			res.Output = nil // partial output that is not JSON is no output
		}
		return err
	}

	cs.stageDone(6)
	// Stage 7 (the check; delivery proper is in deliver). Output must be
	// JSON whether or not the tool declares a return_schema: the Result
	// carries it as a raw JSON value, and garbage would break every encoder
	// downstream (HTTP, the CLI's --json) after the call was counted ok.
	if e.returns == nil && len(out) > 0 && !json.Valid(out) {
		res.Output = nil
		return &SchemaValidationFailed{Tool: e.tool.Name, Output: true,
			Errors: []FieldError{{Pointer: "", Message: "output is not valid JSON"}}}
	}
	if e.returns != nil {
		v, derr := decodeJSON(out)
		var fes []FieldError
		if derr != nil {
			fes = []FieldError{{Pointer: "", Message: "output is not valid JSON: " + derr.Error()}}
		} else {
			var timedOut *PatternTimeout
			if fes, timedOut = e.returns.validate(v); timedOut != nil {
				res.Output = nil
				return timedOut.of(e.tool.Name, true)
			}
		}
		if fes != nil {
			res.Output = nil
			return &SchemaValidationFailed{Tool: e.tool.Name, Errors: fes, Output: true}
		}
	}
	return nil
}

// stopped reports a cancellation or expiry noticed between stages.
func (m *Manager) stopped(ctx context.Context, cs *callState) error {
	if cs.fl.cancelled.Load() {
		return &Cancelled{CallID: cs.req.CallID}
	}
	switch ctx.Err() {
	case nil:
		return nil
	case context.Canceled:
		return &Cancelled{CallID: cs.req.CallID}
	}
	budget := cs.budget
	if budget == 0 { // the caller's own deadline, before ours exists
		budget = time.Since(cs.start)
	}
	return &Timeout{Budget: budget}
}

// lookup is stage 2: rank the candidates the caller may reach and take the
// first usable one.
// A dead provider found on the way is deregistered; a retired or degraded
// candidate is passed over when another can serve. When none can, the
// best-ranked candidate's reason is the answer.
func (m *Manager) lookup(cs *callState) (*entry, error) {
	req := cs.req
	cands := m.reg.candidates(req.Tool, req.Version)
	migrated := false
	if len(cands) == 0 && req.Version != "" {
		// No version matches the pin: a newer major may migrate the call.
		cands, migrated = m.reg.migrationCandidates(req.Tool, req.Version), true
	}
	if len(cands) == 0 {
		return nil, &ToolNotFound{Tool: req.Tool, Provider: req.Provider, Version: req.Version}
	}
	if req.Provider != "" && !slices.ContainsFunc(cands, func(e *entry) bool { return e.prov.id == req.Provider }) {
		// A named provider is a preference among those that offer the
		// tool; one that offers none is a mistake (a typo, a provider not
		// loaded), not something to ignore silently.
		nf := &ToolNotFound{Tool: req.Tool, Provider: req.Provider, Version: req.Version}
		for _, e := range cands {
			if !slices.Contains(nf.OfferedBy, e.prov.id) {
				nf.OfferedBy = append(nf.OfferedBy, e.prov.id)
			}
		}
		slices.Sort(nf.OfferedBy)
		return nil, nf
	}
	cands, err := m.reachable(req.Caller, cands)
	if err != nil {
		return nil, err
	}
	rank(cands, req.Provider, m.lat, len(cs.params.json))
	return m.firstUsable(cs, cands, migrated)
}

// reachable keeps the candidates the caller may reach (capability level 1),
// so that ranking chooses among them: a better-trusted provider the caller
// may not use must not hide one it may. A preferred provider the caller may
// not reach is passed over like a degraded one. When it may reach none, the
// answer is ChannelCapabilityDenied for the best-ranked candidate. cands is
// not modified (it may be the registry's own slice).
func (m *Manager) reachable(caller string, cands []*entry) ([]*entry, error) {
	for i, e := range cands {
		if m.policy.CanReach(caller, e.prov.id) {
			continue
		}
		out := slices.Clone(cands[:i])
		for _, e := range cands[i+1:] {
			if m.policy.CanReach(caller, e.prov.id) {
				out = append(out, e)
			}
		}
		if len(out) == 0 {
			all := slices.Clone(cands)
			rank(all, "", nil, 0)
			return nil, &ChannelCapabilityDenied{Caller: caller, Provider: all[0].prov.id}
		}
		return out, nil
	}
	return cands, nil
}

// firstUsable takes the first usable candidate in rank order (lookup).
func (m *Manager) firstUsable(cs *callState, cands []*entry, migrated bool) (*entry, error) {
	req := cs.req
	var first error
	for _, e := range cands {
		var why error
		if !e.prov.isAlive() {
			n := m.reg.DeregisterProvider(e.prov.id)
			m.log.Warn("provider dead: deregistered", "provider", e.prov.id, "tools", n)
			why = &ProviderUnavailable{Provider: e.prov.id, Tool: e.tool.Name, Reason: ReasonProviderDead}
		} else if d := e.tool.Deprecation; d != nil && !d.Sunset.IsZero() && !cs.wall.Before(d.Sunset) {
			why = &ToolDeprecated{Tool: e.tool.Name, Sunset: d.Sunset, Replacement: d.Replacement}
		} else if b := m.breakerFor(e); b != nil {
			if ok, retry := b.allow(cs.wall); !ok {
				why = &ProviderUnavailable{Provider: e.prov.id, Tool: e.tool.Name, Reason: ReasonCircuitOpen, RetryAfter: retry}
			} else {
				cs.brk = b
			}
		}
		if why == nil {
			if migrated {
				mg, _ := e.migrationFor(req.Version)
				cs.mig = &migrating{from: req.Version, decl: mg, name: mg.String()}
			}
			return e, nil
		}
		if first == nil {
			first = why
		}
	}
	return nil, first
}

// TimeoutFaultFactor: a timeout is the provider's fault only when its
// handler ran at least this many times its latency class's budget
// (ClassTimeouts). A provider declares its class; a default budget is at
// most that class budget, and on a busy machine a call is delayed by the
// queue for a core as much as by its handler, so a call cut off at or
// near its class budget may be the machine's doing, not the provider's.
// Only a caller who gave the handler well beyond its class (and a
// provider that still did not answer) shows a provider that overran.
const TimeoutFaultFactor = 2

// judgeTimeout decides whether a timeout of a dispatched call is the
// provider's (a fault for its breaker and its error rate) or not: then it
// is the caller's (its own short deadline, counted by deliver:
// CallerTimeoutLimit) or nobody's (a default budget on a busy machine, or a
// caller deadline within the margin).
func (cs *callState) judgeTimeout() {
	if cs.handler >= TimeoutFaultFactor*ClassTimeouts[cs.entry.tool.LatencyClass] {
		cs.failed = true
		return
	}
	cs.unjudged = true // the caller's (callerShort: deliver counts it) or nobody's
}

// verdict is what the call says of its provider's health (breaker.go).
func (cs *callState) verdict() verdict {
	switch {
	case cs.failed:
		return verdictFault
	case cs.unjudged:
		return verdictNone
	}
	return verdictHealthy
}

type execResult struct {
	out      json.RawMessage
	err      error
	panicked bool
}

// execute is stage 6. The handler runs in its own goroutine so that a
// handler ignoring its context still cannot hold the caller past the
// budget; it is tracked so Close can wait for it. A ContextBound handler
// runs on the caller's goroutine instead.
func (m *Manager) execute(hctx context.Context, cs *callState) (json.RawMessage, error) {
	e, req := cs.entry, cs.req
	call := &Call{ID: req.CallID, Tool: e.tool.Name, Provider: e.prov.id, Caller: req.Caller}
	t0 := time.Now()
	cs.reached = true
	var r execResult
	answered := true
	if _, bound := e.handler.(ContextBound); bound {
		r = m.invokeBound(hctx, e, cs, call)
	} else {
		r, answered = m.invokeGuarded(hctx, e, cs, call)
	}
	cs.handler = time.Since(t0)

	switch {
	case answered && r.panicked:
		cs.failed = true
		m.log.Error("handler panicked", "provider", e.prov.id, "tool", e.tool.Name, "call_id", req.CallID,
			"panic", r.err.(*ProviderCrashed).Panic)
		return nil, r.err
	case answered && r.err == nil:
		return r.out, nil
	case hctx.Err() != nil:
		if hctx.Err() == context.Canceled || cs.fl.cancelled.Load() {
			cs.unjudged = true
			return r.out, &Cancelled{CallID: req.CallID}
		}
		cs.judgeTimeout()
		return r.out, &Timeout{Budget: cs.budget}
	case errors.Is(r.err, ErrProviderDead):
		cs.failed = true
		n := m.reg.DeregisterProvider(e.prov.id)
		m.log.Warn("provider reported dead: deregistered", "provider", e.prov.id, "tools", n, "err", r.err)
		return nil, &ProviderUnavailable{Provider: e.prov.id, Tool: e.tool.Name, Reason: ReasonProviderDead}
	}
	// An application error. One that already is a kind (a handler may check
	// a capability on a path, say) passes through; others become
	// ProviderRejected.
	var k kinder
	if errors.As(r.err, &k) {
		if _, sentinel := k.(kindError); !sentinel {
			return nil, r.err
		}
	}
	return nil, &ProviderRejected{Code: "internal", Message: r.err.Error()}
}

// invokeGuarded runs the handler in its own goroutine and waits for it or
// for the end of hctx (then CancelGrace more for partial output); answered
// is false when it stopped waiting, the handler left to watchStraggler.
func (m *Manager) invokeGuarded(hctx context.Context, e *entry, cs *callState, call *Call) (r execResult, answered bool) {
	ch := make(chan execResult, 1)
	done := make(chan struct{}) // closed when the handler has returned
	m.handlers.Add(1)
	e.prov.inflight.Add(1)
	go func() {
		defer m.handlers.Done()
		defer close(done)
		defer e.prov.inflight.Add(-1)
		defer func() {
			if p := recover(); p != nil {
				ch <- execResult{err: &ProviderCrashed{Provider: e.prov.id, Panic: fmt.Sprint(p), Stack: debug.Stack()}, panicked: true}
			}
		}()
		out, err := e.handler.Invoke(hctx, cs.params.json, call)
		ch <- execResult{out: out, err: err}
	}()
	select {
	case r = <-ch:
		return r, true
	case <-hctx.Done():
		// Give the handler a moment to hand back partial output.
		ended := time.Now()
		t := time.NewTimer(m.cfg.CancelGrace)
		defer t.Stop()
		select {
		case r = <-ch:
			return r, true
		case <-t.C:
			m.watchStraggler(call, e, done, ended, context.Cause(hctx))
			return execResult{}, false
		}
	}
}

// invokeBound runs a ContextBound handler on the caller's goroutine: the
// same accounting and panic recovery, no hand-off to another goroutine and
// back (a scheduling round trip per call, which on a loaded machine was
// half of what AIRS added to a call to a stdio MCP server).
func (m *Manager) invokeBound(hctx context.Context, e *entry, cs *callState, call *Call) (r execResult) {
	m.handlers.Add(1)
	e.prov.inflight.Add(1)
	defer m.handlers.Done()
	defer e.prov.inflight.Add(-1)
	defer func() {
		if p := recover(); p != nil {
			r = execResult{err: &ProviderCrashed{Provider: e.prov.id, Panic: fmt.Sprint(p), Stack: debug.Stack()}, panicked: true}
		}
	}()
	out, err := e.handler.Invoke(hctx, cs.params.json, call)
	return execResult{out: out, err: err}
}

// watchStraggler follows a handler the call stopped waiting for: if it is
// still running StragglerGrace after its context ended, it ignores
// cancellation and keeps using CPU, memory or connections for an answer
// nobody will read — the tool's airs_handler_stragglers_total counts it and
// the log names the tool; when it finally returns, the log says how long
// it overran. The watcher is one of m.handlers, so Close waits for it too.
func (m *Manager) watchStraggler(call *Call, e *entry, done <-chan struct{}, ended time.Time, why error) {
	m.handlers.Add(1)
	go func() {
		defer m.handlers.Done()
		t := time.NewTimer(m.cfg.StragglerGrace - time.Since(ended))
		defer t.Stop()
		select {
		case <-done:
			return
		case <-t.C:
		}
		e.stats.stragglers.Add(1)
		m.metrics.overrunning.Add(1)
		defer m.metrics.overrunning.Add(-1)
		m.log.Warn("handler still running after its call ended: the tool does not honour its context",
			"tool", call.Tool, "provider", call.Provider, "version", e.tool.Version, "call_id", call.ID,
			"grace", m.cfg.StragglerGrace, "reason", why)
		<-done
		m.log.Warn("straggling handler returned", "tool", call.Tool, "provider", call.Provider,
			"call_id", call.ID, "overrun", time.Since(ended))
	}()
}

// outcomeOf maps an error to the call's outcome.
func outcomeOf(err error) Outcome {
	switch {
	case err == nil:
		return OutcomeOK
	case errors.Is(err, ErrCancelled):
		return OutcomeCancelled
	case errors.Is(err, ErrTimeout):
		return OutcomeTimeout
	}
	return OutcomeError
}

// deliver is stage 7 proper: breaker, metrics, the audit record (durable
// before the result goes out), the Result.
func (m *Manager) deliver(cs *callState, res *Result, err error) (*Result, error) {
	res.Outcome = outcomeOf(err)
	if err != nil {
		res.ErrorKind = KindOf(err)
	}
	if cs.brk != nil {
		cs.brk.done(cs.wall, cs.reached, cs.verdict())
	}
	// A timeout on the caller's own short deadline counts against it
	// whichever stage it ended in: decoding and checking its params cost
	// as much as the handler may.
	var timedOut *Timeout
	if cs.callerShort && !cs.failed && errors.As(err, &timedOut) {
		m.timeouts.timedOut(cs.req.Caller, m.now(), m.log)
	}
	if e := cs.entry; e != nil {
		e.stats.count(res.Outcome)
		if cs.reached {
			e.stats.dispatched(cs.failed || (err != nil && res.Outcome == OutcomeError), cs.handler)
		}
	}
	m.metrics.count(res.Outcome, res.ErrorKind)
	latency := time.Since(cs.start)
	m.level2Delivered(cs, res)
	if m.cfg.Audit != nil {
		sum := sha256.Sum256(cs.req.Params)
		rec := &audit.Record{
			Time: cs.wall, CallID: res.CallID, Caller: cs.req.Caller, Provider: res.Provider,
			Tool: res.Tool, Version: res.Version, ParamsSHA256: hex.EncodeToString(sum[:]),
			Outcome: string(res.Outcome), Error: res.ErrorKind, LatencyNs: int64(latency),
			ParamsBytes: len(cs.req.Params),
		}
		if cs.mig != nil {
			rec.MigratedFrom, rec.Migration = cs.mig.from, cs.mig.name
		}
		rec.Intent, rec.Review, rec.Reviewer = cs.intent.Decision, cs.intent.Review, cs.intent.Reviewer
		if cs.anomaly.model != "" {
			rec.AnomalyScore, rec.AnomalyModel = new(AnomalyScoreOf(cs.anomaly.score)), cs.anomaly.model
		}
		rec.SpeculativeHit, rec.SpeculationOf = cs.specOf != "", cs.specOf
		rec.Replayed = cs.replay
		rec.Provenance, rec.Level2 = res.Provenance, res.Level2
		if aerr := m.cfg.Audit.Append(rec); aerr != nil {
			m.log.Error("audit record not durable: result withheld", "call_id", res.CallID, "err", aerr)
			res.Output = nil
			return res, errors.Join(err, fmt.Errorf("pipeline: audit record not durable: %w", aerr))
		}
	}
	res.Latency = time.Since(cs.start)
	m.finishClaim(cs, res, err)
	m.observeLatency(cs, res)
	res.SpeculativeHit = cs.specOf != ""
	m.metrics.overhead.Observe(res.Latency - cs.handler)
	m.events.publish(func() CallEvent {
		ev := CallEvent{CallID: res.CallID, Caller: cs.req.Caller, Provider: res.Provider, Tool: res.Tool,
			Version: res.Version, Outcome: res.Outcome, ErrorKind: res.ErrorKind, Latency: res.Latency, At: cs.wall}
		if cs.req.Encoding == JSON && json.Valid(cs.req.Params) {
			ev.Params = slices.Clone(json.RawMessage(cs.req.Params))
		}
		return ev
	})
	return res, err
}
