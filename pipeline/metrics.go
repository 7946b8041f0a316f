package pipeline

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// managerMetrics are the Manager-wide counters; per-tool ones live in the
// registry entries (toolStats).
type managerMetrics struct {
	calls    [4]atomic.Uint64          // by outcomeIndex
	errors   map[string]*atomic.Uint64 // by kind; fixed keys, read-only map
	overhead Histogram                 // call latency minus handler time

	intentAsyncChecked    atomic.Uint64
	intentAsyncMisaligned atomic.Uint64
	intentAsyncDropped    atomic.Uint64

	overrunning atomic.Int64 // stragglers still running (watchStraggler)
}

func (mm *managerMetrics) init() {
	mm.errors = map[string]*atomic.Uint64{"internal": new(atomic.Uint64)}
	for _, k := range Kinds() {
		mm.errors[k] = new(atomic.Uint64)
	}
}

func (mm *managerMetrics) count(o Outcome, kind string) {
	mm.calls[outcomeIndex(o)].Add(1)
	if kind != "" {
		c := mm.errors[kind]
		if c == nil {
			c = mm.errors["internal"]
		}
		c.Add(1)
	}
}

// Metrics is a snapshot of what /metrics shows.
type Metrics struct {
	Calls    map[Outcome]uint64 // every call, by outcome
	Errors   map[string]uint64  // every failed call, by kind ("internal": none of the 14)
	InFlight int
	// Overhead is the pipeline's own time per call: total latency minus
	// the handler's, so it includes waiting for the audit record's fsync.
	Overhead    HistogramSnapshot
	IntentAsync struct{ Checked, Misaligned, Dropped uint64 }
	// Overrunning is the number of handlers running now past
	// StragglerGrace after their context ended.
	Overrunning int64
	Tools       []ToolMetrics // sorted by tool, provider, version
}

// ToolMetrics is one registered tool version's counters.
type ToolMetrics struct {
	Provider, Tool, Version string
	Calls                   map[Outcome]uint64 // calls resolved to this tool, by outcome
	Failures                uint64             // dispatched calls the provider failed (ranking's error rate)
	Stragglers              uint64             // handlers that ran past StragglerGrace after their context ended
	Latency                 HistogramSnapshot  // handler time of dispatched calls
	P50, P99                time.Duration      // bucket upper bounds (×2 resolution)
	Breaker                 BreakerState
}

// Metrics takes a snapshot.
func (m *Manager) Metrics() Metrics {
	var s Metrics
	s.Calls = map[Outcome]uint64{}
	for i, o := range outcomes {
		s.Calls[o] = m.metrics.calls[i].Load()
	}
	s.Errors = map[string]uint64{}
	for k, c := range m.metrics.errors {
		s.Errors[k] = c.Load()
	}
	s.InFlight = m.flights.count()
	s.Overhead = m.metrics.overhead.Snapshot()
	s.IntentAsync.Checked = m.metrics.intentAsyncChecked.Load()
	s.IntentAsync.Misaligned = m.metrics.intentAsyncMisaligned.Load()
	s.IntentAsync.Dropped = m.metrics.intentAsyncDropped.Load()
	s.Overrunning = m.metrics.overrunning.Load()
	for _, e := range m.reg.entries() {
		tm := ToolMetrics{Provider: e.prov.id, Tool: e.tool.Name, Version: e.tool.Version,
			Calls: map[Outcome]uint64{}, Failures: e.stats.failures.Load(), Stragglers: e.stats.stragglers.Load(),
			Latency: e.stats.latency.Snapshot()}
		for i, o := range outcomes {
			tm.Calls[o] = e.stats.calls[i].Load()
		}
		tm.P50, tm.P99 = tm.Latency.Quantile(0.5), tm.Latency.Quantile(0.99)
		if b := e.brk.Load(); b != nil {
			tm.Breaker = b.State()
		}
		s.Tools = append(s.Tools, tm)
	}
	slices.SortFunc(s.Tools, func(a, b ToolMetrics) int {
		return cmp.Or(cmp.Compare(a.Tool, b.Tool), cmp.Compare(a.Provider, b.Provider), cmp.Compare(a.Version, b.Version))
	})
	return s
}

// WritePrometheus writes the Manager's metrics in the Prometheus text
// exposition format (version 0.0.4).
func (m *Manager) WritePrometheus(w io.Writer) error {
	s := m.Metrics()
	return s.WritePrometheus(w)
}

