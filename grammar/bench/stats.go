package bench

import (
	"math"
	"sort"
)

// Percentiles is {p50, p90, p99, p99.9, max} by MaskBench's rule:
// percentile p of n sorted values is sorted[floor(n*p/100)]. p99.9 and max
// are here because one slow mask is a visible stall in live decoding, and
// p99 over tens of thousands of masks hides the few that are.
type Percentiles struct {
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P99  float64 `json:"p99"`
	P999 float64 `json:"p99_9"`
	Max  float64 `json:"max"`
}

// percentile of an already sorted slice (0 for an empty one).
func percentile(sorted []float64, p float64) float64 {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	i := int(math.Floor(float64(n) * p / 100))
	if i >= n {
		i = n - 1
	}
	return sorted[i]
}

// Summarize sorts xs in place and returns its percentiles, rounded to 3
// decimals.
func Summarize(xs []float64) Percentiles {
	sort.Float64s(xs)
	r := func(x float64) float64 { return math.Round(x*1000) / 1000 }
	return Percentiles{
		P50:  r(percentile(xs, 50)),
		P90:  r(percentile(xs, 90)),
		P99:  r(percentile(xs, 99)),
		P999: r(percentile(xs, 99.9)),
		Max:  r(percentile(xs, 100)),
	}
}
