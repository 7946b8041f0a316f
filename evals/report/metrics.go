package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"time"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

// Rate is the fraction of true values (0 for none).
func Rate(ok []bool) float64 {
	if len(ok) == 0 {
		return 0
	}
	n := 0
	for _, b := range ok {
		if b {
			n++
		}
	}
	return float64(n) / float64(len(ok))
}

// ValidityRate is the fraction of produced calls that validated against
// their tool's schema.
func ValidityRate(valid []bool) float64 { return Rate(valid) }

// TopK is top-k tool accuracy: the fraction of items whose gold tool is
// among the first k ranked tools. Items whose gold is "" (no tool was the
// right answer) are skipped: NoneCorrectness scores them. It returns the
// accuracy and the number of items scored.
func TopK(ranked [][]string, gold []string, k int) (float64, int) {
	if len(ranked) != len(gold) {
		panic(fmt.Sprintf("report.TopK: %d rankings for %d labels", len(ranked), len(gold)))
	}
	hit, n := 0, 0
	for i, g := range gold {
		if g == "" {
			continue
		}
		n++
		r := ranked[i]
		if len(r) > k {
			r = r[:k]
		}
		if slices.Contains(r, g) {
			hit++
		}
	}
	if n == 0 {
		return 0, 0
	}
	return float64(hit) / float64(n), n
}

// Top1 is TopK with k = 1.
func Top1(ranked [][]string, gold []string) (float64, int) { return TopK(ranked, gold, 1) }

// ArgumentsMatch reports whether two argument objects are the same JSON
// value: same keys, numbers equal as numbers (5 == 5.0), strings, booleans,
// nulls, arrays (in order) and objects equal recursively. Values may be
// decoded with or without json.Number.
func ArgumentsMatch(pred, gold map[string]any) bool {
	return jsonEqual(normJSON(pred), normJSON(gold))
}

// ArgumentMatchRate is the fraction of pairs for which ArgumentsMatch holds.
func ArgumentMatchRate(pred, gold []map[string]any) float64 {
	if len(pred) != len(gold) {
		panic(fmt.Sprintf("report.ArgumentMatchRate: %d predictions for %d labels", len(pred), len(gold)))
	}
	ok := make([]bool, len(pred))
	for i := range pred {
		ok[i] = ArgumentsMatch(pred[i], gold[i])
	}
	return Rate(ok)
}

// normJSON turns any Go value into the generic JSON model, numbers as
// json.Number.
func normJSON(v any) any {
	switch v.(type) {
	case nil, bool, string, json.Number, float64, []any, map[string]any:
	default:
		b, err := json.Marshal(v)
		if err != nil {
			return v
		}
		var out any
		if json.Unmarshal(b, &out) != nil {
			return v
		}
		v = out
	}
	switch x := v.(type) {
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = normJSON(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = normJSON(e)
		}
		return out
	}
	return v
}

func jsonNumber(v any) (*big.Rat, bool) {
	switch x := v.(type) {
	case json.Number:
		return new(big.Rat).SetString(string(x))
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, false
		}
		return new(big.Rat).SetFloat64(x), true
	}
	return nil, false
}

func jsonEqual(a, b any) bool {
	return TreeEqual(a, b, func(a, b any) (bool, bool) {
		x, ok := jsonNumber(a)
		if !ok {
			return false, false
		}
		y, ok := jsonNumber(b)
		return true, ok && x.Cmp(y) == 0
	})
}

// TreeEqual reports whether two decoded values (nil, bool, string, []any,
// map[string]any) are equal, element by element and key by key. number
// decides what counts as a number and when two numbers are equal: given
// a, it says whether a is one (numeric) and, if so, whether b equals it —
// so JSON's exact decimals and Python's 1 == 1.0 == True share the walk.
func TreeEqual(a, b any, number func(a, b any) (numeric, equal bool)) bool {
	if numeric, equal := number(a, b); numeric {
		return equal
	}
	switch x := a.(type) {
	case nil:
		return b == nil
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case string:
		y, ok := b.(string)
		return ok && x == y
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !TreeEqual(x[i], y[i], number) {
				return false
			}
		}
		return true
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, xv := range x {
			yv, ok := y[k]
			if !ok || !TreeEqual(xv, yv, number) {
				return false
			}
		}
		return true
	}
	return false
}

// NoneStats scores the "no tool" answer. Rate is the fraction of items whose
// right answer was no tool for which no tool was chosen; FalseNoneRate the
// fraction of items with a right tool for which no tool was chosen.
type NoneStats struct {
	GoldNone, CorrectNone int
	GoldTool, FalseNone   int
	Rate, FalseNoneRate   float64
}

