package affinity

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airs-dev/airs/pipeline"
)

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

func newTracker(c *clock) *Tracker {
	return New(Config{Window: 6 * time.Minute, Buckets: 6, Threshold: 3, Now: c.now})
}

func TestThresholdAndWindow(t *testing.T) {
	c := &clock{t: time.Unix(1_700_000_000, 0)}
	tr := newTracker(c)
	tr.Observe("alice", "read_pdf", c.now())
	tr.Observe("alice", "read_pdf", c.now())
	tr.Observe("bob", "read_pdf", c.now())
	if got := tr.Affinities(); len(got) != 0 {
		t.Fatalf("below threshold: got %v", got)
	}
	c.add(2 * time.Minute)
	tr.Observe("alice", "read_pdf", c.now())
	got := tr.Affinities()
	if len(got) != 1 || got[0].Caller != "alice" || got[0].Count != 3 {
		t.Fatalf("at threshold: got %v, want alice/read_pdf 3", got)
	}
	// The first two calls leave the 6-minute window after it passes them;
	// one call within it is under the threshold again.
	c.add(5 * time.Minute)
	if got := tr.Affinities(); len(got) != 0 {
		t.Fatalf("after the window: got %v, want none", got)
	}
}

func TestSaveLoadSeed(t *testing.T) {
	c := &clock{t: time.Unix(1_700_000_000, 0)}
	tr := newTracker(c)
	for range 4 {
		tr.Observe("alice", "search", c.now())
	}
	path := filepath.Join(t.TempDir(), "guard", "affinity.json")
	if err := tr.Save(path); err != nil {
		t.Fatal(err)
	}
	as, err := Load(path)
	if err != nil || len(as) != 1 || as[0].Count != 4 || as[0].Tool != "search" {
		t.Fatalf("Load = %v, %v", as, err)
	}
	tr2 := newTracker(c)
	tr2.Seed(as)
	if got := tr2.Affinities(); len(got) != 1 || got[0].Count != 4 {
		t.Fatalf("seeded = %v", got)
	}
	if as, err := Load(filepath.Join(t.TempDir(), "none.json")); err != nil || as != nil {
		t.Fatalf("missing file: %v, %v", as, err)
	}
}

// warmHandler counts Warm calls; it stands for a provider with a start cost.
type warmHandler struct{ warmed atomic.Int32 }

func (h *warmHandler) Invoke(context.Context, json.RawMessage, *pipeline.Call) (json.RawMessage, error) {
	return json.RawMessage(`{}`), nil
}
func (h *warmHandler) Warm(context.Context) error { h.warmed.Add(1); return nil }

func register(t *testing.T, r *pipeline.Registry, name string, h pipeline.Handler) {
	t.Helper()
	err := r.Register("p", pipeline.Tool{Name: name, Version: "1.0.0", Description: "d",
		Parameters: json.RawMessage(`{"type":"object"}`), Trust: pipeline.TL0,
		LatencyClass: pipeline.Instant, Idempotent: true, ReadOnly: true}, h)
	if err != nil {
		t.Fatal(err)
	}
}

func TestPrewarmOnlyAffinityTools(t *testing.T) {
	r := pipeline.NewRegistry(pipeline.RegistryConfig{})
	hot, cold := &warmHandler{}, &warmHandler{}
	register(t, r, "hot", hot)
	register(t, r, "cold", cold)
	register(t, r, "plain", pipeline.HandlerFunc(func(context.Context, json.RawMessage, *pipeline.Call) (json.RawMessage, error) {
		return nil, nil
	}))
	as := []Affinity{{Pair{"alice", "hot"}, 5}, {Pair{"bob", "hot"}, 3}, {Pair{"alice", "plain"}, 3}}
	n, err := Prewarm(context.Background(), r, as)
	if err != nil || n != 1 {
		t.Fatalf("Prewarm = %d, %v; want 1 handler warmed", n, err)
	}
	if hot.warmed.Load() != 1 || cold.warmed.Load() != 0 {
		t.Fatalf("hot warmed %d (want 1, once per tool), cold %d (want 0)", hot.warmed.Load(), cold.warmed.Load())
	}
}

type failWarm struct{ warmHandler }

func (*failWarm) Warm(context.Context) error { return errors.New("no") }

func TestPrewarmReportsErrors(t *testing.T) {
	r := pipeline.NewRegistry(pipeline.RegistryConfig{})
	register(t, r, "bad", &failWarm{})
	if _, err := Prewarm(context.Background(), r, []Affinity{{Pair{"a", "bad"}, 3}}); err == nil {
		t.Fatal("a failing Warm must be reported")
	}
}

func TestKeepAliveWarmsActive(t *testing.T) {
	c := &clock{t: time.Unix(1_700_000_000, 0)}
	tr := newTracker(c)
	r := pipeline.NewRegistry(pipeline.RegistryConfig{})
	h := &warmHandler{}
	register(t, r, "hot", h)
	for range 3 {
		tr.Observe("alice", "hot", c.now())
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { tr.KeepAlive(ctx, r, time.Millisecond, nil); close(done) }()
	deadline := time.Now().Add(5 * time.Second)
	for h.warmed.Load() < 2 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	cancel()
	<-done
	if h.warmed.Load() < 2 {
		t.Fatalf("keep-alive warmed %d times, want repeated warms", h.warmed.Load())
	}
}
