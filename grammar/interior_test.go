package grammar

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// interiorEncoded is the interior as it was computed before the direct
// walk: the prefix-closed language encoded as a byte automaton
// (strTemplate), determinized and walked. The reference for
// TestInteriorDirectMatchesEncoded.
func interiorEncoded(tr *ttrie, words int, sd *rdfa, si int32) []uint64 {
	d := sd.prefixFromQ(si)
	t, tmp := strTemplate(d, 1<<30)
	ds, err := determinizeBytes(t, 0)
	if tmp {
		t.release()
	}
	m := make([]uint64, words)
	if err == nil {
		walk(tr, newRule(ds), 0, m, nil, new([]int32))
	}
	return m
}

// trickyVocab has the tokens where decoding can go wrong: every byte,
// every escape prefix (both hex cases, controls with and without a short
// escape, digits past \u001), UTF-8 sequences cut at every byte, overlong
// and surrogate encodings, and random short byte strings over a biased
// alphabet.
func trickyVocab() *Vocab {
	seen := map[string]bool{}
	var toks [][]byte
	add := func(b []byte) {
		if len(b) == 0 || seen[string(b)] {
			return
		}
		seen[string(b)] = true
		toks = append(toks, slices.Clone(b))
	}
	for c := 0; c < 256; c++ {
		add([]byte{byte(c)})
		add([]byte{'\\', byte(c)})
		add([]byte{'a', byte(c)})
	}
	for c := 0; c < 0x40; c++ {
		for _, f := range []string{`\u%04x`, `\u%04X`, `\u%03x`, `\u%02x`, `x\u%04x`, `\u%04xy`} {
			add(fmt.Appendf(nil, f, c))
		}
	}
	for _, s := range []string{`\u`, `\u0`, `\u00`, `\u1`, `\u01`, `\u002`, `\u0020`, `\\\\`, `\/\/`, `\"`, `\n\t`, `\u00g0`} {
		add([]byte(s))
	}
	for _, r := range []rune{0x7F, 0x80, 0xAA, 0xE9, 0x7FF, 0x800, 0xFFF, 0x1000, 0x4E2D, 0xD7FF, 0xE000, 0xFFFD, 0xFFFF, 0x10000, 0x1F600, 0x10FFFF} {
		b := utf8.AppendRune(nil, r)
		for i := 1; i <= len(b); i++ {
			add(b[:i])
			add(append([]byte("a"), b[:i]...))
			add(append(slices.Clone(b[:i]), 'z'))
		}
		add(append(slices.Clone(b), b...))
	}
	for _, b := range [][]byte{{0xC0, 0x80}, {0xC1, 0xBF}, {0xE0, 0x80}, {0xE0, 0x9F, 0xBF}, {0xED, 0xA0}, {0xED, 0xA0, 0x80}, {0xF0, 0x80}, {0xF0, 0x8F}, {0xF4, 0x90}, {0xF4, 0x8F, 0xBF, 0xBF}, {0xF5, 0x80}, {0xE4, 0xB8}, {0xE4, 0xB8, 0x41}} {
		add(b)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	alpha := []byte("az09_-/\\u\"\x01\x1f ")
	alpha = append(alpha, 0x80, 0xBF, 0xC3, 0xA9, 0xE4, 0xB8, 0xAD, 0xF0, 0x9F, 0x98)
	for range 20000 {
		b := make([]byte, 1+rng.IntN(7))
		for i := range b {
			b[i] = alpha[rng.IntN(len(alpha))]
		}
		add(b)
	}
	return &Vocab{Name: "tricky", Tokens: toks, Special: make([]bool, len(toks)), Size: len(toks)}
}

// bigClass is a class of n random ranges over the BMP and beyond, like the
// generated Unicode letter classes some schemas carry.
func bigClass(rng *rand.Rand, n int) string {
	var b strings.Builder
	b.WriteByte('[')
	lo := rune(0x80)
	for range n {
		lo += rune(1 + rng.IntN(0x200))
		hi := lo + rune(rng.IntN(40))
		if hi >= 0xD800 && lo < 0xE000 {
			lo, hi = 0xE000+lo%0x100, 0xE000+lo%0x100+3
		}
		fmt.Fprintf(&b, "\\u%04x-\\u%04x", lo, hi)
		lo = hi + 1
		if lo > 0xFF00 {
			break
		}
	}
	b.WriteString("a-z_.\\-]")
	return b.String()
}

// TestInteriorDirectMatchesEncoded: the direct walk over the code point
// DFA accepts exactly the tokens the encoded byte automaton accepted, from
// every state of a range of languages (escapes, controls, every UTF-8
// length, counters, big classes, formats), over the real qwen3 vocabulary
// and a vocabulary of edge cases.
func TestInteriorDirectMatchesEncoded(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	patterns := []string{
		`[a-z]{1,5}`, `\d+-[A-Fa-f0-9]*-[A-Fa-f0-9]{2}`, `[^"\\]*`, `[\u0000-\u001f]{0,3}`,
		`[\u0000-\u0007\u000b\u000e-\u001f]x`, `[\u0010-\u001f]`, `[\b\t\n\f\r]+`, `\u0001\u000a`,
		`["\\/]+`, `[\u0080-\u07ff]{2}`, `[\u0800-\uffff]x`, `[éè中]+`, `[\u0000-\u007f]`,
		`.*`, `.{0,4}`, `[\ud7ff\ue000]y`, `(ab|éè)*c`, `😀+ab`, `[😀-🙏]{1,3}`, `[^a-z]{2}`,
		`[\u00e0-\u00ef]`, `[\u0800-\u0fff]`, `[\u1000-\ud7ff]`, `[\u0100-\u01ff]a`,
		bigClass(rng, 60) + `{1,12}`, bigClass(rng, 300) + `+`,
	}
	var langs []*rdfa
	var names []string
	for _, p := range patterns {
		d, err := regexDFA("^(?:" + p + ")$")
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		langs, names = append(langs, d.trim()), append(names, p)
	}
	for _, f := range []string{"date-time", "email", "uri", "hostname", "ipv6"} {
		e := stringDFA(strDFAKey{format: f, hasFormat: true})
		if e.d == nil {
			t.Fatalf("format %s: no automaton", f)
		}
		langs, names = append(langs, e.d), append(names, "format "+f)
	}
	langs, names = append(langs, lengthDFA(0, 3), starDFA(anyRune)), append(names, "length ≤ 3", "any")

	for _, v := range []*Vocab{trickyVocab(), testVocab(t)} {
		ti := buildTokenizerInfo(v)
		for li, d := range langs {
			cls, q := d.prefixClasses()
			states := len(d.st)
			if v.Name != "tricky" && states > 40 {
				states = 40 // the real vocabulary: the first states suffice
			}
			for si := int32(0); si < int32(states); si++ {
				want := interiorEncoded(ti.noQuote, ti.words, d, si)
				got := make([]uint64, ti.words)
				ti.interiorWalk(q, cls[si], got)
				if !slices.Equal(got, want) {
					for id := range v.Tokens {
						g, w := got[id/64]>>(id%64)&1, want[id/64]>>(id%64)&1
						if g != w {
							t.Errorf("%s (%s), state %d: token %q direct %d encoded %d", names[li], v.Name, si, v.Tokens[id], g, w)
						}
					}
					t.FailNow()
				}
			}
		}
	}
}

// TestTailClassesMatchMoore: starting Moore's refinement from tailClasses
// gives the partition plain Moore gives (every state final), on acyclic
// automata, cyclic ones, and cyclic ones with long acyclic tails.
func TestTailClassesMatchMoore(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, p := range []string{
		`[a-z]{1,40}`, `[a-z]+-[0-9]{30}`, `(ab|cd){3,9}x*`, `a*b{5}|c{2,7}`, `x{20}[a-c]*y{10}`,
		`\d+-[A-Fa-f0-9]*-[A-Fa-f0-9]{24}`, bigClass(rng, 80) + `{1,50}`, `(a|b)*abb(a|b){4}`, `abc|abd|xyz`, `.*`,
		// states that only finality told apart: merged once all are final
		`a(bc)?|dbc`, `x[0-9]{0,3}|y[0-9]{3}`, `(p[a-z]{2,6}|q[a-z]{6})z*`, `k(mn)?|l(mn)+`,
		// an enum's trie, suffixes shared (cryproj's cvar names)
		`r_VSync|r_MotionBlur|r_DumpFontNames|r_DumpFontTexture|a_poseAlignerEnable|a_poseAlignerDebugDraw|sys_target|sys_targets`,
	} {
		d, err := regexDFA("^(?:" + p + ")$")
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		d = d.trim()
		all := &rdfa{st: make([]rdstate, len(d.st))}
		for i, s := range d.st {
			all.st[i] = rdstate{edges: s.edges, final: true}
		}
		want, nw := mooreRefine(all, make([]int32, len(all.st)))
		got, ng := mooreRefine(all, tailClasses(all))
		samePartition(t, p+" (tailClasses, Moore)", got, ng, want, nw)
		// prefixPartition skips Moore where every tail class is exact
		// (acyclic automata): still the same partition
		got, ng, ok := prefixPartition(all, -1)
		if !ok {
			t.Errorf("%s: prefixPartition not stable", p)
		}
		samePartition(t, p+" (prefixPartition)", got, ng, want, nw)
		if _, exact := tailClassesExact(all); exact != d.acyclic() {
			t.Errorf("%s: tail classes exact %v, acyclic %v", p, exact, d.acyclic())
		}
	}
}

// samePartition reports whether partitions got and want (n classes each,
// numbered 0..n-1 for got) group the states alike.
func samePartition(t *testing.T, what string, got []int32, ng int, want []int32, nw int) {
	t.Helper()
	if nw != ng {
		t.Errorf("%s: %d classes, Moore alone %d", what, ng, nw)
		return
	}
	m := map[int32]int32{}
	for i := range want {
		if got[i] < 0 || int(got[i]) >= ng {
			t.Errorf("%s: state %d in class %d of %d", what, i, got[i], ng)
			return
		}
		if c, ok := m[got[i]]; ok && c != want[i] {
			t.Errorf("%s: state %d in class %d, Moore says %d", what, i, got[i], want[i])
			return
		}
		m[got[i]] = want[i]
	}
}

// acyclic reports whether no cycle is reachable in d (a test helper).
func (d *rdfa) acyclic() bool {
	state := make([]uint8, len(d.st)) // 0 new, 1 on the path, 2 done
	var visit func(s int32) bool
	visit = func(s int32) bool {
		state[s] = 1
		for _, e := range d.st[s].edges {
			if state[e.to] == 1 || state[e.to] == 0 && !visit(e.to) {
				return false
			}
		}
		state[s] = 2
		return true
	}
	for i := range d.st {
		if state[i] == 0 && !visit(int32(i)) {
			return false
		}
	}
	return true
}

// TestCanonKey: the key names the prefix-closed language, whatever
// automaton and state it is read from.
func TestCanonKey(t *testing.T) {
	dfa := func(p string) *rdfa {
		d, err := regexDFA("^(?:" + p + ")$")
		if err != nil {
			t.Fatal(err)
		}
		return d.trim()
	}
	a15, a14, a05 := dfa(`a{1,5}`), dfa(`a{1,4}`), dfa(`a{0,5}`)
	if a15.canonKey(1) != a14.canonKey(0) { // both a{0,4}
		t.Error("a{1,5} after one a and a{1,4} differ")
	}
	if a15.canonKey(0) != a05.canonKey(0) { // prefix-closed: finality does not count
		t.Error("a{1,5} and a{0,5} differ")
	}
	for _, p := range [][2]string{{`a{1,5}`, `a{1,4}`}, {`a{1,5}`, `b{1,5}`}, {`(ab)*`, `ab*`}, {`a|c`, `ac*`},
		{`ab|ac`, `ab|ad`}, {`[a-c]x|dy`, `[a-d]x`}, {`(ab|cd)*`, `(ab|cd){0,5}`}} {
		if dfa(p[0]).canonKey(0) == dfa(p[1]).canonKey(0) {
			t.Errorf("%s and %s: same key", p[0], p[1])
		}
	}
	// acyclic automata are keyed by their tail signatures: equal languages
	// in different automata, and edges split differently, give equal keys
	for _, p := range [][3]string{{`xab|xac`, `ab|ac`, "x"}, {`q(?:[a-c]|d)e`, `[a-d]e`, "q"}, {`zz[a-m]|zz[n-z]`, `[a-z]`, "zz"}} {
		a, b := dfa(p[0]), dfa(p[1])
		s := int32(0)
		for _, c := range p[2] {
			s = a.step(s, c)
		}
		if !a.prefixCheap() || a.msig == nil {
			t.Fatalf("%s: no tail signatures", p[0])
		}
		if a.canonKey(s) != b.canonKey(0) {
			t.Errorf("%s after %q and %s differ", p[0], p[2], p[1])
		}
	}
}

// BenchmarkInteriorWalk is one interior computation from scratch over the
// qwen3 vocabulary: a free string (nearly every token stays inside) and a
// word counter (the walk of o21053's (?:\S+\s+){0,99}\S+ at each word).
func BenchmarkInteriorWalk(b *testing.B) {
	ti := NewTokenizerInfo(testVocab(b))
	for _, c := range []struct{ name, pat string }{{"any", `.*`}, {"words", `(?:\S+\s+){0,99}\S+`}} {
		d, err := regexDFA("^(?:" + c.pat + ")$")
		if err != nil {
			b.Fatal(err)
		}
		cls, q := d.trim().prefixClasses()
		m := make([]uint64, ti.words)
		b.Run(c.name, func(b *testing.B) {
			c0 := cpuTime()
			for b.Loop() {
				ti.interiorWalk(q, cls[0], m)
			}
			b.ReportMetric(float64(cpuTime()-c0)/float64(b.N)/1e3, "cpu-us/op")
			b.ReportMetric(float64(len(ti.noQuote.nb)), "trie-nodes")
		})
		b.Run(c.name+"-step", func(b *testing.B) {
			c0 := cpuTime()
			for b.Loop() {
				ti.interiorWalkStep(q, cls[0], m)
			}
			b.ReportMetric(float64(cpuTime()-c0)/float64(b.N)/1e3, "cpu-us/op")
		})
	}
}

// interiorWalkStep is interiorWalk decoding each node's byte on the way
// (cpWalker.step): what interiorWalk did before the decoding was done once
// per vocabulary (decodeNoQuote); kept to measure the two
// (BenchmarkInteriorWalk).
func (ti *TokenizerInfo) interiorWalkStep(d *rdfa, start int32, m []uint64) {
	tr := ti.noQuote
	w := newCPWalker(d)
	var ps [256]cpPos
	ps[0] = cpPos{q: start}
	n := tr.nend[0]
	for i := int32(1); i < n; {
		dp := tr.depth[i]
		b := tr.nb[i]
		var p cpPos
		var ok bool
		if pp := &ps[dp-1]; pp.mode == cpAt && b < 0x80 && b != '\\' {
			// the common case inline: an ASCII byte at a boundary
			tb := w.ascii[pp.q]
			if tb == nil {
				tb = w.table(pp.q)
			}
			p.q = tb[b]
			ok = p.q >= 0
		} else {
			p, ok = w.step(*pp, b)
		}
		if ok {
			for _, x := range tr.toks[tr.ntok0[i]:tr.ntok0[i+1]] {
				m[x>>6] |= 1 << (x & 63)
			}
			if dp < 255 {
				ps[dp] = p
				i++
				continue
			}
		}
		i = tr.nend[i]
	}
}
