package client

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/airs-dev/airs/mcp/client/mcptest"
	"github.com/airs-dev/airs/pipeline"
)

// A traced call reaches an MCP server over HTTP with its trace context
// (W3C traceparent), so the server's own trace continues the caller's;
// an untraced one sends none.
func TestStreamableHTTPPassesTraceparent(t *testing.T) {
	prev := otel.GetTextMapPropagator()
	otel.SetTextMapPropagator(propagation.TraceContext{})
	t.Cleanup(func() { otel.SetTextMapPropagator(prev) })
	srv := mcptest.New(0)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	var mu sync.Mutex
	var seen []string
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(readPeek(r), `"tools/call"`) {
			mu.Lock()
			seen = append(seen, r.Header.Get("traceparent"))
			mu.Unlock()
		}
		h.ServeHTTP(w, r)
	}))
	defer ts.Close()
	ctx := context.Background()
	reg := pipeline.NewRegistry(pipeline.RegistryConfig{})
	c, err := Connect(ctx, reg, Server{Name: "w", URL: ts.URL, MaxMessageBytes: 1 << 20, RestartsPerMinute: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	m, err := pipeline.NewManager(pipeline.Config{Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	tp := sdktrace.NewTracerProvider()
	defer tp.Shutdown(ctx)
	tctx, span := tp.Tracer("test").Start(ctx, "request")
	if _, err := m.Call(tctx, pipeline.Request{Tool: "w.echo", Params: []byte(`{"s":"traced"}`), Caller: "u"}); err != nil {
		t.Fatal(err)
	}
	span.End()
	if _, err := m.Call(ctx, pipeline.Request{Tool: "w.echo", Params: []byte(`{"s":"not traced"}`), Caller: "u"}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	want := "00-" + span.SpanContext().TraceID().String() + "-"
	if len(seen) != 2 || !strings.HasPrefix(seen[0], want) || seen[1] != "" {
		t.Errorf("traceparent of the traced and the untraced call: %q, want %s… and none", seen, want)
	}
}

// readPeek reads a request's body and puts it back for the handler.
func readPeek(r *http.Request) string {
	if r.Body == nil {
		return ""
	}
	b, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(b))
	return string(b)
}
