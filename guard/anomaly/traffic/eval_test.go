package traffic

import (
	"testing"

	"github.com/airs-dev/airs/guard/anomaly"
)

// TestEvalGoals is the goals on a smaller generated log: ≥ 95% of
// burst and novel-tool calls score ≥ 0.9, ≤ 0.5% of held-out normal calls
// score ≥ 0.8; and the off-hours runs, which the issue sets no goal for,
// ≥ 90% at 0.9 (the conditional reference's doing: a uniform one alone
// detects about a fifth of them, TestOffHoursNeedsTheConditionalReference).
func TestEvalGoals(t *testing.T) {
	_, lines, err := Evaluate(EvalOptions{TrainDays: 21, TestDays: 7, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range lines {
		t.Logf("%-9s n=%5d  @0.8 %.4f  @0.9 %.4f  @0.95 %.4f", l.Kind, l.N, l.At[0], l.At[1], l.At[2])
		switch l.Kind {
		case "burst", "novel":
			if l.At[1] < 0.95 {
				t.Errorf("%s: %.3f scored ≥ 0.9, want ≥ 0.95", l.Kind, l.At[1])
			}
		case "off-hours":
			if l.At[1] < 0.9 {
				t.Errorf("off-hours: %.3f scored ≥ 0.9, want ≥ 0.9", l.At[1])
			}
		case "normal":
			if l.At[0] > 0.005 {
				t.Errorf("normal: %.4f scored ≥ 0.8, want ≤ 0.005", l.At[0])
			}
		}
	}
}

// With the reference drawn uniformly only (the model before the
// conditional reference), the bots' off-hours runs are mostly missed: the
// improvement is the conditional reference's, not the traffic's.
func TestOffHoursNeedsTheConditionalReference(t *testing.T) {
	_, lines, err := Evaluate(EvalOptions{TrainDays: 21, TestDays: 7, Seed: 3, Train: anomaly.TrainOptions{Conditional: -1}})
	if err != nil {
		t.Fatal(err)
	}
	if off := lines[2]; off.Kind != "off-hours" || off.At[1] > 0.5 {
		t.Fatalf("uniform reference only: off-hours %+v; the comparison says nothing if it detects them too", off)
	}
}
