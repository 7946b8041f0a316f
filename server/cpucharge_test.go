package server

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airs-dev/airs/internal/turns"
	"github.com/airs-dev/airs/pipeline"
)

// burningSelect's selections of at least burnFrom bytes use burn of CPU
// on the request's goroutine.
type burningSelect struct {
	testBackend
	burn     time.Duration
	burnFrom int
}

func (b *burningSelect) Select(ctx context.Context, caller, text string) (any, error) {
	if len(text) >= b.burnFrom {
		spinCPU(b.burn)
	}
	return map[string]bool{"ok": true}, nil
}

// spinCPU keeps the calling goroutine's thread busy for at least d of its
// CPU time (of wall time where no thread clock is read).
func spinCPU(d time.Duration) {
	start, ok := turns.ThreadCPU()
	t0 := time.Now()
	x := 0
	for {
		for i := 0; i < 10000; i++ {
			x += i
		}
		if ok {
			if t, _ := turns.ThreadCPU(); t-start >= d {
				break
			}
		} else if time.Since(t0) >= d {
			break
		}
	}
	_ = x
}

// chargeRig is a server over a backend whose selections of burnFrom
// bytes or more burn CPU, with bob
// limited to a burst of 100 tokens that do not refill within the test,
// and an echo tool.
func chargeRig(t *testing.T, burn time.Duration, burnFrom int) *Server {
	t.Helper()
	reg := pipeline.NewRegistry(pipeline.RegistryConfig{})
	echo := pipeline.HandlerFunc(func(ctx context.Context, p json.RawMessage, c *pipeline.Call) (json.RawMessage, error) { return p, nil })
	if err := reg.Register("test", pipeline.Tool{Name: "echo", Version: "1", Parameters: json.RawMessage(`{"type":"object"}`), Idempotent: true, LatencyClass: pipeline.Fast}, echo); err != nil {
		t.Fatal(err)
	}
	m, err := pipeline.NewManager(pipeline.Config{Registry: reg, Policy: &pipeline.StaticPolicy{Channels: map[string][]string{"*": {"*"}}},
		RateLimits: map[string]pipeline.RateLimit{"bob": {PerSecond: 0.001, Burst: 100}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return New(&burningSelect{testBackend: testBackend{m}, burn: burn, burnFrom: burnFrom}, Config{Tokens: []Token{{HashToken("tok"), "bob"}},
		Limits: Limits{HeavyText: 1 << 10}, HeavyCPUPerToken: time.Millisecond})
}

func (s *Server) do(path, body string) int {
	r := httptest.NewRequest("POST", path, strings.NewReader(body))
	r.Header.Set("Authorization", "Bearer tok")
	w := httptest.NewRecorder()
	s.ServeHTTP(w, r)
	return w.Code
}

// admittedUntilDry counts the requests admitted (not 429) before the
// bucket runs dry.
func admittedUntilDry(s *Server, path, body string) int {
	n := 0
	for ; n < 200; n++ {
		if s.do(path, body) == 429 {
			break
		}
	}
	return n
}

// Heavy work is charged by the CPU it used: a selection of 2 KiB (2 tokens
// by its size) that uses 40 ms of CPU costs 40 tokens at 1 ms a token, so
// of a burst of 100 about 60 light requests are left, not 98.
func TestHeavyWorkIsChargedByItsCPU(t *testing.T) {
	s := chargeRig(t, 40*time.Millisecond, 1<<10)
	heavy := `{"text":"` + strings.Repeat("a ", 1<<10) + `"}`
	if code := s.do("/v1/select", heavy); code != 200 {
		t.Fatalf("heavy select: %d", code)
	}
	// The CPU is at least 40 ms: at most 60 tokens are left. Where the
	// thread's clock is read, it is not much more than the spin (no more
	// than 80 ms on a loaded machine: the clock does not count time the
	// thread waited for a core); elsewhere the meter counts wall time.
	n := admittedUntilDry(s, "/v1/select", `{"text":"x"}`)
	if n > 60 {
		t.Errorf("%d light requests admitted after a heavy one that used 40 ms of CPU, of a burst of 100: want at most 60", n)
	}
	if _, clock := turns.ThreadCPU(); clock && n < 20 {
		t.Errorf("%d light requests admitted after a heavy one that used 40 ms of CPU, of a burst of 100: want at least 20 (it was charged more than 80 ms)", n)
	}
}

// Light work is charged one token, whatever its CPU: only work that holds
// a heavy slot is metered.
func TestLightWorkIsNotMetered(t *testing.T) {
	s := chargeRig(t, 2*time.Millisecond, 0)
	if code := s.do("/v1/select", `{"text":"x"}`); code != 200 {
		t.Fatalf("select: %d", code)
	}
	if n := admittedUntilDry(s, "/v1/select", `{"text":"x"}`); n < 90 {
		t.Errorf("%d light requests admitted after a light one, of a burst of 100: want 99 (each about 2 ms)", n)
	}
}

// What an agent owes of its heavy work is paid before its next call too:
// calls take from the same bucket.
func TestCallsPayWhatIsOwed(t *testing.T) {
	s := chargeRig(t, 60*time.Millisecond, 1<<10)
	heavy := `{"text":"` + strings.Repeat("a ", 1<<10) + `"}`
	if code := s.do("/v1/select", heavy); code != 200 {
		t.Fatalf("heavy select: %d", code)
	}
	if n := admittedUntilDry(s, "/v1/call", `{"tool":"echo","arguments":{}}`); n > 40 {
		t.Errorf("%d calls admitted after a heavy select that used 60 ms of CPU, of a burst of 100: want at most 40", n)
	}
}

// gatedSelect's first heavy selection waits until let is closed, then
// uses burn of CPU; it counts the selections that ran.
type gatedSelect struct {
	testBackend
	burn    time.Duration
	let     chan struct{}
	started chan struct{}
	ran     atomic.Int32
}

func (b *gatedSelect) Select(ctx context.Context, caller, text string) (any, error) {
	if b.ran.Add(1) == 1 {
		close(b.started)
		<-b.let
		spinCPU(b.burn)
	}
	return map[string]bool{"ok": true}, nil
}

// Heavy requests of one agent sent at once do not all run on their
// admission: the second, waiting for its agent's slot, pays for the
// first's CPU before it runs, and is refused when the bucket cannot.
func TestHeavyRequestPaysForTheOneBefore(t *testing.T) {
	m, err := pipeline.NewManager(pipeline.Config{Registry: pipeline.NewRegistry(pipeline.RegistryConfig{}),
		Policy:     &pipeline.StaticPolicy{Channels: map[string][]string{"*": {"*"}}},
		RateLimits: map[string]pipeline.RateLimit{"bob": {PerSecond: 0.001, Burst: 50}}})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	b := &gatedSelect{testBackend: testBackend{m}, burn: 60 * time.Millisecond, let: make(chan struct{}), started: make(chan struct{})}
	s := New(b, Config{Tokens: []Token{{HashToken("tok"), "bob"}}, Limits: Limits{HeavyText: 1 << 10, HeavyPerAgent: 1, HeavyTotal: 1},
		HeavyCPUPerToken: time.Millisecond})
	heavy := `{"text":"` + strings.Repeat("a ", 1<<10) + `"}`
	first := make(chan int, 1)
	go func() { first <- s.do("/v1/select", heavy) }()
	<-b.started
	second := make(chan int, 1)
	go func() { second <- s.do("/v1/select", heavy) }()
	waitFor(t, "the second heavy request waits for its agent's slot", func() bool { return s.heavyGate.waiting("bob") == 1 })
	close(b.let)
	if code := <-first; code != 200 {
		t.Fatalf("first: %d", code)
	}
	// The first used 60 ms: 60 tokens, of a burst of 50.
	if code := <-second; code != 429 {
		t.Errorf("second: %d, want 429: it runs only once the first's CPU is paid for", code)
	}
	if n := b.ran.Load(); n != 1 {
		t.Errorf("%d selections ran, want 1", n)
	}
}
