package replay

import (
	"bytes"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/airs-dev/airs/scoring"
)

// TestFitRecoversWeights: on synthetic decisions generated from known
// weights by a conditional logit, Fit finds weights whose ranking matches.
func TestFitRecoversWeights(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	truth := []float64{6, 0, 3, 0, 0} // semantic and success matter, trust does not
	var cs []Choice
	for i := 0; i < 600; i++ {
		c := Choice{ID: "x"}
		util := []float64{}
		for j := 0; j < 5; j++ {
			f := []float64{r.Float64(), []float64{0.2, 0.5, 0.8, 1}[r.IntN(4)], r.Float64(), 0.5, 0.5}
			c.Features = append(c.Features, f)
			c.Tools = append(c.Tools, string(rune('a'+j)))
			util = append(util, dot(truth, f)-math.Log(-math.Log(r.Float64()+1e-300))) // + a Gumbel draw
		}
		best := 0
		for j := range util {
			if util[j] > util[best] {
				best = j
			}
		}
		c.Gold = best
		cs = append(cs, c)
	}
	w, _, err := Fit(cs, FitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("fitted %+v", w)
	if w.Trust > 0.1 || w.Semantic < 0.45 || w.Success < 0.2 || w.Latency != 0 || w.Preference != 0 {
		t.Errorf("fitted weights %+v, want semantic ≈ 0.67, success ≈ 0.33, trust ≈ 0, constant components 0", w)
	}
	if Top1(cs, w) < Top1(cs, scoring.SelectionWeights{Trust: 1}) {
		t.Error("fitted weights rank worse than trust alone")
	}
}

func TestConfigFiles(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "lexical-trust.json")
	os.WriteFile(good, []byte(`{"weights":{"semantic":0.3,"trust":0.7},"embedder":"lexical","model":"none"}`), 0o644)
	c, err := LoadConfig(good)
	if err != nil {
		t.Fatal(err)
	}
	if c.Name != "lexical-trust" || c.Weights.Trust != 0.7 || c.modelName() != "" {
		t.Errorf("config %+v", c)
	}
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"wieghts":{}}`), 0o644)
	if _, err := LoadConfig(bad); err == nil || !strings.Contains(err.Error(), "wieghts") {
		t.Errorf("misspelt field: %v", err)
	}
	neg := filepath.Join(dir, "neg.json")
	os.WriteFile(neg, []byte(`{"semantic":-1,"trust":1}`), 0o644)
	if _, err := LoadWeights(neg); err == nil {
		t.Error("negative weight accepted")
	}
}

func TestMetricsLine(t *testing.T) {
	r := &Result{Config: Config{Name: "x"}, Metrics: summarize([]ItemResult{
		{ID: "1", Predicted: "a", Top1: true, TopK: true, ArgMatch: true, Valid: true},
		{ID: "2", Predicted: "none", PredNone: true, GoldNone: true, Top1: true, TopK: true, Valid: true},
		{ID: "3", Predicted: "none", PredNone: true, Valid: true},
		{ID: "4", Predicted: "b", Valid: false, TopK: true},
	}, []time.Duration{time.Millisecond, 2 * time.Millisecond, 3 * time.Millisecond, 4 * time.Millisecond}, 3)}
	m := r.Metrics
	if m.Top1 != 0.5 || m.TopK != 0.75 || m.ArgMatch != 1.0/3 || m.Validity != 0.5 || m.NoneRate != 1 || m.FalseNoneRate != 1.0/3 {
		t.Errorf("metrics %+v", m)
	}
	var b bytes.Buffer
	if err := WriteJSON(&b, r.Line()); err != nil || !strings.HasPrefix(b.String(), `{"config":"x","n":4,"k":3,"top1":0.5,`) {
		t.Errorf("json line %s (%v)", b.String(), err)
	}
}
