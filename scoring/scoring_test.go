package scoring

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"
)

func TestTrustWeights(t *testing.T) {
	want := map[int]float64{3: 1.0, 2: 0.8, 1: 0.5, 0: 0.2, 7: 1.0, -1: 0.2}
	for l, w := range want {
		if got := TrustWeight(l); got != w {
			t.Errorf("TrustWeight(%d) = %v, want %v", l, got, w)
		}
	}
}

func TestToolScoreJSON(t *testing.T) {
	b, _ := json.Marshal(ToolScore{Tool: "x", SemanticMatch: 1})
	for _, k := range []string{`"semantic_match"`, `"trust_weight"`, `"success_rate"`, `"latency_score"`, `"preference_score"`, `"composite"`} {
		if !strings.Contains(string(b), k) {
			t.Errorf("JSON %s lacks %s", b, k)
		}
	}
}

func TestCompositeIsWeightedSum(t *testing.T) {
	st := NewStats(10)
	for i := 0; i < 8; i++ {
		st.Record("a", i != 0, 20*time.Millisecond) // 7 ok of 8 → (7+1)/(8+2) = 0.8
		st.Record("b", true, 10*time.Millisecond)   // 8 of 8 → 0.9
	}
	pr := NewPreferences()
	pr.Accept("a")
	pr.Accept("a")
	pr.Dismiss("b")                                                                         // a: 3/4, b: 1/3
	w := SelectionWeights{Semantic: 2, Trust: 1, Success: 1, Latency: 0.5, Preference: 0.5} // sum 5
	s := Scorer{Weights: w, Stats: st, Prefs: pr}
	got := s.Score([]Candidate{{Tool: "a", Similarity: 0.8, Trust: 3}, {Tool: "b", Similarity: 0.4, Trust: 0}})
	a := got[0]
	if a.Tool != "a" {
		t.Fatalf("order %v", got)
	}
	want := ToolScore{Tool: "a", SemanticMatch: 1, TrustWeight: 1, SuccessRate: 0.8, LatencyScore: 0.5, PreferenceScore: 0.75}
	want.Composite = (2*1 + 1*1 + 1*0.8 + 0.5*0.5 + 0.5*0.75) / 5
	if !closeTo(a, want) {
		t.Fatalf("a = %+v, want %+v", a, want)
	}
	b := got[1]
	wantB := ToolScore{Tool: "b", SemanticMatch: 0.5, TrustWeight: 0.2, SuccessRate: 0.9, LatencyScore: 1, PreferenceScore: 1.0 / 3}
	wantB.Composite = (2*0.5 + 0.2 + 0.9 + 0.5*1 + 0.5/3) / 5
	if !closeTo(b, wantB) {
		t.Fatalf("b = %+v, want %+v", b, wantB)
	}
	ex := a.Explain(w)
	for _, part := range []string{"a composite", "semantic 1.000×0.400", "trust 1.000×0.200", "success 0.800×0.200", "latency 0.500×0.100", "preference 0.750×0.100"} {
		if !strings.Contains(ex, part) {
			t.Errorf("Explain %q lacks %q", ex, part)
		}
	}
}

func closeTo(a, b ToolScore) bool {
	eq := func(x, y float64) bool { return math.Abs(x-y) < 1e-9 }
	return a.Tool == b.Tool && eq(a.SemanticMatch, b.SemanticMatch) && eq(a.TrustWeight, b.TrustWeight) &&
		eq(a.SuccessRate, b.SuccessRate) && eq(a.LatencyScore, b.LatencyScore) &&
		eq(a.PreferenceScore, b.PreferenceScore) && eq(a.Composite, b.Composite)
}

func TestTiesBreakByName(t *testing.T) {
	s := Scorer{Weights: DefaultWeights}
	for i := 0; i < 3; i++ {
		got := s.Score([]Candidate{{Tool: "zeta", Similarity: 1}, {Tool: "alpha", Similarity: 1}, {Tool: "mid", Similarity: 1}})
		if got[0].Tool != "alpha" || got[1].Tool != "mid" || got[2].Tool != "zeta" {
			t.Fatalf("order %v", got)
		}
	}
}

func TestRelevanceDominatesByDefault(t *testing.T) {
	// A perfect match from the community must beat a half-relevant system
	// tool with default weights.
	st := NewStats(0)
	st.Record("sys", true, time.Millisecond)
	s := Scorer{Weights: DefaultWeights, Stats: st}
	got := s.Score([]Candidate{{Tool: "sys", Similarity: 0.4, Trust: 3}, {Tool: "community", Similarity: 1, Trust: 0}})
	if got[0].Tool != "community" {
		t.Fatalf("order %+v", got)
	}
}

