package telemetry

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/airs-dev/airs/pipeline"
)

// StageNames are the spans of the pipeline's seven stages, in order.
var StageNames = [8]string{1: "request", 2: "lookup", 3: "capabilities", 4: "schema and gate", 5: "dispatch", 6: "execute", 7: "deliver"}

// Observer is the pipeline's observer (pipeline.Config.Observer): a span
// per call, and one per stage under it. Off, it is nil, and the pipeline
// observes nothing.
func (t *Tracing) Observer() pipeline.CallObserver {
	if !t.Enabled() {
		return nil
	}
	return observer{t}
}

type observer struct{ t *Tracing }

func (o observer) StartCall(ctx context.Context, tool, caller string) (context.Context, pipeline.CallObservation) {
	ctx, span := o.t.tracer.Start(ctx, "airs.call "+tool, trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithAttributes(attribute.String("airs.tool", tool), attribute.String("airs.caller", caller)))
	return ctx, &call{ctx: ctx, span: span, tracer: o.t.tracer, mark: time.Now()}
}

// call is one traced call: its span, and the time the current stage
// began.
type call struct {
	ctx    context.Context
	span   trace.Span
	tracer trace.Tracer
	mark   time.Time
	done   int // the last stage ended
}

func (c *call) stage(n int, end time.Time, err string) {
	_, s := c.tracer.Start(c.ctx, "airs.stage "+StageNames[n], trace.WithTimestamp(c.mark),
		trace.WithAttributes(attribute.Int("airs.stage", n)))
	if err != "" {
		s.SetStatus(codes.Error, err)
		s.SetAttributes(attribute.String("airs.error_kind", err))
	}
	s.End(trace.WithTimestamp(end))
	c.mark, c.done = end, n
}

func (c *call) StageDone(n int) {
	if n >= 1 && n < len(StageNames) {
		c.stage(n, time.Now(), "")
	}
}

func (c *call) Ended(provider, outcome, errorKind string) {
	now := time.Now()
	// The stage in progress when the call ended is the one it ended in
	// (its error), or delivery after a call that went through.
	c.stage(min(c.done+1, 7), now, errorKind)
	c.span.SetAttributes(attribute.String("airs.provider", provider), attribute.String("airs.outcome", outcome))
	if errorKind != "" {
		c.span.SetAttributes(attribute.String("airs.error_kind", errorKind))
		c.span.SetStatus(codes.Error, errorKind)
	}
	c.span.End(trace.WithTimestamp(now))
}
