package scoring

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"
)

// LearnedVersion is the format version of Learned.
const LearnedVersion = 1

// MaxLearnedTools bounds how many tools a Learned keeps statistics for,
// and separately preferences for: with the default window of 100 calls a
// persisted state stays under ~2 MB whatever the history. Past the bound,
// the tools called least recently (statistics) or with the fewest verdicts
// and no explicit preference (preferences) are dropped.
const MaxLearnedTools = 1000

// Learned is what scoring learned from use — each tool's recent outcomes
// and the user's preferences — in a form to persist and merge. The package
// does no I/O: the engine stores it (in AIRS_HOME) and loads it back.
type Learned struct {
	V     int                    `json:"v"`
	Stats map[string]ToolHistory `json:"stats,omitempty"`
	Prefs PrefsState             `json:"prefs"`
}

// ToolHistory is one tool's window of recent calls, oldest first.
type ToolHistory struct {
	Total     uint64  `json:"total"`   // calls ever recorded; the window holds the last of them
	Updated   int64   `json:"updated"` // unix ms of the last call
	OK        []bool  `json:"ok"`
	LatencyNs []int64 `json:"latency_ns"`
}

// PrefsState is Preferences' content.
type PrefsState struct {
	Explicit  map[string]float64 `json:"explicit,omitempty"`
	Accepted  map[string]int     `json:"accepted,omitempty"`
	Dismissed map[string]int     `json:"dismissed,omitempty"`
}

// Validate rejects a Learned that Import would misread.
func (l *Learned) Validate() error {
	if l.V != LearnedVersion {
		return fmt.Errorf("learned state version %d, want %d", l.V, LearnedVersion)
	}
	for t, h := range l.Stats {
		if len(h.OK) != len(h.LatencyNs) || uint64(len(h.OK)) > h.Total {
			return fmt.Errorf("learned state: tool %q: %d outcomes, %d latencies, %d calls in all", t, len(h.OK), len(h.LatencyNs), h.Total)
		}
	}
	for t, v := range l.Prefs.Explicit {
		if math.IsNaN(v) || v < -1 || v > 1 {
			return fmt.Errorf("learned state: tool %q: preference %v outside -1..1", t, v)
		}
	}
	return nil
}

// Export copies the statistics, each tool's window oldest first.
func (s *Stats) Export() map[string]ToolHistory {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make(map[string]ToolHistory, len(s.tools))
	for t, r := range s.tools {
		h := ToolHistory{Total: r.total, Updated: r.updated}
		for _, c := range r.ordered() {
			h.OK = append(h.OK, c.ok)
			h.LatencyNs = append(h.LatencyNs, int64(c.latency))
		}
		out[t] = h
	}
	return out
}

// Import replaces the statistics with m (the last Window calls of each
// tool are kept).
func (s *Stats) Import(m map[string]ToolHistory) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tools = make(map[string]*ring, len(m))
	for t, h := range m {
		r := &ring{buf: make([]sample, 0, s.window), total: h.Total, updated: h.Updated}
		for i := range min(len(h.OK), len(h.LatencyNs)) {
			r.push(sample{h.OK[i], time.Duration(h.LatencyNs[i])}, s.window)
		}
		s.tools[t] = r
	}
	s.version++
}

// Export copies the preferences.
func (p *Preferences) Export() PrefsState {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return PrefsState{Explicit: maps.Clone(p.explicit), Accepted: maps.Clone(p.accepted), Dismissed: maps.Clone(p.dismissed)}
}

// Import replaces the preferences with st.
func (p *Preferences) Import(st PrefsState) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.explicit, p.accepted, p.dismissed = cloneOr(st.Explicit), cloneOr(st.Accepted), cloneOr(st.Dismissed)
	p.version++
}

func cloneOr[V any](m map[string]V) map[string]V {
	if m == nil {
		return map[string]V{}
	}
	return maps.Clone(m)
}

