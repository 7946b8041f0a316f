package anomaly

import (
	"fmt"
	"sync"
	"testing"
	"time"
)

func obs(t *Tracker, caller, tool string, at time.Time) (int, bool) {
	r := t.Observe(caller, tool, Folders{}, at)
	return r.LastMinute, !r.KnownTool
}

func peek(t *Tracker, caller, tool string, at time.Time) (int, bool) {
	r := t.Peek(caller, tool, Folders{}, at)
	return r.LastMinute, !r.KnownTool
}

// The tracker's features against a direct count: calls in the last 60 s
// (this one included) and first calls of a tool, per caller.
func TestTrackerCountsTheLastMinute(t *testing.T) {
	tr := NewTracker()
	t0 := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	var times []time.Time
	for i := 0; i < 200; i++ {
		at := t0.Add(time.Duration(i*i%97) * 700 * time.Millisecond).Add(time.Duration(i) * 3 * time.Second)
		times = append(times, at)
	}
	// in time order, as the pipeline sees them
	for i := 1; i < len(times); i++ {
		for j := i; j > 0 && times[j].Before(times[j-1]); j-- {
			times[j], times[j-1] = times[j-1], times[j]
		}
	}
	for i, at := range times {
		want := 0
		for _, p := range times[:i+1] {
			if p.Unix() > at.Unix()-60 { // the same second-exact window
				want++
			}
		}
		got, novel := obs(tr, "a", "read", at)
		if got != want {
			t.Fatalf("call %d at %v: %d in the last minute, want %d", i, at, got, want)
		}
		if novel != (i == 0) {
			t.Fatalf("call %d: novel %v", i, novel)
		}
	}
	// A clock moved back: a peek at an earlier second sums the ring over
	// (then-60, then]: calls at 100, 130 and 170 s, a peek at 160 counts
	// the one at 130 (and itself), not the one at 100, exactly 60 s before.
	back := NewTracker()
	for _, sec := range []int64{100, 130, 170} {
		obs(back, "a", "read", time.Unix(sec, 0))
	}
	if got, _ := peek(back, "a", "read", time.Unix(160, 0)); got != 2 {
		t.Fatalf("peek at 160 after calls at 100, 130, 170: %d, want 2", got)
	}
	if got, _ := peek(back, "a", "read", time.Unix(189, 0)); got != 3 {
		t.Fatalf("peek at 189: %d, want 3 (130, 170 and itself)", got)
	}
	if got, _ := peek(back, "a", "read", time.Unix(190, 0)); got != 2 {
		t.Fatalf("peek at 190: %d, want 2 (170 and itself)", got)
	}
	if n, novel := obs(tr, "b", "read", times[len(times)-1]); n != 1 || !novel {
		t.Fatalf("another caller: %d %v, want its own history", n, novel)
	}
	if _, novel := obs(tr, "a", "write", times[len(times)-1]); !novel {
		t.Fatal("a's first write is not novel")
	}
	n1, _ := peek(tr, "a", "write", times[len(times)-1])
	n2, novel := peek(tr, "a", "send", times[len(times)-1])
	if n1 != n2 || !novel {
		t.Fatalf("peek recorded a call: %d then %d, novel %v", n1, n2, novel)
	}
	if n, _ := obs(tr, "a", "read", times[len(times)-1].Add(61*time.Second)); n != 1 {
		t.Fatalf("61 s later: %d calls in the last minute, want 1", n)
	}
}

