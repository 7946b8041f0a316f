package grammar

import (
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
)

// The ASCII path of strRunes (asciiRaw) gives what the general UTF-8
// encoding gives.
func TestASCIIRaw(t *testing.T) {
	for lo := rune(0); lo < 0x80; lo++ {
		for hi := lo; hi < 0x80; hi++ {
			var want [][][2]byte
			for _, rr := range (rset{{max(lo, 0x20), hi}}).minus(rset{{'"', '"'}, {'\\', '\\'}}) {
				if rr.lo <= rr.hi {
					want = utf8Seqs(rr.lo, rr.hi, want)
				}
			}
			n := &bnfa{}
			n.add()
			n.asciiRaw(0, lo, hi, 7)
			var got [][][2]byte
			for _, e := range n.st[0].edges {
				if e.to != 7 || e.op != 0 {
					t.Fatalf("%#x..%#x: edge %+v", lo, hi, e)
				}
				got = append(got, [][2]byte{{e.lo, e.hi}})
			}
			if !reflect.DeepEqual(got, want) && !(len(got) == 0 && len(want) == 0) {
				t.Fatalf("%#x..%#x: %v, want %v", lo, hi, got, want)
			}
		}
	}
}

// literalsDFA accepts exactly its strings, shares prefixes, and is minimal.
func TestLiteralsDFA(t *testing.T) {
	ss := []string{"city", "cities", "days", "", "ünï", "c"}
	d := literalsDFA(ss)
	accepts := func(s string) bool {
		st := int32(0)
		for _, r := range s {
			if st = d.step(st, r); st < 0 {
				return false
			}
		}
		return d.st[st].final
	}
	for _, s := range ss {
		if !accepts(s) {
			t.Errorf("%q rejected", s)
		}
	}
	for _, s := range []string{"cit", "citys", "day", "ün", "cc", "x"} {
		if accepts(s) {
			t.Errorf("%q accepted", s)
		}
	}
	if m := d.minimize(); len(m.st) != len(d.st) {
		t.Errorf("not minimal: %d states, minimal %d", len(d.st), len(m.st))
	}
	if one := literalsDFA([]string{"abc"}); len(one.st) != 4 || !one.st[3].final {
		t.Errorf("a single literal is not a 4-state chain: %d states", len(one.st))
	}
}

// keyTrie gives the tagged language taggedUnion gives over the literal
// names and the complement of all names (the general construction it
// replaces for plain objects): same tag for every string.
func TestKeyTrieMatchesTaggedUnion(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	alpha := []rune("ab_é\"\x01日")
	for iter := 0; iter < 400; iter++ {
		seen := map[string]bool{}
		var names []string
		for range rng.IntN(8) {
			var b []rune
			for range rng.IntN(5) {
				b = append(b, alpha[rng.IntN(len(alpha))])
			}
			if !seen[string(b)] {
				seen[string(b)] = true
				names = append(names, string(b))
			}
		}
		withOther := rng.IntN(3) > 0
		// a random part of the names are keys (tags 0..), the rest excluded
		var langs []*rdfa
		tags := make([]int32, len(names))
		for i, n := range names {
			tags[i] = -1
			if rng.IntN(4) > 0 {
				tags[i] = int32(len(langs))
				langs = append(langs, literalsDFA([]string{n}))
			}
		}
		other := int32(-1)
		if withOther {
			other = int32(len(langs))
			if len(names) > 0 {
				langs = append(langs, complementDFA(literalsDFA(names), anyRune))
			} else {
				langs = append(langs, starDFA(anyRune))
			}
		}
		if len(langs) == 0 {
			continue
		}
		a, at := keyTrie(names, tags, other)
		b, bt := taggedUnion(langs)
		// walk both in step over the elementary intervals of their edges
		type pair struct{ x, y int32 }
		seenP := map[pair]bool{{0, 0}: true}
		work := []pair{{0, 0}}
		for len(work) > 0 {
			p := work[len(work)-1]
			work = work[:len(work)-1]
			tx, ty := int32(-1), int32(-1)
			if a.st[p.x].final {
				tx = at[p.x]
			}
			if b.st[p.y].final {
				ty = bt[p.y]
			}
			if tx != ty {
				t.Fatalf("names %q tags %v other %d: tag %d vs %d", names, tags, other, tx, ty)
			}
			var rs []rrange
			for _, e := range a.st[p.x].edges {
				rs = append(rs, rrange{e.lo, e.hi})
			}
			for _, e := range b.st[p.y].edges {
				rs = append(rs, rrange{e.lo, e.hi})
			}
			for _, iv := range elementary(rs) {
				nx, ny := a.step(p.x, iv.lo), b.step(p.y, iv.lo)
				if (nx < 0) != (ny < 0) {
					// one side has no way on: the other must lead to no key
					if nx >= 0 && a.canAccept(nx) || ny >= 0 && b.canAccept(ny) {
						t.Fatalf("names %q tags %v other %d: %U leads on in one only", names, tags, other, iv.lo)
					}
					continue
				}
				if nx >= 0 && !seenP[pair{nx, ny}] {
					seenP[pair{nx, ny}] = true
					work = append(work, pair{nx, ny})
				}
			}
		}
	}
}

// canAccept reports whether some string leads from s to a final state.
func (d *rdfa) canAccept(s int32) bool {
	seen := map[int32]bool{s: true}
	work := []int32{s}
	for len(work) > 0 {
		x := work[len(work)-1]
		work = work[:len(work)-1]
		if d.st[x].final {
			return true
		}
		for _, e := range d.st[x].edges {
			if !seen[e.to] {
				seen[e.to] = true
				work = append(work, e.to)
			}
		}
	}
	return false
}

