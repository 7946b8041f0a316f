package engine

import (
	"context"
	"encoding/json"
	"errors"
	"sync"

	"github.com/airs-dev/airs/guard"
	"github.com/airs-dev/airs/pipeline"
)

// Where a person confirms a call: in the pipeline's intent gate (the
// guard), which holds a destructive call until someone decides it. A
// channel with a person at it puts an asker on the call's context
// (guard.WithAsker): the gate asks through it, from inside the pipeline and
// outside the call's time budget, records the answer as the decision of
// the call's confirmation by that person, and the call runs or is refused
// there; its audit record says who allowed it. The turn's question, an
// accepted suggestion's and `airs call`'s at a terminal are all that one
// question. Only where there is no gate to ask (guard.enabled: false) or
// no person to ask mid-turn (an HTTP stream, which proposes the call
// instead) is a destructive call asked about before it is made.

// IntentUI is a TurnUI that asks the guard's question itself: allow this
// call once, always for this agent, or deny. A channel that implements it
// is asked through it instead of Confirm. Choice 0 means no answer
// (Ctrl-C, end of input, an empty line): the call does not run.
type IntentUI interface {
	ConfirmIntent(ctx context.Context, caller string, tool pipeline.Tool, args json.RawMessage) guard.Choice
}

// ProposerUI is a TurnUI that cannot ask mid-turn (an HTTP stream): its
// Confirm proposes the call to the client and answers no, so the call is
// not made at all, not even held at the guard's gate.
type ProposerUI interface {
	TurnUI
	// ProposesCalls marks the UI; it is never called.
	ProposesCalls()
}

// ErrDeclined is CallAsking's error for a call the person asked about did
// not allow (denied, or no answer): it did not run.
var ErrDeclined = errors.New("declined by the user")

// CallAsking makes req for the person at ui, who is asked about it when
// the call needs them. confirm says the tool is destructive (Lookup's
// second result); tool is what to show when the call is asked about
// before it is made. With a guard the gate asks (see above), once, and
// only if it holds the call (an "always" grant, say, lets it through
// without a question). A call the person did not allow returns ErrDeclined
// (with the pipeline's result when the call reached it).
func (e *Engine) CallAsking(ctx context.Context, ui TurnUI, req pipeline.Request, tool pipeline.Tool, confirm bool) (*pipeline.Result, error) {
	if confirm && !e.asksAtGate(ui) {
		if !ui.Confirm(ctx, tool, req.Params) {
			return nil, ErrDeclined
		}
		return e.Call(ctx, req)
	}
	var a answers
	if confirm {
		ctx = e.askVia(ctx, ui, req.Caller, &a)
	}
	res, err := e.Call(ctx, req)
	if a.declined() {
		return res, ErrDeclined
	}
	return res, err
}

// asksAtGate reports whether a destructive call made for ui is asked about
// by the pipeline's gate: there is one, and ui can ask mid-turn.
func (e *Engine) asksAtGate(ui TurnUI) bool {
	_, cannot := ui.(ProposerUI)
	return e.guard != nil && !cannot
}

// answers is what the person at a channel answered the gate's questions.
type answers struct {
	mu     sync.Mutex
	asked  int
	choice guard.Choice // the last answer
}

// declined reports that the person was asked and did not allow the call.
func (a *answers) declined() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.asked > 0 && a.choice != guard.Once && a.choice != guard.Always
}

// askVia returns ctx with an asker that asks the person at ui, noting the
// answers in a, decided as e.reviewer(caller). A call level 2 holds is
// asked about with its reason shown.
func (e *Engine) askVia(ctx context.Context, ui TurnUI, caller string, a *answers) context.Context {
	return guard.WithAsker(ctx, e.reviewer(caller), func(ctx context.Context, q guard.Question) guard.Choice {
		if q.Reason != "" {
			ui.Note("level 2 holds it: " + q.Reason)
		}
		ch := uiChoice(ctx, ui, q.Caller, q.Tool, q.Params)
		a.mu.Lock()
		a.asked++
		a.choice = ch
		a.mu.Unlock()
		return ch
	})
}

// uiChoice is ui's answer to the guard's question: IntentUI's when the
// channel has it, else Confirm's yes as once; 0 for none.
func uiChoice(ctx context.Context, ui TurnUI, caller string, tool pipeline.Tool, args json.RawMessage) guard.Choice {
	if iu, ok := ui.(IntentUI); ok {
		return iu.ConfirmIntent(ctx, caller, tool, args)
	}
	if ui.Confirm(ctx, tool, args) {
		return guard.Once
	}
	return 0
}

// planAnswers are a plan's answers, given for its destructive steps before
// any step runs: the gate's hold of a call of such a step's tool is
// settled with the step's answer, without asking again (a foreach step's
// calls, a step whose arguments come from an earlier step's output). A
// call held for a flow level 2 found is not: the person was not shown it,
// and decides it seeing it (`airs review`).
type planAnswers map[string]guard.Choice

func (p planAnswers) ask(_ context.Context, q guard.Question) guard.Choice {
	if q.Reason != "" {
		return 0
	}
	return p[q.Tool.Name]
}

// reviewer names who answered in this engine's channel: the channel's user,
// who is the agent's person ("chat:tester").
func (e *Engine) reviewer(caller string) string {
	ch := e.channel
	if ch == "" {
		ch = "engine"
	}
	return ch + ":" + caller
}

// granted reports whether caller may call tool without being asked (an
// "always" answer in the guard).
func (e *Engine) granted(caller, tool string) bool {
	return e.guard != nil && e.guard.Granted(caller, tool)
}

// confirmStep asks about a plan's destructive step before any step runs
// and reports whether to run it. Where the gate asks (asksAtGate), the
// answer is noted in answered for the gate's holds of the step's calls; on
// the chain workers (chains.engine: temporal), whose gates no asker in this
// process reaches, it is recorded in the guard for exactly this call, as
// is a denial (`airs review --all` lists it).
func (e *Engine) confirmStep(ctx context.Context, ui TurnUI, caller string, tool pipeline.Tool, args json.RawMessage, intent string, answered planAnswers) bool {
	if !e.asksAtGate(ui) {
		return ui.Confirm(ctx, tool, args)
	}
	ch := uiChoice(ctx, ui, caller, tool, args)
	if ch == 0 {
		return false
	}
	if ch == guard.Deny || e.chainRunner != nil {
		if _, err := e.guard.Answer(caller, "", tool.Name, args, intent, ch, e.reviewer(caller)); err != nil {
			ui.Note("the guard could not record the answer: " + err.Error())
			return false
		}
	}
	if ch == guard.Deny {
		return false
	}
	if answered[tool.Name] != guard.Always {
		answered[tool.Name] = ch
	}
	return true
}