// NoneCorrectness compares predicted and gold "no tool" flags item by item.
func NoneCorrectness(predNone, goldNone []bool) NoneStats {
	if len(predNone) != len(goldNone) {
		panic(fmt.Sprintf("report.NoneCorrectness: %d predictions for %d labels", len(predNone), len(goldNone)))
	}
	var s NoneStats
	for i, g := range goldNone {
		if g {
			s.GoldNone++
			if predNone[i] {
				s.CorrectNone++
			}
		} else {
			s.GoldTool++
			if predNone[i] {
				s.FalseNone++
			}
		}
	}
	if s.GoldNone > 0 {
		s.Rate = float64(s.CorrectNone) / float64(s.GoldNone)
	}
	if s.GoldTool > 0 {
		s.FalseNoneRate = float64(s.FalseNone) / float64(s.GoldTool)
	}
	return s
}

// Percentiles returns the empirical quantiles (q in 0..1) of the latencies
// (gonum stat.Quantile, Empirical: the smallest value with at least that
// fraction at or below it). It returns zeros for no latencies.
func Percentiles(latencies []time.Duration, qs ...float64) []time.Duration {
	out := make([]time.Duration, len(qs))
	if len(latencies) == 0 {
		return out
	}
	xs := make([]float64, len(latencies))
	for i, d := range latencies {
		xs[i] = float64(d)
	}
	slices.Sort(xs)
	for i, q := range qs {
		out[i] = time.Duration(stat.Quantile(q, stat.Empirical, xs, nil))
	}
	return out
}

// LatencySummary is the usual latency digest.
type LatencySummary struct {
	N                        int
	Mean, P50, P90, P95, P99 time.Duration
	Max                      time.Duration
}

// SummarizeLatency computes a LatencySummary.
func SummarizeLatency(latencies []time.Duration) LatencySummary {
	s := LatencySummary{N: len(latencies)}
	if s.N == 0 {
		return s
	}
	ps := Percentiles(latencies, 0.5, 0.9, 0.95, 0.99, 1)
	s.P50, s.P90, s.P95, s.P99, s.Max = ps[0], ps[1], ps[2], ps[3], ps[4]
	var sum float64
	for _, d := range latencies {
		sum += float64(d)
	}
	s.Mean = time.Duration(sum / float64(s.N))
	return s
}

// BootstrapOptions tune BootstrapPairedDiff. Zero values mean 10,000
// resamples, seed 1 and a 95% interval.
type BootstrapOptions struct {
	Iterations int
	Seed       uint64
	Level      float64
}

// Interval is a point estimate with a confidence interval.
type Interval struct {
	Mean, Lo, Hi float64
	Level        float64
	Iterations   int
	N            int
}

// Excludes0 reports whether the interval lies entirely on one side of zero
// (a difference the data supports at this level).
func (iv Interval) Excludes0() bool { return iv.Lo > 0 || iv.Hi < 0 }

func (iv Interval) String() string {
	return fmt.Sprintf("%+.4f [%+.4f, %+.4f] (%g%% bootstrap, n=%d)", iv.Mean, iv.Lo, iv.Hi, 100*iv.Level, iv.N)
}

// BootstrapPairedDiff estimates the mean paired difference candidate[i] −
// baseline[i] (per-item scores of two configurations on the same items: 0/1
// correctness, latencies, …) with a percentile bootstrap interval:
// resample the n differences with replacement (indices drawn from
// gonum's distuv.Uniform over a seeded PCG source, so runs are
// reproducible), take each resample's mean, and read the interval off the
// empirical quantiles (gonum stat.Quantile) of those means.
func BootstrapPairedDiff(baseline, candidate []float64, opt BootstrapOptions) (Interval, error) {
	n := len(baseline)
	if n != len(candidate) {
		return Interval{}, fmt.Errorf("report: paired bootstrap needs equal lengths, got %d and %d", n, len(candidate))
	}
	if n == 0 {
		return Interval{}, errors.New("report: paired bootstrap of no items")
	}
	if opt.Iterations <= 0 {
		opt.Iterations = 10000
	}
	if opt.Seed == 0 {
		opt.Seed = 1
	}
	if opt.Level <= 0 || opt.Level >= 1 {
		opt.Level = 0.95
	}
	d := make([]float64, n)
	for i := range d {
		d[i] = candidate[i] - baseline[i]
	}
	idx := distuv.Uniform{Min: 0, Max: float64(n), Src: rand.NewPCG(opt.Seed, 0x9e3779b97f4a7c15)}
	means := make([]float64, opt.Iterations)
	for it := range means {
		var s float64
		for range n {
			j := int(idx.Rand())
			if j >= n { // Rand is in [Min, Max); guard the edge anyway
				j = n - 1
			}
			s += d[j]
		}
		means[it] = s / float64(n)
	}
	slices.Sort(means)
	alpha := (1 - opt.Level) / 2
	return Interval{
		Mean:       stat.Mean(d, nil),
		Lo:         stat.Quantile(alpha, stat.Empirical, means, nil),
		Hi:         stat.Quantile(1-alpha, stat.Empirical, means, nil),
		Level:      opt.Level,
		Iterations: opt.Iterations,
		N:          n,
	}, nil
}
