package recommender

import "testing"

func TestRecentScores(t *testing.T) {
	s := RecentScores([]string{"a", "b", "c"})
	if s["c"] != 1 || !(s["b"] < 1 && s["b"] > s["a"] && s["a"] > 0) {
		t.Errorf("%v", s)
	}
	s = RecentScores([]string{"a", "b", "a"})
	if s["a"] != 1 || s["b"] <= 0 {
		t.Errorf("%v", s)
	}
	long := make([]string, 20)
	for i := range long {
		long[i] = string(rune('a' + i))
	}
	s = RecentScores(long)
	if len(s) != RecentWindow || s["a"] != 0 {
		t.Errorf("window: %v", s)
	}
	if len(RecentScores(nil)) != 0 {
		t.Error("empty")
	}
}
