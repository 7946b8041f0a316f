package pipeline

import (
	"context"
	"encoding/json"
	"errors"
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
