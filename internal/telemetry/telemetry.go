// Package telemetry is AIRS's OpenTelemetry tracing: a span per HTTP
// request (W3C traceparent accepted), per pipeline call and per stage
// (tool, caller, provider, outcome — never the arguments), exported over
// OTLP/HTTP when telemetry.otlp.endpoint is set in airs.yaml, and log
// records that carry the trace id. Off (the default), it installs nothing:
// the middleware is the handler itself and the pipeline has no observer,
// so tracing costs nothing (BenchmarkTracingOff).
package telemetry

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// Options configure tracing; zero values take the defaults in brackets.
type Options struct {
	// Endpoint is the OTLP/HTTP receiver's URL, e.g.
	// http://127.0.0.1:4318 (/v1/traces is added when the URL has no
	// path). "": tracing is off.
	Endpoint string
	// Headers are sent with every export (an API key of a hosted backend).
	Headers map[string]string
	// ServiceName ["airs"] and ServiceVersion name the process.
	ServiceName, ServiceVersion string
	// SampleRatio is the share of new traces recorded [1]; a request that
	// arrives with a sampled traceparent is always recorded.
	SampleRatio float64
	// ExportTimeout bounds one export [10s].
	ExportTimeout time.Duration
}

// Tracing is the process's tracing, on or off.
type Tracing struct {
	tp     *sdktrace.TracerProvider // nil: off
	tracer trace.Tracer
	prop   propagation.TextMapPropagator
}

// instrumentation names AIRS's spans' scope.
const instrumentation = "github.com/airs-dev/airs"

// Start starts tracing as o says (off with no Endpoint). When on, it is
// also the process's global tracer provider and propagator (W3C trace
// context), which outgoing requests to MCP servers over HTTP use. Call
// Shutdown at exit to send what is buffered.
func Start(ctx context.Context, o Options) (*Tracing, error) {
	if o.Endpoint == "" {
		return &Tracing{}, nil
	}
	u, err := url.Parse(o.Endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("telemetry.otlp.endpoint %q: want an OTLP/HTTP URL such as http://127.0.0.1:4318", o.Endpoint)
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = "/v1/traces"
	}
	if o.ServiceName == "" {
		o.ServiceName = "airs"
	}
	if o.SampleRatio <= 0 || o.SampleRatio > 1 {
		o.SampleRatio = 1
	}
	if o.ExportTimeout <= 0 {
		o.ExportTimeout = 10 * time.Second
	}
	opts := []otlptracehttp.Option{otlptracehttp.WithEndpointURL(u.String()), otlptracehttp.WithTimeout(o.ExportTimeout)}
	if len(o.Headers) > 0 {
		opts = append(opts, otlptracehttp.WithHeaders(o.Headers))
	}
	exp, err := otlptracehttp.New(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("telemetry: the OTLP exporter: %w", err)
	}
	attrs := []attribute.KeyValue{attribute.String("service.name", o.ServiceName)}
	if o.ServiceVersion != "" {
		attrs = append(attrs, attribute.String("service.version", o.ServiceVersion))
	}
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithBatcher(exp),
		sdktrace.WithResource(resource.NewSchemaless(attrs...)),
		sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.TraceIDRatioBased(o.SampleRatio))),
	)
	prop := propagation.TraceContext{}
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(prop)
	return &Tracing{tp: tp, tracer: tp.Tracer(instrumentation), prop: prop}, nil
}

// Enabled reports whether spans are recorded and exported.
func (t *Tracing) Enabled() bool { return t != nil && t.tp != nil }

// Shutdown sends the spans still buffered and stops the exporter.
func (t *Tracing) Shutdown(ctx context.Context) error {
	if !t.Enabled() {
		return nil
	}
	return t.tp.Shutdown(ctx)
}

// Flush sends the spans buffered so far.
func (t *Tracing) Flush(ctx context.Context) error {
	if !t.Enabled() {
		return nil
	}
	return t.tp.ForceFlush(ctx)
}

// routeOf names a request's span by its path's fixed part: ids in paths
// (/v1/reviews/ID/approve) would make every span name unique.
func routeOf(path string) string {
	parts := strings.Split(path, "/")
	for i, p := range parts {
		if i > 0 && (len(p) > 24 || strings.ContainsAny(p, "0123456789") && i > 2) {
			parts[i] = "{id}"
		}
	}
	return strings.Join(parts, "/")
}
