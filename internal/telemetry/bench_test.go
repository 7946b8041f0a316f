package telemetry_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/airs-dev/airs/internal/telemetry"
	"github.com/airs-dev/airs/pipeline"
)

// BenchmarkTracing is a pipeline call inside an HTTP request's handler
// with tracing off (the default: no observer, the handler itself) and on
// (spans exported to a receiver in the process): "off" must cost what no
// tracing at all costs ("none").
func BenchmarkTracing(b *testing.B) {
	_, url := newReceiver(b)
	on, err := telemetry.Start(context.Background(), telemetry.Options{Endpoint: url})
	if err != nil {
		b.Fatal(err)
	}
	defer on.Shutdown(context.Background())
	off, _ := telemetry.Start(context.Background(), telemetry.Options{})
	params := []byte(`{"a":2,"b":40}`)
	for _, c := range []struct {
		name string
		mw   func(http.Handler) http.Handler
		obs  pipeline.CallObserver
	}{
		{"none", func(h http.Handler) http.Handler { return h }, nil},
		{"off", off.Middleware, off.Observer()},
		{"on", on.Middleware, on.Observer()},
	} {
		b.Run(c.name, func(b *testing.B) {
			m := manager(b, c.obs)
			h := c.mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if _, err := m.Call(r.Context(), pipeline.Request{Tool: "add", Params: params, Encoding: pipeline.JSON, Caller: "alice"}); err != nil {
					b.Fatal(err)
				}
			}))
			req := httptest.NewRequest("POST", "/v1/call", nil)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				h.ServeHTTP(httptest.NewRecorder(), req)
			}
		})
	}
}
