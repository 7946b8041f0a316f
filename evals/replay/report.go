package replay

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"text/tabwriter"
	"time"

	"github.com/airs-dev/airs/evals/report"
)

// MetricLine is one --json line of a replay: the configuration and its
// metrics.
type MetricLine struct {
	Config string `json:"config"`
	Metrics
	MissingTool int `json:"missing_tool"`
}

// DiffLine is one --json line of a comparison: a metric under both
// configurations and the paired difference (candidate − baseline) with its
// bootstrap 95% interval.
type DiffLine struct {
	Metric    string  `json:"metric"`
	N         int     `json:"n"`
	Baseline  float64 `json:"baseline"`
	Candidate float64 `json:"candidate"`
	Diff      float64 `json:"diff"`
	Lo        float64 `json:"lo"`
	Hi        float64 `json:"hi"`
}

// Line is r's --json line.
func (r *Result) Line() MetricLine {
	return MetricLine{Config: r.Config.Label(), Metrics: r.Metrics, MissingTool: r.MissingTool}
}

// WriteTable prints results side by side.
func WriteTable(w io.Writer, rs ...*Result) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "config\tn\ttop1\ttopk\targ_match\tvalidity\tnone_rate\tfalse_none\tp50\tp99\t")
	for _, r := range rs {
		m := r.Metrics
		fmt.Fprintf(tw, "%s\t%d\t%.3f\t%.3f (k=%d)\t%.3f\t%.3f\t%.3f (%d)\t%.3f\t%s\t%s\t\n", r.Config.Label(), m.N, m.Top1, m.TopK, m.K,
			m.ArgMatch, m.Validity, m.NoneRate, m.GoldNone, m.FalseNoneRate, msDur(m.P50MS), msDur(m.P99MS))
	}
	tw.Flush()
	for _, r := range rs {
		if r.MissingTool > 0 || r.MissingCandidates > 0 {
			fmt.Fprintf(w, "%s: %d records skipped (their labelled tool is not in the registry); %d recorded candidates not in the registry\n",
				r.Config.Label(), r.MissingTool, r.MissingCandidates)
		}
	}
}

func msDur(ms float64) string {
	return time.Duration(ms * float64(time.Millisecond)).Round(time.Microsecond).String()
}

// paired returns the per-item metric vectors of two replays of the same
// items.
func paired(base, cand *Result) ([]report.PairedMetric, error) {
	if len(base.Items) != len(cand.Items) {
		return nil, fmt.Errorf("replay: the two configurations scored %d and %d items", len(base.Items), len(cand.Items))
	}
	names := []string{"top1", "topk", "arg_match", "latency_ms"}
	ms := make([]report.PairedMetric, len(names))
	for i, n := range names {
		ms[i] = report.PairedMetric{Name: n, Baseline: make([]float64, len(base.Items)), Candidate: make([]float64, len(base.Items))}
	}
	b01 := func(b bool) float64 {
		if b {
			return 1
		}
		return 0
	}
	for i := range base.Items {
		if base.Items[i].ID != cand.Items[i].ID {
			return nil, fmt.Errorf("replay: item %d is %s in one replay and %s in the other", i, base.Items[i].ID, cand.Items[i].ID)
		}
		for _, pr := range []struct {
			r *Result
			f func(m *report.PairedMetric) []float64
		}{{base, func(m *report.PairedMetric) []float64 { return m.Baseline }}, {cand, func(m *report.PairedMetric) []float64 { return m.Candidate }}} {
			it := pr.r.Items[i]
			pr.f(&ms[0])[i] = b01(it.Top1)
			pr.f(&ms[1])[i] = b01(it.TopK)
			pr.f(&ms[2])[i] = b01(it.ArgMatch)
			pr.f(&ms[3])[i] = float64(it.Latency) / float64(time.Millisecond)
		}
	}
	return ms, nil
}

