// Package affinity learns which callers use which tools often enough that
// the tool's provider should be kept ready for them: windowed (caller,
// tool) counts with a threshold. It is fed by pipeline.Manager.Subscribe,
// persists what it learned (so that a restart can pre-warm at startup) and
// drives the pipeline's Warmer hook; it never runs a tool.
package affinity

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/airs-dev/airs/pipeline"
)

// Config tunes a Tracker; zero fields take the defaults.
type Config struct {
	// Window is how far back calls count (default 30 minutes). It is kept
	// in Buckets slices so that old calls leave it in steps, not all at
	// once and without keeping every timestamp.
	Window  time.Duration
	Buckets int // default 6
	// Threshold is the number of calls within Window that makes an
	// affinity (default 3).
	Threshold int
	// Now is the clock (tests); default time.Now.
	Now func() time.Time
}

func (c Config) withDefaults() Config {
	if c.Window <= 0 {
		c.Window = 30 * time.Minute
	}
	if c.Buckets <= 0 {
		c.Buckets = 6
	}
	if c.Threshold <= 0 {
		c.Threshold = 3
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c
}

// Pair is one (caller, tool).
type Pair struct {
	Caller string `json:"caller"`
	Tool   string `json:"tool"`
}

// Affinity is a pair at or over the threshold, with its windowed count.
type Affinity struct {
	Pair
	Count int `json:"count"`
}

// Tracker holds the windowed counts. It is safe for concurrent use.
type Tracker struct {
	cfg   Config
	width time.Duration

	mu     sync.Mutex
	counts map[Pair][]bucket // ring per pair, oldest dropped lazily
}

type bucket struct {
	slot int64 // time / width
	n    int
}

// New returns an empty Tracker.
func New(cfg Config) *Tracker {
	cfg = cfg.withDefaults()
	return &Tracker{cfg: cfg, width: cfg.Window / time.Duration(cfg.Buckets), counts: map[Pair][]bucket{}}
}

func (t *Tracker) slot(at time.Time) int64 { return at.UnixNano() / int64(t.width) }

// Observe counts one call of tool by caller at at. Speculative calls and
// calls that did not reach a provider should not be observed: they say
// nothing about what the caller uses.
func (t *Tracker) Observe(caller, tool string, at time.Time) {
	if caller == "" || tool == "" {
		return
	}
	s := t.slot(at)
	t.mu.Lock()
	defer t.mu.Unlock()
	p := Pair{caller, tool}
	bs := t.prune(t.counts[p], t.slot(t.cfg.Now()))
	if n := len(bs); n > 0 && bs[n-1].slot == s {
		bs[n-1].n++
	} else {
		bs = append(bs, bucket{slot: s, n: 1})
	}
	t.counts[p] = bs
}

// prune drops the buckets that have left the window ending at slot now.
func (t *Tracker) prune(bs []bucket, now int64) []bucket {
	oldest := now - int64(t.cfg.Buckets) + 1
	i := 0
	for i < len(bs) && bs[i].slot < oldest {
		i++
	}
	return bs[i:]
}

// Affinities returns the pairs at or over the threshold now, the most used
// first (then by caller, tool, for a stable order).
func (t *Tracker) Affinities() []Affinity {
	now := t.slot(t.cfg.Now())
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []Affinity
	for p, bs := range t.counts {
		bs = t.prune(bs, now)
		if len(bs) == 0 {
			delete(t.counts, p)
			continue
		}
		t.counts[p] = bs
		n := 0
		for _, b := range bs {
			n += b.n
		}
		if n >= t.cfg.Threshold {
			out = append(out, Affinity{Pair: p, Count: n})
		}
	}
	slices.SortFunc(out, func(a, b Affinity) int {
		if a.Count != b.Count {
			return b.Count - a.Count
		}
		if a.Caller != b.Caller {
			if a.Caller < b.Caller {
				return -1
			}
			return 1
		}
		if a.Tool < b.Tool {
			return -1
		} else if a.Tool > b.Tool {
			return 1
		}
		return 0
	})
	return out
}

// Tools returns the distinct tools of the current affinities: the
// providers to keep alive.
func (t *Tracker) Tools() []string {
	var out []string
	for _, a := range t.Affinities() {
		if !slices.Contains(out, a.Tool) {
			out = append(out, a.Tool)
		}
	}
	return out
}

// Run counts every delivered call of sub until ctx ends or sub closes.
// Only calls that reached a provider (ok, or an error the tool returned)
// count.
func (t *Tracker) Run(ctx context.Context, sub *pipeline.Subscription) {
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-sub.C:
			if !ok {
				return
			}
			if ev.Outcome == pipeline.OutcomeOK {
				t.Observe(ev.Caller, ev.Tool, ev.At)
			}
		}
	}
}

// Save writes the current affinities to path (atomically: a temp file
// renamed over it), so that the next start can pre-warm for them.
func (t *Tracker) Save(path string) error {
	b, err := json.MarshalIndent(t.Affinities(), "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("affinity: create the folder of %s: %w", path, err)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return fmt.Errorf("affinity: write %s: %w", tmp, err)
	}
	return os.Rename(tmp, path)
}

// Load reads the affinities Save wrote. A missing file is no affinities,
// not an error: the first start has none.
func Load(path string) ([]Affinity, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("affinity: read %s: %w", path, err)
	}
	var out []Affinity
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, fmt.Errorf("affinity: %s is not an affinity file (delete it to start afresh): %w", path, err)
	}
	return out, nil
}

// Seed counts the loaded affinities as calls made now, so that a restart
// keeps them for one window unless they are used again.
func (t *Tracker) Seed(as []Affinity) {
	now := t.cfg.Now()
	for _, a := range as {
		for range a.Count {
			t.Observe(a.Caller, a.Tool, now)
		}
	}
}

// Warmer is what Prewarm and KeepAlive warm through: pipeline.Registry.
type Warmer interface {
	Warm(ctx context.Context, tool string) (int, error)
}

// Prewarm warms the provider of every tool of as, once per tool, and
// returns how many handlers it warmed. Called at startup with the loaded
// affinities; tools of callers without affinity are not touched.
func Prewarm(ctx context.Context, w Warmer, as []Affinity) (int, error) {
	var done []string
	var errs []error
	total := 0
	for _, a := range as {
		if slices.Contains(done, a.Tool) {
			continue
		}
		done = append(done, a.Tool)
		n, err := w.Warm(ctx, a.Tool)
		total += n
		if err != nil {
			errs = append(errs, err)
		}
	}
	return total, errors.Join(errs...)
}

// KeepAlive warms the providers of the active affinities every interval
// until ctx ends, so that a provider that unloads when idle stays ready
// while someone uses it. Errors go to onErr (may be nil).
func (t *Tracker) KeepAlive(ctx context.Context, w Warmer, interval time.Duration, onErr func(error)) {
	tk := time.NewTicker(interval)
	defer tk.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tk.C:
			if _, err := Prewarm(ctx, w, t.Affinities()); err != nil && onErr != nil {
				onErr(err)
			}
		}
	}
}
