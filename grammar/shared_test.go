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

// o39217Schema is Github_medium o39217 of JSONSchemaBench (a meta-schema
// whose dependencies make its root 34 object rules at once).
const o39217Schema = `{"$schema":"http://json-schema.org/draft-07/schema#","definitions":{"schemaArray":{"type":"array","minItems":1,"items":{"$ref":"#"}}},"dependencies":{"patternProperties":{"required":["propertyNames"],"properties":{"propertyNames":{"required":["maxLength"]}}},"_uniqueItems":{"if":{"properties":{"_uniqueItems":{"const":true},"items":{"properties":{"type":{"anyOf":[{"enum":["object","array"]},{"type":"array","contains":{"enum":["object","array"]}}]}}}}},"then":{"required":["maxItems"]}},"pattern":{"required":["maxLength"]},"format":{"required":["maxLength"]}},"properties":{"additionalItems":{"$ref":"#"},"additionalProperties":{"$ref":"#"},"dependencies":{"additionalProperties":{"anyOf":[{"type":"array"},{"$ref":"#"}]}},"items":{"anyOf":[{"$ref":"#"},{"$ref":"#/definitions/schemaArray"}]},"definitions":{"additionalProperties":{"$ref":"#"}},"patternProperties":{"additionalProperties":{"$ref":"#"}},"properties":{"additionalProperties":{"$ref":"#"}},"if":{"$ref":"#"},"then":{"$ref":"#"},"else":{"$ref":"#"},"allOf":{"$ref":"#/definitions/schemaArray"},"anyOf":{"$ref":"#/definitions/schemaArray"},"oneOf":{"$ref":"#/definitions/schemaArray"},"not":{"$ref":"#"},"contains":{"$ref":"#"},"propertyNames":{"$ref":"#"}}}`

