//go:build unix

package client

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airs-dev/airs/mcp/client/mcptest"
	"github.com/airs-dev/airs/pipeline"
)

// The test binary is also the hostile server (mcptest): each test starts
// it as a real stdio process.
func TestMain(m *testing.M) {
	MaybeSupervise()
	mcptest.MaybeServe()
	maybeParent()
	os.Exit(m.Run())
}

type hostile struct {
	conn *Conn
	reg  *pipeline.Registry
	m    *pipeline.Manager
	log  string
}

func startHostile(t *testing.T, tune func(*Server)) (*hostile, error) {
	t.Helper()
	log := filepath.Join(t.TempDir(), "events")
	s := Server{Name: "h", Command: mcptest.Command(), Env: mcptest.Env(log, 0), RestartsPerMinute: 5,
		Grace: 300 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(testWriter{t}, nil))}
	if tune != nil {
		tune(&s)
	}
	reg := pipeline.NewRegistry(pipeline.RegistryConfig{})
	c, err := Connect(context.Background(), reg, s)
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() { c.Close() })
	m, err := pipeline.NewManager(pipeline.Config{Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return &hostile{conn: c, reg: reg, m: m, log: log}, nil
}

func mustStart(t *testing.T, tune func(*Server)) *hostile {
	t.Helper()
	h, err := startHostile(t, tune)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

func (h *hostile) call(tool, params string, timeout time.Duration) (*pipeline.Result, error) {
	return h.m.Call(context.Background(), pipeline.Request{Tool: "h." + tool, Params: []byte(params), Caller: "u", Timeout: timeout})
}

// echoWorks asserts the server answers again (after a restart, say).
func (h *hostile) echoWorks(t *testing.T) {
	t.Helper()
	res, err := h.call("echo", `{"s":"again"}`, 10*time.Second)
	if err != nil || string(res.Output) != `{"echo":"again"}` {
		t.Fatalf("echo after the incident: %v %v", err, res)
	}
}

func (h *hostile) events() string {
	b, _ := os.ReadFile(h.log)
	return string(b)
}

func eventually(t *testing.T, what string, d time.Duration, ok func() bool) {
	t.Helper()
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if ok() {
			return
		}
	}
	t.Fatalf("after %v: %s", d, what)
}

func wantKind(t *testing.T, err error, kind, text string) {
	t.Helper()
	if pipeline.KindOf(err) != kind || !strings.Contains(err.Error(), text) {
		t.Fatalf("err = %v (kind %s), want %s containing %q", err, pipeline.KindOf(err), kind, text)
	}
}

func TestHostileWellBehavedAndRejected(t *testing.T) {
	h := mustStart(t, nil)
	h.echoWorks(t)
	_, err := h.call("echo", `{"s":1}`, 0)
	wantKind(t, err, pipeline.KindSchemaValidationFailed, "/s")
	_, err = h.call("fail", `{}`, 0)
	wantKind(t, err, pipeline.KindProviderRejected, "no such thing")
	// A schema that does not compile leaves that tool out, with the reason.
	var found bool
	for _, u := range h.conn.Unavailable() {
		if u.Tool == "badschema" && strings.Contains(u.Reason, "missing") {
			found = true
		}
	}
	if !found {
		t.Fatalf("badschema not reported unavailable: %+v", h.conn.Unavailable())
	}
	if _, ok := h.reg.Get("mcp:h", "h.badschema", ""); ok {
		t.Fatal("badschema registered")
	}
}

func TestHostileTimeoutSendsCancelled(t *testing.T) {
	h := mustStart(t, nil)
	_, err := h.call("hang", `{"id":"t1"}`, 300*time.Millisecond)
	wantKind(t, err, pipeline.KindTimeout, "")
	// The go-sdk sent notifications/cancelled: the server's handler saw
	// its context end.
	eventually(t, "the server never saw the cancellation", 3*time.Second, func() bool { return strings.Contains(h.events(), "cancelled t1") })
	// A server that answers its ping after a cancel is not killed.
	time.Sleep(500 * time.Millisecond)
	if k := h.conn.Kills.Load(); k != 0 {
		t.Fatalf("a responsive server was killed %d times", k)
	}
	h.echoWorks(t)

	// The same with a cancel from the caller.
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(200 * time.Millisecond); cancel() }()
	_, err = h.m.Call(ctx, pipeline.Request{Tool: "h.hang", Params: []byte(`{"id":"c1"}`), Caller: "u"})
	wantKind(t, err, pipeline.KindCancelled, "")
	eventually(t, "the server never saw the cancel", 3*time.Second, func() bool { return strings.Contains(h.events(), "cancelled c1") })
}

