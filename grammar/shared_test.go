package grammar

import (
	"fmt"
	"slices"
	"sync"
	"testing"
)

// TestInteriorCutSharing: an interior taken from another state that agrees
// to the cut (sameCut) is the interior the walk gives, on every state of
// word counters (where the sharing happens) and of automata where nearby
// states differ within a token's reach; and the sharing does happen.
func TestInteriorCutSharing(t *testing.T) {
	vs := []*Vocab{trickyVocab()}
	if !testing.Short() {
		vs = append(vs, testVocab(t))
	}
	for _, v := range vs {
		for _, p := range []string{`(?:\S+\s+){0,99}\S+`, `(?:\S+\s+){0,9}\S+`, `[a-z]{0,300}`, `(ab|cd){3,90}x*`, `[a-z]+-[0-9]{30}`, `x{200}[a-c]*y{10}`} {
			ti := buildTokenizerInfo(v) // fresh caches per pattern
			d, err := regexDFA("^(?:" + p + ")$")
			if err != nil {
				t.Fatal(err)
			}
			d = d.trim()
			if p == `(?:\S+\s+){0,99}\S+` && d.prefixCheap() {
				t.Errorf("%s: prefixCheap, so the walk on the automaton itself is not tested", p)
			}
			cls, q := d.prefixClasses()
			for si := int32(0); si < int32(len(d.st)); si++ {
				if v.Name != "tricky" && si%9 != 0 && int(si) < len(d.st)-12 {
					// the real vocabulary: every 9th state and the last
					// ones (where cuts start to differ); the others still
					// go through interior so the candidates are as in use
					ti.interior(d, si)
					continue
				}
				want := make([]uint64, ti.words)
				ti.interiorWalk(q, cls[si], want)
				got := ti.interior(d, si)
				if !slices.Equal(got, want) {
					t.Fatalf("%s (%s), state %d: shared interior differs from the walk", p, v.Name, si)
				}
			}
			t.Logf("%s (%s): %d states, %d walks", p, v.Name, len(d.st), ti.interiorWalks.Load())
			if p == `(?:\S+\s+){0,99}\S+` && ti.interiorWalks.Load() >= int64(len(d.st)) {
				t.Errorf("%s: %d walks for %d states: the cut did not share", p, ti.interiorWalks.Load(), len(d.st))
			}
		}
	}
	// sameCut itself: a counter's states agree to n exactly when both are
	// at least n from the bound
	d, _ := regexDFA("^(?:[a-z]{0,20})$")
	d = d.trim()
	st := []int32{0}
	for s := int32(0); ; {
		var nx int32 = -1
		for _, e := range d.st[s].edges {
			nx = e.to
		}
		if nx < 0 {
			break
		}
		st = append(st, nx)
		s = nx
	}
	if len(st) != 21 {
		t.Fatalf("[a-z]{0,20}: %d states on the path, want 21", len(st))
	}
	for n := 1; n <= 22; n++ {
		for i := 0; i+1 < len(st); i++ {
			// state i has 20-i letters left, i+1 has 19-i: equal cut to n
			// iff 19-i ≥ n
			want := 19-i >= n
			if got := d.sameCut(st[i], st[i+1], n, 4096); got != want {
				t.Errorf("sameCut(%d, %d, %d) = %v, want %v", i, i+1, n, got, want)
			}
		}
	}
}

// TestSharedSimulationMatchesPerConfig: on an ambiguous recursive schema
// (many configurations that differ only in their stacks), every mask equals
// the union of per-configuration simulations, the old way.
func TestSharedSimulationMatchesPerConfig(t *testing.T) {
	// Github_easy o78062 of JSONSchemaBench (a oneOf of two object shapes
	// that both allow any key, recursive): 117 configurations, 3 tops
	schema := `{"definitions":{"namedObject":{"type":"object","properties":{"name":{"type":"string","minLength":1,"maxLength":500}},"required":["name"]},
	  "competency":{"allOf":[{"$ref":"#/definitions/namedObject"},{"oneOf":[{"properties":{"competencies":{"type":"array","items":{"$ref":"#/definitions/competency"}}},"required":["competencies"]},
	    {"properties":{"abilities":{"type":"array","items":{"$ref":"#/definitions/ability"}}},"required":["abilities"]}]}]},
	  "ability":{"allOf":[{"$ref":"#/definitions/namedObject"},{"properties":{"level":{"type":"string","minLength":1,"maxLength":255}},"required":["level"]}]}},
	  "allOf":[{"$ref":"#/definitions/competency"}]}`
	g, err := Compile([]byte(schema), Options{})
	if err != nil {
		t.Fatal(err)
	}
	v := testVocab(t)
	ti := NewTokenizerInfo(v)
	tok := newGreedyTokenizer(v)
	text := `{"name":"F","competencies":[{"name":"C 1","competencies":[{"name":"S 1.1","abilities":[{"name":"A 1","level":"L 1"}]}]},{"name":"C 2","abilities":[{"name":"A 2","level":"L 2"}]}]}`
	tm := g.NewTokenMatcher(ti)
	bits := make([]uint64, ti.MaskWords())
	maxGroup := 0
	for _, id := range tok.tokenize([]byte(text)) {
		tm.FillMask(bits)
		for _, gr := range groupCfgs(tm.cur, nil) {
			if gr.node != nil {
				maxGroup = max(maxGroup, len(gr.node.stacks))
			}
		}
		// the old mask: each configuration on its own
		want := make([]uint64, ti.words)
		for i := range tm.cur {
			one := &TokenMatcher{g: g, ti: ti, cur: tm.cur[i : i+1], out: tm.out}
			m := make([]uint64, ti.words)
			one.FillMask(m)
			for k := range m {
				want[k] |= m[k]
			}
		}
		if !slices.Equal(bits[:ti.words], want) {
			t.Fatalf("after %q: shared mask differs from the per-configuration one", tm.out)
		}
		if !tm.Accept(id) {
			t.Fatalf("token %q refused after %q", v.Tokens[id], tm.out)
		}
	}
	if maxGroup < 2 {
		t.Errorf("no configurations shared a top (largest group %d): the test does not exercise sharing", maxGroup)
	}
	t.Logf("largest group %d", maxGroup)
}