// minimizeAcyclic gives what Moore's refinement gives on acyclic DFAs
// (raw literal tries — what literalsDFA minimizes — and products of
// literal sets, whose ranges merge): the same states,
// numbering and edges; minimize takes it exactly when there is no cycle.
func TestMinimizeAcyclicMatchesMoore(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	alpha := []rune("abcdé")
	set := func() []string {
		var ss []string
		for range 1 + rng.IntN(10) {
			var b []rune
			for range rng.IntN(6) {
				b = append(b, alpha[rng.IntN(len(alpha))])
			}
			ss = append(ss, string(b))
		}
		return ss
	}
	for iter := 0; iter < 300; iter++ {
		a, b := literalsDFA(set()), literalsDFA(set())
		raw := &rdfa{st: make([]rdstate, 1)} // a trie, not minimized: ranges merge
		for _, s := range set() {
			raw.st[raw.trieInsert(s)].final = true
		}
		for _, d := range []*rdfa{raw, product(a, b, false), product(a, b, true), lengthDFA(1, 4)} {
			if _, ok := d.postOrder(); !ok {
				t.Fatal("an acyclic DFA reported cyclic")
			}
			want, got := d.minimizeMoore(), d.minimize()
			if len(got.st) != len(want.st) {
				t.Fatalf("%d states, Moore %d", len(got.st), len(want.st))
			}
			for i := range got.st {
				if got.st[i].final != want.st[i].final || !slices.Equal(got.st[i].edges, want.st[i].edges) {
					t.Fatalf("state %d differs: %+v vs %+v", i, got.st[i], want.st[i])
				}
			}
		}
	}
	if _, ok := starDFA(anyRune).postOrder(); ok {
		t.Error("a cycle not found")
	}
}

// determinizeBytes's path for one NFA state with disjoint edges builds the
// same rule automata as the general subset construction.
func TestDeterminizeOneStatePath(t *testing.T) {
	schemas := []string{
		`{"type":"object","properties":{"name":{"type":"string","maxLength":20},"age":{"type":"integer","minimum":0},"tags":{"type":"array","items":{"enum":["a","bé","c"]}}},"required":["name"]}`,
		`{"type":"object","properties":{"x":{"anyOf":[{"type":"string","pattern":"^[a-z]+$"},{"type":"null"},{"type":"number"}]}},"patternProperties":{"^p_":{"type":"boolean"}},"additionalProperties":{"type":"string","format":"date"}}`,
		`{"type":"object","propertyNames":{"pattern":"^[a-zé]{1,8}$"},"maxProperties":3,"additionalProperties":{"oneOf":[{"const":"ü"},{"type":"integer"}]}}`,
		`{"$defs":{"n":{"type":"object","properties":{"v":{"type":"string"},"next":{"$ref":"#/$defs/n"}}}},"$ref":"#/$defs/n"}`,
	}
	for _, s := range schemas {
		for _, opts := range []Options{{}, {Strict: true}, {Whitespace: WhitespaceFlexible}} {
			build := func(general bool) *Automaton {
				ruleCacheMu.Lock()
				clear(ruleCache)
				ruleCacheMu.Unlock()
				determinizeGeneral = general
				defer func() { determinizeGeneral = false }()
				g, err := Compile([]byte(s), opts)
				if err != nil {
					t.Fatal(err)
				}
				return g.Automaton()
			}
			if a, b := build(true), build(false); !reflect.DeepEqual(a, b) {
				t.Errorf("%s %+v: the one-state path builds another automaton", s, opts)
			}
		}
	}
}

// The pattern caches give the automaton compiled afresh, once per pattern,
// and keep the error of a pattern that cannot compile.
func TestRegexCaches(t *testing.T) {
	d1, err := cachedRegexDFA(`^[a-z]{2,4}-\d+$`)
	if err != nil {
		t.Fatal(err)
	}
	d2, _ := cachedRegexDFA(`^[a-z]{2,4}-\d+$`)
	if d1 != d2 {
		t.Error("a cached pattern compiled twice")
	}
	if _, err := cachedRegexDFA(`((?!a).)*`); err == nil {
		t.Error("lookahead in a repetition compiled")
	} else if _, err2 := cachedRegexDFA(`((?!a).)*`); err2 == nil || err2.Error() != err.Error() {
		t.Errorf("cached error %v, first %v", err2, err)
	}
	k := strDFAKey{pattern: `^2\d{3}-`, hasPattern: true, format: "date", hasFormat: true}
	e := stringDFA(k)
	fresh := intersectDFA(intersectDFA(anyStrDFA, mustRegex(t, `^2\d{3}-`)), mustFormat(t, "date"))
	if !fresh.accepts("2024-02-29") || fresh.accepts("1999-01-01") || fresh.accepts("2024-13-01") {
		t.Fatal("the reference automaton is not pattern ∩ date")
	}
	for _, s := range []string{"2024-02-29", "1999-01-01", "2024-13-01", "2024-", ""} {
		if got, want := e.d.accepts(s), fresh.accepts(s); got != want {
			t.Errorf("%q: cached %v, fresh %v", s, got, want)
		}
	}
	if stringDFA(k).d != e.d {
		t.Error("a cached string constraint built twice")
	}
}

func mustRegex(t *testing.T, p string) *rdfa {
	d, err := regexDFA(p)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func mustFormat(t *testing.T, f string) *rdfa {
	d, ok, err := formatDFA(f)
	if err != nil || !ok {
		t.Fatal(f, err)
	}
	return d
}