// TestRetMemoMatches: the masks that skip the returns no class can
// continue (retMemo) are the masks without it, and, where there are few
// enough configurations to compute it, the union of per-configuration
// masks; on o39217 (32 object rules under one free string, the memo's
// case), on o78062, and where the return reads the output (object items
// of three unique arrays, returned into below a shared object: the memo
// must stand aside).
func TestRetMemoMatches(t *testing.T) {
	qwen := testVocab(t)
	// tokens that end items of a unique array, one a duplicate (x"}}
	// after {"a":{"b":"x"}}): a memo that ignored the read would take the
	// first one's answer for all
	var small [][]byte
	for c := 0; c < 256; c++ {
		small = append(small, []byte{byte(c)})
	}
	for _, s := range []string{`{"a":{"b":"`, `"}}`, `x"}}`, `y"}}`, `"}},`, `x"}},`, `"}}]`} {
		small = append(small, []byte(s))
	}
	smallV := &Vocab{Name: "small", Tokens: small, Special: make([]bool, len(small)), Size: len(small)}
	uniq := `{"definitions":{"o":{"type":"object","properties":{"a":{"type":"object","properties":{"b":{"type":"string"}}}}}},"anyOf":[{"type":"array","uniqueItems":true,"items":{"$ref":"#/definitions/o"}},{"type":"array","uniqueItems":true,"maxItems":4,"items":{"$ref":"#/definitions/o"}},{"type":"array","uniqueItems":true,"minItems":2,"items":{"$ref":"#/definitions/o"}}]}`
	cases := []struct {
		v            *Vocab
		schema, text string
		memo         bool // some retMemo must be used
		unread       bool // some retMemo must be refused for reading the output
	}{
		{qwen, o39217Schema, `{"$schema":"http://x#","title":"T","type":"object","properties":{"name":{"type":"string","pattern":"a","maxLength":5},"n":{"items":[{"format":"x","maxLength":2}]}},"required":["name"]}`, true, false},
		{qwen, `{"definitions":{"namedObject":{"type":"object","properties":{"name":{"type":"string","minLength":1,"maxLength":500}},"required":["name"]},
	  "competency":{"allOf":[{"$ref":"#/definitions/namedObject"},{"oneOf":[{"properties":{"competencies":{"type":"array","items":{"$ref":"#/definitions/competency"}}},"required":["competencies"]},
	    {"properties":{"abilities":{"type":"array","items":{"$ref":"#/definitions/ability"}}},"required":["abilities"]}]}]},
	  "ability":{"allOf":[{"$ref":"#/definitions/namedObject"},{"properties":{"level":{"type":"string","minLength":1,"maxLength":255}},"required":["level"]}]}},
	  "allOf":[{"$ref":"#/definitions/competency"}]}`, `{"name":"F","competencies":[{"name":"C 1","abilities":[{"name":"A 1","level":"L 1"}]}]}`, true, false},
		{qwen, uniq, `[{"a":{"b":"x"}},{"a":{"b":"y"}},{"a":{}},{"a":{"b":"xy"}}]`, false, true},
		{smallV, uniq, `[{"a":{"b":"x"}},{"a":{"b":"y"}}]`, false, true},
	}
	for ci, c := range cases {
		v := c.v
		ti := NewTokenizerInfo(v)
		tok := newGreedyTokenizer(v)
		bits := make([]uint64, ti.MaskWords())
		off := make([]uint64, ti.MaskWords())
		g, err := Compile([]byte(c.schema), Options{})
		if err != nil {
			t.Fatal(err)
		}
		tm := g.NewTokenMatcher(ti)
		used, refused, perCfg := 0, 0, 0
		for _, id := range tok.tokenize([]byte(c.text)) {
			tm.FillMask(bits)
			var count func(n *stackNode)
			count = func(n *stackNode) {
				for _, m := range n.rets {
					if m.ok {
						used++
					} else if m.read {
						refused++
					}
				}
				for _, k := range n.classes {
					if k.below != nil {
						count(k.below)
					}
				}
			}
			for _, gr := range tm.groups {
				if gr.node != nil {
					count(gr.node)
				}
			}
			retMemoOff = true
			tm.FillMask(off)
			retMemoOff = false
			if !slices.Equal(bits, off) {
				t.Fatalf("case %d after %q: the mask with retMemo differs from the one without", ci, tm.out)
			}
			if len(tm.cur) <= 40 {
				perCfg++
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
					t.Fatalf("case %d after %q: the mask differs from the per-configuration one", ci, tm.out)
				}
			}
			if !tm.Accept(id) {
				t.Fatalf("case %d: token %q refused after %q", ci, v.Tokens[id], tm.out)
			}
		}
		t.Logf("case %d: %d memos used, %d refused for reading the output, %d masks compared per configuration", ci, used, refused, perCfg)
		if c.memo && used == 0 {
			t.Errorf("case %d: no retMemo used: the test does not exercise it", ci)
		}
		if c.unread && refused == 0 {
			t.Errorf("case %d: no retMemo refused: the output-reading return is not exercised", ci)
		}
	}
}

// TestInteriorRawCut: a state of an automaton whose quotient is not built
// yet takes the interior of a state walked before that agrees with it to
// the longest token, compared on the automaton itself (sameCutRaw); the
// interiors are the walk's, and the key automaton of an object that
// allows any key (every state agrees with the free string) never builds
// its quotient.
func TestInteriorRawCut(t *testing.T) {
	vs := []*Vocab{trickyVocab()}
	if !testing.Short() {
		vs = append(vs, testVocab(t))
	}
	for _, v := range vs {
		ti := buildTokenizerInfo(v)
		ti.interior(anyStrDFA, 0)
		anyKey, _ := keyTrie([]string{"name", "nav", "age", "é中"}, []int32{0, 1, 2, 3}, 4)
		declared, _ := keyTrie([]string{"name", "nav", "age", "é中"}, []int32{0, 1, 2, 3}, -1)
		w := stringDFA(strDFAKey{pattern: `^(?:(?:\S+\s+){0,30}\S+)$`, hasPattern: true}).d
		ds := []*rdfa{anyKey, declared, w}
		// a length bound about the longest token: agreeing with the free
		// string to maxLen code points exactly (its start, the state
		// compared without the quotient) decides
		for n := max(ti.maxLen-3, 1); n <= ti.maxLen+1; n++ {
			d, err := regexDFA(fmt.Sprintf(`^[\s\S]{0,%d}$`, n))
			if err != nil {
				t.Fatal(err)
			}
			ds = append(ds, d.trim())
		}
		for di, d := range ds {
			cls, q := d.prefixClasses() // for the walk (prefixCheap not run)
			for si := int32(0); si < int32(len(d.st)); si++ {
				got := ti.interior(d, si)
				if si > 0 && (di >= 3 && si > 3 || v.Name != "tricky" && si%7 != 0) {
					continue // the first states; on the real vocabulary a sample
				}
				want := make([]uint64, ti.words)
				ti.interiorWalk(q, cls[si], want)
				if !slices.Equal(got, want) {
					t.Fatalf("%s, %d states, state %d: interior differs from the walk", v.Name, len(d.st), si)
				}
			}
		}
		if anyKey.cheapDone.Load() {
			t.Errorf("%s: the any-key automaton built its quotient", v.Name)
		}
		if !declared.cheapDone.Load() {
			t.Errorf("%s: the declared-names automaton did not build its quotient (the raw comparison matched a different language?)", v.Name)
		}
	}
}

