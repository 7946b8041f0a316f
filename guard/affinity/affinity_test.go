package affinity

import (
	"context"
	"encoding/json"
	"errors"
	"os"
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
	if err := tr.Save(path, nil); err != nil {
		t.Fatal(err)
	}
	as, err := Load(path)
	if err != nil || len(as) != 1 || as[0].Count != 4 || as[0].Tool != "search" || as[0].Last.IsZero() {
		t.Fatalf("Load = %v, %v", as, err)
	}
	tr2 := newTracker(c)
	if got := tr2.Seed(as); len(got) != 1 {
		t.Fatalf("Seed kept %v", got)
	}
	if got := tr2.Affinities(); len(got) != 1 || got[0].Count != 4 {
		t.Fatalf("seeded = %v", got)
	}
	if as, err := Load(filepath.Join(t.TempDir(), "none.json")); err != nil || as != nil {
		t.Fatalf("missing file: %v, %v", as, err)
	}
}

// A seeded affinity lasts what is left of its window, not a new window:
// a restart does not make an old habit young again.
func TestSeedKeepsTheLastCallsTime(t *testing.T) {
	c := &clock{t: time.Unix(1_700_000_000, 0)}
	last := c.now()
	c.add(4 * time.Minute) // 2 of the 6 minutes left
	tr := newTracker(c)
	kept := tr.Seed([]Affinity{
		{Pair{"alice", "search"}, 3, last},
		{Pair{"bob", "old"}, 9, last.Add(-10 * time.Minute)}, // out of the window
	})
	if len(kept) != 1 || kept[0].Caller != "alice" {
		t.Fatalf("Seed kept %v, want alice's only", kept)
	}
	if !tr.Hot("alice", "search") || tr.Hot("bob", "old") {
		t.Fatal("alice/search must be hot, bob/old not")
	}
	c.add(2*time.Minute + time.Second)
	if tr.Hot("alice", "search") {
		t.Fatal("a seeded affinity outlived the window of its last call")
	}
}

// Observe keeps buckets in time order when an earlier call comes after a
// later one (Seed, then live calls): prune relies on it.
func TestObserveOutOfOrder(t *testing.T) {
	c := &clock{t: time.Unix(1_700_000_000, 0)}
	tr := newTracker(c)
	tr.Observe("a", "t", c.now())
	tr.Observe("a", "t", c.now().Add(-5*time.Minute))
	tr.Observe("a", "t", c.now().Add(-5*time.Minute))
	if !tr.Hot("a", "t") {
		t.Fatal("3 calls within the window: want hot")
	}
	c.add(90 * time.Second) // the two old calls leave; the newest stays
	if tr.Hot("a", "t") {
		t.Fatal("the two old calls should have left the window")
	}
	if got := tr.Affinities(); len(got) != 0 {
		t.Fatalf("affinities %v", got)
	}
	tr.Observe("a", "t", c.now().Add(-time.Hour)) // long gone: not counted
	tr.Observe("a", "t", c.now())
	if tr.Hot("a", "t") {
		t.Fatal("a call from an hour ago was counted")
	}
}

// Two processes sharing a home: each save keeps the other's affinities
// that are still in the window, and drops those that are not.
func TestSaveMergesOthers(t *testing.T) {
	c := &clock{t: time.Unix(1_700_000_000, 0)}
	path := filepath.Join(t.TempDir(), "affinity.json")
	a, b := newTracker(c), newTracker(c)
	for range 3 {
		a.Observe("alice", "search", c.now())
		b.Observe("bob", "read", c.now())
	}
	if err := a.Save(path, nil); err != nil {
		t.Fatal(err)
	}
	disk, _ := Load(path)
	stale := Affinity{Pair{"carol", "x"}, 5, c.now().Add(-time.Hour)}
	if err := b.Save(path, append(disk, stale)); err != nil {
		t.Fatal(err)
	}
	got, err := Load(path)
	if err != nil || len(got) != 2 || got[0].Caller != "alice" || got[1].Caller != "bob" {
		t.Fatalf("merged = %v, %v; want alice's and bob's, not carol's stale one", got, err)
	}
	// The later of two entries for one pair wins.
	m := Merge([]Affinity{{Pair{"a", "t"}, 9, c.now().Add(-time.Minute)}}, []Affinity{{Pair{"a", "t"}, 3, c.now()}}, c.now().Add(-time.Hour))
	if len(m) != 1 || m[0].Count != 3 {
		t.Fatalf("Merge = %v, want the later entry", m)
	}
}

func TestLoadCorruptAndSetAside(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{
		"cut":     `{"version":1,"affinities":[{"caller":"a"`,
		"array":   `[{"caller":"a","tool":"t","count":3}]`,
		"version": `{"version":7,"affinities":[]}`,
		"empty":   `{"version":1,"affinities":[{"caller":"","tool":"t","count":3}]}`,
		"unknown": `{"version":1,"affinities":[],"extra":1}`,
	} {
		path := filepath.Join(dir, name+".json")
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := Load(path)
		var ce *CorruptError
		if !errors.As(err, &ce) || ce.Path != path {
			t.Errorf("%s: Load = %v, want a *CorruptError naming the file", name, err)
			continue
		}
		to, err := SetAside(path, time.Unix(1_700_000_000, 0))
		if err != nil {
			t.Fatal(err)
		}
		if b, err := os.ReadFile(to); err != nil || string(b) != body {
			t.Errorf("%s: set aside as %s: %q, %v; want the bad file kept as it was", name, to, b, err)
		}
		if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: still at %s", name, path)
		}
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
	as := []Affinity{{Pair: Pair{"alice", "hot"}, Count: 5}, {Pair: Pair{"bob", "hot"}, Count: 3}, {Pair: Pair{"alice", "plain"}, Count: 3}}
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
	if _, err := Prewarm(context.Background(), r, []Affinity{{Pair: Pair{"a", "bad"}, Count: 3}}); err == nil {
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
