package telemetry_test

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/airs-dev/airs/internal/telemetry"
	"github.com/airs-dev/airs/pipeline"
)

// receiver is a real OTLP/HTTP trace receiver: it decodes each export
// with the collector's protobuf types, as a collector does.
type receiver struct {
	mu    sync.Mutex
	spans []*tracepb.Span
	auth  []string
	got   chan struct{}
}

func newReceiver(t testing.TB) (*receiver, string) {
	rc := &receiver{got: make(chan struct{}, 100)}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/traces" || r.Header.Get("Content-Type") != "application/x-protobuf" {
			http.Error(w, "want POST /v1/traces as protobuf", http.StatusBadRequest)
			return
		}
		body, _ := io.ReadAll(r.Body)
		var req coltracepb.ExportTraceServiceRequest
		if err := proto.Unmarshal(body, &req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		rc.mu.Lock()
		for _, rs := range req.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				rc.spans = append(rc.spans, ss.Spans...)
			}
		}
		rc.auth = append(rc.auth, r.Header.Get("X-Api-Key"))
		rc.mu.Unlock()
		out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.Write(out)
		rc.got <- struct{}{}
	}))
	t.Cleanup(ts.Close)
	return rc, ts.URL
}

func (rc *receiver) byName() map[string][]*tracepb.Span {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	out := map[string][]*tracepb.Span{}
	for _, s := range rc.spans {
		out[s.Name] = append(out[s.Name], s)
	}
	return out
}

func attr(s *tracepb.Span, key string) string {
	for _, a := range s.Attributes {
		if a.Key == key {
			if v := a.Value.GetStringValue(); v != "" {
				return v
			}
			return a.Value.String()
		}
	}
	return ""
}

