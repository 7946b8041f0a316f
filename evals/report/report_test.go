package report

import (
	"bytes"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func checkPNG(t *testing.T, path string, minW, minH int) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("%s: not a PNG: %v", path, err)
	}
	bd := img.Bounds()
	if bd.Dx() < minW || bd.Dy() < minH || bd.Dx() > 5000 || bd.Dy() > 5000 {
		t.Errorf("%s: size %dx%d", path, bd.Dx(), bd.Dy())
	}
	// Not a blank canvas: some pixels differ from the first.
	first := img.At(bd.Min.X, bd.Min.Y)
	differ := 0
	for y := bd.Min.Y; y < bd.Max.Y; y += 7 {
		for x := bd.Min.X; x < bd.Max.X; x += 7 {
			if img.At(x, y) != first {
				differ++
			}
		}
	}
	if differ < 50 {
		t.Errorf("%s: looks blank (%d differing samples)", path, differ)
	}
}

func TestPlots(t *testing.T) {
	dir := t.TempDir()
	cats := []string{"simple_python", "multiple", "parallel", "live_parallel_multiple"}
	if err := AccuracyBarChart(filepath.Join(dir, "acc.png"), "accuracy", cats,
		Series{"function_acc", []float64{0.9, 0.8, 0.7, 0.2}}, Series{"ast_acc", []float64{0.5, 0.4, 0.3, 0}}); err != nil {
		t.Fatal(err)
	}
	checkPNG(t, filepath.Join(dir, "acc.png"), 400, 250)

	var lat []time.Duration
	for i := range 500 {
		lat = append(lat, time.Duration(1+i%37)*time.Millisecond+time.Duration(i)*time.Microsecond)
	}
	if err := LatencyHistogram(filepath.Join(dir, "lat.png"), "latency", lat, 0); err != nil {
		t.Fatal(err)
	}
	checkPNG(t, filepath.Join(dir, "lat.png"), 400, 250)

	diffs := []Difference{{"top-1", 0.05, 0.01, 0.09}, {"args", -0.02, -0.06, 0.03}, {"validity", 0, 0, 0}}
	if err := DifferencePlot(filepath.Join(dir, "diff.png"), "candidate vs baseline", diffs); err != nil {
		t.Fatal(err)
	}
	checkPNG(t, filepath.Join(dir, "diff.png"), 350, 250)

	if err := LineChart(filepath.Join(dir, "line.png"), "learning", "recommendations", "acceptance", []float64{50, 100, 150},
		Series{"learning", []float64{0.3, 0.5, 0.6}}, Series{"prior", []float64{0.3, 0.3, 0.35}}); err != nil {
		t.Fatal(err)
	}
	checkPNG(t, filepath.Join(dir, "line.png"), 400, 250)
	if LineChart(filepath.Join(dir, "x.png"), "", "", "", []float64{1, 2}, Series{"a", []float64{1}}) == nil {
		t.Error("mismatched line series accepted")
	}

	// Errors are reported, not drawn.
	if AccuracyBarChart(filepath.Join(dir, "x.png"), "", cats, Series{"a", []float64{1}}) == nil {
		t.Error("mismatched series length accepted")
	}
	if LatencyHistogram(filepath.Join(dir, "x.png"), "", nil, 0) == nil {
		t.Error("empty histogram accepted")
	}
	if DifferencePlot(filepath.Join(dir, "x.png"), "", []Difference{{"a", 0, 1, -1}}) == nil {
		t.Error("inverted interval accepted")
	}
}

func TestMarkdown(t *testing.T) {
	d := Document{
		Title: "Run",
		Intro: "Command: `airs eval x`",
		Sections: []Section{{
			Title:   "Results",
			Tables:  []Table{{Header: []string{"a", "b"}, Rows: [][]string{{"1", "x|y"}, {"2"}}}},
			Figures: []Figure{{Title: "acc", Path: "acc.png"}},
		}},
	}
	dir := t.TempDir()
	p, err := d.Write(dir, "r.md")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(p)
	want := "# Run\n\nCommand: `airs eval x`\n\n## Results\n\n| a | b |\n|---|---|\n| 1 | x\\|y |\n| 2 |  |\n\n![acc](acc.png)\n\n"
	if string(b) != want {
		t.Errorf("got\n%q\nwant\n%q", b, want)
	}
}

