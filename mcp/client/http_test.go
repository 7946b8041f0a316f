package client

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

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

// httpServer is mcptest served over streamable HTTP at addr ("" = a free
// port), as a remote server would be. Its Close drops every connection at
// once, a call in progress too, as a server that goes away does.
func httpServer(t *testing.T, addr string) (*http.Server, string) {
	t.Helper()
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	var ln net.Listener
	var err error
	for range 50 { // the old socket may take a moment to free the port
		if ln, err = net.Listen("tcp", addr); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	srv := mcptest.New(0)
	hs := &http.Server{Handler: mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)}
	go hs.Serve(ln)
	t.Cleanup(func() { hs.Close() })
	return hs, ln.Addr().String()
}

// TestStreamableHTTPServerGoesAwayAndComesBack: a call in progress when
// the server goes away is provider_crashed; while it is away calls fail
// at once (provider_unavailable, with a Retry-After); when it is back at
// the same address AIRS reconnects by itself, with backoff, however often
// that happens (restarts_per_minute bounds processes, not a remote
// server's absences).
func TestStreamableHTTPServerGoesAwayAndComesBack(t *testing.T) {
	hs, addr := httpServer(t, "")
	ctx := context.Background()
	reg := pipeline.NewRegistry(pipeline.RegistryConfig{})
	c, err := Connect(ctx, reg, Server{Name: "w", URL: "http://" + addr, RestartsPerMinute: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	m, err := pipeline.NewManager(pipeline.Config{Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	call := func(tool, params string) error {
		_, err := m.Call(ctx, pipeline.Request{Tool: "w." + tool, Params: []byte(params), Caller: "u", Timeout: 20 * time.Second})
		return err
	}
	if err := call("echo", `{"s":"x"}`); err != nil {
		t.Fatal(err)
	}
	for round := range 2 {
		// Away in the middle of a call.
		errc := make(chan error, 1)
		go func() { errc <- call("hang", `{}`) }()
		time.Sleep(300 * time.Millisecond)
		hs.Close()
		select {
		case err := <-errc:
			if pipeline.KindOf(err) != pipeline.KindProviderCrashed {
				t.Fatalf("round %d: the call in progress: %v, want provider_crashed", round, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("round %d: the call in progress did not end when the server went away", round)
		}
		// Away: at once, and saying when AIRS tries again.
		start := time.Now()
		err := call("echo", `{"s":"x"}`)
		var pu *pipeline.ProviderUnavailable
		if !errors.As(err, &pu) || pu.RetryAfter <= 0 || !strings.Contains(err.Error(), "reconnects in the background") {
			t.Fatalf("round %d: a call while away: %v", round, err)
		}
		if d := time.Since(start); d > time.Second {
			t.Fatalf("round %d: a call while away took %v", round, d)
		}
		time.Sleep(time.Second) // a few failed attempts: the backoff grows
		hs, _ = httpServer(t, addr)
		deadline := time.Now().Add(15 * time.Second)
		for c.down.Load() {
			if time.Now().After(deadline) {
				t.Fatalf("round %d: not reconnected 15 s after the server came back", round)
			}
			time.Sleep(20 * time.Millisecond)
		}
		if err := call("echo", `{"s":"back"}`); err != nil {
			t.Fatalf("round %d: after it came back: %v", round, err)
		}
	}
	if c.GaveUp() || c.Restarted.Load() < 2 {
		t.Fatalf("gave up %v, reconnected %d times", c.GaveUp(), c.Restarted.Load())
	}
}
