package traffic

import (
	"time"

	"github.com/airs-dev/airs/guard/anomaly"
)

// EvalOptions size the evaluation.
type EvalOptions struct {
	TrainDays, TestDays int // default 28 and 14
	Seed                uint64
}

// Line is one output line of `airs eval guard`: an anomaly kind's
// detection rates, or (Kind "normal") the false-positive rates on the
// held-out normal calls. Rates are fractions of N.
type Line struct {
	Kind string
	N    int
	At   [3]float64 // ≥ 0.8, ≥ 0.9, ≥ 0.95
}

// Thresholds are the seed's defaults, in the model's fixed point.
var Thresholds = [3]uint8{204, 230, 243} // ⌈0.8·255⌉, ⌈0.9·255⌉, ⌈0.95·255⌉

// Evaluate trains on TrainDays of normal traffic, then scores TestDays of
// held-out normal traffic and the injected anomalies (after it, with the
// featurizer's history carried over), and returns the model and one line
// per kind: burst, novel, off-hours, normal.
func Evaluate(o EvalOptions) (*anomaly.Model, []Line, error) {
	if o.TrainDays == 0 {
		o.TrainDays = 28
	}
	if o.TestDays == 0 {
		o.TestDays = 14
	}
	start := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC) // a Monday
	all := Normal(start, o.TrainDays+o.TestDays, o.Seed)
	split := start.AddDate(0, 0, o.TrainDays)
	z := NewFeaturizer()
	var train []anomaly.Features
	i := 0
	for ; i < len(all) && all[i].At.Before(split); i++ {
		train = append(train, z.Features(all[i], true))
	}
	m, err := anomaly.Train(train)
	if err != nil {
		return nil, nil, err
	}
	normal := Line{Kind: "normal"}
	for ; i < len(all); i++ {
		count(&normal, m.Score(z.Features(all[i], true)))
	}
	after := start.AddDate(0, 0, o.TrainDays+o.TestDays) // a day after the held-out period
	novel := Line{Kind: "novel"}
	for d := 0; d < 10; d++ {
		for _, c := range Novel(after.AddDate(0, 0, d), o.Seed+uint64(d)) {
			count(&novel, m.Score(z.Features(c, false)))
		}
	}
	off := Line{Kind: "off-hours"}
	for d, h := range []int{11, 14, 22, 4, 9} {
		for _, c := range OffHours(after.AddDate(0, 0, 10+d), h, o.Seed+uint64(d)) {
			count(&off, m.Score(z.Features(c, true)))
		}
	}
	burst := Line{Kind: "burst"}
	for _, c := range Burst(after.AddDate(0, 0, 20).Add(11*time.Hour), 500, o.Seed) {
		count(&burst, m.Score(z.Features(c, true)))
	}
	lines := []Line{burst, novel, off, normal}
	for k := range lines {
		for j := range lines[k].At {
			if lines[k].N > 0 {
				lines[k].At[j] /= float64(lines[k].N)
			}
		}
	}
	return m, lines, nil
}

func count(l *Line, s uint8) {
	l.N++
	for j, t := range Thresholds {
		if s >= t {
			l.At[j]++
		}
	}
}
