package anomaly

import (
	"sync"
	"time"
)

// Tracker keeps the per-caller history two of the seven features need —
// calls in the last minute and whether the tool is new to the caller — in
// bounded memory, safe for concurrent use. The running airs feeds it every
// scored call (guard.AnomalyScorer) and `airs guard train` replays the
// audit log through a fresh one, so training and scoring compute the
// features with the same code.
//
// Bounds: calls are counted in 60 one-second buckets per caller (a call
// counts for the 60 s that start with its second, so "the last minute" is
// exact to the second); at most MaxToolsPerCaller tools are remembered per
// caller (past it an unseen tool stays novel and is not remembered: a
// caller of that many tools is unusual enough to be looked at); at most
// MaxTrackedCallers callers, the one idle longest forgotten first (its
// next call's tool is then novel again).
type Tracker struct {
	shards [trackerShards]trackerShard
}

const (
	// MaxTrackedCallers bounds the callers a Tracker remembers.
	MaxTrackedCallers = 4096
	// MaxToolsPerCaller bounds the tools remembered per caller.
	MaxToolsPerCaller = 256

	trackerShards = 16
	perShard      = MaxTrackedCallers / trackerShards
	window        = 60 // seconds, one bucket each
)

type trackerShard struct {
	mu      sync.Mutex
	callers map[string]*history
}

type history struct {
	sec   [window]int64 // the unix second bucket i counts
	n     [window]uint32
	total int // the calls of the buckets in (last-60, last]
	tools map[string]struct{}
	last  int64 // unix second of the latest call: the window's end
}

// NewTracker is an empty tracker.
func NewTracker() *Tracker {
	t := &Tracker{}
	for i := range t.shards {
		t.shards[i].callers = map[string]*history{}
	}
	return t
}

// Observe records a call of tool by caller at at and returns its features:
// the caller's calls in the last minute, this one included, and whether
// this is the caller's first call of tool.
func (t *Tracker) Observe(caller, tool string, at time.Time) (callsLastMinute int, novel bool) {
	return t.features(caller, tool, at, true)
}

// Peek is Observe without recording the call (an evaluation scores an
// injected call without letting it change the next one's features).
func (t *Tracker) Peek(caller, tool string, at time.Time) (callsLastMinute int, novel bool) {
	return t.features(caller, tool, at, false)
}

// Add records a call without computing its features (after a Peek that
// decided to keep it).
func (t *Tracker) Add(caller, tool string, at time.Time) {
	sec := at.Unix()
	sh := &t.shards[fnv32a(caller)%trackerShards]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	h := sh.callers[caller]
	if h == nil {
		h = sh.add(caller)
	}
	h.record(tool, sec)
}

func bucket(sec int64) int { return int(((sec % window) + window) % window) }

// advance moves the window's end to sec, dropping the buckets that leave
// it from the running total (at most one pass over the ring).
func (h *history) advance(sec int64) {
	if sec <= h.last {
		return
	}
	if sec-h.last >= window {
		h.total = 0
	} else {
		for s := h.last + 1; s <= sec; s++ {
			if i := bucket(s); h.sec[i] == s-window {
				h.total -= int(h.n[i])
			}
		}
	}
	h.last = sec
}

// count is the calls in (sec-60, sec]. For sec at or after the window's
// end it is the running total minus the buckets that would leave; an
// older sec (a clock moved back) sums the ring.
func (h *history) count(sec int64) int {
	if sec >= h.last {
		if sec-h.last >= window {
			return 0
		}
		n := h.total
		for s := h.last + 1; s <= sec; s++ {
			if i := bucket(s); h.sec[i] == s-window {
				n -= int(h.n[i])
			}
		}
		return n
	}
	n := 0
	for i := range h.sec {
		if s := h.sec[i]; s > sec-window && s <= sec {
			n += int(h.n[i])
		}
	}
	return n
}

func (h *history) record(tool string, sec int64) {
	h.advance(sec)
	i := bucket(sec)
	if h.sec[i] != sec {
		if h.sec[i] > h.last-window && h.sec[i] <= h.last { // an older second still in the window (a clock moved back)
			h.total -= int(h.n[i])
		}
		h.sec[i], h.n[i] = sec, 0
	}
	h.n[i]++
	if sec > h.last-window {
		h.total++
	}
	if _, seen := h.tools[tool]; !seen && len(h.tools) < MaxToolsPerCaller {
		h.tools[tool] = struct{}{}
	}
}

func (t *Tracker) features(caller, tool string, at time.Time, record bool) (int, bool) {
	n, novel := 0, false
	t.ObserveIf(caller, tool, at, func(c int, nv bool) bool {
		n, novel = c, nv
		return record
	})
	return n, novel
}

// ObserveIf computes the call's features as Peek does, hands them to keep,
// and records the call when keep says so — one lock and one lookup for
// the scorer's "score, then record unless held".
func (t *Tracker) ObserveIf(caller, tool string, at time.Time, keep func(callsLastMinute int, novel bool) bool) {
	sec := at.Unix()
	sh := &t.shards[fnv32a(caller)%trackerShards]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	h := sh.callers[caller]
	if h == nil {
		if keep(1, true) {
			sh.add(caller).record(tool, sec)
		}
		return
	}
	_, seen := h.tools[tool]
	if keep(h.count(sec)+1, !seen) {
		h.record(tool, sec)
	}
}

// add makes caller's history, forgetting the caller idle longest when the
// shard is full.
func (sh *trackerShard) add(caller string) *history {
	if len(sh.callers) >= perShard {
		var oldest string
		first := true
		var at int64
		for k, h := range sh.callers {
			if first || h.last < at || (h.last == at && k < oldest) {
				oldest, at, first = k, h.last, false
			}
		}
		delete(sh.callers, oldest)
	}
	h := &history{tools: map[string]struct{}{}, last: -1 << 61}
	for i := range h.sec {
		h.sec[i] = -1 << 62 // no second counts before the first call
	}
	sh.callers[caller] = h
	return h
}

// Callers is how many callers the tracker remembers.
func (t *Tracker) Callers() int {
	n := 0
	for i := range t.shards {
		sh := &t.shards[i]
		sh.mu.Lock()
		n += len(sh.callers)
		sh.mu.Unlock()
	}
	return n
}
