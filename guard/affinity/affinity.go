// Package affinity learns which callers use which tools often enough that
// the tool's provider should be kept ready for them: windowed (caller,
// tool) counts with a threshold. It is fed by pipeline.Manager.Subscribe,
// persists what it learned (so that a restart can pre-warm at startup) and
// drives the pipeline's Warmer hook; it never runs a tool.
package affinity

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/airs-dev/airs/internal/atomicfile"
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

// Affinity is a pair at or over the threshold, with its windowed count and
// when it was last called (the start of the window's step that holds its
// latest call: a saved affinity expires when that step leaves the window).
type Affinity struct {
	Pair
	Count int       `json:"count"`
	Last  time.Time `json:"last,omitzero"`
}

// Tracker holds the windowed counts. It is safe for concurrent use.
type Tracker struct {
	cfg   Config
	width time.Duration

	mu      sync.Mutex
	counts  map[Pair][]bucket // ring per pair, oldest dropped lazily
	version uint64            // counts Observe calls: Version
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
	now := t.slot(t.cfg.Now())
	if s < now-int64(t.cfg.Buckets)+1 {
		return // already out of the window
	}
	p := Pair{caller, tool}
	bs := t.prune(t.counts[p], now)
	// Calls arrive in time order but for Seed's (earlier) ones: keep the
	// buckets sorted, prune depends on it.
	i := len(bs)
	for i > 0 && bs[i-1].slot > s {
		i--
	}
	if i > 0 && bs[i-1].slot == s {
		bs[i-1].n++
	} else {
		bs = slices.Insert(bs, i, bucket{slot: s, n: 1})
	}
	t.counts[p] = bs
	t.version++
}

// Version changes whenever a call is observed, so that a saver can skip a
// save when nothing happened.
func (t *Tracker) Version() uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.version
}

// Window is the configured window (with its default).
func (t *Tracker) Window() time.Duration { return t.cfg.Window }

// Hot reports whether caller has an affinity for tool now. It is the hot
// path of HotCache: one map lookup and at most Buckets additions.
func (t *Tracker) Hot(caller, tool string) bool {
	now := t.slot(t.cfg.Now())
	p := Pair{caller, tool}
	t.mu.Lock()
	defer t.mu.Unlock()
	bs, ok := t.counts[p]
	if !ok {
		return false
	}
	n := 0
	for _, b := range t.prune(bs, now) {
		n += b.n
	}
	return n >= t.cfg.Threshold
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
			last := time.Unix(0, bs[len(bs)-1].slot*int64(t.width)).UTC()
			out = append(out, Affinity{Pair: p, Count: n, Last: last})
		}
	}
	sortAffinities(out)
	return out
}

// sortAffinities orders the most used first, then by caller and tool (a
// stable order for files and tests).
func sortAffinities(as []Affinity) {
	slices.SortFunc(as, func(a, b Affinity) int {
		return cmp.Or(b.Count-a.Count, cmp.Compare(a.Caller, b.Caller), cmp.Compare(a.Tool, b.Tool))
	})
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

// fileVersion is the version of the file Save writes.
const fileVersion = 1

// file is what Save writes.
type file struct {
	Version    int        `json:"version"`
	SavedAt    time.Time  `json:"saved_at"`
	Affinities []Affinity `json:"affinities"`
}

// Save writes the current affinities to path, merged with others (what the
// file held, as Load read it just before: other processes sharing the
// same AIRS_HOME save there too), so that the next start can pre-warm for
// them. Of others only the affinities still within the window are kept;
// a pair in both keeps the later one (Merge). The file is replaced whole
// (temp file, fsync, rename, fsync of the folder): a crash leaves the old
// file or the new one. Callers that share the file serialize Load+Save
// with a lock of their own.
func (t *Tracker) Save(path string, others []Affinity) error {
	now := t.cfg.Now()
	as := Merge(t.Affinities(), others, now.Add(-t.cfg.Window))
	b, err := json.MarshalIndent(file{Version: fileVersion, SavedAt: now.UTC(), Affinities: as}, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("affinity: create the folder of %s: %w", path, err)
	}
	if err := atomicfile.Write(path, b); err != nil {
		return fmt.Errorf("affinity: save %s: %w", path, err)
	}
	return nil
}

// Merge joins ours and others, one entry per pair: the one called last
// (then the larger count). Entries of others last called before since, or
// with no time, are left out: they have left the window.
func Merge(ours, others []Affinity, since time.Time) []Affinity {
	by := map[Pair]Affinity{}
	for _, a := range ours {
		by[a.Pair] = a
	}
	for _, a := range others {
		if a.Last.IsZero() || a.Last.Before(since) {
			continue
		}
		if o, ok := by[a.Pair]; ok && (o.Last.After(a.Last) || o.Last.Equal(a.Last) && o.Count >= a.Count) {
			continue
		}
		by[a.Pair] = a
	}
	out := make([]Affinity, 0, len(by))
	for _, a := range by {
		out = append(out, a)
	}
	sortAffinities(out)
	return out
}

// CorruptError is Load's answer for a file that is not an affinity file
// (cut short, edited by hand, another program's): SetAside moves it out of
// the way so that nothing overwrites it.
type CorruptError struct {
	Path string
	Err  error
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("affinity: %s is not an affinity file (%v)", e.Path, e.Err)
}

func (e *CorruptError) Unwrap() error { return e.Err }

// Load reads the affinities Save wrote. A missing file is no affinities,
// not an error: the first start has none. A file that is not one is a
// *CorruptError.
func Load(path string) ([]Affinity, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("affinity: read %s: %w", path, err)
	}
	var f file
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, &CorruptError{Path: path, Err: err}
	}
	if f.Version != fileVersion {
		return nil, &CorruptError{Path: path, Err: fmt.Errorf("version %d, want %d", f.Version, fileVersion)}
	}
	for i, a := range f.Affinities {
		if a.Caller == "" || a.Tool == "" || a.Count < 1 {
			return nil, &CorruptError{Path: path, Err: fmt.Errorf("entry %d: want a caller, a tool and a count of at least 1", i)}
		}
	}
	return f.Affinities, nil
}

// SetAside renames a corrupt file to PATH.corrupt-TIME beside it and
// returns the new name, so that the next save starts afresh without
// destroying what was there.
func SetAside(path string, now time.Time) (string, error) {
	to := path + ".corrupt-" + now.UTC().Format("20060102T150405.000000000Z")
	if err := os.Rename(path, to); err != nil {
		return "", fmt.Errorf("affinity: move %s aside: %w", path, err)
	}
	return to, nil
}

// Seed counts loaded affinities as calls made when they were last made
// (Affinity.Last; now when it is unset or in the future), so that a
// restart keeps each for what is left of its window unless it is used
// again. An affinity whose last call has left the window is dropped.
// It returns the affinities seeded.
func (t *Tracker) Seed(as []Affinity) []Affinity {
	now := t.cfg.Now()
	var out []Affinity
	for _, a := range as {
		at := a.Last
		if at.IsZero() || at.After(now) {
			at = now
		}
		if t.slot(at) < t.slot(now)-int64(t.cfg.Buckets)+1 {
			continue
		}
		for range a.Count {
			t.Observe(a.Caller, a.Tool, at)
		}
		out = append(out, a)
	}
	return out
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
