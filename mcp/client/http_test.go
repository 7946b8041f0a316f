package client

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airs-dev/airs/mcp/client/mcptest"
	"github.com/airs-dev/airs/pipeline"
)

func TestStreamableHTTP(t *testing.T) {
	srv := mcptest.New(0)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	var sawAuth atomic.Bool
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer s3cret" {
			http.Error(w, "who are you", http.StatusUnauthorized)
			return
		}
		sawAuth.Store(true)
		h.ServeHTTP(w, r)
	}))
	defer ts.Close()
	ctx := context.Background()
	reg := pipeline.NewRegistry(pipeline.RegistryConfig{})
	if _, err := Connect(ctx, reg, Server{Name: "w", URL: ts.URL}); err == nil {
		t.Fatal("connected without the header")
	}
	c, err := Connect(ctx, reg, Server{Name: "w", URL: ts.URL, Headers: http.Header{"Authorization": {"Bearer s3cret"}}, MaxMessageBytes: 1 << 20, RestartsPerMinute: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	m, err := pipeline.NewManager(pipeline.Config{Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	res, err := m.Call(ctx, pipeline.Request{Tool: "w.echo", Params: []byte(`{"s":"over http"}`), Caller: "u"})
	if err != nil || string(res.Output) != `{"echo":"over http"}` || !sawAuth.Load() {
		t.Fatalf("call: %v %v (auth seen %v)", err, res, sawAuth.Load())
	}
	_, err = m.Call(ctx, pipeline.Request{Tool: "w.big", Params: []byte(`{"n":2000000}`), Caller: "u"})
	if pipeline.KindOf(err) != pipeline.KindProviderRejected || !strings.Contains(err.Error(), "max_message_bytes") {
		t.Fatalf("2 MB over a 1 MB bound: %v", err)
	}
	// The session was dropped and a new one made.
	if _, err := m.Call(ctx, pipeline.Request{Tool: "w.echo", Params: []byte(`{"s":"again"}`), Caller: "u"}); err != nil {
		t.Fatalf("after reconnecting: %v", err)
	}
}
