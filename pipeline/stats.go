package pipeline

import (
	"sync/atomic"
	"time"
)

// outcomeIndex maps an Outcome to a counter slot.
func outcomeIndex(o Outcome) int {
	switch o {
	case OutcomeOK:
		return 0
	case OutcomeError:
		return 1
	case OutcomeCancelled:
		return 2
	}
	return 3 // timeout
}

var outcomes = [4]Outcome{OutcomeOK, OutcomeError, OutcomeCancelled, OutcomeTimeout}

// toolStats is what the pipeline learns about one registered tool version:
// calls per outcome, the latency histogram (handler time, stages 5–6), and
// the failures that feed ranking's error rate.
type toolStats struct {
	calls    [4]atomic.Uint64 // by outcomeIndex
	failures atomic.Uint64    // provider-side failures: crashed, dead, rejected, a timeout that is its fault (judgeTimeout)
	// stragglers: handlers still running StragglerGrace after their
	// context ended (call.go, watchStraggler).
	stragglers atomic.Uint64
	latency    Histogram
}

// count records a call resolved to this tool, whatever its outcome.
func (s *toolStats) count(o Outcome) { s.calls[outcomeIndex(o)].Add(1) }

// dispatched records a call that reached the handler.
func (s *toolStats) dispatched(failed bool, d time.Duration) {
	if failed {
		s.failures.Add(1)
	}
	s.latency.Observe(d)
}

// errorRate is failures over calls that reached the provider (0 with none).
func (s *toolStats) errorRate() float64 {
	n := s.latency.count.Load()
	if n == 0 {
		return 0
	}
	return float64(s.failures.Load()) / float64(n)
}