// TestKeyProvenance: in objects without undeclared keys, the key states
// past the last check (plainProv) take the shared interiors; every mask
// along instances equals the mask without that provenance (a walk of the
// whole trie per key state), a sample of tokens agrees with Accept, and
// some key state does have the provenance.
func TestKeyProvenance(t *testing.T) {
	v := testVocab(t)
	ti := NewTokenizerInfo(v)
	tok := newGreedyTokenizer(v)
	cases := []struct{ schema, text string }{
		{`{"type":"object","properties":{"app_id":{"type":"string"},"contexts_x":{"type":"object","maxProperties":1}},"patternProperties":{"^contexts_.*":{"type":"object"},"^unstruct_event_.*":{"type":"string"}},"required":["app_id"],"additionalProperties":false}`,
			`{"app_id":"a","contexts_abc":{"x":1},"unstruct_event_q":"z","contexts_x":{}}`},
		{`{"type":"object","properties":{"foo":{"type":"string"},"S_x":{"type":"string","maxLength":3}},"patternProperties":{"^S_":{"type":"string"},"^I_[0-9]+$":{"type":"integer"}},"additionalProperties":false,"maxProperties":4}`,
			`{"foo":"bar","S_foo":"x","I_12":3,"S_x":"abc"}`},
		{`{"type":"object","properties":{"swap":{"type":"object"}},"patternProperties":{"^/([^/]+(/[^/]+)*)?$":{"type":"object"}},"required":["/","swap"],"additionalProperties":false}`,
			`{"swap":{},"/":{"a":1},"/boot/efi":{}}`},
	}
	ruleCacheOff = true
	defer func() { ruleCacheOff = false }()
	bits := make([]uint64, ti.MaskWords())
	off := make([]uint64, ti.MaskWords())
	for ci, c := range cases {
		g, err := Compile([]byte(c.schema), Options{})
		if err != nil {
			t.Fatal(err)
		}
		plainProvOff = true
		g0, err := Compile([]byte(c.schema), Options{})
		plainProvOff = false
		if err != nil {
			t.Fatal(err)
		}
		tm, tm0 := g.NewTokenMatcher(ti), g0.NewTokenMatcher(ti)
		provKeys := 0
		for _, id := range tok.tokenize([]byte(c.text)) {
			tm.FillMask(bits)
			tm0.FillMask(off)
			if !slices.Equal(bits, off) {
				t.Fatalf("case %d after %q: the mask with key provenance differs from the one without", ci, tm.out)
			}
			for _, cf := range tm.cur {
				// the same automata, numbered alike: only provenance differs
				if g.rules[cf.rule].prov[cf.state].sd != nil && g0.rules[cf.rule].prov[cf.state].sd == nil {
					provKeys++
				}
			}
			for probe := ci; probe < len(v.Tokens); probe += 211 {
				allowed := bits[probe/64]&(1<<(probe%64)) != 0
				ok := tm.Accept(probe)
				if ok {
					tm.Rollback(1)
				}
				if allowed != ok {
					t.Fatalf("case %d after %q: token %q mask %v accept %v", ci, tm.out, v.Tokens[probe], allowed, ok)
				}
			}
			if !tm.Accept(id) || !tm0.Accept(id) {
				t.Fatalf("case %d: token %q refused after %q", ci, v.Tokens[id], tm.out)
			}
		}
		t.Logf("case %d: %d masks at a key state given provenance", ci, provKeys)
		if provKeys == 0 {
			t.Errorf("case %d: no key state given provenance: the test does not exercise plainProv", ci)
		}
	}
}
