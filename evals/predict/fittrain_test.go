package predict

import (
	"bytes"
	"context"
	"math"
	"os"
	"testing"

	"github.com/airs-dev/airs/selector"
)

// TestDefaultFitModelIsTrained retrains the fit model from the BFCL data
// and holds the committed selector.DefaultFitModel to it, so the weights in
// the product are the ones this code learns. With FIT_WRITE=1 it writes
// them instead:
//
//	DATA_DIR=../shared/data FIT_WRITE=1 go test -count=1 -run TestDefaultFitModelIsTrained ./evals/predict/
func TestDefaultFitModelIsTrained(t *testing.T) {
	dir := dataDir(t)
	m, n, err := TrainDefaultFit(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if os.Getenv("FIT_WRITE") != "" {
		var b bytes.Buffer
		if err := WriteFitModel(&b, m, "TestDefaultFitModelIsTrained (evals/predict) with FIT_WRITE=1"); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile("../../selector/nofit_weights.go", b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote selector/nofit_weights.go from %d examples (threshold %.4f)", n, m.Threshold)
		return
	}
	d := selector.DefaultFitModel
	close := func(a, b float64) bool { return math.Abs(a-b) <= 1e-6*max(1, math.Abs(a)) }
	if !close(d.Bias, m.Bias) || !close(d.Threshold, m.Threshold) {
		t.Errorf("committed bias %v threshold %v, trained %v %v: rerun with FIT_WRITE=1", d.Bias, d.Threshold, m.Bias, m.Threshold)
	}
	for i := range m.Weights {
		if !close(d.Weights[i], m.Weights[i]) {
			t.Errorf("committed %s weight %v, trained %v: rerun with FIT_WRITE=1", selector.FitFeatureNames[i], d.Weights[i], m.Weights[i])
		}
	}
}

// TestTrainFitSeparates: on examples where one feature decides, the
// trained model puts the fitting ones above the threshold chosen for a
// zero budget and the others below.
func TestTrainFitSeparates(t *testing.T) {
	var ex []FitExample
	for i := 0; i < 40; i++ {
		var e FitExample
		e.X[selector.FitCoverage] = float64(i%10) / 10
		e.X[selector.FitSimilarity] = 0.3 + float64(i%3)/10 // noise
		e.Fits = e.X[selector.FitCoverage] >= 0.5
		ex = append(ex, e)
	}
	m := TrainFit(ex, 0.1)
	if m.Weights[selector.FitCoverage] <= 0 {
		t.Fatalf("coverage weight %v, want positive", m.Weights[selector.FitCoverage])
	}
	m.Threshold = ChooseThreshold(m, ex, 0)
	for _, e := range ex {
		if m.Fits(e.X) != e.Fits {
			t.Errorf("coverage %.1f: fits %v, want %v", e.X[selector.FitCoverage], m.Fits(e.X), e.Fits)
		}
	}
}

func TestInFitTraining(t *testing.T) {
	for id, want := range map[string]bool{
		"irrelevance_0": true, "irrelevance_7": false, "live_multiple_12-3-4": true,
		"live_simple_13-0-0": false, "simple_python_100": true, "nonumber": false,
	} {
		if got := InFitTraining(id); got != want {
			t.Errorf("InFitTraining(%q) = %v, want %v", id, got, want)
		}
	}
}

func TestUnquoted(t *testing.T) {
	for in, want := range map[string]string{
		`"Find the area of circles of radius 3 and 5."`: "Find the area of circles of radius 3 and 5.",
		`Say "hi" to Ada`: `Say "hi" to Ada`,
		`"a" and "b"`:     `"a" and "b"`,
		`plain request`:   `plain request`,
	} {
		if got := Unquoted(in); got != want {
			t.Errorf("Unquoted(%q) = %q, want %q", in, got, want)
		}
	}
}
