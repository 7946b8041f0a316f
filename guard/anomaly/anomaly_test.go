package anomaly

import (
	"math/rand/v2"
	"path/filepath"
	"sync"
	"testing"
)

// planted: "bot" only ever calls at hour 3 with trust 1; "alice" 9–17h.
func planted(n int) []Features {
	rng := rand.New(rand.NewPCG(1, 2))
	var out []Features
	for i := 0; i < n; i++ {
		out = append(out, Features{Caller: "bot", Tool: "backup", Hour: 3, CallsLastMinute: 1 + rng.IntN(6), ParamSizeBytes: 50 + rng.IntN(50), TrustLevel: 1})
		out = append(out, Features{Caller: "alice", Tool: []string{"read", "write"}[rng.IntN(2)], Hour: 9 + rng.IntN(9), CallsLastMinute: 1 + rng.IntN(2), ParamSizeBytes: 60 + rng.IntN(100), TrustLevel: 2})
	}
	return out
}

func TestTreeSeparatesPlantedPattern(t *testing.T) {
	m, err := Train(planted(500), TrainOptions{Seed: 9})
	if err != nil {
		t.Fatal(err)
	}
	seen := Features{Caller: "bot", Tool: "backup", Hour: 3, CallsLastMinute: 2, ParamSizeBytes: 70, TrustLevel: 1}
	for name, f := range map[string]Features{
		"alice 300/min":  {Caller: "alice", Tool: "read", Hour: 10, CallsLastMinute: 300, ParamSizeBytes: 80, TrustLevel: 2},
		"alice new tool": {Caller: "alice", Tool: "send-email", Hour: 10, CallsLastMinute: 1, NovelTool: true, ParamSizeBytes: 80, TrustLevel: 2},
	} {
		if s := m.Score(f); s < 230 {
			t.Errorf("%s: score %d/255, want ≥ 0.9", name, s)
		}
	}
	// An unknown caller lands in a sparse region but not a pure one: ≥ 0.8.
	if s := m.Score(Features{Caller: "mallory", Tool: "backup", Hour: 3, CallsLastMinute: 1, ParamSizeBytes: 70}); s < 204 {
		t.Errorf("unknown caller: score %d/255, want ≥ 0.8", s)
	}
	if s := m.Score(seen); s > 100 {
		t.Errorf("a call like the log's: score %d/255, want low", s)
	}
	if s := m.Score(Features{Caller: "alice", Tool: "write", Hour: 11, CallsLastMinute: 1, ParamSizeBytes: 90, TrustLevel: 2}); s > 100 {
		t.Errorf("alice's habit: score %d/255, want low", s)
	}
}

// TestFrozenEqualsTree: the compiled node array (integer compares, fixed
// point) gives the training tree's score on every bin tuple sampled, and
// on every value of each feature around a seen call.
func TestFrozenEqualsTree(t *testing.T) {
	calls := planted(300)
	o := TrainOptions{Seed: 5}.withDefaults()
	m := &Model{callers: topVocab(calls, func(f Features) string { return f.Caller }, maxCallers),
		tools: topVocab(calls, func(f Features) string { return f.Tool }, maxTools)}
	var pts []point
	for _, c := range calls {
		pts = append(pts, point{b: m.bin(c)})
	}
	pts = append(pts, reference(len(calls)*o.RefPerCall, o.Seed)...)
	root := grow(pts, 0, 1/float64(o.RefPerCall), o)
	m.nodes = compile(root)
	if len(m.nodes) < 5 {
		t.Fatalf("tree has %d nodes; the test needs a real tree", len(m.nodes))
	}
	rng := rand.New(rand.NewPCG(3, 4))
	check := func(b bins) {
		if got, want := m.scoreBins(b), fixed(root.walk(b)); got != want {
			t.Fatalf("bins %v: frozen %d, tree %d", b, got, want)
		}
	}
	for i := 0; i < 200000; i++ {
		var b bins
		for f := range b {
			b[f] = uint8(rng.IntN(binCount[f]))
		}
		check(b)
	}
	for _, c := range calls[:50] {
		b := m.bin(c)
		for f := 0; f < numFeatures; f++ {
			for v := 0; v < binCount[f]; v++ {
				bb := b
				bb[f] = uint8(v)
				check(bb)
			}
		}
	}
}

