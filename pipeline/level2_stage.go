package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"time"
)

// level2State is one call's level-2 check.
type level2State struct {
	ran bool
	in  level2Input
	res Level2Result
}

// level2 runs Config.Level2 on a call that passed every other check, just
// before the intent gate: a denied flow is refused here; a held one goes
// to the gate (IntentCheck.Hold), or is refused when no gate can ask a
// person.
func (m *Manager) level2(ctx context.Context, cs *callState) error {
	cs.l2.in = level2Input{caller: cs.req.Caller, provider: cs.entry.prov.id, intent: cs.req.Intent, turn: cs.req.Turn,
		tool: &cs.entry.tool, params: cs.params.value, anomaly: cs.anomaly.level}
	cs.l2.in.descs = m.cfg.Level2.descriptions(m.reg)
	cs.l2.res = m.cfg.Level2.judge(ctx, cs.l2.in)
	cs.l2.ran = true
	if v := cs.l2.res.later; v != nil && m.cfg.Gate != nil {
		m.judgeLater(*v, cs.req.CallID, cs.entry.prov.id, cs.params.json, cs.req.Intent)
	}
	switch r := &cs.l2.res; {
	case r.Deny != "":
		return &IntentMisaligned{Reason: r.Deny}
	case r.Hold != "" && m.cfg.Gate == nil:
		return &IntentMisaligned{Reason: r.Hold + " (no intent gate is configured to ask a person, so the call is refused)"}
	}
	return nil
}

// held adds level 2's reason to a gate's hold.
func (s *level2State) held(err error) error {
	var ivr *IntentVerificationRequired
	if s.res.Hold != "" && errors.As(err, &ivr) && ivr.Reason == "" {
		ivr.Reason = s.res.Hold
	}
	return err
}

// level2Delivered puts the labels and verdict on the result (and so in the
// audit record) and, for a call that ran, remembers what its output
// showed the caller.
func (m *Manager) level2Delivered(cs *callState, res *Result) {
	if !cs.l2.ran {
		return
	}
	r := &cs.l2.res
	res.Provenance = r.Labels.Strings()
	switch {
	case r.Hold != "":
		res.Level2 = "held: " + r.Hold
	case r.Deny != "":
		res.Level2 = "denied: " + r.Deny
	case r.Flag != "":
		res.Level2 = "flagged: " + r.Flag
	case r.Verdict != "":
		res.Level2 = r.Verdict
		if r.Reason != "" {
			res.Level2 += ": " + r.Reason
		}
	}
	if res.Outcome == OutcomeOK {
		m.cfg.Level2.verifier.delivered(cs.req.Caller, cs.entry.tool.Name)
		m.cfg.Level2.observe(cs.l2.in, r.Labels, res.Output)
	}
}

// unheld refuses a call level 2 held that the gate let through without a
// person's approval of this very call (a gate that does not know
// IntentCheck.Hold): level 2 fails closed.
func (s *level2State) unheld(d IntentDecision) error {
	if s.res.Hold == "" || d.Decision == IntentApproved {
		return nil
	}
	return &IntentMisaligned{Reason: s.res.Hold + " (the intent gate let it through without a person's approval, so level 2 refuses it)"}
}

// Level2 is the Manager's level-2 check (Config.Level2), nil when off.
func (m *Manager) Level2() *Level2 { return m.cfg.Level2 }

// judgeLater has the model verifier judge a read-only call after it went
// ahead: a misaligned verdict queues it for review through the gate (as a
// flagged call), the seed's asynchronous level 2. At most a few run at
// once; past that a judgement is dropped and logged, never delaying a call.
func (m *Manager) judgeLater(v VerifyInput, callID, provider string, params json.RawMessage, intent string) {
	l := m.cfg.Level2
	select {
	case l.bg <- struct{}{}:
	default:
		m.log.Warn("level 2: background judgements full; a read-only call goes unjudged by the model", "tool", v.Tool.Name, "call_id", callID)
		return
	}
	tool := *v.Tool
	v.Tool = &tool
	params = bytes.Clone(params) // the handler may write into the call's copy
	go func() {
		defer func() { <-l.bg }()
		ctx, cancel := context.WithTimeout(m.ctx, 60*time.Second)
		defer cancel()
		mv := l.modelVerifier()
		if mv == nil {
			return
		}
		verdict, err := mv.Verify(ctx, v)
		if err != nil || verdict.Verdict != VerdictMisaligned {
			if err != nil {
				m.log.Warn("level 2: the model could not judge a read-only call", "tool", tool.Name, "call_id", callID, "err", err)
			}
			return
		}
		_, gerr := m.cfg.Gate.Gate(ctx, IntentCheck{CallID: callID, Caller: v.Caller, Provider: provider, Tool: &tool,
			Params: params, Intent: intent, Labels: v.Labels,
			Flag: "the model judged it misaligned after it ran: " + verdict.Reason})
		if gerr != nil {
			m.log.Warn("level 2: a flagged read-only call could not be queued for review", "tool", tool.Name, "err", gerr)
		}
	}()
}