func TestTrackerBounded(t *testing.T) {
	tr := NewTracker()
	t0 := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	for i := 0; i < 3*MaxTrackedCallers; i++ {
		obs(tr, fmt.Sprint("c", i), "read", t0.Add(time.Duration(i)*time.Second))
	}
	if n := tr.Callers(); n > MaxTrackedCallers {
		t.Fatalf("%d callers remembered, cap %d", n, MaxTrackedCallers)
	}
	// The most recent caller survived; the first was forgotten.
	last := fmt.Sprint("c", 3*MaxTrackedCallers-1)
	if _, novel := obs(tr, last, "read", t0.Add(time.Hour)); novel {
		t.Fatal("the most recent caller was forgotten")
	}
	if _, novel := obs(tr, "c0", "read", t0.Add(time.Hour)); !novel {
		t.Fatal("the caller idle longest was not forgotten")
	}
	for i := 0; i < 2*MaxToolsPerCaller; i++ {
		obs(tr, "many", fmt.Sprint("t", i), t0)
	}
	if _, novel := obs(tr, "many", fmt.Sprint("t", MaxToolsPerCaller+5), t0); !novel {
		t.Fatal("a tool past the cap was remembered")
	}
	if _, novel := obs(tr, "many", "t1", t0); novel {
		t.Fatal("a tool within the cap was forgotten")
	}
}

// Run with -race: concurrent callers, one shared tracker.
func TestTrackerConcurrent(t *testing.T) {
	tr := NewTracker()
	t0 := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 500; i++ {
				obs(tr, fmt.Sprint("c", i%20), "read", t0)
			}
		}()
	}
	wg.Wait()
	if n, _ := peek(tr, "c3", "read", t0); n != 8*25+1 {
		t.Fatalf("c3: %d calls in the minute (peeked one included), want %d", n, 8*25+1)
	}
}

func BenchmarkTrackerObserve(b *testing.B) {
	tr := NewTracker()
	t0 := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		obs(tr, "alice", "read", t0.Add(time.Duration(i)*time.Millisecond))
		i++
	}
}

// A held call (learn false) counts in its caller's rates as every call
// does — after a pause an agent whose calls are held is not made to look
// idle — but its tool and folders are not learned until Learn.
func TestTrackerHeldCallsCountNotLearned(t *testing.T) {
	tr := NewTracker()
	t0 := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	var f Features
	f.SetFolders([]byte(`{"path":"hr/passwords.txt"}`))
	fo := FoldersOfFeatures(&f)
	for i := 0; i < 30; i++ {
		tr.ObserveIf("a", "rm", fo, t0.Add(time.Duration(i)*time.Second), func(Recent) bool { return false })
	}
	r := tr.Peek("a", "rm", fo, t0.Add(30*time.Second))
	if r.LastMinute != 31 || r.Last10s != 10 {
		t.Fatalf("held calls not counted: %+v, want 31 in the minute and 10 in 10 s", r)
	}
	if r.KnownTool || r.KnownFolders != 0 || r.KnownTops != 0 {
		t.Fatalf("a held call was learned: %+v", r)
	}
	if r.Span != 4*time.Second {
		t.Fatalf("span of the last %d calls: %v, want 4s", SpanCalls, r.Span)
	}
	tr.Learn("a", "rm", fo)
	r = tr.Peek("a", "rm", fo, t0.Add(30*time.Second))
	if !r.KnownTool || r.KnownFolders != 1 || r.KnownTops != 1 || r.FolderCalls != 1 || r.LateFolderCalls != 0 {
		t.Fatalf("after Learn: %+v", r)
	}
}

// Each window (10, 20, 30 s and the minute) against a direct count of the
// calls in it, this one included.
func TestTrackerCountsEachWindow(t *testing.T) {
	tr := NewTracker()
	t0 := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	var times []int64
	for i := range 300 {
		times = append(times, t0.Unix()+int64(i*7/3+(i*i%11)/5))
	}
	for i, sec := range times {
		r := tr.Observe("a", "read", Folders{}, time.Unix(sec, 0))
		for _, w := range []struct {
			secs int64
			got  int
		}{{10, r.Last10s}, {20, r.Last20s}, {30, r.Last30s}, {60, r.LastMinute}} {
			want := 0
			for _, p := range times[:i+1] {
				if p > sec-w.secs {
					want++
				}
			}
			if w.got != want {
				t.Fatalf("call %d at %d: %d calls in the last %d s, want %d", i, sec, w.got, w.secs, want)
			}
		}
	}
}