func TestHostileServerTimeout(t *testing.T) {
	h := mustStart(t, func(s *Server) { s.Timeout = 200 * time.Millisecond })
	start := time.Now()
	_, err := h.call("hang", `{"id":"s1"}`, 0)
	wantKind(t, err, pipeline.KindTimeout, "200ms")
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("server timeout took %v", d)
	}
}

func TestHostileFrozenServerIsKilledAndRestarted(t *testing.T) {
	h := mustStart(t, nil)
	_, err := h.call("freeze", `{}`, 300*time.Millisecond)
	wantKind(t, err, pipeline.KindTimeout, "")
	eventually(t, "the frozen server was not killed", 5*time.Second, func() bool { return h.conn.Kills.Load() == 1 })
	h.echoWorks(t)
	if n := strings.Count(h.events(), "started"); n != 2 {
		t.Fatalf("started %d times, want 2 (a restart)", n)
	}
}

func TestHostileExitMidCallIsCrashed(t *testing.T) {
	h := mustStart(t, nil)
	_, err := h.call("exit", `{"code":3}`, 5*time.Second)
	wantKind(t, err, pipeline.KindProviderCrashed, "exit status 3")
	if !strings.Contains(err.Error(), "exiting mid-call as asked") {
		t.Errorf("the crash does not quote the server's stderr: %v", err)
	}
	h.echoWorks(t)
}

func TestHostileHugeResponse(t *testing.T) {
	h := mustStart(t, nil)
	_, err := h.call("flood", `{"n":100000000}`, 30*time.Second)
	wantKind(t, err, pipeline.KindProviderRejected, "max_message_bytes")
	h.echoWorks(t)
	// Under the message bound but over the response bound.
	h2 := mustStart(t, func(s *Server) { s.MaxResponseBytes = 1000 })
	_, err = h2.call("big", `{"n":5000}`, 5*time.Second)
	wantKind(t, err, pipeline.KindProviderRejected, "max_response_bytes")
	if _, err := h2.call("big", `{"n":500}`, 5*time.Second); err != nil {
		t.Fatalf("a result under the bound: %v", err)
	}
}

func TestHostileMalformedJSONRPC(t *testing.T) {
	h := mustStart(t, nil)
	_, err := h.call("garbage", `{}`, 5*time.Second)
	wantKind(t, err, pipeline.KindProviderCrashed, "not JSON-RPC")
	h.echoWorks(t)
}

func TestHostileTooManyTools(t *testing.T) {
	log := filepath.Join(t.TempDir(), "events")
	_, err := startHostile(t, func(s *Server) { s.Env = mcptest.Env(log, 5000) })
	if err == nil || !strings.Contains(err.Error(), "more than 1000 tools") || !strings.Contains(err.Error(), "max_tools") {
		t.Fatalf("5,000 tools: %v", err)
	}
	h := mustStart(t, func(s *Server) { s.Env = mcptest.Env(log, 5000); s.MaxTools = 6000 })
	if n := len(h.conn.Tools()); n < 5000 {
		t.Fatalf("%d tools registered with max_tools 6000", n)
	}
	if _, err := h.call("t4999", `{}`, 0); err != nil {
		t.Fatal(err)
	}
}

