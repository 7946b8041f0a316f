package engine

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/airs-dev/airs/guard"
	"github.com/airs-dev/airs/pipeline"
)

// IntentUI is a TurnUI that asks the guard's question itself: allow this
// call once, always for this agent, or deny. A channel that implements it
// is asked through it instead of Confirm about a destructive call when the
// engine has a guard. Choice 0 means no answer (Ctrl-C, end of input, an
// empty line): the call is not made and nothing is recorded.
type IntentUI interface {
	ConfirmIntent(ctx context.Context, caller string, tool pipeline.Tool, args json.RawMessage) guard.Choice
}

// ConfirmCall asks about a destructive call before it is made and reports
// whether to make it. Without a guard it is Confirm's yes or no. With one,
// the answer is the guard's (once, always, deny; IntentUI when the channel
// has it, else Confirm's yes as once), recorded there for exactly this
// call: the call then meets the decision in the pipeline's gate, and its
// audit record says who allowed it. A denial is recorded (`airs review
// --all` shows it) and the call is not made.
func (e *Engine) ConfirmCall(ctx context.Context, ui TurnUI, caller, provider string, tool pipeline.Tool, args json.RawMessage, intent string) bool {
	ch := e.confirmChoice(ctx, ui, caller, provider, tool, args, intent)
	return ch == guard.Once || ch == guard.Always
}

// confirmChoice is ConfirmCall's answer: 0 for none.
func (e *Engine) confirmChoice(ctx context.Context, ui TurnUI, caller, provider string, tool pipeline.Tool, args json.RawMessage, intent string) guard.Choice {
	if e.guard == nil {
		if ui.Confirm(ctx, tool, args) {
			return guard.Once
		}
		return 0
	}
	var ch guard.Choice
	if iu, ok := ui.(IntentUI); ok {
		ch = iu.ConfirmIntent(ctx, caller, tool, args)
	} else if ui.Confirm(ctx, tool, args) {
		ch = guard.Once
	}
	if ch == 0 {
		return 0
	}
	if _, err := e.guard.Answer(caller, provider, tool.Name, args, intent, ch, e.reviewer(caller)); err != nil {
		ui.Note("the guard could not record the answer: " + err.Error())
		return 0
	}
	return ch
}

// callAnswered makes a call the user already answered (ch, 0 for none).
// When the gate still holds it — the params it checks are not the ones
// asked about (a lenient tool's defaults, a migration, a plan's templated
// step) — the same answer decides the gate's confirmation and the call is
// made once more.
func (e *Engine) callAnswered(ctx context.Context, req pipeline.Request, ch guard.Choice) (*pipeline.Result, error) {
	res, err := e.Call(ctx, req)
	var ivr *pipeline.IntentVerificationRequired
	if e.guard == nil || (ch != guard.Once && ch != guard.Always) || !errors.As(err, &ivr) {
		return res, err
	}
	if ivr.Reason != "" { // level 2 holds it for a flow the user was not shown: they decide it seeing it
		return res, err
	}
	if _, derr := e.guard.Decide(ivr.ID, ch, e.reviewer(req.Caller)); derr != nil {
		return res, err
	}
	if req.CallID != "" {
		req.CallID += "-confirmed"
	}
	return e.Call(ctx, req)
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
