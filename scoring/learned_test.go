package scoring

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"
)

// A state exported, encoded, decoded and imported scores exactly as the
// original, also after its windows wrapped — and keeps wrapping the same.
func TestLearnedRoundTrip(t *testing.T) {
	st, pr := NewStats(10), NewPreferences()
	for i := range 27 { // wraps the window twice
		st.Record("a", i%3 != 0, time.Duration(i)*time.Millisecond)
	}
	st.Record("b", false, time.Second)
	pr.Accept("a")
	pr.Dismiss("b")
	pr.Dismiss("b")
	pr.Set("c", 0.7)
	l := Learned{V: LearnedVersion, Stats: st.Export(), Prefs: pr.Export()}
	b, err := json.Marshal(l)
	if err != nil {
		t.Fatal(err)
	}
	var back Learned
	if err := json.Unmarshal(b, &back); err != nil || back.Validate() != nil {
		t.Fatalf("decode: %v %v", err, back.Validate())
	}
	st2, pr2 := NewStats(10), NewPreferences()
	st2.Import(back.Stats)
	pr2.Import(back.Prefs)
	same := func(when string) {
		t.Helper()
		for _, tool := range []string{"a", "b", "c"} {
			p1, ok1 := st.Percentile(tool, 0.9)
			p2, ok2 := st2.Percentile(tool, 0.9)
			if st.SuccessRate(tool) != st2.SuccessRate(tool) || p1 != p2 || ok1 != ok2 || pr.Score(tool) != pr2.Score(tool) {
				t.Errorf("%s: tool %s differs: success %v/%v p90 %v/%v pref %v/%v", when, tool,
					st.SuccessRate(tool), st2.SuccessRate(tool), p1, p2, pr.Score(tool), pr2.Score(tool))
			}
		}
	}
	same("after import")
	for i := range 4 { // the imported ring must evict its oldest call first
		st.Record("a", true, time.Duration(100+i)*time.Millisecond)
		st2.Record("a", true, time.Duration(100+i)*time.Millisecond)
	}
	same("after more calls")
	if h := st2.Export()["a"]; h.Total != 31 || len(h.OK) != 10 {
		t.Errorf("total %d, window %d: want 31, 10", h.Total, len(h.OK))
	}
}

// Two processes start from the same stored state; each learns something,
// and they save one after the other. Nothing either learned is lost.
func TestMergeLearnedKeepsBothProcesses(t *testing.T) {
	st, pr := NewStats(5), NewPreferences()
	st.Record("a", true, time.Millisecond)
	pr.Accept("a")
	pr.Set("x", 0.5)
	pr.Set("y", -0.5)
	base := Learned{V: LearnedVersion, Stats: st.Export(), Prefs: pr.Export()}

	p1s, p1p := NewStats(5), NewPreferences()
	p1s.Import(base.Stats)
	p1p.Import(base.Prefs)
	p2s, p2p := NewStats(5), NewPreferences()
	p2s.Import(base.Stats)
	p2p.Import(base.Prefs)

	p1s.Record("a", false, 2*time.Millisecond)
	p1s.Record("b", true, 3*time.Millisecond)
	p1p.Accept("a")
	p1p.Set("x", 1)
	for range 6 {
		p2s.Record("a", true, 4*time.Millisecond)
	}
	p2p.Dismiss("a")
	p2p.Set("y", 0) // removes it

	disk := MergeLearned(base, base, Learned{V: LearnedVersion, Stats: p1s.Export(), Prefs: p1p.Export()}, 5)
	disk = MergeLearned(disk, base, Learned{V: LearnedVersion, Stats: p2s.Export(), Prefs: p2p.Export()}, 5)
	if err := disk.Validate(); err != nil {
		t.Fatal(err)
	}
	a := disk.Stats["a"]
	if a.Total != 1+1+6 || len(a.OK) != 5 {
		t.Fatalf("a: total %d, window %d; want 8 calls, window 5", a.Total, len(a.OK))
	}
	for i, ok := range a.OK { // the last five: all of process 2's successes
		if !ok || a.LatencyNs[i] != int64(4*time.Millisecond) {
			t.Fatalf("a's window %v %v: want process 2's six calls' last five", a.OK, a.LatencyNs)
		}
	}
	if b := disk.Stats["b"]; b.Total != 1 || len(b.OK) != 1 {
		t.Errorf("b: %+v", b)
	}
	if disk.Prefs.Accepted["a"] != 2 || disk.Prefs.Dismissed["a"] != 1 {
		t.Errorf("verdicts: accepted %d dismissed %d, want 2 and 1", disk.Prefs.Accepted["a"], disk.Prefs.Dismissed["a"])
	}
	if v, ok := disk.Prefs.Explicit["x"]; !ok || v != 1 {
		t.Errorf("x: %v %v: process 1 changed it to 1", v, ok)
	}
	if _, ok := disk.Prefs.Explicit["y"]; ok {
		t.Error("y: process 2 removed it")
	}
	// Saving again with nothing new changes nothing.
	again := MergeLearned(disk, Learned{V: LearnedVersion, Stats: p2s.Export(), Prefs: p2p.Export()},
		Learned{V: LearnedVersion, Stats: p2s.Export(), Prefs: p2p.Export()}, 5)
	if fmt.Sprint(again) != fmt.Sprint(disk) {
		t.Errorf("a save with nothing new changed the state:\n%v\n%v", disk, again)
	}
}

func TestMergeLearnedIsBounded(t *testing.T) {
	st, pr := NewStats(3), NewPreferences()
	for i := range MaxLearnedTools + 50 {
		tool := fmt.Sprintf("t%04d", i)
		for range 5 {
			st.Record(tool, true, time.Millisecond)
		}
		pr.Accept(tool)
	}
	pr.Set("t0000", 1)
	cur := Learned{V: LearnedVersion, Stats: st.Export(), Prefs: pr.Export()}
	// Make the first 50 tools the least recently called.
	for i := range 50 {
		h := cur.Stats[fmt.Sprintf("t%04d", i)]
		h.Updated = 1
		cur.Stats[fmt.Sprintf("t%04d", i)] = h
	}
	out := MergeLearned(Learned{V: LearnedVersion}, Learned{V: LearnedVersion}, cur, 3)
	if len(out.Stats) != MaxLearnedTools {
		t.Fatalf("%d tools with statistics, want %d", len(out.Stats), MaxLearnedTools)
	}
	if _, ok := out.Stats["t0010"]; ok {
		t.Error("a least recently called tool was kept over a recent one")
	}
	for _, h := range out.Stats {
		if len(h.OK) > 3 {
			t.Fatalf("window of %d calls, want ≤ 3", len(h.OK))
		}
	}
	n := len(unionKeys(out.Prefs.Accepted, out.Prefs.Dismissed))
	if n > MaxLearnedTools || out.Prefs.Explicit["t0000"] != 1 {
		t.Errorf("%d tools with preferences (want ≤ %d), explicit t0000 kept: %v", n, MaxLearnedTools, out.Prefs.Explicit)
	}
}
