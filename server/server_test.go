package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/airs-dev/airs/chains"
	"github.com/airs-dev/airs/pipeline"
)

// testBackend serves calls through a real Manager; selection, planning and
// pipelines are not what these tests are about.
type testBackend struct{ m *pipeline.Manager }

func (b *testBackend) Call(ctx context.Context, req pipeline.Request) (*pipeline.Result, error) {
	return b.m.Call(ctx, req)
}
func (b *testBackend) Select(ctx context.Context, caller, text string) (any, error) {
	return map[string]string{"caller": caller, "text": text}, nil
}
func (b *testBackend) Plan(ctx context.Context, caller, text string) (any, error) {
	return nil, errors.New("no plan")
}
func (b *testBackend) Chat(ctx context.Context, caller, text string, emit func(string, any) error) error {
	for _, w := range strings.Fields(text) {
		if err := emit("token", w); err != nil {
			return err
		}
	}
	return nil
}

// RunPipeline parses for real (so its errors are chains' own) and answers
// the steps it would run.
func (b *testBackend) RunPipeline(ctx context.Context, caller string, y []byte, in map[string]any) (any, error) {
	c, err := chains.Parse("request", y)
	if err != nil {
		return nil, err
	}
	return map[string]int{"steps": len(c.Steps)}, nil
}
func (b *testBackend) Tools(caller string) any { return b.m.Registry().List() }
func (b *testBackend) WriteMetrics(caller string, w io.Writer) error {
	return b.m.WritePrometheus(w)
}
func (b *testBackend) Admit(caller string) error { return b.m.Admit(caller) }
func (b *testBackend) CallerRefused(caller string) error {
	return b.m.CallerRefused(caller)
}

const schema = `{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"],"additionalProperties":false}`

// wideSchema has 50 integer properties p0…p49, so one call can break it
// 50 times.
func wideSchema() string {
	var props []string
	for i := range 50 {
		props = append(props, fmt.Sprintf(`"p%d":{"type":"integer"}`, i))
	}
	return `{"type":"object","properties":{` + strings.Join(props, ",") + `}}`
}

func newTestServer(t *testing.T) (base string, stop func()) {
	t.Helper()
	return newTestServerWith(t, nil)
}

// newTestServerWith is newTestServer with the Manager's config adjusted
// by mod (rate limits, say).
func newTestServerWith(t *testing.T, mod func(*pipeline.Config)) (base string, stop func()) {
	t.Helper()
	return newTestServerWithBody(t, 4096, mod)
}

// newTestServerWithBody is newTestServerWith with bodies of up to maxBody
// bytes.
func newTestServerWithBody(t *testing.T, maxBody int64, mod func(*pipeline.Config)) (base string, stop func()) {
	t.Helper()
	reg := pipeline.NewRegistry(pipeline.RegistryConfig{})
	echo := pipeline.HandlerFunc(func(ctx context.Context, p json.RawMessage, c *pipeline.Call) (json.RawMessage, error) {
		return p, nil
	})
	slow := pipeline.HandlerFunc(func(ctx context.Context, p json.RawMessage, c *pipeline.Call) (json.RawMessage, error) {
		select {
		case <-time.After(300 * time.Millisecond):
			return json.RawMessage(`{"slow":true}`), nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	})
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(reg.Register("test", pipeline.Tool{Name: "echo", Version: "1", Parameters: json.RawMessage(schema), Idempotent: true, LatencyClass: pipeline.Fast}, echo))
	must(reg.Register("test", pipeline.Tool{Name: "slow", Version: "1", Parameters: json.RawMessage(`{"type":"object"}`), Idempotent: true, LatencyClass: pipeline.Fast}, slow))
	must(reg.Register("test", pipeline.Tool{Name: "secret", Version: "1", Parameters: json.RawMessage(`{"type":"object"}`), Idempotent: true, LatencyClass: pipeline.Fast,
		CapabilityRequired: []pipeline.Capability{{Kind: "ReadSpace", Arg: "vault"}}}, echo))
	must(reg.Register("test", pipeline.Tool{Name: "wide", Version: "1", Parameters: json.RawMessage(wideSchema()), Idempotent: true, LatencyClass: pipeline.Fast}, echo))
	mc := pipeline.Config{Registry: reg, Policy: &pipeline.StaticPolicy{
		Channels:     map[string][]string{"*": {"*"}},
		Capabilities: map[string][]pipeline.Capability{"alice": {{Kind: "ReadSpace", Arg: "vault"}}},
	}}
	if mod != nil {
		mod(&mc)
	}
	m, err := pipeline.NewManager(mc)
	must(err)
	s := New(&testBackend{m}, Config{Tokens: []Token{{HashToken("tok-alice"), "alice"}, {HashToken("tok-bob"), "bob"}}, MaxBody: maxBody})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	must(err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, l) }()
	return "http://" + l.Addr().String(), func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
		m.Close()
	}
}

