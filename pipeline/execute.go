package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"time"
)

// Stage 6 of a call: the handler runs, guarded (its own goroutine, the
// budget, panics contained, stragglers watched), and whose fault a
// timeout is.

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
