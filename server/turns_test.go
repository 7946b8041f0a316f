package server

import (
	"context"
	"encoding/json"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airs-dev/airs/internal/turns"
	"github.com/airs-dev/airs/pipeline"
)

// givingWay's selections over heavy text compute in units, with a
// checkpoint after each, until stopped; a light selection looks at how
// far the heavy one got before and after it lets other goroutines run.
type givingWay struct {
	testBackend
	started      chan struct{}
	units        atomic.Int64
	stop         atomic.Bool
	before, more int64
}

func (b *givingWay) Select(ctx context.Context, caller, text string) (any, error) {
	if len(text) < 1<<10 {
		for range 10 {
			runtime.Gosched() // the heavy selection runs to its next checkpoint
		}
		b.before = b.units.Load()
		for range 100 {
			runtime.Gosched() // it would run here if it were runnable
		}
		b.more = b.units.Load() - b.before
		return map[string]bool{"ok": true}, nil
	}
	close(b.started)
	x := 1.0
	for !b.stop.Load() {
		for i := 0; i < 2000; i++ {
			x = x*1.0000001 + 1e-9
		}
		b.units.Add(1)
		turns.Yield(ctx)
	}
	return map[string]float64{"x": x}, nil
}

// TestHeavyRequestsGiveWayToLightOnes: on one P, a light request that
// arrives while a heavy selection computes runs while the heavy one waits
// at its checkpoint: the heavy work does not run at all while the light
// request is in flight. Without the light mark (ServeHTTP) or the heavy
// one (Server.heavy), the heavy selection would go on computing whenever
// the light request let go of the P.
func TestHeavyRequestsGiveWayToLightOnes(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	defer turns.SetMaxWait(time.Minute)() // the wait ends by the light request's end alone
	m, err := pipeline.NewManager(pipeline.Config{Registry: pipeline.NewRegistry(pipeline.RegistryConfig{}),
		Policy: &pipeline.StaticPolicy{Channels: map[string][]string{"*": {"*"}}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	b := &givingWay{testBackend: testBackend{m}, started: make(chan struct{})}
	s := New(b, Config{Tokens: []Token{{HashToken("tok"), "bob"}}, Limits: Limits{HeavyText: 1 << 10}})
	heavy := make(chan int)
	go func() { heavy <- s.do("/v1/select", `{"text":"`+strings.Repeat("a ", 1<<10)+`"}`) }()
	<-b.started
	if code := s.do("/v1/select", `{"text":"x"}`); code != 200 {
		t.Fatalf("light select: %d", code)
	}
	b.stop.Store(true)
	if code := <-heavy; code != 200 {
		t.Fatalf("heavy select: %d", code)
	}
	if b.before == 0 {
		t.Fatal("the heavy selection did no work before the light one ran")
	}
	if b.more != 0 {
		t.Errorf("the heavy selection did %d units of work while the light one was in flight: it did not give way", b.more)
	}
}

// TestToolHeavyWorkIsChargedByItsCPU: a tool whose run is heavy work
// (turns.Heavy, as a built-in compare of long texts) on a goroutine of its
// own is charged by its CPU, as a heavy selection is: a call that uses
// 40 ms of CPU costs about 40 tokens at 1 ms a token, not 1.
func TestToolHeavyWorkIsChargedByItsCPU(t *testing.T) {
	reg := pipeline.NewRegistry(pipeline.RegistryConfig{})
	burn := pipeline.HandlerFunc(func(ctx context.Context, p json.RawMessage, c *pipeline.Call) (json.RawMessage, error) {
		_, done := turns.Heavy(ctx)
		defer done()
		spinCPU(40 * time.Millisecond)
		return p, nil
	})
	echo := pipeline.HandlerFunc(func(ctx context.Context, p json.RawMessage, c *pipeline.Call) (json.RawMessage, error) { return p, nil })
	for name, h := range map[string]pipeline.Handler{"burn": burn, "echo": echo} {
		if err := reg.Register("test", pipeline.Tool{Name: name, Version: "1", Parameters: json.RawMessage(`{"type":"object"}`), Idempotent: true, LatencyClass: pipeline.Slow}, h); err != nil {
			t.Fatal(err)
		}
	}
	m, err := pipeline.NewManager(pipeline.Config{Registry: reg, Policy: &pipeline.StaticPolicy{Channels: map[string][]string{"*": {"*"}}},
		RateLimits: map[string]pipeline.RateLimit{"bob": {PerSecond: 0.001, Burst: 100}}})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	s := New(&testBackend{m}, Config{Tokens: []Token{{HashToken("tok"), "bob"}}, HeavyCPUPerToken: time.Millisecond})
	if code := s.do("/v1/call", `{"tool":"burn","arguments":{}}`); code != 200 {
		t.Fatalf("burn: %d", code)
	}
	n := admittedUntilDry(s, "/v1/call", `{"tool":"echo","arguments":{}}`)
	if n > 60 {
		t.Errorf("%d calls admitted after one whose tool used 40 ms of CPU, of a burst of 100: want at most 60", n)
	}
	if _, clock := turns.ThreadCPU(); clock && n < 20 {
		t.Errorf("%d calls admitted after one whose tool used 40 ms of CPU, of a burst of 100: want at least 20 (it was charged more than 80 ms)", n)
	}
}
