package recommender

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

var t0 = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

func TestHistoryBackoff(t *testing.T) {
	h := NewHistory(24 * time.Hour)
	// cd → ls → cat, many times; cd → mkdir once.
	for i := 0; i < 20; i++ {
		at := t0.Add(time.Duration(i) * time.Minute)
		h.Observe(nil, "cd", at)
		h.Observe([]string{"cd"}, "ls", at)
		h.Observe([]string{"cd", "ls"}, "cat", at)
	}
	h.Observe([]string{"cd"}, "mkdir", t0)
	now := t0.Add(time.Hour)
	s := h.Scores([]string{"cd"}, now)
	if !(s["ls"] > s["mkdir"] && s["mkdir"] > 0) {
		t.Errorf("bigram: %v", s)
	}
	s = h.Scores([]string{"cd", "ls"}, now)
	if !(s["cat"] > s["ls"] && s["cat"] > s["cd"] && s["cat"] > 0.5) {
		t.Errorf("trigram: %v", s)
	}
	// An unseen context backs off to the unigram.
	s = h.Scores([]string{"zzz"}, now)
	if s["cd"] <= 0 || s["cat"] <= 0 {
		t.Errorf("backoff: %v", s)
	}
	sum := 0.0
	for _, v := range h.Scores([]string{"cd", "ls"}, now) {
		if v < 0 || v > 1 {
			t.Fatalf("out of range %v", v)
		}
		sum += v
	}
	if sum > 1+1e-9 {
		t.Errorf("sum %v", sum)
	}
}

func TestHistoryDecay(t *testing.T) {
	h := NewHistory(time.Hour)
	for i := 0; i < 10; i++ {
		h.Observe([]string{"a"}, "old", t0)
	}
	later := t0.Add(10 * time.Hour)
	for i := 0; i < 2; i++ {
		h.Observe([]string{"a"}, "new", later)
	}
	s := h.Scores([]string{"a"}, later)
	if s["new"] <= s["old"] {
		t.Errorf("decay: 2 recent should beat 10 from 10 half-lives ago: %v", s)
	}
}

func TestHistoryBoundedAndJSON(t *testing.T) {
	h := NewHistory(time.Hour)
	h.MaxContexts, h.MaxFollowers = 50, 4
	for i := 0; i < 500; i++ {
		h.Observe([]string{fmt.Sprint("p", i%97), fmt.Sprint("q", i%89)}, fmt.Sprint("n", i%13), t0.Add(time.Duration(i)*time.Second))
	}
	if h.Len() > 50 {
		t.Errorf("contexts %d > 50", h.Len())
	}
	for k, c := range h.ctx {
		if k != unigramKey && len(c.next) > 4 {
			t.Errorf("context %q has %d followers", k, len(c.next))
		}
	}
	b, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	var g History
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	prev := []string{"p3", "q3"}
	now := t0.Add(time.Hour)
	a, c := h.Scores(prev, now), g.Scores(prev, now)
	if len(a) != len(c) {
		t.Fatalf("%v vs %v", a, c)
	}
	for k, v := range a {
		if c[k] != v {
			t.Errorf("%s: %v vs %v", k, v, c[k])
		}
	}
}

// habitLog observes n calls over 1,000 tools: each tool has two usual
// successors (taken 70% of the time), otherwise any tool.
func habitLog(n int) (*History, []string) {
	h := NewHistory(7 * 24 * time.Hour)
	tools := synthTools(1000)
	r := rand.New(rand.NewPCG(5, 6))
	var prev []string
	cur := 0
	for i := 0; i < n; i++ {
		next := r.IntN(len(tools))
		if r.Float64() < 0.7 {
			next = (cur*31 + 7 + r.IntN(2)*101) % len(tools)
		}
		h.Observe(prev, tools[next].Name, t0.Add(time.Duration(i)*time.Second))
		prev = append(prev, tools[next].Name)
		if len(prev) > 4 {
			prev = prev[1:]
		}
		cur = next
	}
	return h, prev
}

// BenchmarkHistoryScores: 100,000 observed calls over 1,000 tools, scores
// for every tool into a reused map.
func BenchmarkHistoryScores(b *testing.B) {
	h, prev := habitLog(100000)
	out := map[string]float64{}
	now := t0.Add(24 * time.Hour)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		h.AddScores(prev, now, out)
	}
	b.ReportMetric(float64(len(out)), "tools")
}

// BenchmarkHistoryScoresMap is the same through Scores (a new map each time).
func BenchmarkHistoryScoresMap(b *testing.B) {
	h, prev := habitLog(100000)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		_ = h.Scores(prev, t0)
	}
}
