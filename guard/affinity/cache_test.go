package affinity

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airs-dev/airs/pipeline"
)

// regLookup is a ToolLookup over a real Registry (the highest version of
// the first provider, as RegistryCatalog answers for a caller who may call
// everything); onLookup runs inside the lookup, to race a change with it.
type regLookup struct {
	r        *pipeline.Registry
	calls    atomic.Int32
	onLookup func()
}

func (l *regLookup) Tool(_, name string) (pipeline.Tool, error) {
	l.calls.Add(1)
	ps := l.r.Providers(name)
	if l.onLookup != nil {
		l.onLookup()
	}
	if len(ps) == 0 {
		return pipeline.Tool{}, &pipeline.ToolNotFound{Tool: name}
	}
	return ps[0].Tool, nil
}
func (l *regLookup) Generation() uint64 { return l.r.Generation() }

func regTool(t *testing.T, r *pipeline.Registry, name, version string) {
	t.Helper()
	err := r.Register("p", pipeline.Tool{Name: name, Version: version, Description: "d",
		Parameters: json.RawMessage(`{"type":"object"}`), Trust: pipeline.TL0,
		LatencyClass: pipeline.Instant, Idempotent: true, ReadOnly: true},
		pipeline.HandlerFunc(func(context.Context, json.RawMessage, *pipeline.Call) (json.RawMessage, error) { return nil, nil }))
	if err != nil {
		t.Fatal(err)
	}
}

func hotFor(pairs ...Pair) func(string, string) bool {
	return func(c, tool string) bool {
		for _, p := range pairs {
			if p == (Pair{c, tool}) {
				return true
			}
		}
		return false
	}
}

func TestHotCacheServesHotPairsOnly(t *testing.T) {
	r := pipeline.NewRegistry(pipeline.RegistryConfig{})
	regTool(t, r, "search", "1.0.0")
	src := &regLookup{r: r}
	c := NewHotCache(src, hotFor(Pair{"alice", "search"}))
	for range 3 {
		if tool, err := c.Tool("alice", "search"); err != nil || tool.Version != "1.0.0" {
			t.Fatalf("alice: %v %v", tool, err)
		}
	}
	if n := src.calls.Load(); n != 1 {
		t.Fatalf("hot pair: %d lookups reached the source, want 1", n)
	}
	for range 3 {
		c.Tool("bob", "search")
	}
	if n := src.calls.Load(); n != 4 {
		t.Fatalf("cold pair: %d lookups in all reached the source, want 1+3", n)
	}
	if h, m, size := c.Stats(); h != 2 || m != 1 || size != 1 {
		t.Fatalf("stats %d hits %d misses %d entries", h, m, size)
	}
}

// A deregistered tool is never served from the cache, nor an old version
// once a new one is registered.
func TestHotCacheInvalidatedByRegistryChanges(t *testing.T) {
	r := pipeline.NewRegistry(pipeline.RegistryConfig{})
	regTool(t, r, "search", "1.0.0")
	c := NewHotCache(&regLookup{r: r}, hotFor(Pair{"alice", "search"}))
	if _, err := c.Tool("alice", "search"); err != nil {
		t.Fatal(err)
	}
	regTool(t, r, "search", "1.1.0")
	if tool, err := c.Tool("alice", "search"); err != nil || tool.Version != "1.1.0" {
		t.Fatalf("after a new version: %v %v, want 1.1.0", tool.Version, err)
	}
	if !r.Deregister("p", "search", "") {
		t.Fatal("deregister")
	}
	var nf *pipeline.ToolNotFound
	if _, err := c.Tool("alice", "search"); !errors.As(err, &nf) {
		t.Fatalf("after deregistration: %v, want ToolNotFound", err)
	}
	regTool(t, r, "other", "1.0.0") // another change: still not found
	if _, err := c.Tool("alice", "search"); !errors.As(err, &nf) {
		t.Fatalf("deregistered tool served: %v", err)
	}
}

// A lookup that races with a registry change is not stored: the answer it
// got may predate the change.
func TestHotCacheDoesNotStoreARacingLookup(t *testing.T) {
	r := pipeline.NewRegistry(pipeline.RegistryConfig{})
	regTool(t, r, "search", "1.0.0")
	src := &regLookup{r: r}
	c := NewHotCache(src, hotFor(Pair{"alice", "search"}))
	once := sync.Once{}
	src.onLookup = func() { once.Do(func() { r.Deregister("p", "search", "") }) }
	if tool, err := c.Tool("alice", "search"); err != nil || tool.Version != "1.0.0" {
		t.Fatalf("the racing lookup answers what it saw: %v %v", tool, err)
	}
	src.onLookup = nil
	if tool, err := c.Tool("alice", "search"); err == nil {
		t.Fatalf("served %s@%s after its deregistration", tool.Name, tool.Version)
	}
}

func TestHotCacheDropsColdPairsAndSunsets(t *testing.T) {
	r := pipeline.NewRegistry(pipeline.RegistryConfig{})
	sunset := time.Unix(1_700_000_000, 0)
	err := r.Register("p", pipeline.Tool{Name: "old", Version: "1.0.0", Description: "d",
		Parameters: json.RawMessage(`{"type":"object"}`), Trust: pipeline.TL0, LatencyClass: pipeline.Instant,
		Deprecation: &pipeline.Deprecation{Sunset: sunset}},
		pipeline.HandlerFunc(func(context.Context, json.RawMessage, *pipeline.Call) (json.RawMessage, error) { return nil, nil }))
	if err != nil {
		t.Fatal(err)
	}
	src := &regLookup{r: r}
	hot := true
	c := NewHotCache(src, func(string, string) bool { return hot })
	now := sunset.Add(-time.Minute)
	c.now = func() time.Time { return now }
	c.Tool("a", "old")
	c.Tool("a", "old")
	if src.calls.Load() != 1 {
		t.Fatalf("before its sunset: %d source lookups, want 1", src.calls.Load())
	}
	now = sunset.Add(time.Second)
	c.Tool("a", "old")
	if src.calls.Load() != 2 {
		t.Fatal("a tool past its sunset was served from the cache")
	}
	hot = false
	c.Tool("a", "old")
	if _, _, size := c.Stats(); size != 0 {
		t.Fatalf("a pair that lost its affinity is still cached (%d entries)", size)
	}
}

// Lookups racing with registrations and deregistrations: once Deregister
// has returned, no lookup serves the tool (run with -race).
func TestHotCacheConcurrentDeregistration(t *testing.T) {
	r := pipeline.NewRegistry(pipeline.RegistryConfig{})
	c := NewHotCache(&regLookup{r: r}, hotFor(Pair{"a", "t"}))
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
					c.Tool("a", "t")
				}
			}
		}()
	}
	for i := range 300 {
		regTool(t, r, "t", "1.0.0")
		if _, err := c.Tool("a", "t"); err != nil {
			t.Fatalf("round %d: registered tool not found: %v", i, err)
		}
		r.Deregister("p", "t", "")
		if tool, err := c.Tool("a", "t"); err == nil {
			t.Fatalf("round %d: served %s after Deregister returned", i, tool.Name)
		}
	}
	close(stop)
	wg.Wait()
}
