package guard

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airs-dev/airs/guard/anomaly/traffic"
)

// traceGoals checks the goals on one evaluation; short says the history
// was half an hour (the short-history goals) rather than days.
func traceGoals(t *testing.T, name string, lines []TraceResult, short bool) {
	t.Helper()
	for _, l := range lines {
		t.Logf("%s %-10s n=%5d  @0.8 %.4f  @0.9 %.4f  @0.95 %.4f  held %.4f  most held %.4f (%s)", name, l.Kind, l.N, l.At[0], l.At[1], l.At[2], l.Held, l.MostHeld, l.MostHeldBy)
		switch {
		case l.Kind == traffic.LabelNormal && short:
			if l.At[0] > 0.01 || l.MostHeld > 0.05 {
				t.Errorf("%s normal: %.4f flagged at 0.8 (goal ≤ 0.01), %s has %.4f held (goal ≤ 0.05)", name, l.At[0], l.MostHeldBy, l.MostHeld)
			}
		case l.Kind == traffic.LabelNormal:
			if l.At[0] > 0.005 {
				t.Errorf("%s normal: %.4f flagged at 0.8, goal ≤ 0.005 with days of history", name, l.At[0])
			}
		case l.Kind == "burst-20x" || l.Kind == "burst-50x":
			if l.At[1] < 0.9 {
				t.Errorf("%s %s: %.4f at 0.9, goal ≥ 0.9", name, l.Kind, l.At[1])
			}
		case l.Kind == "burst-5x": // no goal
		case strings.HasPrefix(l.Kind, "burst"):
			t.Errorf("%s: unexpected kind %s", name, l.Kind)
		case l.Kind == traffic.LabelNovel || l.Kind == traffic.LabelPayload || !short:
			// The goal is 0.95 over many traces; one trace holds 16 of
			// each, so one miss is 0.94: a single trace is held to 0.9.
			// With half an hour of history, folders have no goal.
			if l.At[1] < 0.9 {
				t.Errorf("%s %s: %.4f at 0.9, want ≥ 0.9", name, l.Kind, l.At[1])
			}
		}
	}
}

// TestTraceEvalShortHistory: the goals on generated traces, trained on 30
// minutes of traffic and replayed as the running airs does (held calls
// counted in the rates, never learned). EVALS.md has the figures on seeds
// the model was not developed on.
func TestTraceEvalShortHistory(t *testing.T) {
	for _, seed := range []uint64{11, 13, 16} {
		train, test := traffic.Hard(traffic.HardOptions{Seed: seed, TestMinutes: 120})
		_, lines, err := EvaluateTraces(train, test, 0.95)
		if err != nil {
			t.Fatal(err)
		}
		traceGoals(t, "30min", lines, true)
	}
}

// TestTraceEvalWeekOfHistory: with seven days of history the stricter
// goals hold, and the hour of day is judged.
func TestTraceEvalWeekOfHistory(t *testing.T) {
	if testing.Short() {
		t.Skip("a week of traffic")
	}
	train, test := traffic.Hard(traffic.HardOptions{Seed: 21, Days: 7, TestMinutes: 120})
	_, lines, err := EvaluateTraces(train, test, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	traceGoals(t, "7days", lines, false)
}

func readTraceFile(t *testing.T, path string) []traffic.TraceLine {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	lines, err := traffic.ReadTrace(f)
	if err != nil {
		t.Fatal(err)
	}
	return lines
}

// TestTraceEvalLiveRecording replays the development set recorded from a
// live airs serve (scripts/guard-trace.sh: eight agents calling the
// built-in tools over this repository's files, 30 minutes of history, 15
// of test traffic with anomalies): no agent's ordinary calls are locked
// out, few are flagged, and the anomalies a person should see are.
func TestTraceEvalLiveRecording(t *testing.T) {
	train := readTraceFile(t, filepath.Join("testdata", "live-train.jsonl"))
	test := readTraceFile(t, filepath.Join("testdata", "live-test.jsonl"))
	_, lines, err := EvaluateTraces(train, test, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range lines {
		t.Logf("live %-10s n=%5d  @0.8 %.4f  @0.9 %.4f  @0.95 %.4f  held %.4f  most held %.4f (%s)", l.Kind, l.N, l.At[0], l.At[1], l.At[2], l.Held, l.MostHeld, l.MostHeldBy)
		switch l.Kind {
		case traffic.LabelNormal:
			if l.At[0] > 0.02 || l.MostHeld > 0.05 {
				t.Errorf("normal: %.4f flagged at 0.8, %s has %.4f held; want ≤ 0.02 and ≤ 0.05", l.At[0], l.MostHeldBy, l.MostHeld)
			}
		case "burst-20x", traffic.LabelNovel, traffic.LabelPayload:
			if l.At[1] < 0.75 {
				t.Errorf("%s: %.4f at 0.9, want ≥ 0.75 on the development set", l.Kind, l.At[1])
			}
		}
	}
}
