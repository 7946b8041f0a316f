package traffic

import (
	"testing"
)

// TestEvalGoals: with weeks of history, ≥ 95% of burst and novel-tool
// calls score ≥ 0.9, ≤ 0.5% of held-out normal calls score ≥ 0.8, and the
// bots' runs at an hour they never run ≥ 90% at 0.9.
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