func TestHostileRestartBudget(t *testing.T) {
	h := mustStart(t, func(s *Server) { s.RestartsPerMinute = 1; s.RestBackoff = 300 * time.Millisecond })
	_, err := h.call("exit", `{"code":1}`, 5*time.Second)
	wantKind(t, err, pipeline.KindProviderCrashed, "exit status 1")
	h.echoWorks(t) // the one restart
	_, err = h.call("exit", `{"code":1}`, 5*time.Second)
	wantKind(t, err, pipeline.KindProviderCrashed, "exit status 1")
	eventually(t, "not resting", 5*time.Second, h.conn.Resting)
	// Resting: a call fails at once, saying when to try again.
	_, err = h.call("echo", `{"s":"x"}`, 0)
	wantKind(t, err, pipeline.KindProviderUnavailable, "restarts_per_minute (1)")
	var pu *pipeline.ProviderUnavailable
	if !errors.As(err, &pu) || pu.RetryAfter <= 0 || pu.RetryAfter > 300*time.Millisecond {
		t.Fatalf("no Retry-After within the rest: %#v", err)
	}
	// Not abandoned: after its rest it is started again, budget restored.
	eventually(t, "not started again after its rest", 5*time.Second, func() bool { return !h.conn.Resting() })
	h.echoWorks(t)
	if n := strings.Count(h.events(), "started"); n != 3 {
		t.Fatalf("started %d times, want 3", n)
	}
}

func TestHostileNoRestarts(t *testing.T) {
	h := mustStart(t, func(s *Server) { s.RestartsPerMinute = 0 })
	_, err := h.call("exit", `{"code":1}`, 5*time.Second)
	wantKind(t, err, pipeline.KindProviderCrashed, "exit status 1")
	eventually(t, "not given up", 5*time.Second, h.conn.GaveUp)
	// Deregistered lazily: the next call finds it dead.
	_, err = h.call("echo", `{"s":"x"}`, 0)
	wantKind(t, err, pipeline.KindProviderUnavailable, "provider dead")
	if _, ok := h.reg.Get("mcp:h", "h.echo", ""); ok {
		t.Fatal("tools of a given-up server still registered")
	}
}

func TestHostileListChanged(t *testing.T) {
	h := mustStart(t, nil)
	var changes atomic.Int32
	h.conn.OnChange(func() { changes.Add(1) })
	if _, err := h.call("addtool", `{}`, 0); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the late tool was not registered", 3*time.Second, func() bool {
		_, ok := h.reg.Get("mcp:h", "h.late", "")
		return ok && changes.Load() > 0
	})
	res, err := h.call("late", `{}`, 0)
	if err != nil || !strings.Contains(string(res.Output), "late") {
		t.Fatalf("late: %v %v", err, res)
	}
}

// TestServerEnvironment: a stdio server sees the few variables every
// program needs and what its configuration gives it, never the rest of
// AIRS's environment (a secret AIRS was started with).
func TestServerEnvironment(t *testing.T) {
	t.Setenv("AIRS_TEST_SECRET", "hunter2")
	t.Setenv("HOME", t.TempDir())
	h := mustStart(t, func(s *Server) { s.Env = append(s.Env, "AIRS_TEST_GIVEN=yes") })
	getenv := func(name string) string {
		t.Helper()
		res, err := h.call("getenv", `{"name":"`+name+`"}`, 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		return string(res.Output)
	}
	if got := getenv("AIRS_TEST_SECRET"); got != `{"set":false,"value":""}` {
		t.Errorf("the server read AIRS's secret: %s", got)
	}
	if got := getenv("AIRS_TEST_GIVEN"); got != `{"set":true,"value":"yes"}` {
		t.Errorf("the configured variable: %s", got)
	}
	if got, want := getenv("HOME"), `{"set":true,"value":"`+os.Getenv("HOME")+`"}`; got != want {
		t.Errorf("HOME: %s, want %s", got, want)
	}
}
