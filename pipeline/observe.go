package pipeline

import "context"

// CallObserver watches calls go through the stages, for tracing
// (internal/telemetry: a span per call and per stage). It sees the tool,
// the caller, the provider and the outcome, never the arguments.
// Config.Observer; nil: nothing is observed and nothing is spent.
type CallObserver interface {
	// StartCall begins observing a call as it enters stage 1; the call
	// continues with the returned context (the handler's, an MCP server's
	// request, carry it).
	StartCall(ctx context.Context, tool, caller string) (context.Context, CallObservation)
}

// CallObservation is one observed call.
type CallObservation interface {
	// StageDone says stage (1–7, as Call's documentation numbers them)
	// ended now.
	StageDone(stage int)
	// Ended says the call was delivered with outcome (and its error kind,
	// "" when ok) by provider ("" when no provider was chosen).
	Ended(provider, outcome, errorKind string)
}

// observed is callState's observation; the methods do nothing when the
// call is not observed.
type observed struct{ obs CallObservation }

func (o observed) stageDone(stage int) {
	if o.obs != nil {
		o.obs.StageDone(stage)
	}
}