func TestProgressPlain(t *testing.T) {
	var buf bytes.Buffer
	p := NewProgress(&buf, "run", 20)
	for range 20 {
		p.Add(1)
	}
	p.Done()
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	// One line per 10%: 10 lines, no carriage returns.
	if len(lines) != 10 || strings.Contains(buf.String(), "\r") {
		t.Fatalf("%d lines: %q", len(lines), buf.String())
	}
	if !strings.HasPrefix(lines[9], "run: 20/20 (100%)") || !strings.HasPrefix(lines[0], "run: 2/20 (10%)") {
		t.Errorf("lines %q", lines)
	}
	var nilP *Progress
	nilP.Add(1) // must not panic
	nilP.Done()
}

func TestProgressBar(t *testing.T) {
	var buf bytes.Buffer
	p := NewProgress(&buf, "run", 4)
	p.SetTerminal(true)
	clock := time.Unix(0, 0)
	p.now = func() time.Time { clock = clock.Add(time.Second); return clock }
	p.start = clock
	for range 4 {
		p.Add(1)
	}
	p.Done()
	out := buf.String()
	if !strings.Contains(out, "\rrun [") || !strings.HasSuffix(out, "\n") {
		t.Fatalf("%q", out)
	}
	if !strings.Contains(out, "[==============================] 4/4 100%") {
		t.Errorf("final bar missing: %q", out)
	}
	if IsTerminal(&buf) {
		t.Error("a buffer is not a terminal")
	}
}

func TestTopKAndRates(t *testing.T) {
	ranked := [][]string{{"a", "b", "c"}, {"b", "a"}, {"c"}, {"x"}}
	gold := []string{"a", "a", "b", ""}
	if acc, n := Top1(ranked, gold); n != 3 || math.Abs(acc-1.0/3) > 1e-12 {
		t.Errorf("top1 %v %d", acc, n)
	}
	if acc, n := TopK(ranked, gold, 2); n != 3 || math.Abs(acc-2.0/3) > 1e-12 {
		t.Errorf("top2 %v %d", acc, n)
	}
	if r := ValidityRate([]bool{true, false, true, true}); r != 0.75 {
		t.Errorf("validity %v", r)
	}
	ns := NoneCorrectness([]bool{true, false, true, false}, []bool{true, true, false, false})
	if ns.GoldNone != 2 || ns.CorrectNone != 1 || ns.Rate != 0.5 || ns.FalseNone != 1 || ns.FalseNoneRate != 0.5 {
		t.Errorf("%+v", ns)
	}
}

func TestArgumentsMatch(t *testing.T) {
	type pair struct {
		a, b map[string]any
		eq   bool
	}
	for _, c := range []pair{
		{map[string]any{"n": 5}, map[string]any{"n": 5.0}, true},
		{map[string]any{"n": 5}, map[string]any{"n": 6}, false},
		{map[string]any{"s": "a", "l": []any{1, "x"}}, map[string]any{"l": []any{1.0, "x"}, "s": "a"}, true},
		{map[string]any{"l": []any{1, 2}}, map[string]any{"l": []any{2, 1}}, false},
		{map[string]any{"o": map[string]any{"k": nil}}, map[string]any{"o": map[string]any{"k": nil}}, true},
		{map[string]any{"a": 1}, map[string]any{"a": 1, "b": 2}, false},
		{map[string]any{"s": "A"}, map[string]any{"s": "a"}, false},
		{map[string]any{"b": true}, map[string]any{"b": 1}, false},
	} {
		if got := ArgumentsMatch(c.a, c.b); got != c.eq {
			t.Errorf("ArgumentsMatch(%v, %v) = %v", c.a, c.b, got)
		}
	}
	if r := ArgumentMatchRate([]map[string]any{{"a": 1}, {"a": 2}}, []map[string]any{{"a": 1}, {"a": 1}}); r != 0.5 {
		t.Errorf("rate %v", r)
	}
}

