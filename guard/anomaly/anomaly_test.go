package anomaly

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

var day0 = time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC) // a Monday

// replay replays calls through a Tracker as the running airs does and
// returns their features.
func replay(calls []testCall) []Features {
	tr := NewTracker()
	out := make([]Features, 0, len(calls))
	for _, c := range calls {
		f := Features{Caller: c.caller, Tool: c.tool, Unix: c.at.Unix(), ParamSizeBytes: c.size}
		f.SetFolders([]byte(c.args))
		tr.Observe(c.caller, c.tool, FoldersOfFeatures(&f), c.at).Apply(&f)
		out = append(out, f)
	}
	return out
}

type testCall struct {
	caller, tool string
	at           time.Time
	size         int
	args         string
}

// planted: "alice" reads and writes in docs/ every weekday 9–17h, about
// two calls a minute in sessions; "bot" backs up at 03:00 every day.
func planted(days int) []testCall {
	rng := rand.New(rand.NewPCG(1, 2))
	var out []testCall
	for d := 0; d < days; d++ {
		day := day0.AddDate(0, 0, d)
		for i := 0; i < 10; i++ {
			out = append(out, testCall{"bot", "backup", day.Add(3*time.Hour + time.Duration(i)*20*time.Second), 50 + rng.IntN(50), fmt.Sprintf(`{"path":"backup/%d.tar"}`, i)})
		}
		if wd := day.Weekday(); wd == time.Saturday || wd == time.Sunday {
			continue
		}
		at := day.Add(9 * time.Hour)
		for at.Before(day.Add(17 * time.Hour)) {
			tool := []string{"read", "write"}[rng.IntN(2)]
			out = append(out, testCall{"alice", tool, at, 60 + rng.IntN(100), fmt.Sprintf(`{"path":"docs/f%d.md"}`, rng.IntN(30))})
			at = at.Add(time.Duration(10+rng.IntN(50)) * time.Second)
			if rng.IntN(20) == 0 {
				at = at.Add(time.Duration(rng.IntN(40)) * time.Minute) // a pause
			}
		}
	}
	sortCalls(out)
	return out
}

func sortCalls(c []testCall) {
	for i := 1; i < len(c); i++ {
		for j := i; j > 0 && c[j].at.Before(c[j-1].at); j-- {
			c[j], c[j-1] = c[j-1], c[j]
		}
	}
}