func TestInvalidWeightsFallBack(t *testing.T) {
	if (SelectionWeights{}).Validate() == nil || (SelectionWeights{Semantic: -1, Trust: 2}).Validate() == nil {
		t.Fatal("invalid weights accepted")
	}
	if DefaultWeights.Validate() != nil {
		t.Fatal("default weights rejected")
	}
	s := Scorer{Weights: SelectionWeights{Semantic: math.NaN()}}
	got := s.Score([]Candidate{{Tool: "a", Similarity: 1, Trust: 3}})
	if got[0].Composite <= 0 || got[0].Composite > 1 {
		t.Fatalf("composite %v", got[0].Composite)
	}
}

func TestSlidingWindow(t *testing.T) {
	st := NewStats(4)
	if st.SuccessRate("x") != 0.5 {
		t.Fatal("unknown tool not neutral")
	}
	if _, ok := st.P50("x"); ok {
		t.Fatal("p50 of unknown tool")
	}
	for i := 0; i < 4; i++ {
		st.Record("x", false, time.Duration(100+i)*time.Millisecond)
	}
	if r := st.SuccessRate("x"); math.Abs(r-1.0/6) > 1e-12 {
		t.Fatalf("rate %v", r)
	}
	// Four successes push every failure out of the window.
	for _, d := range []int{10, 30, 20, 40} {
		st.Record("x", true, time.Duration(d)*time.Millisecond)
	}
	if r := st.SuccessRate("x"); math.Abs(r-5.0/6) > 1e-12 || st.Calls("x") != 4 {
		t.Fatalf("rate %v calls %d", r, st.Calls("x"))
	}
	if p, _ := st.P50("x"); p != 25*time.Millisecond {
		t.Fatalf("p50 %v", p)
	}
	if p, _ := st.Percentile("x", 0.75); p != 30*time.Millisecond {
		t.Fatalf("p75 %v", p)
	}
}

func TestPreferences(t *testing.T) {
	p := NewPreferences()
	if p.Score("t") != 0.5 {
		t.Fatal("not neutral")
	}
	p.Set("t", 1)
	if p.Score("t") != 1 {
		t.Fatalf("explicit +1: %v", p.Score("t"))
	}
	p.Set("t", -0.5)
	p.Dismiss("t")
	// feedback 1/3, then halfway to 0 → 1/6
	if math.Abs(p.Score("t")-1.0/6) > 1e-12 {
		t.Fatalf("score %v", p.Score("t"))
	}
	p.Set("t", 0)
	if math.Abs(p.Score("t")-1.0/3) > 1e-12 {
		t.Fatalf("after clearing: %v", p.Score("t"))
	}
}

func TestLatencyRegression(t *testing.T) {
	// Tool "conv": latency = 2ms · (1+bytes)^0.5 exactly; others by class.
	var ss []LatencySample
	for _, b := range []int{0, 10, 100, 1000, 10000, 100000} {
		ss = append(ss, LatencySample{Tool: "conv", LatencyClass: 1, InputBytes: b,
			Latency: time.Duration(2e6 * math.Sqrt(1+float64(b)))})
	}
	for c := 0; c <= 3; c++ {
		ss = append(ss, LatencySample{Tool: "other", LatencyClass: c, Latency: time.Duration(1e6 * math.Pow(10, float64(c)))})
	}
	m := FitLatency(ss)
	got, ok := m.Predict("conv", 1, 3999)
	if !ok || math.Abs(float64(got)-2e6*math.Sqrt(4000))/float64(got) > 1e-6 {
		t.Fatalf("conv prediction %v", got)
	}
	// Unknown tool of class 2: global line through all samples, in log
	// space; it must rank slower than class 0.
	c0, _ := m.Predict("new", 0, 0)
	c2, _ := m.Predict("new", 2, 0)
	if !(c2 > c0) {
		t.Fatalf("class 2 %v not slower than class 0 %v", c2, c0)
	}
	if _, ok := FitLatency(nil).Predict("x", 0, 0); ok {
		t.Fatal("empty model predicts")
	}
	// The scorer uses predictions when no calls were measured.
	s := Scorer{Weights: DefaultWeights, Latency: m}
	sc := s.Score([]Candidate{{Tool: "slow", Similarity: 1, LatencyClass: 3}, {Tool: "fast", Similarity: 1, LatencyClass: 0}})
	if sc[0].Tool != "fast" || !(sc[1].LatencyScore < sc[0].LatencyScore) {
		t.Fatalf("%+v", sc)
	}
}
