package server

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airs-dev/airs/pipeline"
)

// floodRig is a server over a Manager with an echo tool, a fake clock for
// its flood gate, and the holds it made recorded instead of slept.
type floodRig struct {
	s     *Server
	clk   *fakeClock
	mu    sync.Mutex
	holds []time.Duration
}

func newFloodRig(t *testing.T, limits Limits, rates map[string]pipeline.RateLimit) *floodRig {
	t.Helper()
	reg := pipeline.NewRegistry(pipeline.RegistryConfig{})
	echo := pipeline.HandlerFunc(func(ctx context.Context, p json.RawMessage, c *pipeline.Call) (json.RawMessage, error) {
		return p, nil
	})
	if err := reg.Register("test", pipeline.Tool{Name: "echo", Version: "1", Parameters: json.RawMessage(`{"type":"object"}`), Idempotent: true, LatencyClass: pipeline.Fast}, echo); err != nil {
		t.Fatal(err)
	}
	f := &floodRig{clk: &fakeClock{t: time.Unix(1e9, 0)}}
	// The rate-limit buckets run on the gate's clock too.
	m, err := pipeline.NewManager(pipeline.Config{Registry: reg, Policy: &pipeline.StaticPolicy{Channels: map[string][]string{"*": {"*"}}}, RateLimits: rates, Now: f.clk.now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close() })
	f.s = New(&testBackend{m}, Config{Tokens: []Token{{HashToken("tok-alice"), "alice"}, {HashToken("tok-bob"), "bob"}}, MaxBody: 1 << 20, Limits: limits})
	f.s.flood.now = f.clk.now
	f.s.flood.sleep = func(ctx context.Context, d time.Duration) {
		f.mu.Lock()
		f.holds = append(f.holds, d)
		f.mu.Unlock()
	}
	return f
}

// do sends a call from addr with tok and answers the recorder and how
// many bytes of the body the server read.
func (f *floodRig) do(addr, tok, body string) (*httptest.ResponseRecorder, int64) {
	cb := &countingBody{r: strings.NewReader(body)}
	r := httptest.NewRequest("POST", "/v1/call", cb)
	r.RemoteAddr = addr
	r.Header.Set("Authorization", "Bearer "+tok)
	w := httptest.NewRecorder()
	f.s.ServeHTTP(w, r)
	return w, cb.read.Load()
}

func (f *floodRig) held() []time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]time.Duration(nil), f.holds...)
}

const echoCall = `{"tool":"echo","arguments":{"n":1}}`

// A caller whose bucket is empty is refused before its call's body is
// read; one that asks again before its Retry-After is held (up to
// holdTold) before it is answered, while another agent at the same address
// is not held, and a client that waited as told is not held either.
func TestFloodHeldUntilItsRetryAfter(t *testing.T) {
	f := newFloodRig(t, Limits{}, map[string]pipeline.RateLimit{"bob": {PerSecond: 0.1, Burst: 1}})
	const addr = "127.0.0.1:5000"
	if w, _ := f.do(addr, "tok-bob", echoCall); w.Code != 200 {
		t.Fatalf("first call: %d %s", w.Code, w.Body)
	}
	big := `{"tool":"echo","arguments":{"pad":"` + strings.Repeat("x", 100_000) + `"}}`
	w, read := f.do(addr, "tok-bob", big)
	if w.Code != 429 || w.Header().Get("Retry-After") != "10" {
		t.Fatalf("over the rate: %d Retry-After %q %s", w.Code, w.Header().Get("Retry-After"), w.Body)
	}
	if read != 0 {
		t.Errorf("the refused call's body was read: %d bytes", read)
	}
	if h := f.held(); len(h) != 0 {
		t.Fatalf("held before it was told to wait: %v", h)
	}
	// Asked again at once: held, then refused (its wait is not over).
	if w, _ := f.do(addr, "tok-bob", echoCall); w.Code != 429 {
		t.Fatalf("flooding: %d %s", w.Code, w.Body)
	}
	if h := f.held(); len(h) != 1 || h[0] <= 0 || h[0] > holdTold {
		t.Fatalf("holds %v, want one in (0, %v]", h, holdTold)
	}
	// The same agent's selection, another path, is not held.
	sel := httptest.NewRequest("POST", "/v1/select", strings.NewReader(`{"text":"echo"}`))
	sel.RemoteAddr = addr
	sel.Header.Set("Authorization", "Bearer tok-bob")
	f.s.ServeHTTP(httptest.NewRecorder(), sel)
	if h := f.held(); len(h) != 1 {
		t.Fatalf("bob's select was held: %v", h)
	}
	// Another agent at the same address (loopback) is neither held nor refused.
	if w, _ := f.do(addr, "tok-alice", echoCall); w.Code != 200 {
		t.Fatalf("alice at bob's address: %d %s", w.Code, w.Body)
	}
	if h := f.held(); len(h) != 1 {
		t.Fatalf("alice was held: %v", h)
	}
	// bob, having waited as told, is served without being held.
	f.clk.add(10 * time.Second)
	r := httptest.NewRequest("POST", "/v1/call", nil)
	r.RemoteAddr = addr
	r.Header.Set("Authorization", "Bearer tok-bob")
	if d, _ := f.s.flood.holdFor(f.s.flood.clientKey(clientAddr(r), r)); d != 0 {
		t.Fatalf("bob after his Retry-After: still held %v", d)
	}
}

// Each client address has a request bucket, checked before anything else:
// past it, 429 with Retry-After, no token checked and no body read;
// another address is served.
func TestPerAddressRequestRate(t *testing.T) {
	f := newFloodRig(t, Limits{PerAddressPerSecond: 1, PerAddressBurst: 2}, nil)
	for i := range 2 {
		if w, _ := f.do("10.0.0.1:1", "tok-alice", echoCall); w.Code != 200 {
			t.Fatalf("request %d within the burst: %d %s", i+1, w.Code, w.Body)
		}
	}
	checks := f.s.tokenChecks.Load()
	w, read := f.do("10.0.0.1:2", "tok-bob", echoCall)
	if n := f.s.tokenChecks.Load() - checks; n != 0 {
		t.Errorf("the refused request's token was checked (%d)", n)
	}
	if w.Code != 429 || w.Header().Get("Retry-After") != "1" || !strings.Contains(w.Body.String(), "per_address_per_second") {
		t.Fatalf("over the address's rate: %d Retry-After %q %s", w.Code, w.Header().Get("Retry-After"), w.Body)
	}
	if read != 0 {
		t.Errorf("the refused request's body was read: %d bytes", read)
	}
	if w, _ := f.do("10.0.0.2:1", "tok-bob", echoCall); w.Code != 200 {
		t.Fatalf("another address: %d %s", w.Code, w.Body)
	}
	f.clk.add(time.Second)
	if w, _ := f.do("10.0.0.1:1", "tok-alice", echoCall); w.Code != 200 {
		t.Fatalf("after a second: %d %s", w.Code, w.Body)
	}
	// /healthz is never limited.
	r := httptest.NewRequest("GET", "/healthz", nil)
	r.RemoteAddr = "10.0.0.1:1"
	for range 3 {
		w := httptest.NewRecorder()
		f.s.ServeHTTP(w, r)
		if w.Code != 200 {
			t.Fatalf("/healthz: %d", w.Code)
		}
	}
}
