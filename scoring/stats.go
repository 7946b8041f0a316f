package scoring

import (
	"math"
	"sort"
	"sync"
	"time"
)

// Stats keeps each tool's most recent call outcomes in a sliding window (the
// pipeline's outcomes, fed by the caller) for success rates and latency
// percentiles. Safe for concurrent use.
type Stats struct {
	window  int
	mu      sync.RWMutex
	tools   map[string]*ring
	version uint64 // bumped by every change: a cheap "anything new to save?"
}

type sample struct {
	ok      bool
	latency time.Duration
}

type ring struct {
	buf     []sample
	next    int
	full    bool
	total   uint64 // calls ever recorded, the window's and older ones
	updated int64  // unix ms of the last call recorded
}

// NewStats keeps the last window calls per tool (default 100 when ≤ 0).
func NewStats(window int) *Stats {
	if window <= 0 {
		window = 100
	}
	return &Stats{window: window, tools: map[string]*ring{}}
}

// Record adds one call's outcome. A failed call's latency counts too: a tool
// that times out slowly is slow.
func (s *Stats) Record(tool string, ok bool, latency time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.tools[tool]
	if r == nil {
		r = &ring{buf: make([]sample, 0, s.window)}
		s.tools[tool] = r
	}
	s.version++
	r.total++
	r.updated = time.Now().UnixMilli()
	r.push(sample{ok, latency}, s.window)
}

func (r *ring) push(smp sample, window int) {
	if !r.full && len(r.buf) < window {
		r.buf = append(r.buf, smp)
		if len(r.buf) == window {
			r.full = true
		}
		return
	}
	r.buf[r.next] = smp
	r.next = (r.next + 1) % window
}

// ordered returns the window oldest first.
func (r *ring) ordered() []sample {
	if !r.full {
		return r.buf
	}
	return append(append(make([]sample, 0, len(r.buf)), r.buf[r.next:]...), r.buf[:r.next]...)
}

// Window is how many recent calls per tool the statistics keep.
func (s *Stats) Window() int { return s.window }

// Version changes whenever a call is recorded or the state imported.
func (s *Stats) Version() uint64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.version
}

// Calls is the number of calls in the tool's window.
func (s *Stats) Calls(tool string) int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if r := s.tools[tool]; r != nil {
		return len(r.buf)
	}
	return 0
}

// SuccessRate is the share of successful calls in the window, smoothed
// toward 0.5 by two pseudo-calls (one success, one failure) so a tool with
// one lucky call is not ranked as perfectly reliable: (ok+1)/(n+2), the
// Laplace rule of succession. A tool never called gets 0.5.
func (s *Stats) SuccessRate(tool string) float64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	r := s.tools[tool]
	if r == nil {
		return 0.5
	}
	ok := 0
	for _, c := range r.buf {
		if c.ok {
			ok++
		}
	}
	return float64(ok+1) / float64(len(r.buf)+2)
}

// P50 is the median latency over the window; false when there is no call.
func (s *Stats) P50(tool string) (time.Duration, bool) {
	return s.Percentile(tool, 0.5)
}

// Percentile returns the q-quantile (0..1, nearest rank) of the window's
// latencies.
func (s *Stats) Percentile(tool string, q float64) (time.Duration, bool) {
	s.mu.RLock()
	r := s.tools[tool]
	var ls []time.Duration
	if r != nil {
		ls = make([]time.Duration, len(r.buf))
		for i, c := range r.buf {
			ls[i] = c.latency
		}
	}
	s.mu.RUnlock()
	if len(ls) == 0 {
		return 0, false
	}
	sort.Slice(ls, func(i, j int) bool { return ls[i] < ls[j] })
	if q == 0.5 && len(ls)%2 == 0 {
		return (ls[len(ls)/2-1] + ls[len(ls)/2]) / 2, true
	}
	i := int(math.Ceil(q*float64(len(ls)))) - 1
	return ls[min(max(i, 0), len(ls)-1)], true
}
