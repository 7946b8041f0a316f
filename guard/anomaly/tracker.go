package anomaly

import (
	"sync"
	"time"
)

// Tracker keeps the per-caller history the features need — calls in the
// last 10 s and minute, the span of the last SpanCalls calls, and the
// tools and folders the caller used as usual calls — in bounded memory,
// safe for concurrent use. The running airs feeds it every scored call
// (guard.AnomalyScorer) and `airs guard train` replays the audit log
// through a fresh one, so training and scoring compute the features with
// the same code.
//
// Every call counts in the rates as what it is, a held one too: an agent
// whose calls are held is not made to look idle (and so its next call
// unusually fast or slow). A held call's tool and folders are not learned
// as usual until a person approves it (Learn).
//
// Bounds: calls are counted in 60 one-second buckets per caller (a call
// counts for the 60 s that start with its second, so "the last minute" is
// exact to the second); at most MaxToolsPerCaller tools and
// MaxFoldersPerCaller folders are remembered per caller (past it an unseen
// one stays new); at most MaxTrackedCallers callers, the one idle longest
// forgotten first (its next call's tool is then new again).
type Tracker struct {
	shards [trackerShards]trackerShard
}

const (
	// MaxTrackedCallers bounds the callers a Tracker remembers.
	MaxTrackedCallers = 4096
	// MaxToolsPerCaller bounds the tools remembered per caller.
	MaxToolsPerCaller = 256
	// MaxFoldersPerCaller bounds the folders remembered per caller.
	MaxFoldersPerCaller = 256

	trackerShards = 16
	perShard      = MaxTrackedCallers / trackerShards
	window        = 60 // seconds, one bucket each
)

type trackerShard struct {
	mu      sync.Mutex
	callers map[string]*history
}

type history struct {
	sec     [window]int64 // the unix second bucket i counts
	n       [window]uint32
	total   int // the calls of the buckets in (last-60, last]
	tools   map[string]struct{}
	folders map[uint64]struct{}
	tops    map[uint64]struct{}
	// folderCalls counts the learned calls that named a folder; of those
	// after the first few, lateFolderCalls, and lateNewTops the ones that
	// named a top-level folder new to the caller: the evidence a new
	// folder is judged by when the model was trained without arguments.
	folderCalls, lateFolderCalls, lateNewTops int
	last                                      int64                // unix second of the latest call: the window's end
	recent                                    [SpanCalls - 1]int64 // unix ns of the latest calls, a ring
	nrecent                                   int                  // calls ever recorded (the ring's head is nrecent % len)
}

// NewTracker is an empty tracker.
func NewTracker() *Tracker {
	t := &Tracker{}
	for i := range t.shards {
		t.shards[i].callers = map[string]*history{}
	}
	return t
}

// Folders are the folders a call's arguments name (FoldersOf).
type Folders struct {
	Folders, Tops [MaxFolders]uint64
	N             int
}

// FoldersOfFeatures are f's folders.
func FoldersOfFeatures(f *Features) Folders {
	return Folders{Folders: f.Folders, Tops: f.Tops, N: f.NFolders}
}

// Recent is what the tracker knows of a call: the caller's calls in the
// last 10, 20, 30 and 60 s and the span of its last SpanCalls calls, this one
// included, and whether it used the tool (and which of the call's
// folders) as usual calls before.
type Recent struct {
	Last10s, Last20s, Last30s, LastMinute int
	Span                                  time.Duration
	KnownTool                             bool
	KnownFolders                          uint8 // bit i: folders[i]
	KnownTops                             uint8 // bit i: tops[i]
	// FolderCalls, LateFolderCalls, LateNewTops: see history.
	FolderCalls, LateFolderCalls, LateNewTops int
}

// Apply copies r into f.
func (r Recent) Apply(f *Features) {
	f.Last10s, f.Last20s, f.Last30s, f.LastMinute, f.Span, f.KnownTool, f.KnownFolders, f.KnownTops = r.Last10s, r.Last20s, r.Last30s, r.LastMinute, r.Span, r.KnownTool, r.KnownFolders, r.KnownTops
	f.LiveFolderCalls, f.LiveLateFolderCalls, f.LiveLateNewTops = r.FolderCalls, r.LateFolderCalls, r.LateNewTops
}

// Observe records a call of tool by caller at at, learning its tool and
// folders as usual, and returns what was known before it (with it counted
// in the rates).
func (t *Tracker) Observe(caller, tool string, folders Folders, at time.Time) Recent {
	var out Recent
	t.ObserveIf(caller, tool, folders, at, func(r Recent) bool { out = r; return true })
	return out
}