func train(t testing.TB, calls []testCall) *Model {
	t.Helper()
	m, err := Train(replay(calls))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// alice's usual call at at, after her usual pace.
func usual(at time.Time) Features {
	f := Features{Caller: "alice", Tool: "read", Unix: at.Unix(), Last10s: 1, LastMinute: 2, ParamSizeBytes: 90, KnownTool: true}
	f.SetFolders([]byte(`{"path":"docs/f3.md"}`))
	return f
}

func TestPlantedAnomaliesScoreHigh(t *testing.T) {
	m := train(t, planted(14))
	at := day0.AddDate(0, 0, 15).Add(11 * time.Hour) // a Tuesday, 11:00
	if s := m.Score(usual(at)); s >= 204 {
		t.Errorf("alice's usual read: %d/255, want < 0.8", s)
	}
	after := usual(at)
	after.Last10s, after.LastMinute, after.Span = 1, 1, 40*time.Minute // the first call after a pause
	if s := m.Score(after); s != 0 {
		t.Errorf("the first call after a pause: %d/255, want 0 (a slow rate is never unusual)", s)
	}
	for name, mod := range map[string]func(*Features){
		"new tool":        func(f *Features) { f.Tool, f.KnownTool = "send-email", false },
		"burst 40/10s":    func(f *Features) { f.Last10s, f.LastMinute, f.Span = 40, 60, time.Second },
		"payload 100x":    func(f *Features) { f.ParamSizeBytes = 9000 },
		"folder hr":       func(f *Features) { f.SetFolders([]byte(`{"path":"hr/passwords.txt"}`)) },
		"at 02:00":        func(f *Features) { f.Unix = at.Add(-9 * time.Hour).Unix() },
		"unknown agent 4": func(f *Features) { f.Caller, f.Last10s, f.LastMinute = "mallory", 200, 600 },
	} {
		f := usual(at)
		mod(&f)
		if s := m.Score(f); s < 230 {
			t.Errorf("%s: %d/255 (%+v), want ≥ 0.9", name, s, m.Explain(&f))
		}
	}
	// A folder new to alice inside docs/, where she works: shown, not held.
	f := usual(at)
	f.SetFolders([]byte(`{"path":"docs/new/x.md"}`))
	if s := m.Score(f); s < 204 || s > fixed(newFolderCap) {
		t.Errorf("a new folder inside docs: %d/255, want between 0.8 and %.2f", s, newFolderCap)
	}
}

// With a short history each feature abstains until there is evidence:
// the hour of day until MinDaysForHour days, a new tool while the agent
// has made a handful of calls.
func TestShortHistoryAbstains(t *testing.T) {
	half := planted(7)
	var first []testCall
	for _, c := range half {
		if c.at.Before(day0.Add(9*time.Hour + 30*time.Minute)) { // half an hour of alice
			first = append(first, c)
		}
	}
	m := train(t, first)
	late := usual(day0.Add(22 * time.Hour))
	if s := m.Score(late); s != 0 {
		t.Errorf("after half an hour, alice at 22:00 scores %d/255; the hour of day must abstain (%+v)", s, m.Explain(&late))
	}
	m7 := train(t, half)
	if s := m7.Score(usual(day0.AddDate(0, 0, 8).Add(22 * time.Hour))); s < 230 {
		t.Errorf("after a week, alice at 22:00 scores %d/255, want ≥ 0.9", s)
	}
	// The new-tool score grows with the agent's calls, and holds (above
	// usedToolCap) only on enough of them.
	prev := -1.0
	for _, n := range []int{3, 10, 40, 200} {
		var calls []testCall
		for i := range n {
			calls = append(calls, testCall{"dave", "read", day0.Add(time.Duration(i) * time.Minute), 50, ""})
		}
		for i := range 20 {
			calls = append(calls, testCall{"erin", "read", day0.Add(time.Duration(i) * time.Minute), 50, ""})
		}
		sortCalls(calls)
		mm := train(t, calls)
		f := Features{Caller: "dave", Tool: "write", Unix: day0.Unix()}
		s := mm.Explain(&f).Tool
		switch {
		case s < prev:
			t.Errorf("after %d calls a new tool scores %.3f, less than after fewer (%.3f)", n, s, prev)
		case n-discoveryWarmup < minCallsToHold && s > usedToolCap:
			t.Errorf("after %d calls a new tool scores %.3f: held on too little history", n, s)
		case n >= 40 && s <= max(prev, usedToolCap):
			t.Errorf("after %d calls a new tool scores %.3f, not more than after fewer (%.3f)", n, s, prev)
		}
		prev = s
	}
}

// Update with the later calls is the model trained on all of them.
func TestUpdateIsTrainingOnEverything(t *testing.T) {
	calls := replay(planted(10))
	all, err := Train(calls)
	if err != nil {
		t.Fatal(err)
	}
	head, err := Train(calls[:len(calls)/2])
	if err != nil {
		t.Fatal(err)
	}
	up, err := head.Update(calls[len(calls)/2:])
	if err != nil {
		t.Fatal(err)
	}
	if up.Version() != all.Version() {
		t.Fatalf("update %s, full training %s", up.Version(), all.Version())
	}
	if head.Through().After(up.Through()) || !up.Through().Equal(time.Unix(calls[len(calls)-1].Unix, 0)) {
		t.Fatalf("through: head %v, updated %v", head.Through(), up.Through())
	}
}

func TestFoldersOf(t *testing.T) {
	for args, want := range map[string][]string{
		`{"path":"hr/passwords.txt"}`:                      {"hr"},
		`{"path":"/docs/a/b/c.md","to":"./docs/a/d.md"}`:   {"docs/a"},
		`{"path":"top.txt"}`:                               {},
		`{"path":"notes/x.md","query":"a b/c"}`:            {"notes"},
		`{"url":"https://example.com/a/b"}`:                {},
		`{"docs/a":"value"}`:                               {},
		`{"p":"src/app/main.go","q":"src/lib/x.go","r":1}`: {"src/app", "src/lib"},
	} {
		fo, tops, n := FoldersOf([]byte(args))
		if n != len(want) {
			t.Errorf("%s: %d folders, want %v", args, n, want)
			continue
		}
		for i, w := range want {
			top := w
			if k := len(w); k > 0 {
				for j := range w {
					if w[j] == '/' {
						top = w[:j]
						break
					}
				}
			}
			if fo[i] != hashFolder([]byte(w)) || tops[i] != hashFolder([]byte(top)) {
				t.Errorf("%s: folder %d is not %q (top %q)", args, i, w, top)
			}
		}
	}
}

func TestSaveLoadKeepsScoresAndVersion(t *testing.T) {
	m := train(t, planted(7))
	p := filepath.Join(t.TempDir(), "guard.model")
	if err := m.Save(p); err != nil {
		t.Fatal(err)
	}
	l, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	if l.Version() != m.Version() || len(l.Version()) != 12 {
		t.Fatalf("version %q after load, %q before", l.Version(), m.Version())
	}
	for i, f := range replay(planted(9)) {
		f.Unix += int64(i%24) * 3600
		f.Tool = []string{"read", "write", "mail"}[i%3]
		if l.Score(f) != m.Score(f) {
			t.Fatalf("%+v: loaded %d, trained %d", f, l.Score(f), m.Score(f))
		}
	}
	if m2 := train(t, planted(8)); m2.Version() == m.Version() {
		t.Fatal("two different models share a version")
	}
}

func TestParseRefusesMalformed(t *testing.T) {
	for name, s := range map[string]string{
		"not json":    "{",
		"old format":  `{"format":1,"nodes":[{"f":255}]}`,
		"no profiles": `{"format":2,"agents":{},"all":{"tools":{},"folders":{}}}`,
		"nil agent":   `{"format":2,"agents":{"a":null},"all":{"tools":{},"folders":{}}}`,
		"no all":      `{"format":2,"agents":{"a":{"tools":{},"folders":{}}}}`,
	} {
		if _, err := Parse([]byte(s)); err == nil {
			t.Errorf("%s: parsed", name)
		}
	}
}

// TestHolderSwapUnderLoad: concurrent scorers see one whole model or the
// other (each score matches the version it names), while the model is
// swapped; run with -race.
func TestHolderSwapUnderLoad(t *testing.T) {
	a, b := train(t, planted(7)), train(t, planted(3))
	byVersion := map[string]*Model{a.Version(): a, b.Version(): b}
	var h Holder
	if s, v := h.Score(Features{}); s != 0 || v != "" {
		t.Fatalf("no model: %d %q", s, v)
	}
	h.Set(a)
	f := Features{Caller: "bot", Tool: "backup", Unix: day0.Add(14 * time.Hour).Unix(), LastMinute: 3, ParamSizeBytes: 60}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				s, v := h.Score(f)
				m := byVersion[v]
				if m == nil || m.Score(f) != s {
					t.Errorf("score %d from version %q does not match that model", s, v)
					return
				}
			}
		}()
	}
	for i := 0; i < 2000; i++ {
		if i%2 == 0 {
			h.Set(b)
		} else {
			h.Set(a)
		}
	}
	close(stop)
	wg.Wait()
}