// Compare computes the paired differences (candidate − baseline) with
// bootstrap 95% intervals.
func Compare(base, cand *Result) ([]DiffLine, error) {
	ms, err := paired(base, cand)
	if err != nil {
		return nil, err
	}
	var out []DiffLine
	for _, m := range ms {
		iv, err := report.BootstrapPairedDiff(m.Baseline, m.Candidate, report.BootstrapOptions{})
		if err != nil {
			return nil, err
		}
		out = append(out, DiffLine{Metric: m.Name, N: iv.N, Baseline: mean(m.Baseline), Candidate: mean(m.Candidate), Diff: iv.Mean, Lo: iv.Lo, Hi: iv.Hi})
	}
	return out, nil
}

func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

func bootstrap(base, cand []float64) (Interval, error) {
	iv, err := report.BootstrapPairedDiff(base, cand, report.BootstrapOptions{})
	if err != nil {
		return Interval{}, err
	}
	return Interval{Mean: iv.Mean, Lo: iv.Lo, Hi: iv.Hi}, nil
}

// ReportInfo says how a replay was made.
type ReportInfo struct {
	Command string
	Log     string
}

// WriteReport writes dir/replay.md (metrics table, latency histogram) and,
// with a baseline, dir/compare.md with the paired differences and their
// plot. cand is the configuration under test; base may be nil.
func WriteReport(dir string, cand, base *Result, info ReportInfo) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	rs := []*Result{cand}
	if base != nil {
		rs = []*Result{base, cand}
	}
	rows := [][]string{}
	for _, r := range rs {
		m := r.Metrics
		rows = append(rows, []string{r.Config.Label(), fmt.Sprint(m.N), fmt.Sprintf("%.3f", m.Top1), fmt.Sprintf("%.3f", m.TopK),
			fmt.Sprintf("%.3f", m.ArgMatch), fmt.Sprintf("%.3f", m.Validity), fmt.Sprintf("%.3f (%d)", m.NoneRate, m.GoldNone),
			fmt.Sprintf("%.3f", m.FalseNoneRate), msDur(m.P50MS), msDur(m.P90MS), msDur(m.P99MS), fmt.Sprint(r.MissingTool), r.Elapsed.Round(time.Millisecond).String()})
	}
	if err := report.LatencyHistogram(filepath.Join(dir, "replay_latency.png"), "Selection latency ("+cand.Config.Label()+")", cand.Latencies, 0); err != nil {
		return "", err
	}
	k := cand.Metrics.K
	doc := report.Document{
		Title: "Replay of recorded sessions",
		Intro: fmt.Sprintf("Command: `%s`\n\nLog: `%s`. Labels: the executed and accepted call; a corrected call overrides it; "+
			"dismissed records are unlabelled. Tools: the configured registry (builtins and manifests).", info.Command, info.Log),
		Sections: []report.Section{{
			Title: "Metrics",
			Text: fmt.Sprintf("top1: the chosen tool is the labelled one (\"none\" when no tool was right); topk: the labelled tool is among the first %d candidates; "+
				"arg_match: right tool with the labelled arguments, over items with a labelled tool; validity: produced calls valid for their schema; "+
				"none_rate: items labelled \"none\" answered none (their count in brackets); false_none: items with a right tool answered none.", k),
			Tables:  []report.Table{{Header: []string{"config", "n", "top1", "topk", "arg_match", "validity", "none_rate", "false_none", "p50", "p90", "p99", "skipped", "wall"}, Rows: rows}},
			Figures: []report.Figure{{Title: "selection latency", Path: "replay_latency.png"}},
		}},
	}
	p, err := doc.Write(dir, "replay.md")
	if err != nil {
		return "", err
	}
	if base != nil {
		ms, err := paired(base, cand)
		if err != nil {
			return "", err
		}
		if _, _, err := report.WriteComparison(dir, report.Comparison{
			Title:        "Replay: " + cand.Config.Label() + " against " + base.Config.Label(),
			Intro:        fmt.Sprintf("Command: `%s`\n\nLog: `%s`, %d labelled requests replayed under both configurations.", info.Command, info.Log, len(cand.Items)),
			BaselineName: base.Config.Label(), CandidateName: cand.Config.Label(), Metrics: ms,
		}); err != nil {
			return "", err
		}
	}
	return p, nil
}

// WriteJSON writes v as one JSON line.
func WriteJSON(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}