// MergeLearned folds what one process learned since it loaded base (cur −
// base) into disk — the state as stored now, which other processes may
// have extended since base was read — so that no process's calls or
// verdicts are lost when several save one file: each tool's new calls are
// appended to disk's window (keeping the last window of them), verdict
// counts add up, and an explicit preference changed since base wins. The
// result is bounded (window calls per tool, MaxLearnedTools tools).
func MergeLearned(disk, base, cur Learned, window int) Learned {
	out := Learned{V: LearnedVersion, Stats: make(map[string]ToolHistory, len(disk.Stats)+len(cur.Stats))}
	for t, h := range disk.Stats {
		out.Stats[t] = h
	}
	for t, c := range cur.Stats {
		b := base.Stats[t]
		if c.Total <= b.Total {
			continue // nothing new from this process
		}
		n := c.Total - b.Total
		k := min(int(min(n, uint64(len(c.OK)))), len(c.LatencyNs))
		d := out.Stats[t]
		h := ToolHistory{
			Total:     d.Total + n,
			Updated:   max(d.Updated, c.Updated),
			OK:        append(slices.Clone(d.OK), c.OK[len(c.OK)-k:]...),
			LatencyNs: append(slices.Clone(d.LatencyNs), c.LatencyNs[len(c.LatencyNs)-k:]...),
		}
		if cut := len(h.OK) - window; window > 0 && cut > 0 {
			h.OK, h.LatencyNs = h.OK[cut:], h.LatencyNs[cut:]
		}
		out.Stats[t] = h
	}
	if len(out.Stats) > MaxLearnedTools {
		tools := slices.Collect(maps.Keys(out.Stats))
		slices.SortFunc(tools, func(a, b string) int { // most recent first, then by name
			if c := cmp.Compare(out.Stats[b].Updated, out.Stats[a].Updated); c != 0 {
				return c
			}
			return strings.Compare(a, b)
		})
		for _, t := range tools[MaxLearnedTools:] {
			delete(out.Stats, t)
		}
	}

	out.Prefs = PrefsState{
		Explicit:  maps.Clone(disk.Prefs.Explicit),
		Accepted:  addDelta(disk.Prefs.Accepted, base.Prefs.Accepted, cur.Prefs.Accepted),
		Dismissed: addDelta(disk.Prefs.Dismissed, base.Prefs.Dismissed, cur.Prefs.Dismissed),
	}
	if out.Prefs.Explicit == nil {
		out.Prefs.Explicit = map[string]float64{}
	}
	for t := range unionKeys(base.Prefs.Explicit, cur.Prefs.Explicit) {
		bv, bok := base.Prefs.Explicit[t]
		cv, cok := cur.Prefs.Explicit[t]
		if bv == cv && bok == cok {
			continue
		}
		if cok {
			out.Prefs.Explicit[t] = cv
		} else {
			delete(out.Prefs.Explicit, t)
		}
	}
	boundPrefs(&out.Prefs)
	return out
}

func addDelta(disk, base, cur map[string]int) map[string]int {
	out := maps.Clone(disk)
	if out == nil {
		out = map[string]int{}
	}
	for t, c := range cur {
		if d := c - base[t]; d > 0 {
			out[t] += d
		}
	}
	return out
}

func unionKeys[V any](a, b map[string]V) map[string]struct{} {
	u := make(map[string]struct{}, len(a)+len(b))
	for k := range a {
		u[k] = struct{}{}
	}
	for k := range b {
		u[k] = struct{}{}
	}
	return u
}

// boundPrefs keeps at most MaxLearnedTools tools: explicit preferences
// first (the user's word), then those with the most verdicts.
func boundPrefs(p *PrefsState) {
	all := unionKeys(p.Accepted, p.Dismissed)
	for t := range p.Explicit {
		all[t] = struct{}{}
	}
	if len(all) <= MaxLearnedTools {
		return
	}
	tools := slices.Collect(maps.Keys(all))
	weight := func(t string) int {
		w := p.Accepted[t] + p.Dismissed[t]
		if _, ok := p.Explicit[t]; ok {
			w = math.MaxInt
		}
		return w
	}
	slices.SortFunc(tools, func(a, b string) int {
		if c := cmp.Compare(weight(b), weight(a)); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	for _, t := range tools[MaxLearnedTools:] {
		delete(p.Explicit, t)
		delete(p.Accepted, t)
		delete(p.Dismissed, t)
	}
}