func manager(t testing.TB, obs pipeline.CallObserver) *pipeline.Manager {
	t.Helper()
	reg := pipeline.NewRegistry(pipeline.RegistryConfig{})
	add := pipeline.Tool{Name: "add", Version: "1.0.0", Description: "Add two integers.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"}},"required":["a","b"],"additionalProperties":false}`),
		Trust:      pipeline.TL2, LatencyClass: pipeline.Fast, Idempotent: true, ReadOnly: true}
	err := reg.Register("example", add, pipeline.HandlerFunc(func(ctx context.Context, params json.RawMessage, call *pipeline.Call) (json.RawMessage, error) {
		var p struct{ A, B int }
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, err
		}
		return json.Marshal(map[string]int{"sum": p.A + p.B})
	}))
	if err != nil {
		t.Fatal(err)
	}
	m, err := pipeline.NewManager(pipeline.Config{Registry: reg, Observer: obs})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

const parentTrace = "4bf92f3577b34da6a3ce929d0e0e4736"

func TestTracesReachAnOTLPReceiver(t *testing.T) {
	rc, url := newReceiver(t)
	ctx := context.Background()
	tr, err := telemetry.Start(ctx, telemetry.Options{Endpoint: url, Headers: map[string]string{"X-Api-Key": "k"}, ServiceName: "airs-test"})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Shutdown(ctx)
	m := manager(t, tr.Observer())
	var logs bytes.Buffer
	log := slog.New(telemetry.LogHandler(slog.NewTextHandler(&logs, nil)))
	h := tr.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for _, params := range []string{`{"a":2,"b":40}`, `{"a":2,"b":"secret-value"}`} {
			m.Call(r.Context(), pipeline.Request{Tool: "add", Params: []byte(params), Encoding: pipeline.JSON, Caller: "alice"})
		}
		log.InfoContext(r.Context(), "handled")
		w.WriteHeader(http.StatusTeapot)
	}))
	req := httptest.NewRequest("POST", "/v1/call", nil)
	req.Header.Set("traceparent", "00-"+parentTrace+"-00f067aa0ba902b7-01")
	h.ServeHTTP(httptest.NewRecorder(), req)
	if err := tr.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case <-rc.got:
	case <-time.After(30 * time.Second):
		t.Fatal("no export reached the receiver")
	}
	spans := rc.byName()
	srv := spans["POST /v1/call"]
	if len(srv) != 1 {
		t.Fatalf("server spans %v (all: %v)", srv, spans)
	}
	if got := string(srv[0].TraceId); got != string(mustHex(parentTrace)) {
		t.Errorf("the request's span is not in the traceparent's trace")
	}
	if attr(srv[0], "http.response.status_code") == "" || srv[0].Kind != tracepb.Span_SPAN_KIND_SERVER {
		t.Errorf("server span %v", srv[0])
	}
	calls := spans["airs.call add"]
	if len(calls) != 2 {
		t.Fatalf("call spans %d, want 2", len(calls))
	}
	outcomes := map[string]bool{}
	for _, c := range calls {
		if string(c.ParentSpanId) != string(srv[0].SpanId) {
			t.Errorf("a call span is not the request span's child")
		}
		if attr(c, "airs.tool") != "add" || attr(c, "airs.caller") != "alice" || attr(c, "airs.provider") != "example" {
			t.Errorf("call span attributes %v", c.Attributes)
		}
		outcomes[attr(c, "airs.outcome")+"/"+attr(c, "airs.error_kind")] = true
	}
	if !outcomes["ok/"] || !outcomes["error/schema_validation_failed"] {
		t.Errorf("outcomes %v", outcomes)
	}
	// The call that went through has a span for each of the seven stages;
	// the one refused at the schema ends with that stage, in error.
	for _, name := range telemetry.StageNames[1:] {
		if len(spans["airs.stage "+name]) == 0 {
			t.Errorf("no span for stage %q", name)
		}
	}
	if n := len(spans["airs.stage schema and gate"]); n != 2 {
		t.Errorf("%d schema stage spans, want 2", n)
	}
	if n := len(spans["airs.stage execute"]); n != 1 {
		t.Errorf("%d execute stage spans, want 1 (the refused call never runs)", n)
	}
	// Never the arguments.
	rc.mu.Lock()
	for _, s := range rc.spans {
		b, _ := proto.Marshal(s)
		if bytes.Contains(b, []byte("secret-value")) || bytes.Contains(b, []byte(`"a":2`)) {
			t.Errorf("span %s carries the arguments", s.Name)
		}
	}
	if rc.auth[0] != "k" {
		t.Errorf("the export's headers %v", rc.auth)
	}
	rc.mu.Unlock()
	if !strings.Contains(logs.String(), "trace_id="+parentTrace) {
		t.Errorf("the log line has no trace id: %s", logs.String())
	}
}

func TestTransportPassesTraceparent(t *testing.T) {
	_, url := newReceiver(t)
	tr, err := telemetry.Start(context.Background(), telemetry.Options{Endpoint: url})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Shutdown(context.Background())
	var got string
	mcp := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got = r.Header.Get("traceparent") }))
	defer mcp.Close()
	h := tr.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req, _ := http.NewRequestWithContext(r.Context(), "POST", mcp.URL, nil)
		resp, err := (&http.Client{Transport: tr.Transport(nil)}).Do(req)
		if err == nil {
			resp.Body.Close()
		}
	}))
	req := httptest.NewRequest("POST", "/mcp", nil)
	req.Header.Set("traceparent", "00-"+parentTrace+"-00f067aa0ba902b7-01")
	h.ServeHTTP(httptest.NewRecorder(), req)
	if !strings.HasPrefix(got, "00-"+parentTrace+"-") {
		t.Errorf("the outgoing request's traceparent %q is not in the caller's trace", got)
	}
}

func TestOffInstallsNothing(t *testing.T) {
	tr, err := telemetry.Start(context.Background(), telemetry.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if tr.Enabled() || tr.Observer() != nil {
		t.Error("tracing off still observes")
	}
	h := http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
	if got := tr.Middleware(h); !sameHandler(got, h) {
		t.Error("the middleware off is not the handler itself")
	}
	if _, err := telemetry.Start(context.Background(), telemetry.Options{Endpoint: "localhost:4318"}); err == nil {
		t.Error("an endpoint that is no URL was taken")
	}
}

func sameHandler(a, b http.Handler) bool {
	return reflect.ValueOf(a).Pointer() == reflect.ValueOf(b).Pointer()
}

func mustHex(s string) []byte {
	b, err := hex.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}
