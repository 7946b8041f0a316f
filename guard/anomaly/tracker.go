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
	tools map[string]struct{}
	last  int64 // unix second of the latest call, for eviction
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

func (h *history) record(tool string, sec int64) {
	i := int(((sec % window) + window) % window)
	if h.sec[i] != sec {
		h.sec[i], h.n[i] = sec, 0
	}
	h.n[i]++
	if sec > h.last {
		h.last = sec
	}
	if _, seen := h.tools[tool]; !seen && len(h.tools) < MaxToolsPerCaller {
		h.tools[tool] = struct{}{}
	}
}

func (t *Tracker) features(caller, tool string, at time.Time, record bool) (int, bool) {
	sec := at.Unix()
	sh := &t.shards[fnv32a(caller)%trackerShards]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	h := sh.callers[caller]
	if h == nil {
		if !record {
			return 1, true
		}
		h = sh.add(caller)
	}
	_, seen := h.tools[tool]
	calls := 0
	if record {
		h.record(tool, sec)
	} else {
		calls = 1 // the peeked call itself
	}
	for i := range h.sec {
		if s := h.sec[i]; s > sec-window && s <= sec {
			calls += int(h.n[i])
		}
	}
	return calls, !seen
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
	h := &history{tools: map[string]struct{}{}}
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
