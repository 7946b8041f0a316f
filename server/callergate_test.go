package server

import (
	"context"
	"encoding/json"
	"io"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airs-dev/airs/pipeline"
)

// countingBody counts the bytes the server reads of a request body.
type countingBody struct {
	r    io.Reader
	read atomic.Int64
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	b.read.Add(int64(n))
	return n, err
}

// A caller held back for its own expired deadlines is refused before its
// body is read (429 with Retry-After); another caller's call still runs.
func TestHeldBackCallerRefusedBeforeItsBody(t *testing.T) {
	reg := pipeline.NewRegistry(pipeline.RegistryConfig{})
	hang := pipeline.HandlerFunc(func(ctx context.Context, p json.RawMessage, c *pipeline.Call) (json.RawMessage, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	})
	echo := pipeline.HandlerFunc(func(ctx context.Context, p json.RawMessage, c *pipeline.Call) (json.RawMessage, error) {
		return p, nil
	})
	if err := reg.Register("test", pipeline.Tool{Name: "hang", Version: "1", Parameters: json.RawMessage(`{"type":"object"}`), LatencyClass: pipeline.Fast}, hang); err != nil {
		t.Fatal(err)
	}
	if err := reg.Register("test", pipeline.Tool{Name: "echo", Version: "1", Parameters: json.RawMessage(`{"type":"object"}`), Idempotent: true, LatencyClass: pipeline.Fast}, echo); err != nil {
		t.Fatal(err)
	}
	m, err := pipeline.NewManager(pipeline.Config{Registry: reg, Policy: &pipeline.StaticPolicy{Channels: map[string][]string{"*": {"*"}}},
		CallerTimeouts: pipeline.CallerTimeoutLimit{Timeouts: 2, Window: time.Minute, Cooldown: time.Minute}})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	s := New(&testBackend{m}, Config{Tokens: []Token{{HashToken("tok-alice"), "alice"}, {HashToken("tok-bob"), "bob"}}, MaxBody: 1 << 20})
	do := func(tok, body string) (*httptest.ResponseRecorder, *countingBody) {
		cb := &countingBody{r: strings.NewReader(body)}
		r := httptest.NewRequest("POST", "/v1/call", cb)
		r.Header.Set("Authorization", "Bearer "+tok)
		w := httptest.NewRecorder()
		s.ServeHTTP(w, r)
		return w, cb
	}
	for i := range 2 {
		if w, _ := do("tok-bob", `{"tool":"hang","arguments":{},"timeout_ms":5}`); w.Code != 504 {
			t.Fatalf("own short deadline %d: %d %s", i, w.Code, w.Body)
		}
	}
	big := `{"tool":"echo","arguments":{"pad":"` + strings.Repeat("x", 200_000) + `"}}`
	w, cb := do("tok-bob", big)
	if w.Code != 429 || w.Header().Get("Retry-After") == "" || !strings.Contains(w.Body.String(), "own deadline") {
		t.Fatalf("held-back caller: %d Retry-After %q %s", w.Code, w.Header().Get("Retry-After"), w.Body)
	}
	if n := cb.read.Load(); n != 0 {
		t.Errorf("the refused call's body was read: %d bytes", n)
	}
	if w, _ := do("tok-alice", big); w.Code != 200 {
		t.Fatalf("another caller: %d %s", w.Code, w.Body)
	}
}