func post(t *testing.T, url, token, body string) (*http.Response, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&m)
	return resp, m
}

func TestAuthAndStatuses(t *testing.T) {
	base, stop := newTestServer(t)
	defer stop()
	cases := []struct {
		name, token, body string
		status            int
		kind              string
	}{
		{"no token", "", `{"tool":"echo","arguments":{"n":1}}`, 401, "unauthorized"},
		{"unknown token", "nope", `{"tool":"echo","arguments":{"n":1}}`, 401, "unauthorized"},
		{"ok", "tok-bob", `{"tool":"echo","arguments":{"n":1}}`, 200, ""},
		{"missing capability", "tok-bob", `{"tool":"secret","arguments":{}}`, 403, pipeline.KindToolCapabilityDenied},
		{"capability held", "tok-alice", `{"tool":"secret","arguments":{}}`, 200, ""},
		{"caller in body is not a field", "tok-bob", `{"tool":"secret","arguments":{},"caller":"alice"}`, 400, "bad_request"},
		{"invalid params", "tok-bob", `{"tool":"echo","arguments":{"n":"x"}}`, 422, pipeline.KindSchemaValidationFailed},
		{"unknown tool", "tok-bob", `{"tool":"nope","arguments":{}}`, 404, pipeline.KindToolNotFound},
		{"body too large", "tok-bob", `{"tool":"echo","arguments":{"n":1,"pad":"` + strings.Repeat("x", 5000) + `"}}`, 413, "payload_too_large"},
		{"timeout", "tok-bob", `{"tool":"slow","arguments":{},"timeout_ms":50}`, 504, pipeline.KindTimeout},
	}
	for _, c := range cases {
		resp, body := post(t, base+"/v1/call", c.token, c.body)
		if resp.StatusCode != c.status {
			t.Errorf("%s: status %d, want %d (%v)", c.name, resp.StatusCode, c.status, body)
			continue
		}
		if c.kind != "" && body["error"] != c.kind {
			t.Errorf("%s: error %v, want %s", c.name, body["error"], c.kind)
		}
	}
	// /metrics and /v1/tools need a token too; /healthz does not.
	for _, p := range []string{"/metrics", "/v1/tools"} {
		resp, err := http.Get(base + p)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 401 {
			t.Errorf("GET %s without token: %d", p, resp.StatusCode)
		}
	}
	resp, err := http.Get(base + "/healthz")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("healthz: %v %v", err, resp)
	}
	resp.Body.Close()
}

func TestMetricsAndSSE(t *testing.T) {
	base, stop := newTestServer(t)
	defer stop()
	post(t, base+"/v1/call", "tok-bob", `{"tool":"echo","arguments":{"n":1}}`)
	req, _ := http.NewRequest("GET", base+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer tok-bob")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !bytes.Contains(b, []byte("echo")) || !bytes.Contains(b, []byte("airs_http_requests_total")) {
		t.Errorf("metrics lack the echo tool or http counters:\n%s", b)
	}

	req, _ = http.NewRequest("POST", base+"/v1/chat", strings.NewReader(`{"text":"one two three"}`))
	req.Header.Set("Authorization", "Bearer tok-bob")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	var events []string
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if e, ok := strings.CutPrefix(sc.Text(), "event: "); ok {
			events = append(events, e)
		}
	}
	if strings.Join(events, ",") != "token,token,token,done" {
		t.Errorf("events %v", events)
	}
}

func TestGracefulShutdownDrains(t *testing.T) {
	base, stop := newTestServer(t)
	got := make(chan int, 1)
	go func() {
		resp, _ := post(t, base+"/v1/call", "tok-bob", `{"tool":"slow","arguments":{}}`)
		got <- resp.StatusCode
	}()
	time.Sleep(100 * time.Millisecond) // the slow call is in flight
	stop()
	select {
	case code := <-got:
		if code != 200 {
			t.Errorf("in-flight call finished with %d during shutdown, want 200", code)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("in-flight call never finished")
	}
}