// Peek is Observe without recording the call at all (an evaluation scores
// an injected call without letting it change the next one's features).
func (t *Tracker) Peek(caller, tool string, folders Folders, at time.Time) Recent {
	ns := at.UnixNano()
	sh := &t.shards[fnv32a(caller)%trackerShards]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	h := sh.callers[caller]
	if h == nil {
		return Recent{Last10s: 1, Last20s: 1, Last30s: 1, LastMinute: 1}
	}
	return h.recentOf(tool, folders, at.Unix(), ns)
}

// Learn makes tool and folders usual for caller without counting a call
// (a person approved a call that was held).
func (t *Tracker) Learn(caller, tool string, folders Folders) {
	sh := &t.shards[fnv32a(caller)%trackerShards]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	h := sh.callers[caller]
	if h == nil {
		h = sh.add(caller)
	}
	h.learn(tool, folders)
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

// record counts a call at sec (ns its time) in the rates.
func (h *history) record(sec, ns int64) {
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
	h.recent[h.nrecent%len(h.recent)] = ns
	h.nrecent++
}

func (h *history) learn(tool string, folders Folders) {
	if _, seen := h.tools[tool]; !seen && len(h.tools) < MaxToolsPerCaller {
		h.tools[tool] = struct{}{}
	}
	if folders.N > 0 {
		if h.folderCalls >= discoveryWarmup {
			h.lateFolderCalls++
			for _, t := range folders.Tops[:folders.N] {
				if _, seen := h.tops[t]; !seen {
					h.lateNewTops++
					break
				}
			}
		}
		h.folderCalls++
	}
	for i, f := range folders.Folders[:folders.N] {
		if _, seen := h.folders[f]; !seen && len(h.folders) < MaxFoldersPerCaller {
			h.folders[f] = struct{}{}
		}
		if t := folders.Tops[i]; len(h.tops) < MaxFoldersPerCaller {
			h.tops[t] = struct{}{}
		}
	}
}

// lastSeconds is the calls in (sec-10, sec], (sec-20, sec] and
// (sec-30, sec], in one pass over the ring.
func (h *history) lastSeconds(sec int64) (n10, n20, n30 int) {
	for back := int64(0); back < 30; back++ {
		s := sec - back
		if i := bucket(s); h.sec[i] == s {
			c := int(h.n[i])
			n30 += c
			if back < 20 {
				n20 += c
			}
			if back < 10 {
				n10 += c
			}
		}
	}
	return n10, n20, n30
}

// recentOf is what is known before a call at sec (ns), counting it.
func (h *history) recentOf(tool string, folders Folders, sec, ns int64) Recent {
	n10, n20, n30 := h.lastSeconds(sec)
	r := Recent{Last10s: n10 + 1, Last20s: n20 + 1, Last30s: n30 + 1, LastMinute: h.count(sec) + 1, FolderCalls: h.folderCalls,
		LateFolderCalls: h.lateFolderCalls, LateNewTops: h.lateNewTops}
	if h.nrecent >= len(h.recent) {
		oldest := h.recent[h.nrecent%len(h.recent)]
		r.Span = time.Duration(max(ns-oldest, 0))
	}
	_, r.KnownTool = h.tools[tool]
	for i, f := range folders.Folders[:folders.N] {
		if _, ok := h.folders[f]; ok {
			r.KnownFolders |= 1 << i
		}
		if _, ok := h.tops[folders.Tops[i]]; ok {
			r.KnownTops |= 1 << i
		}
	}
	return r
}

// ObserveIf computes the call's Recent, hands it to learn, counts the call
// in the rates and, when learn says so, remembers its tool and folders as
// usual for the caller — one lock and one lookup for the scorer's "score,
// count, and learn unless held".
func (t *Tracker) ObserveIf(caller, tool string, folders Folders, at time.Time, learn func(Recent) bool) {
	sec, ns := at.Unix(), at.UnixNano()
	sh := &t.shards[fnv32a(caller)%trackerShards]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	h := sh.callers[caller]
	if h == nil {
		h = sh.add(caller)
	}
	r := h.recentOf(tool, folders, sec, ns)
	h.record(sec, ns)
	if learn(r) {
		h.learn(tool, folders)
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
	h := &history{tools: map[string]struct{}{}, folders: map[uint64]struct{}{}, tops: map[uint64]struct{}{}, last: -1 << 61}
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
