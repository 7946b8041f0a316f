package guard

import (
	"testing"

	"github.com/airs-dev/airs/guard/anomaly/traffic"
)

func TestTraceEvalShortHistory(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		train, test := traffic.Hard(traffic.HardOptions{Seed: seed})
		_, lines, err := EvaluateTraces(train, test, 0.95)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("seed %d: train %d test %d", seed, len(train), len(test))
		for _, l := range lines {
			t.Logf("%-10s n=%5d @0.8 %.4f @0.9 %.4f @0.95 %.4f held %.4f most %.4f %s", l.Kind, l.N, l.At[0], l.At[1], l.At[2], l.Held, l.MostHeld, l.MostHeldBy)
		}
	}
}
