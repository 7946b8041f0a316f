package guard

import (
	"context"
	"encoding/json"

	"github.com/airs-dev/airs/pipeline"
)

// An Asker asks the person at a channel about a call the gate holds, and
// returns their answer: Once, Always or Deny, or 0 when none came (end of
// input, Ctrl-C, a channel that cannot ask). The gate records the answer as
// a decision of the call's confirmation by the asker's person, and the
// call goes ahead or is refused at once; with no answer the call stays
// held, its confirmation open for `airs review`.
type Asker func(ctx context.Context, q Question) Choice

// Question is what the person is asked about: the call as the tool will
// get it.
type Question struct {
	Review   string // the confirmation's id (`airs review` lists it while the person thinks)
	Caller   string
	Provider string
	Tool     pipeline.Tool
	Params   json.RawMessage
	Intent   string // the user's words, when the channel had them
	// Reason is why level 2 holds the call beyond its tool being
	// destructive (a flow, the intent verifier), "" when it is only that;
	// the person decides seeing it.
	Reason string
}

type askerKey struct{}

type asker struct {
	by  string
	ask Asker
}

// WithAsker returns a context whose calls the gate asks about through ask
// instead of only holding them: a channel with a person at it (the chat,
// `airs call` at a terminal) puts it on the context of the calls it makes.
// by names that person in the decision and the call's audit record
// ("chat:alice", "cli:alice"). The question is asked from inside the
// pipeline's gate, outside the call's time budget (pipeline.PersonWait).
func WithAsker(ctx context.Context, by string, ask Asker) context.Context {
	return context.WithValue(ctx, askerKey{}, asker{by: by, ask: ask})
}

func askerOf(ctx context.Context) (asker, bool) {
	a, ok := ctx.Value(askerKey{}).(asker)
	return a, ok && a.ask != nil
}

// askAbout asks the context's asker about the held call c (its
// confirmation held) and records the answer as held's decision. It
// reports false when there is no asker or no answer came: the hold
// stands. An answer the store cannot take (the confirmation expired
// while the person thought, or someone decided it meanwhile in `airs
// review`) is not an error here: the gate then meets whatever the store
// holds, as a call sent again would.
func (g *Guard) askAbout(ctx context.Context, c pipeline.IntentCheck, held *pipeline.IntentVerificationRequired) bool {
	a, ok := askerOf(ctx)
	if !ok {
		return false
	}
	q := Question{Review: held.ID, Caller: c.Caller, Provider: c.Provider, Tool: *c.Tool, Params: c.Params,
		Intent: c.Intent, Reason: c.Hold}
	var ch Choice
	c.Person.Await(ctx, func(ctx context.Context) { ch = a.ask(ctx, q) })
	if ch != Once && ch != Always && ch != Deny {
		return false
	}
	if _, err := g.Decide(held.ID, ch, a.by); err != nil {
		g.log.Info("guard: the answer asked for was not recorded", "review", held.ID, "by", a.by, "err", err)
	}
	return true
}
