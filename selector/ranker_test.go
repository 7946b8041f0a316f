package selector

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/airs-dev/airs/pipeline"
)

func rankerFixture() ([]Retrieved, map[string]Entry) {
	entries := map[string]Entry{
		"a": {Provider: "p1", Tool: pipeline.Tool{Name: "a", Trust: 3, LatencyClass: 1}},
		"b": {Provider: "p2", Tool: pipeline.Tool{Name: "b", Trust: 5, LatencyClass: 1}},
		"c": {Provider: "p1", Tool: pipeline.Tool{Name: "c", Trust: 1, LatencyClass: 3}},
	}
	hits := []Retrieved{
		{Name: "a", Semantic: 0.9, Dense: 0.8},
		{Name: "ghost", Semantic: 0.95, Dense: 0.9}, // not callable: dropped
		{Name: "b", Semantic: 0.5, Dense: 0.4},
		{Name: "c", Semantic: 0.7, Dense: 0.6},
	}
	return hits, entries
}

// Rank is Score under Candidate.Score's keys: the keys are AIRS's output
// format (select --json, the session log), so they are pinned here.
func TestStatsRankerRankIsScoreUnderFixedKeys(t *testing.T) {
	hits, entries := rankerFixture()
	r := NewStatsRanker()
	scored := r.Score(hits, entries)
	cands := r.Rank("u", hits, entries)
	if len(scored) != 3 || len(cands) != 3 {
		t.Fatalf("got %d scored, %d candidates; want 3 each (the uncallable hit dropped)", len(scored), len(cands))
	}
	want := []string{"composite", "latency_score", "preference_score", "semantic_match", "similarity", "success_rate", "trust_weight"}
	for i, s := range scored {
		c := cands[i]
		if c.Name != s.Name || c.Provider != s.Provider || c.Provider != entries[c.Name].Provider {
			t.Errorf("#%d: candidate %s/%s, scored %s/%s", i, c.Provider, c.Name, s.Provider, s.Name)
		}
		var keys []string
		for k := range c.Score {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		if !slices.Equal(keys, want) {
			t.Errorf("%s: keys %v, want %v", c.Name, keys, want)
		}
		if fmt.Sprint(c.Score) != fmt.Sprint(s.Scores.Map()) || c.Composite() != s.Scores.Composite {
			t.Errorf("%s: Rank %v != Score %+v", c.Name, c.Score, s.Scores)
		}
		if i > 0 && scored[i-1].Scores.Composite < s.Scores.Composite {
			t.Errorf("not best first: %v", scored)
		}
	}
	for _, s := range scored {
		var dense float64
		for _, h := range hits {
			if h.Name == s.Name {
				dense = h.Dense
			}
		}
		if s.Scores.Similarity != dense {
			t.Errorf("%s: similarity %v, want the hit's dense cosine %v", s.Name, s.Scores.Similarity, dense)
		}
	}
}

// Failures that say nothing about the tool do not lower its success rate;
// a tool failure does.
func TestStatsRankerObserveCountsOnlyToolFailures(t *testing.T) {
	hits, entries := rankerFixture()
	success := func(r *StatsRanker, name string) float64 {
		for _, s := range r.Score(hits, entries) {
			if s.Name == name {
				return s.Scores.SuccessRate
			}
		}
		t.Fatalf("%s not ranked", name)
		return 0
	}
	r := NewStatsRanker()
	base := success(r, "a")
	res := &pipeline.Result{Latency: time.Millisecond}
	for range 5 {
		r.Observe("a", res, pipeline.ErrRateLimited)
		r.Observe("a", res, fmt.Errorf("wrapped: %w", pipeline.ErrToolCapabilityDenied))
	}
	if got := success(r, "a"); got != base {
		t.Errorf("success after caller-side errors %v, want unchanged %v", got, base)
	}
	for range 5 {
		r.Observe("a", res, errors.New("tool failed"))
	}
	if got := success(r, "a"); got >= base {
		t.Errorf("success after tool failures %v, want below %v", got, base)
	}
}

// A call answered from a speculative run does not count: its latency is
// not the tool's.
func TestStatsRankerIgnoresSpeculativeHits(t *testing.T) {
	r := NewStatsRanker()
	for range 3 {
		r.Observe("a", &pipeline.Result{Latency: time.Microsecond, SpeculativeHit: true}, nil)
	}
	if n := r.scorer.Stats.Calls("a"); n != 0 {
		t.Fatalf("speculative hits recorded: %d calls", n)
	}
	r.Observe("a", &pipeline.Result{Latency: time.Millisecond}, nil)
	if p, ok := r.scorer.Stats.P50("a"); !ok || p != time.Millisecond {
		t.Fatalf("p50 %v %v, want 1ms", p, ok)
	}
}
