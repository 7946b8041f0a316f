package client

import (
	"io"
	"net/http"
	"sync/atomic"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// headerTransport adds the configured headers (read from the environment
// when AIRS started) to every request, and bounds each line of every
// response body: a streamable HTTP answer is one JSON message or an SSE
// stream of lines.
type headerTransport struct {
	base    http.RoundTripper
	headers http.Header
	limit   *httpLimit
}

// httpLimit is the bound on one message from an HTTP server; tripped tells
// the call that failed why.
type httpLimit struct {
	max     int
	tripped atomic.Bool
}

func (t *headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if len(t.headers) > 0 {
		req = req.Clone(req.Context())
		for k, vs := range t.headers {
			req.Header[k] = append([]string(nil), vs...)
		}
	}
	if trace.SpanContextFromContext(req.Context()).IsValid() {
		// The call is traced (telemetry.otlp in airs.yaml): the server
		// gets its trace context (W3C traceparent) to continue the trace.
		req = req.Clone(req.Context())
		otel.GetTextMapPropagator().Inject(req.Context(), propagation.HeaderCarrier(req.Header))
	}
	resp, err := t.base.RoundTrip(req)
	if err != nil || resp.Body == nil {
		return resp, err
	}
	resp.Body = &limitedBody{lineLimit{r: resp.Body, max: t.limit.max}, t.limit}
	return resp, nil
}

type limitedBody struct {
	lineLimit
	owner *httpLimit
}

func (b *limitedBody) Read(p []byte) (int, error) {
	n, err := b.lineLimit.Read(p)
	if err == errMessageTooLarge {
		b.owner.tripped.Store(true)
	}
	return n, err
}

var _ io.ReadCloser = (*limitedBody)(nil)
