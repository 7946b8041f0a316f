package report

import (
	"fmt"
	"path/filepath"
)

// PairedMetric is one metric measured per item under two configurations on
// the same items (1/0 for right/wrong, a latency in ms, …).
type PairedMetric struct {
	Name                string
	Baseline, Candidate []float64
}

// Comparison is a replay of the same items under two configurations.
type Comparison struct {
	Title         string
	Intro         string // e.g. the command
	BaselineName  string
	CandidateName string
	Metrics       []PairedMetric
	Bootstrap     BootstrapOptions
	FileStem      string // file names: STEM.md, STEM_diff.png (default "compare")
}

// WriteComparison computes, for each metric, both means and the paired
// difference (candidate − baseline) with a bootstrap interval, and writes a
// Markdown report with a table and a difference plot into dir. It returns
// the report's path and the differences.
func WriteComparison(dir string, c Comparison) (string, []Difference, error) {
	if c.FileStem == "" {
		c.FileStem = "compare"
	}
	if c.BaselineName == "" {
		c.BaselineName = "baseline"
	}
	if c.CandidateName == "" {
		c.CandidateName = "candidate"
	}
	var diffs []Difference
	rows := [][]string{}
	for _, m := range c.Metrics {
		iv, err := BootstrapPairedDiff(m.Baseline, m.Candidate, c.Bootstrap)
		if err != nil {
			return "", nil, fmt.Errorf("report: metric %s: %w", m.Name, err)
		}
		diffs = append(diffs, Difference{Label: m.Name, Delta: iv.Mean, Lo: iv.Lo, Hi: iv.Hi})
		verdict := "no clear difference"
		if iv.Excludes0() {
			verdict = "candidate higher"
			if iv.Hi < 0 {
				verdict = "candidate lower"
			}
		}
		rows = append(rows, []string{m.Name, fmt.Sprint(iv.N), fmt.Sprintf("%.4f", mean(m.Baseline)), fmt.Sprintf("%.4f", mean(m.Candidate)),
			fmt.Sprintf("%+.4f", iv.Mean), fmt.Sprintf("[%+.4f, %+.4f]", iv.Lo, iv.Hi), verdict})
	}
	if len(diffs) == 0 {
		return "", nil, fmt.Errorf("report: nothing to compare")
	}
	png := c.FileStem + "_diff.png"
	if err := DifferencePlot(filepath.Join(dir, png), c.CandidateName+" − "+c.BaselineName, diffs); err != nil {
		return "", nil, err
	}
	level := c.Bootstrap.Level
	if level <= 0 || level >= 1 {
		level = 0.95
	}
	doc := Document{
		Title: c.Title,
		Intro: c.Intro,
		Sections: []Section{{
			Title: "Difference",
			Text: fmt.Sprintf("Paired over the same items: difference = %s − %s, with a %g%% percentile bootstrap interval "+
				"(resampling items, seeded). An interval that contains 0 is no evidence of a difference.", c.CandidateName, c.BaselineName, 100*level),
			Tables:  []Table{{Header: []string{"metric", "n", c.BaselineName, c.CandidateName, "difference", fmt.Sprintf("%g%% interval", 100*level), "reading"}, Rows: rows}},
			Figures: []Figure{{Title: "difference with interval", Path: png}},
		}},
	}
	p, err := doc.Write(dir, c.FileStem+".md")
	return p, diffs, err
}

func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}
