package recommender

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

func TestFusionPrior(t *testing.T) {
	f := NewFusion()
	none := f.Score("x", Features{})
	strong := f.Score("x", Features{SignalConversation: 1})
	both := f.Score("x", Features{SignalConversation: 1, SignalHistory: 1})
	if !(none > 0 && none < strong && strong < both && both < 1) {
		t.Errorf("prior: %v %v %v", none, strong, both)
	}
	if p := f.Score("x", Features{SignalSpace: math.NaN(), SignalTask: 7}); !(p > 0 && p < 1) {
		t.Errorf("bad input: %v", p)
	}
}

func TestFusionLearns(t *testing.T) {
	f := NewFusion()
	// A user who acts on history, never on the task text, and likes tool "fav".
	r := rand.New(rand.NewPCG(1, 1))
	for i := 0; i < 3000; i++ {
		var x Features
		for s := range NumSignals {
			x[s] = r.Float64()
		}
		tool := fmt.Sprint("t", r.IntN(5))
		if r.IntN(4) == 0 {
			tool = "fav"
		}
		z := -2 + 4*x[SignalHistory]
		if tool == "fav" {
			z += 2
		}
		o := Dismissed
		if r.Float64() < 1/(1+math.Exp(-z)) {
			o = Accepted
		} else if r.IntN(2) == 0 {
			o = Ignored
		}
		f.Update(tool, x, o)
	}
	w := f.Weights()
	if !(w[SignalHistory] > w[SignalTask]+1) {
		t.Errorf("weights %v", w)
	}
	if f.ToolBias("fav") <= f.ToolBias("t1")+0.5 {
		t.Errorf("tool bias fav %v t1 %v", f.ToolBias("fav"), f.ToolBias("t1"))
	}
	x := Features{SignalHistory: 0.5, SignalTask: 0.5}
	if f.Score("fav", x) <= f.Score("t1", x) {
		t.Error("fav should rank above t1")
	}
	b, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	var g Fusion
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	for _, tool := range []string{"fav", "t1", "new"} {
		if a, c := f.Score(tool, x), g.Score(tool, x); math.Abs(a-c) > 1e-12 {
			t.Errorf("%s: %v vs %v after JSON", tool, a, c)
		}
	}
	// Further updates agree too (rates and clock survive).
	f.Update("fav", x, Dismissed)
	g.Update("fav", x, Dismissed)
	if a, c := f.Score("fav", x), g.Score("fav", x); math.Abs(a-c) > 1e-12 {
		t.Errorf("after update: %v vs %v", a, c)
	}
}

func TestFusionIgnoredIsWeak(t *testing.T) {
	x := Features{SignalConversation: 0.8}
	d, i := NewFusion(), NewFusion()
	d.Update("a", x, Dismissed)
	i.Update("a", x, Ignored)
	p := NewFusion().Score("a", x)
	if !(d.Score("a", x) < i.Score("a", x) && i.Score("a", x) < p) {
		t.Errorf("dismissed %v ignored %v prior %v", d.Score("a", x), i.Score("a", x), p)
	}
}

func TestFusionBounded(t *testing.T) {
	f := NewFusion()
	f.MaxTools = 10
	for i := 0; i < 100; i++ {
		f.Update(fmt.Sprint("tool", i), Features{SignalRecent: 1}, Accepted)
	}
	if len(f.tools) != 10 || f.ToolBias("tool99") == 0 || f.ToolBias("tool0") != 0 {
		t.Errorf("kept %d", len(f.tools))
	}
	for i := 0; i < 1000; i++ {
		f.Update("tool99", Features{}, Accepted)
	}
	if b := f.ToolBias("tool99"); b > f.MaxToolBias {
		t.Errorf("bias %v", b)
	}
}

// BenchmarkFusionScore1000 scores 1,000 candidates once (one update of the
// live recommender's ranking).
func BenchmarkFusionScore1000(b *testing.B) {
	f := NewFusion()
	r := rand.New(rand.NewPCG(1, 2))
	names := make([]string, 1000)
	xs := make([]Features, 1000)
	for i := range xs {
		names[i] = fmt.Sprint("tool", i)
		for s := range NumSignals {
			xs[i][s] = r.Float64()
		}
		f.Update(names[i], xs[i], Outcome(i%3))
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for k := range xs {
			_ = f.Score(names[k], xs[k])
		}
	}
}
