package report

import (
	"errors"
	"fmt"
	"image/color"
	"math"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Series is one named set of values, one per category.
type Series struct {
	Name   string
	Values []float64
}

// palette is a colour-blind-safe set (Okabe–Ito).
var palette = []color.Color{
	color.RGBA{0, 114, 178, 255},
	color.RGBA{230, 159, 0, 255},
	color.RGBA{0, 158, 115, 255},
	color.RGBA{204, 121, 167, 255},
	color.RGBA{86, 180, 233, 255},
	color.RGBA{213, 94, 0, 255},
}

// AccuracyBarChart draws accuracies (fractions in 0..1) per category as
// grouped horizontal bars, one colour per series, and saves a PNG.
func AccuracyBarChart(path, title string, categories []string, series ...Series) error {
	if len(categories) == 0 || len(series) == 0 {
		return errors.New("report: accuracy chart needs categories and series")
	}
	for _, s := range series {
		if len(s.Values) != len(categories) {
			return fmt.Errorf("report: series %q has %d values for %d categories", s.Name, len(s.Values), len(categories))
		}
	}
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "accuracy"
	// Room on the right for the legend, ticks only over 0..1.
	p.X.Min, p.X.Max = 0, 1.3
	p.X.Tick.Marker = plot.ConstantTicks([]plot.Tick{{Value: 0, Label: "0"}, {Value: 0.25, Label: "0.25"},
		{Value: 0.5, Label: "0.5"}, {Value: 0.75, Label: "0.75"}, {Value: 1, Label: "1"}})
	p.Legend.Top = true
	// Categories top to bottom in the order given.
	names := make([]string, len(categories))
	for i, c := range categories {
		names[len(categories)-1-i] = c
	}
	barW := vg.Points(math.Max(4, 14/float64(len(series))))
	for si, s := range series {
		vals := make(plotter.Values, len(s.Values))
		for i, v := range s.Values {
			vals[len(s.Values)-1-i] = v
		}
		bc, err := plotter.NewBarChart(vals, barW)
		if err != nil {
			return err
		}
		bc.Horizontal = true
		bc.Color = palette[si%len(palette)]
		bc.LineStyle.Width = 0
		bc.Offset = barW * vg.Length(float64(si)-float64(len(series)-1)/2)
		p.Add(bc)
		p.Legend.Add(s.Name, bc)
	}
	p.NominalY(names...)
	p.Add(plotter.NewGrid())
	h := vg.Length(len(categories))*vg.Points(math.Max(18, float64(barW)*float64(len(series))+6)) + 2*vg.Inch
	return p.Save(7*vg.Inch, h, path)
}

// LatencyHistogram draws the distribution of latencies in milliseconds
// (bins ≤ 0 picks √n, at most 50) and saves a PNG. Latencies have long
// tails, so values above the 99th percentile are drawn in the last bin and
// the title says so.
func LatencyHistogram(path, title string, latencies []time.Duration, bins int) error {
	if len(latencies) == 0 {
		return errors.New("report: no latencies to plot")
	}
	p99 := Percentiles(latencies, 0.99)[0]
	clipped := 0
	vals := make(plotter.Values, len(latencies))
	for i, d := range latencies {
		if d > p99 {
			d = p99
			clipped++
		}
		vals[i] = float64(d) / float64(time.Millisecond)
	}
	if clipped > 0 {
		title += fmt.Sprintf(" (%d above p99 = %s in the last bin)", clipped, p99.Round(time.Microsecond))
	}
	if bins <= 0 {
		bins = int(math.Min(50, math.Max(5, math.Sqrt(float64(len(vals))))))
	}
	h, err := plotter.NewHist(vals, bins)
	if err != nil {
		return err
	}
	h.FillColor = palette[0]
	h.LineStyle.Width = vg.Points(0.5)
	h.LineStyle.Color = color.White
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "latency (ms)"
	p.Y.Label.Text = "requests"
	p.Add(plotter.NewGrid(), h)
	return p.Save(7*vg.Inch, 4*vg.Inch, path)
}

// Difference is one metric's difference between two configurations
// (candidate − baseline) with its interval.
type Difference struct {
	Label         string
	Delta, Lo, Hi float64
}

// DifferencePlot draws each metric's difference as a point with its interval
// and a zero line, so an interval that crosses zero is visibly "no
// difference", and saves a PNG.
func DifferencePlot(path, title string, diffs []Difference) error {
	if len(diffs) == 0 {
		return errors.New("report: no differences to plot")
	}
	pts := make(plotter.XYs, len(diffs))
	errs := make(plotter.YErrors, len(diffs))
	names := make([]string, len(diffs))
	lo, hi := 0.0, 0.0
	for i, d := range diffs {
		if d.Lo > d.Hi || math.IsNaN(d.Delta) {
			return fmt.Errorf("report: %s: bad interval [%g, %g]", d.Label, d.Lo, d.Hi)
		}
		pts[i] = plotter.XY{X: float64(i), Y: d.Delta}
		// A percentile interval can, rarely, miss the mean; draw it anyway.
		errs[i] = struct{ Low, High float64 }{math.Max(0, d.Delta-d.Lo), math.Max(0, d.Hi-d.Delta)}
		names[i] = d.Label
		lo, hi = math.Min(lo, math.Min(d.Lo, d.Delta)), math.Max(hi, math.Max(d.Hi, d.Delta))
	}
	p := plot.New()
	p.Title.Text = title
	p.Y.Label.Text = "candidate − baseline"
	pad := 0.1 * math.Max(hi-lo, 1e-9)
	p.Y.Min, p.Y.Max = lo-pad, hi+pad
	p.X.Min, p.X.Max = -0.5, float64(len(diffs))-0.5

	zero := plotter.NewFunction(func(float64) float64 { return 0 })
	zero.LineStyle.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
	zero.LineStyle.Color = color.Gray{Y: 100}

	sc, err := plotter.NewScatter(pts)
	if err != nil {
		return err
	}
	sc.GlyphStyle.Shape = draw.CircleGlyph{}
	sc.GlyphStyle.Radius = vg.Points(4)
	sc.GlyphStyle.Color = palette[0]
	eb, err := plotter.NewYErrorBars(struct {
		plotter.XYs
		plotter.YErrors
	}{pts, errs})
	if err != nil {
		return err
	}
	eb.LineStyle.Color = palette[0]
	eb.LineStyle.Width = vg.Points(1.5)
	eb.CapWidth = vg.Points(10)
	p.Add(plotter.NewGrid(), zero, eb, sc)
	p.NominalX(names...)
	w := vg.Length(math.Max(5, 1.2*float64(len(diffs)))) * vg.Inch
	return p.Save(w, 4*vg.Inch, path)
}

// LineChart draws each series as a line with points over the x values xs
// (every series has len(xs) values), y from 0 to 1 (rates), and saves a
// PNG: a learning curve.
func LineChart(path, title, xLabel, yLabel string, xs []float64, series ...Series) error {
	if len(xs) == 0 || len(series) == 0 {
		return errors.New("report: line chart needs x values and series")
	}
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = xLabel
	p.Y.Label.Text = yLabel
	p.Y.Min, p.Y.Max = 0, 1
	p.Legend.Top = true
	p.Legend.Left = true
	p.Add(plotter.NewGrid())
	for si, s := range series {
		if len(s.Values) != len(xs) {
			return fmt.Errorf("report: series %q has %d values for %d x values", s.Name, len(s.Values), len(xs))
		}
		pts := make(plotter.XYs, len(xs))
		for i := range xs {
			pts[i] = plotter.XY{X: xs[i], Y: s.Values[i]}
		}
		l, sc, err := plotter.NewLinePoints(pts)
		if err != nil {
			return err
		}
		c := palette[si%len(palette)]
		l.Color, l.Width = c, vg.Points(2)
		sc.Color, sc.Shape, sc.Radius = c, draw.CircleGlyph{}, vg.Points(3)
		p.Add(l, sc)
		p.Legend.Add(s.Name, l, sc)
	}
	return p.Save(7*vg.Inch, 4*vg.Inch, path)
}
