package pipeline

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
	"time"
)

func prom(t *testing.T, m *Manager) string {
	t.Helper()
	var b bytes.Buffer
	if err := m.WritePrometheus(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func stringsContain(s, sub string) bool { return strings.Contains(s, sub) }

var promLine = regexp.MustCompile(`^[a-zA-Z_:][a-zA-Z0-9_:]*(\{([a-zA-Z_][a-zA-Z0-9_]*="([^"\\\n]|\\.)*",?)*\})? [0-9.e+-]+$`)

func TestWritePrometheus(t *testing.T) {
	e := newEnv(t, nil)
	e.register(t, "p", tool("t"), echo)
	for range 3 {
		e.call("t", `{}`)
	}
	e.call("missing", `{}`)
	out := prom(t, e.m)
	for _, want := range []string{
		`airs_calls_total{outcome="ok"} 3`,
		`airs_call_errors_total{kind="tool_not_found"} 1`,
		`airs_tool_calls_total{provider="p",tool="t",version="1.0.0",outcome="ok"} 3`,
		`airs_tool_latency_seconds_count{provider="p",tool="t",version="1.0.0"} 3`,
		`airs_tool_latency_seconds_bucket{provider="p",tool="t",version="1.0.0",le="+Inf"} 3`,
		`airs_tool_breaker_state{provider="p",tool="t",version="1.0.0"} 0`,
		`# TYPE airs_pipeline_overhead_seconds histogram`,
	} {
		if !strings.Contains(out, want+"\n") {
			t.Errorf("missing %q", want)
		}
	}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if !strings.HasPrefix(l, "# ") && !promLine.MatchString(l) {
			t.Errorf("not exposition format: %q", l)
		}
	}
	s := e.m.Metrics()
	if s.Calls[OutcomeOK] != 3 || s.Errors[KindToolNotFound] != 1 || len(s.Tools) != 1 || s.Tools[0].P50 <= 0 {
		t.Fatalf("snapshot: %+v", s)
	}
}

func TestHistogramBuckets(t *testing.T) {
	var h Histogram
	for _, d := range []time.Duration{0, time.Microsecond, 1500 * time.Nanosecond, 3 * time.Microsecond, time.Hour} {
		h.Observe(d)
	}
	s := h.Snapshot()
	if s.Buckets[0] != 2 || s.Buckets[1] != 1 || s.Buckets[2] != 1 || s.Buckets[histBuckets-1] != 1 {
		t.Fatalf("buckets %v", s.Buckets[:4])
	}
	var q Histogram
	for i := range 100 {
		q.Observe(time.Duration(i+1) * time.Millisecond)
	}
	qs := q.Snapshot()
	if p50 := qs.Quantile(0.5); p50 < 50*time.Millisecond || p50 > 100*time.Millisecond {
		t.Fatalf("p50 %v", p50)
	}
	if p99 := qs.Quantile(0.99); p99 < 99*time.Millisecond || p99 > 200*time.Millisecond {
		t.Fatalf("p99 %v", p99)
	}
}
