package affinity

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/airs-dev/airs/pipeline"
)

// ToolLookup is the lookup HotCache fronts: a tool as a caller may call it
// (selector.RegistryCatalog.Tool, which lists and narrows every tool the
// caller reaches on each lookup) and the registry's generation, which
// moves with every register, deregister and version change.
type ToolLookup interface {
	Tool(caller, name string) (pipeline.Tool, error)
	Generation() uint64
}

// HotCache answers ToolLookup.Tool from memory for the (caller, tool)
// pairs with an affinity, and passes every other lookup through.
//
// Correctness: an entry is served only while the registry's generation is
// the one it was looked up under (a lookup that raced with a change is
// not stored), so a deregistered or replaced tool is never served from the
// cache; a tool past its sunset is looked up again (the source then
// refuses it); a pair that has lost its affinity is dropped. What it
// caches is the source's answer for that caller, so capabilities are
// those the source applied (the policy is fixed for a process's life).
// Only successful lookups are kept: a refusal is the rare path.
//
// The cached pipeline.Tool is shared between lookups, as Registry.List's
// are: callers must not modify it.
type HotCache struct {
	src ToolLookup
	hot func(caller, tool string) bool
	now func() time.Time

	mu  sync.RWMutex
	gen uint64
	m   map[Pair]pipeline.Tool

	hits, misses atomic.Uint64
}

// NewHotCache fronts src; hot says which pairs to cache (Tracker.Hot).
func NewHotCache(src ToolLookup, hot func(caller, tool string) bool) *HotCache {
	return &HotCache{src: src, hot: hot, now: time.Now, m: map[Pair]pipeline.Tool{}}
}

// Tool implements ToolLookup (and chains.Catalog).
func (c *HotCache) Tool(caller, name string) (pipeline.Tool, error) {
	p := Pair{caller, name}
	if !c.hot(caller, name) {
		c.drop(p)
		return c.src.Tool(caller, name)
	}
	g := c.src.Generation()
	c.mu.RLock()
	t, ok := c.m[p]
	fresh := c.gen == g
	c.mu.RUnlock()
	if ok && fresh && !pastSunset(t, c.now()) {
		c.hits.Add(1)
		return t, nil
	}
	c.misses.Add(1)
	t, err := c.src.Tool(caller, name)
	if err != nil || c.src.Generation() != g {
		// Refused, or the registry moved while we looked. Storing it would
		// not be wrong — it is stamped with g, already stale — only useless.
		return t, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case g < c.gen:
		return t, nil // a newer lookup already reset the cache
	case g > c.gen:
		c.m, c.gen = map[Pair]pipeline.Tool{}, g
	}
	c.m[p] = t
	return t, nil
}

// Generation implements ToolLookup.
func (c *HotCache) Generation() uint64 { return c.src.Generation() }

func (c *HotCache) drop(p Pair) {
	c.mu.RLock()
	_, ok := c.m[p]
	c.mu.RUnlock()
	if ok {
		c.mu.Lock()
		delete(c.m, p)
		c.mu.Unlock()
	}
}

// Stats are the cache's counters: lookups served from it, lookups of hot
// pairs that went to the source, and the pairs it holds.
func (c *HotCache) Stats() (hits, misses uint64, size int) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.hits.Load(), c.misses.Load(), len(c.m)
}

func pastSunset(t pipeline.Tool, now time.Time) bool {
	d := t.Deprecation
	return d != nil && !d.Sunset.IsZero() && now.After(d.Sunset)
}
