package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/airs-dev/airs/guard"
	"github.com/airs-dev/airs/internal/engine/httpapi"
	"github.com/airs-dev/airs/mcp/client/mcptest"
	"github.com/airs-dev/airs/server"
)

// abandonText marks the /v1/select request that fairnessBackend watches.
const abandonText = "abandon me: which tool compares two texts"

// fairnessBackend is the engine's own backend; a select of abandonText
// says when it starts, waits until its request's context ends (the client
// left), then asks the engine's selection with that context and reports
// what it answered: the work the client left must end, not run on.
type fairnessBackend struct {
	server.Backend
	started chan struct{}
	ended   chan error
}

func (b *fairnessBackend) Select(ctx context.Context, caller, text string) (any, error) {
	if text != abandonText {
		return b.Backend.Select(ctx, caller, text)
	}
	b.started <- struct{}{}
	<-ctx.Done()
	sel, err := b.Backend.Select(ctx, caller, text)
	if err == nil {
		err = fmt.Errorf("the engine selected %v for a request whose client had left", sel)
	}
	b.ended <- err
	return nil, err
}

// TestHostileAgentDoesNotDegradeAQuietOne checks, on the engine and the
// HTTP server airs serve runs, the mechanisms the fairness benchmark
// (scripts/fairness.sh) relies on, with a hostile and a quiet agent:
//
//   - the hostile agent's destructive calls are held until its pending
//     confirmations reach their bound; the next is refused with an error
//     that says why, while the quiet agent's call is still held (accepted);
//   - a /v1/select whose client left ends its work;
//   - the hostile agent's own short deadlines expire on a tool that hangs,
//     more often than the breaker's threshold: its calls are then refused
//     (429, Retry-After), the breaker stays closed, and the quiet agent's
//     calls of the same provider, and of the tool itself, go on.
func TestHostileAgentDoesNotDegradeAQuietOne(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"docs", "scratch"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(dir, "docs", "a.txt"), []byte("hello\n"), 0o644)
	argv := mcptest.Command()
	const ownTimeouts = 6 // more than the breaker's 5 faults
	cfgPath := filepath.Join(dir, "airs.yaml")
	caps := `["ReadSpace(documents)", "WriteSpace(scratch)", "MCP(t)"]`
	yaml := fmt.Sprintf(`home: ./state
spaces: {documents: ./docs, scratch: ./scratch}
agents:
  quiet: {capabilities: %s}
  hostile: {capabilities: %s}
caller_timeouts: {timeouts: %d, window: 1h, cooldown: 1h}
mcp:
  servers:
    t:
      command: [%q, %q]
      env: {%s: "1", %s: %q}
      requires: ["ReadSpace(documents)"]
`, caps, caps, ownTimeouts, argv[0], argv[1], mcptest.EnvServe, mcptest.EnvLog, filepath.Join(dir, "mcp-events"))
	if err := os.WriteFile(cfgPath, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("AIRS_HOME", filepath.Join(dir, "state"))
	t.Setenv("HOME", dir)

	var stderr syncBuffer
	a := &app{stdin: strings.NewReader(""), stdout: io.Discard, stderr: &stderr, configFlag: cfgPath, cmd: serveCmd}
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	e, closeE, err := a.build(ctx, engineSpec{Channel: "serve", Model: "none"})
	if err != nil {
		t.Fatalf("starting the engine: %v\n%s", err, stderr.String())
	}
	defer closeE()
	defer a.close()
	b := &fairnessBackend{Backend: httpapi.New(e), started: make(chan struct{}, 1), ended: make(chan error, 1)}
	s := server.New(b, server.Config{Tokens: []server.Token{{SHA256: server.HashToken("q"), Agent: "quiet"}, {SHA256: server.HashToken("h"), Agent: "hostile"}},
		RequestTimeout: time.Hour, Logger: a.quietLogger()})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx, l) }()
	defer func() { stop(); <-served }()
	base := "http://" + l.Addr().String()
	call := func(ctx context.Context, token, path, body string) (int, http.Header, map[string]any) {
		t.Helper()
		req, _ := http.NewRequestWithContext(ctx, "POST", base+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("POST %s %s: %v", path, body, err)
		}
		defer resp.Body.Close()
		var out map[string]any
		raw, _ := io.ReadAll(resp.Body)
		_ = json.Unmarshal(raw, &out)
		return resp.StatusCode, resp.Header, out
	}
	bg := context.Background()

	// Held calls: the hostile agent's pending confirmations fill up to
	// their bound, then a new one is refused saying why; the quiet agent's
	// destructive call is still held for a person.
	for i := range guard.DefaultMaxPendingPerAgent {
		body := fmt.Sprintf(`{"tool":"delete-file","arguments":{"space":"scratch","path":"held/%d.txt"}}`, i)
		if st, _, out := call(bg, "h", "/v1/call", body); st != http.StatusPreconditionRequired {
			t.Fatalf("hostile's held call %d: HTTP %d %v, want 428 (held for a person)", i, st, out)
		}
	}
	st, _, out := call(bg, "h", "/v1/call", `{"tool":"delete-file","arguments":{"space":"scratch","path":"held/one-more.txt"}}`)
	if msg, _ := out["message"].(string); st/100 != 4 || st == http.StatusPreconditionRequired || !strings.Contains(msg, "confirmations waiting for a person") {
		t.Errorf("hostile's call past its pending bound: HTTP %d %v, want a refusal that says its confirmations wait for a person", st, out)
	}
	if st, _, out := call(bg, "q", "/v1/call", `{"tool":"delete-file","arguments":{"space":"scratch","path":"mine.txt"}}`); st != http.StatusPreconditionRequired {
		t.Errorf("quiet agent's destructive call beside a hostile one at its bound: HTTP %d %v, want 428 (held, accepted)", st, out)
	}

	// An abandoned select ends its work.
	leftCtx, leave := context.WithCancel(bg)
	clientDone := make(chan struct{})
	go func() {
		defer close(clientDone)
		req, _ := http.NewRequestWithContext(leftCtx, "POST", base+"/v1/select", strings.NewReader(`{"text":"`+abandonText+`"}`))
		req.Header.Set("Authorization", "Bearer h")
		if resp, err := (&http.Client{Transport: &http.Transport{}}).Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	<-b.started
	leave()
	select {
	case err := <-b.ended:
		if !strings.Contains(err.Error(), "context canceled") {
			t.Errorf("the abandoned select ended with %v, want its context's cancellation", err)
		}
	case <-time.After(30 * time.Second): // a failure's bound: the end comes when the connection closes
		t.Fatal("the select goes on after its client left")
	}
	<-clientDone

	// Own timeouts: the hostile agent's short deadlines on a tool that
	// never answers; then it is limited, not the tool nor the others.
	for i := range ownTimeouts {
		st, _, out := call(bg, "h", "/v1/call", fmt.Sprintf(`{"tool":"t.hang","arguments":{"id":"h%d"},"timeout_ms":50}`, i))
		if st != http.StatusGatewayTimeout {
			t.Fatalf("hostile's hang %d with a 50 ms deadline: HTTP %d %v, want 504", i, st, out)
		}
	}
	st, hdr, out := call(bg, "h", "/v1/call", `{"tool":"calculator","arguments":{"expression":"1+1"}}`)
	if msg, _ := out["message"].(string); st != http.StatusTooManyRequests || hdr.Get("Retry-After") == "" || !strings.Contains(msg, "own deadline") {
		t.Errorf("hostile after %d own timeouts: HTTP %d (Retry-After %q) %v, want 429 with Retry-After saying its own deadlines", ownTimeouts, st, hdr.Get("Retry-After"), out)
	}
	for _, c := range []string{
		`{"tool":"calculator","arguments":{"expression":"6*7"}}`,
		`{"tool":"read-file","arguments":{"space":"documents","path":"a.txt"}}`,
		`{"tool":"t.echo","arguments":{"s":"still here"}}`,
	} {
		if st, _, out := call(bg, "q", "/v1/call", c); st != http.StatusOK {
			t.Errorf("quiet agent's %s beside the limited hostile one: HTTP %d %v, want 200", c, st, out)
		}
	}
	if st, _, out := call(bg, "q", "/v1/select", `{"text":"what is 6 times 7"}`); st != http.StatusOK {
		t.Errorf("quiet agent's select: HTTP %d %v, want 200", st, out)
	}
	// The tool the hostile agent timed out on is not switched off: the
	// quiet agent's own call of it reaches it (and times out on its own
	// deadline, 504) instead of being refused at once (503 circuit open).
	if st, _, out := call(bg, "q", "/v1/call", `{"tool":"t.hang","arguments":{"id":"q"},"timeout_ms":50}`); st != http.StatusGatewayTimeout {
		t.Errorf("quiet agent's call of the tool the hostile one timed out on: HTTP %d %v, want 504 (the breaker closed)", st, out)
	}
}