// TestInteriorCutConcurrent: goroutines asking for interiors of one
// automaton at once (the candidates and the per-automaton map are shared)
// get the walk's answer; run with -race.
func TestInteriorCutConcurrent(t *testing.T) {
	v := trickyVocab()
	for _, p := range []string{`(?:\S+\s+){0,99}\S+`, `[a-z]{0,60}`} {
		ti := buildTokenizerInfo(v)
		d, err := regexDFA("^(?:" + p + ")$")
		if err != nil {
			t.Fatal(err)
		}
		d = d.trim()
		cls, q := d.prefixClasses()
		want := make([][]uint64, len(d.st))
		for si := range d.st {
			want[si] = make([]uint64, ti.words)
			ti.interiorWalk(q, cls[si], want[si])
		}
		var wg sync.WaitGroup
		errs := make(chan string, 8)
		for w := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for k := range d.st {
					si := (k*(w+1) + w) % len(d.st) // each goroutine its own order
					if !slices.Equal(ti.interior(d, int32(si)), want[si]) {
						errs <- fmt.Sprintf("%s: state %d differs from the walk", p, si)
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for e := range errs {
			t.Error(e)
		}
	}
}

// TestInteriorCutSharingAcross: interiors taken from another automaton's
// state that agrees to the cut (sameCutX, the free string first), with the
// tokens longer than the cut decided one by one (fixLong), are the walk's,
// on every state of automata asked one after the other with one
// TokenizerInfo; and states of a word counter far from its bound take the
// free string's.
func TestInteriorCutSharingAcross(t *testing.T) {
	vs := []*Vocab{trickyVocab()}
	if !testing.Short() {
		vs = append(vs, testVocab(t))
	}
	pats := []string{`[\s\S]{0,300}`, `(?:\S+\s+){0,99}\S+`, `[a-z]{0,300}`, `[a-z]*`, `.{0,40}x`, `[^a]*a{3}`, `(?:\S+\s+){0,9}\S+`,
		`[a-z]{0,300}`, `[a-zé中]+`, `[é中]{0,100}`, `x{200}[a-c]*y{10}`, `.*`}
	for _, v := range vs {
		ti := buildTokenizerInfo(v)
		ti.interior(anyStrDFA, 0)
		walks0 := ti.interiorWalks.Load()
		for pi, p := range pats {
			// as a schema's pattern: unanchored, over the string's code points
			e := stringDFA(strDFAKey{pattern: "^(?:" + p + ")$", hasPattern: true})
			if e.patErr != nil {
				t.Fatal(e.patErr)
			}
			d := e.d
			cls, q := d.prefixClasses()
			w0 := ti.interiorWalks.Load()
			for si := int32(0); si < int32(len(d.st)); si++ {
				got := ti.interior(d, si)
				if v.Name != "tricky" && si%7 != 0 && int(si) < len(d.st)-12 {
					continue // the real vocabulary: a sample of the states
				}
				want := make([]uint64, ti.words)
				ti.interiorWalk(q, cls[si], want)
				if !slices.Equal(got, want) {
					t.Fatalf("%s #%d (%s), state %d: shared interior differs from the walk", p, pi, v.Name, si)
				}
			}
			t.Logf("%s (%s): %d states, %d walks", p, v.Name, len(d.st), ti.interiorWalks.Load()-w0)
			if pi == 0 && ti.interiorWalks.Load()-w0 > int64(ti.cut)+1 {
				// only the states within the cut of the bound differ
				t.Errorf("%s: %d walks for %d states: the free string's interior was not shared", p, ti.interiorWalks.Load()-w0, len(d.st))
			}
		}
		if ti.interiorWalks.Load() == walks0 {
			t.Error("no walk at all: the test does not exercise the walk")
		}
	}
}