// WritePrometheus writes the snapshot in the Prometheus text format.
func (s *Metrics) WritePrometheus(w io.Writer) error {
	bw := bufio.NewWriter(w)
	head := func(name, typ, help string) {
		fmt.Fprintf(bw, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, typ)
	}
	head("airs_calls_total", "counter", "Tool calls by outcome.")
	for _, o := range outcomes {
		fmt.Fprintf(bw, "airs_calls_total{outcome=%q} %d\n", o, s.Calls[o])
	}
	head("airs_call_errors_total", "counter", "Failed tool calls by error kind.")
	kinds := append(Kinds(), "internal")
	for _, k := range kinds {
		fmt.Fprintf(bw, "airs_call_errors_total{kind=%q} %d\n", k, s.Errors[k])
	}
	head("airs_calls_in_flight", "gauge", "Calls between stage 1 and delivery.")
	fmt.Fprintf(bw, "airs_calls_in_flight %d\n", s.InFlight)
	head("airs_intent_async_total", "counter", "Background intent checks of idempotent calls by result.")
	fmt.Fprintf(bw, "airs_intent_async_total{result=\"aligned\"} %d\n", s.IntentAsync.Checked)
	fmt.Fprintf(bw, "airs_intent_async_total{result=\"misaligned\"} %d\n", s.IntentAsync.Misaligned)
	fmt.Fprintf(bw, "airs_intent_async_total{result=\"dropped\"} %d\n", s.IntentAsync.Dropped)
	head("airs_handlers_overrunning", "gauge", "Handlers still running past the straggler grace after their call's context ended.")
	fmt.Fprintf(bw, "airs_handlers_overrunning %d\n", s.Overrunning)
	head("airs_pipeline_overhead_seconds", "histogram", "Per-call time outside the handler, audit fsync included.")
	writeHist(bw, "airs_pipeline_overhead_seconds", "", &s.Overhead)

	head("airs_tool_calls_total", "counter", "Calls resolved to a tool, by outcome.")
	for _, t := range s.Tools {
		for _, o := range outcomes {
			fmt.Fprintf(bw, "airs_tool_calls_total{%s,outcome=%q} %d\n", toolLabels(&t), o, t.Calls[o])
		}
	}
	head("airs_tool_failures_total", "counter", "Dispatched calls the provider failed.")
	for _, t := range s.Tools {
		fmt.Fprintf(bw, "airs_tool_failures_total{%s} %d\n", toolLabels(&t), t.Failures)
	}
	head("airs_handler_stragglers_total", "counter", "Handlers still running past the straggler grace after their context ended (cancelled or timed out): tools not honouring cancellation.")
	for _, t := range s.Tools {
		fmt.Fprintf(bw, "airs_handler_stragglers_total{%s} %d\n", toolLabels(&t), t.Stragglers)
	}
	head("airs_tool_latency_seconds", "histogram", "Handler latency of dispatched calls.")
	for _, t := range s.Tools {
		writeHist(bw, "airs_tool_latency_seconds", toolLabels(&t), &t.Latency)
	}
	head("airs_tool_breaker_state", "gauge", "Circuit breaker: 0 closed, 1 degraded (open), 2 half-open.")
	for _, t := range s.Tools {
		fmt.Fprintf(bw, "airs_tool_breaker_state{%s} %d\n", toolLabels(&t), t.Breaker)
	}
	return bw.Flush()
}

func toolLabels(t *ToolMetrics) string {
	return "provider=" + promQuote(t.Provider) + ",tool=" + promQuote(t.Tool) + ",version=" + promQuote(t.Version)
}

// promQuote escapes a label value: backslash, double quote and newline.
func promQuote(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	return `"` + r.Replace(s) + `"`
}

func writeHist(w io.Writer, name, labels string, h *HistogramSnapshot) {
	sep := ""
	if labels != "" {
		sep = ","
	}
	var cum uint64
	for i := 0; i < histBuckets-1; i++ {
		cum += h.Buckets[i]
		le := strconv.FormatFloat(BucketBound(i).Seconds(), 'g', -1, 64)
		fmt.Fprintf(w, "%s_bucket{%s%sle=%q} %d\n", name, labels, sep, le, cum)
	}
	cum += h.Buckets[histBuckets-1]
	fmt.Fprintf(w, "%s_bucket{%s%sle=\"+Inf\"} %d\n", name, labels, sep, cum)
	braced := ""
	if labels != "" {
		braced = "{" + labels + "}"
	}
	fmt.Fprintf(w, "%s_sum%s %s\n", name, braced, strconv.FormatFloat(h.Sum.Seconds(), 'g', -1, 64))
	fmt.Fprintf(w, "%s_count%s %d\n", name, braced, cum)
}