func TestHolderCandidatePartition(t *testing.T) {
	a, b := train(t, planted(7)), train(t, planted(3))
	var h Holder
	h.Set(a)
	h.SetCandidate(b, 0.3)
	n := 0
	for i := 0; i < 2000; i++ {
		c := "caller-" + string(rune('a'+i%26)) + string(rune('a'+i/26%26)) + string(rune('a'+i/676))
		_, v1 := h.Score(Features{Caller: c})
		_, v2 := h.Score(Features{Caller: c})
		if v1 != v2 {
			t.Fatalf("%s scored by %s then %s: a caller must stay on one model", c, v1, v2)
		}
		if v1 == b.Version() {
			n++
		}
	}
	if n < 450 || n > 750 {
		t.Fatalf("candidate scored %d of 2000 callers, want ~600 (30%%)", n)
	}
}

// BenchmarkAnomalyScore is one call's scoring as the running airs does it:
// the folders of its arguments, the tracker's look-up, the model's score.
func BenchmarkAnomalyScore(b *testing.B) {
	m := train(b, planted(14))
	var h Holder
	h.Set(m)
	tr := NewTracker()
	args := []byte(`{"path":"docs/f12.md","offset":0}`)
	at := day0.AddDate(0, 0, 15).Add(11 * time.Hour)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		f := Features{Caller: "alice", Tool: "read", Unix: at.Unix(), ParamSizeBytes: len(args)}
		f.SetFolders(args)
		tr.ObserveIf("alice", "read", FoldersOfFeatures(&f), at.Add(time.Duration(i)*time.Second), func(r Recent) bool {
			r.Apply(&f)
			s, _ := h.Score(f)
			return s < 243
		})
		i++
	}
}

// A sustained burst is judged by the windows between 10 s and a minute
// before the minute's count passes the agent's busiest minute: an agent
// whose quick runs reach 8 calls in 8 s, calling once every 30 s between
// them, calling once a second for 20 s is flagged, which the 10 s and
// 60 s counts alone do not yet say.
func TestSustainedBurstFlaggedEarly(t *testing.T) {
	tr := NewTracker()
	t0 := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	var calls []Features
	call := func(at time.Time) Features {
		f := Features{Caller: "q", Tool: "read", Unix: at.Unix(), ParamSizeBytes: 40}
		tr.Observe("q", "read", Folders{}, at).Apply(&f)
		return f
	}
	for run := range 60 { // five hours: a quick run every five minutes
		start := t0.Add(time.Duration(run) * 5 * time.Minute)
		for i := range 8 {
			calls = append(calls, call(start.Add(time.Duration(i)*time.Second)))
		}
		for i := 1; i < 10; i++ {
			calls = append(calls, call(start.Add(time.Duration(i)*30*time.Second)))
		}
	}
	m, err := Train(calls)
	if err != nil {
		t.Fatal(err)
	}
	burst := t0.Add(6 * time.Hour)
	var f Features
	for i := range 20 {
		f = call(burst.Add(time.Duration(i) * time.Second))
	}
	if s := m.Score(f); s < 230 {
		t.Fatalf("20 calls in 20 s (%d in 10 s, %d in 20 s, %d in 30 s, %d in the minute) score %.2f, want ≥ 0.9",
			f.Last10s, f.Last20s, f.Last30s, f.LastMinute, float64(s)/255)
	}
	f.Last20s, f.Last30s = 0, 0
	if s := m.Score(f); s >= 230 {
		t.Fatalf("the 10 s and 60 s counts alone score %.2f: the test does not show the other windows' part", float64(s)/255)
	}
}
