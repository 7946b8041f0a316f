package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/airs-dev/airs/provenance"
)

// IntentVerifier is capability level 2: does this call fit what the user
// asked for? It returns nil when it does, or an error saying why not
// (an *IntentMisaligned, or any error whose text becomes the reason).
//
// The Manager runs it synchronously for destructive tools (Tool.Destructive:
// a destructive call must not start before it is judged) and asynchronously
// for the others (a read-only call goes ahead; a misalignment is logged
// and counted, which is what an anomaly gate watches). With no verifier
// configured, level 2 is skipped.
type IntentVerifier interface {
	Verify(ctx context.Context, c IntentCheck) error
}

// IntentCheck is what the verifier judges.
type IntentCheck struct {
	CallID   string
	Caller   string
	Provider string
	Tool     *Tool
	Params   json.RawMessage // as the handler will see them (JSON)
	Intent   string          // Request.Intent: the user's words, when the channel has them
	// Anomaly is what the call's anomaly score means (Config.Scorer,
	// Config.AnomalyThresholds): a gate holds an AnomalyBlock call as it
	// holds a destructive one and queues an AnomalyReview call for review.
	// AnomalyScore is the score (0–255) and AnomalyModel the model that gave it.
	Anomaly      AnomalyLevel
	AnomalyScore uint8
	AnomalyModel string
	// Hold is level 2's reason to hold the call for a person (a flow
	// policy, the intent verifier: Config.Level2); a gate holds it as it
	// holds a destructive call, an "always" grant does not answer it, and
	// the person sees the reason. Flag is a reason to queue it for review.
	Hold, Flag string
	// Labels are where each argument came from (Config.Level2).
	Labels provenance.Args
	// Person is how a gate waits for a person's answer without spending
	// the call's time budget (PersonWait.Await). The Manager sets it for
	// the gate; it is nil elsewhere (a verifier, a gate called by hand).
	Person *PersonWait
}

// PersonWait lets an intent gate ask a person about the call it is
// deciding, from inside the gate, as a terminal's prompt does. A call's
// budget counts from its start, and a person's thinking time is not the
// call's: Await runs the question with a context that the caller's
// cancellation and Manager.Cancel end but the budget's deadline does not,
// and the Manager then moves the call's clock on by the time it took, so
// the tool gets what was left of its budget and the call's latency (the
// Result's, the audit record's) counts AIRS's and the tool's time only.
// Await is called from the gate's goroutine, one question at a time.
type PersonWait struct {
	ctx    context.Context // the caller's context, without the budget's deadline
	fl     *flight
	waited time.Duration
}

// Await runs ask, the question to a person. ctx is the gate's; with a nil
// w (a gate called outside a Manager) ask runs with ctx as it is.
func (w *PersonWait) Await(ctx context.Context, ask func(context.Context)) {
	if w == nil || w.ctx == nil {
		ask(ctx)
		return
	}
	wctx, cancel := context.WithCancel(w.ctx)
	defer cancel()
	w.fl.setCancel(cancel) // Manager.Cancel reaches the question; the call's own context is set again after
	t0 := time.Now()
	ask(wctx)
	w.waited += time.Since(t0)
}

// IntentVerifierFunc adapts a function to IntentVerifier.
type IntentVerifierFunc func(ctx context.Context, c IntentCheck) error

func (f IntentVerifierFunc) Verify(ctx context.Context, c IntentCheck) error { return f(ctx, c) }

func asMisaligned(err error) *IntentMisaligned {
	var im *IntentMisaligned
	if errors.As(err, &im) {
		return im
	}
	return &IntentMisaligned{Reason: err.Error()}
}

// IntentGate is the person's side of level 2: the guard layer (package
// guard) implements it; the Manager calls it (Config.Gate) for every call,
// after the schema stage and before dispatch, so a person is only ever asked
// about a call that passed every other check. It answers at once, unless
// it asks a person through IntentCheck.Person (a channel with someone at
// it, outside the call's budget); otherwise it never waits for a person:
//
//   - nil error: the call goes ahead (Decision says why, "" when the gate
//     had nothing to say about it);
//   - *IntentVerificationRequired: the call is held (a destructive tool with
//     no approval yet); a reviewer decides, and the caller sends the call
//     again;
//   - *IntentMisaligned (or any other error, whose text becomes the reason):
//     refused (a reviewer denied it).
//
// The decision is written to the call's audit record. A gate must be cheap
// for the calls it lets through without a decision: it runs on every call.
type IntentGate interface {
	Gate(ctx context.Context, c IntentCheck) (IntentDecision, error)
}

// IntentDecision is what the gate decided about one call, for its audit
// record.
type IntentDecision struct {
	Decision string // one of the Intent* decisions; "" none
	Review   string // the confirmation or review id
	Reviewer string // who approved or denied it, when a person did
}

// The gate's decisions, as the audit record's "intent" field writes them.
// They are stable strings, like the error kinds.
const (
	// IntentRequired: held until a person confirms (the call failed with
	// IntentVerificationRequired).
	IntentRequired = "required"
	// IntentApproved: a person allowed this one call (same caller, tool and
	// params).
	IntentApproved = "approved"
	// IntentAlways: a person allowed every call of this tool by this caller.
	IntentAlways = "always"
	// IntentDenied: a person refused it (the call failed with
	// IntentMisaligned).
	IntentDenied = "denied"
	// IntentQueued: the call went ahead and waits in the review queue (a
	// read-only tool the policy has reviewed after the fact).
	IntentQueued = "queued"
)