func TestSaveLoadKeepsScoresAndVersion(t *testing.T) {
	m, err := Train(planted(200), TrainOptions{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
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
	for _, f := range planted(50) {
		f.Hour = (f.Hour + 7) % 24
		if l.Score(f) != m.Score(f) {
			t.Fatalf("%+v: loaded %d, trained %d", f, l.Score(f), m.Score(f))
		}
	}
	m2, _ := Train(planted(200), TrainOptions{Seed: 2})
	if m2.Version() == m.Version() {
		t.Fatal("two different models share a version")
	}
}

func TestParseRefusesMalformed(t *testing.T) {
	for name, s := range map[string]string{
		"not json":    "{",
		"format":      `{"format":2,"nodes":[{"f":255}]}`,
		"no nodes":    `{"format":1,"nodes":[]}`,
		"cycle":       `{"format":1,"nodes":[{"f":2,"v":3,"l":0,"r":1},{"f":255}]}`,
		"out range":   `{"format":1,"nodes":[{"f":2,"v":3,"l":1,"r":9},{"f":255}]}`,
		"bad bin":     `{"format":1,"nodes":[{"f":2,"v":30,"l":1,"r":2},{"f":255},{"f":255}]}`,
		"bad feature": `{"format":1,"nodes":[{"f":9,"v":0,"l":1,"r":2},{"f":255},{"f":255}]}`,
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
	a, _ := Train(planted(200), TrainOptions{Seed: 1})
	b, _ := Train(planted(200), TrainOptions{Seed: 2})
	byVersion := map[string]*Model{a.Version(): a, b.Version(): b}
	var h Holder
	if s, v := h.Score(Features{}); s != 0 || v != "" {
		t.Fatalf("no model: %d %q", s, v)
	}
	h.Set(a)
	f := Features{Caller: "bot", Tool: "backup", Hour: 14, CallsLastMinute: 3, ParamSizeBytes: 60, TrustLevel: 1}
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
	a, _ := Train(planted(200), TrainOptions{Seed: 1})
	b, _ := Train(planted(200), TrainOptions{Seed: 2})
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

func BenchmarkAnomalyScore(b *testing.B) {
	m, _ := Train(planted(2000), TrainOptions{Seed: 1})
	var h Holder
	h.Set(m)
	f := Features{Caller: "alice", Tool: "read", Hour: 10, CallsLastMinute: 2, ParamSizeBytes: 90, TrustLevel: 2}
	b.ReportAllocs()
	for b.Loop() {
		h.Score(f)
	}
}

// Each conditional reference point is a logged call with at most one
// feature changed, and over many points every feature is varied.
func TestConditionalReferenceVariesOneFeature(t *testing.T) {
	m := &Model{callers: vocab{"bot": 1, "alice": 2}, tools: vocab{"backup": 1, "read": 2, "write": 3}}
	var real []point
	for _, c := range planted(50) {
		real = append(real, point{b: m.bin(c)})
	}
	varied := [numFeatures]int{}
	for _, p := range conditionalReference(real, 5000, 1) {
		if !p.ref {
			t.Fatal("a reference point is not marked as one")
		}
		best := numFeatures + 1
		which := -1
		for _, r := range real {
			d, f := 0, -1
			for i := range r.b {
				if r.b[i] != p.b[i] {
					d, f = d+1, i
				}
			}
			if d < best {
				best, which = d, f
			}
		}
		if best > 1 {
			t.Fatalf("reference point %v is %d features away from every logged call", p.b, best)
		}
		if which >= 0 {
			varied[which]++
		}
	}
	for f, n := range varied {
		if n == 0 {
			t.Errorf("feature %d never varied", f)
		}
	}
}

// A logged first call of a tool does not teach the model that first calls
// are usual: the bot's own first calls are in the log, at its hour, and a
// new tool at that hour still scores ≥ 0.95 — unless they are kept.
func TestFirstCallsNotLearned(t *testing.T) {
	calls := planted(300)
	seen := map[[2]string]bool{}
	for i, c := range calls {
		k := [2]string{c.Caller, c.Tool}
		calls[i].NovelTool = !seen[k]
		seen[k] = true
	}
	for i := 0; i < 40; i++ { // the bot's first calls of 40 tools, at its hour
		calls = append(calls, Features{Caller: "bot", Tool: "t" + string(rune('a'+i%26)) + string(rune('a'+i/26)), Hour: 3, CallsLastMinute: 2, NovelTool: true, ParamSizeBytes: 70, TrustLevel: 1})
	}
	f := Features{Caller: "bot", Tool: "send-email", Hour: 3, CallsLastMinute: 2, NovelTool: true, ParamSizeBytes: 70, TrustLevel: 1}
	m, err := Train(calls, TrainOptions{Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	if s := m.Score(f); s < 243 {
		t.Fatalf("a new tool at the bot's hour: %d/255, want ≥ 0.95", s)
	}
	k, _ := Train(calls, TrainOptions{Seed: 4, KeepFirstCalls: true})
	if s := k.Score(f); s >= 243 {
		t.Fatalf("with first calls learned the new tool scores %d/255 anyway; the test shows nothing", s)
	}
}
