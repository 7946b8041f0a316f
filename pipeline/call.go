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