func TestPercentiles(t *testing.T) {
	var lat []time.Duration
	for i := 1; i <= 100; i++ {
		lat = append(lat, time.Duration(i)*time.Millisecond)
	}
	ps := Percentiles(lat, 0.5, 0.9, 0.99, 1)
	want := []time.Duration{50 * time.Millisecond, 90 * time.Millisecond, 99 * time.Millisecond, 100 * time.Millisecond}
	for i := range ps {
		if ps[i] != want[i] {
			t.Errorf("p%d = %v, want %v", i, ps[i], want[i])
		}
	}
	s := SummarizeLatency(lat)
	if s.N != 100 || s.P50 != 50*time.Millisecond || s.Max != 100*time.Millisecond || s.Mean != 50500*time.Microsecond {
		t.Errorf("%+v", s)
	}
	if z := Percentiles(nil, 0.5); z[0] != 0 {
		t.Error("empty percentiles")
	}
}

func TestBootstrapPairedDiff(t *testing.T) {
	// Candidate right on 80 of 100 items, baseline on 60, paired.
	n := 100
	base := make([]float64, n)
	cand := make([]float64, n)
	for i := range n {
		if i < 60 {
			base[i] = 1
		}
		if i < 80 {
			cand[i] = 1
		}
	}
	iv, err := BootstrapPairedDiff(base, cand, BootstrapOptions{Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(iv.Mean-0.2) > 1e-12 {
		t.Errorf("mean %v", iv.Mean)
	}
	// The differences are 20 ones and 80 zeros: the mean of a resample is
	// Binomial(100, 0.2)/100, whose 95% range is about [0.12, 0.28].
	if iv.Lo < 0.10 || iv.Lo > 0.14 || iv.Hi < 0.26 || iv.Hi > 0.30 || !iv.Excludes0() {
		t.Errorf("interval %v", iv)
	}
	again, _ := BootstrapPairedDiff(base, cand, BootstrapOptions{Seed: 7})
	if again != iv {
		t.Errorf("same seed, different result: %v vs %v", again, iv)
	}
	// The seed matters (continuous scores, so quantiles are not tied).
	lb, lc := make([]float64, n), make([]float64, n)
	for i := range n {
		lb[i], lc[i] = math.Sin(float64(i)), math.Sin(float64(i))+math.Cos(float64(3*i))
	}
	s1, _ := BootstrapPairedDiff(lb, lc, BootstrapOptions{Seed: 1})
	s2, _ := BootstrapPairedDiff(lb, lc, BootstrapOptions{Seed: 2})
	if s1.Lo == s2.Lo && s1.Hi == s2.Hi {
		t.Error("different seeds gave identical intervals")
	}
	// No difference: the interval covers 0.
	same, _ := BootstrapPairedDiff(base, base, BootstrapOptions{})
	if same.Lo != 0 || same.Hi != 0 || same.Excludes0() {
		t.Errorf("identical configurations: %v", same)
	}
	// A noisy difference centred on 0 is not "significant".
	noisy := make([]float64, n)
	for i := range noisy {
		noisy[i] = base[(i*37)%n]
	}
	nz, _ := BootstrapPairedDiff(base, noisy, BootstrapOptions{Seed: 3})
	if nz.Excludes0() {
		t.Errorf("permuted copy judged different: %v", nz)
	}
	if _, err := BootstrapPairedDiff([]float64{1}, nil, BootstrapOptions{}); err == nil {
		t.Error("unequal lengths accepted")
	}
}

func TestWriteComparison(t *testing.T) {
	n := 200
	base, cand, same := make([]float64, n), make([]float64, n), make([]float64, n)
	for i := range n {
		if i%10 < 6 {
			base[i] = 1
		}
		if i%10 < 8 {
			cand[i] = 1
		}
	}
	for i := range n {
		same[i] = base[(i+5)%n] // same rate, different items
	}
	dir := t.TempDir()
	p, diffs, err := WriteComparison(dir, Comparison{
		Title: "Replay", BaselineName: "default weights", CandidateName: "tuned",
		Metrics:   []PairedMetric{{"top-1", base, cand}, {"validity", base, same}},
		Bootstrap: BootstrapOptions{Seed: 1, Iterations: 2000},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(diffs) != 2 || math.Abs(diffs[0].Delta-0.2) > 1e-12 || diffs[0].Lo <= 0 || diffs[1].Lo > 0 || diffs[1].Hi < 0 {
		t.Errorf("diffs %+v", diffs)
	}
	md, _ := os.ReadFile(p)
	for _, want := range []string{"| top-1 | 200 | 0.6000 | 0.8000 | +0.2000 |", "candidate higher", "no clear difference", "![difference with interval](compare_diff.png)"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
	checkPNG(t, filepath.Join(dir, "compare_diff.png"), 350, 250)
}
