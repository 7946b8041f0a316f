package grammar

import (
	"cmp"
	"fmt"
	"math/bits"
	"slices"
	"sync"
	"unicode/utf8"
)

// Byte-level NFAs for rules. Structural bytes, keys, strings, numbers and
// literals are byte paths; nested containers are call edges; "checked" edges
// carry an op the runtime evaluates (see ops.go). String-content states carry
// the code point limit of their string (lim ≥ 0) and whether they sit on a
// code point boundary (rb), for the runtime length counter.

type bedge struct {
	lo, hi byte
	to     int32
	op     int32
}

type bcall struct {
	rule int32
	to   int32
	op   int32 // checked on the return (unique.go); 0: none
}

type bstate struct {
	eps   []int32
	edges []bedge
	calls []bcall
	final bool
	lim   int32
	rb    bool
	sd    *rdfa // string content provenance: state si of sd
	si    int32
}

type bnfa struct {
	st    []bstate
	slab  []bedge // free room for edge lists (grow)
	slabN int
	big   []bedge // the largest chunk slab came from (kept by reset)
}

// A rule's NFA lives only until its DFA is built: rule bodies take one
// from nfaPool (newNFA) and reserveAt gives it back (release), so the
// states and edge chunks of one build serve the next.
var nfaPool = sync.Pool{New: func() any { return new(bnfa) }}

func newNFA() *bnfa {
	n := nfaPool.Get().(*bnfa)
	n.st = n.st[:0]
	n.slab = n.big
	return n
}

// release returns n to the pool; nothing may use it afterwards. A very
// large automaton's memory is left to the collector instead.
func (n *bnfa) release() {
	if cap(n.st) <= 1<<15 && len(n.big) <= 1<<16 {
		nfaPool.Put(n)
	}
}

func (n *bnfa) add() int32 {
	n.st = append(n.st, bstate{lim: -1})
	return int32(len(n.st) - 1)
}

func (n *bnfa) addStr(lim int32, rb bool) int32 {
	n.st = append(n.st, bstate{lim: lim, rb: rb})
	return int32(len(n.st) - 1)
}

func (n *bnfa) eps(a, b int32) { n.st[a].eps = append(n.st[a].eps, b) }
func (n *bnfa) edge(a int32, lo, hi byte, b int32, op int32) {
	st := &n.st[a]
	if len(st.edges) == cap(st.edges) {
		st.edges = n.grow(st.edges, 1)
	}
	st.edges = append(st.edges, bedge{lo, hi, b, op})
}

// grow returns es with room for k more edges, carved from a chunk shared
// by the automaton's states: an NFA has many short edge lists, and
// allocating each (and its regrowths) was a large part of building one.
func (n *bnfa) grow(es []bedge, k int) []bedge {
	c := max(4, 2*cap(es), len(es)+k)
	if len(n.slab) < c {
		// chunks double (64 .. 4096 edges): small automata stay small
		n.slabN = min(max(64, 2*n.slabN), 4096)
		n.slab = make([]bedge, max(n.slabN, c))
		if len(n.slab) > len(n.big) {
			n.big = n.slab
		}
	}
	ns := n.slab[:len(es):c]
	n.slab = n.slab[c:]
	copy(ns, es)
	return ns
}

// lit adds the byte path s from a to b.
func (n *bnfa) lit(a int32, s string, b int32) {
	cur := a
	for i := 0; i < len(s); i++ {
		nx := b
		if i < len(s)-1 {
			nx = n.add()
		}
		n.edge(cur, s[i], s[i], nx, 0)
		cur = nx
	}
	if len(s) == 0 {
		n.eps(a, b)
	}
}

// utf8Seqs splits [lo,hi] (no surrogates) into sequences of byte ranges.
func utf8Seqs(lo, hi rune, out [][][2]byte) [][][2]byte {
	bounds := []rune{0x7F, 0x7FF, 0xFFFF}
	for _, b := range bounds {
		if lo <= b && hi > b {
			out = utf8Seqs(lo, b, out)
			return utf8Seqs(b+1, hi, out)
		}
	}
	n := utf8.RuneLen(lo)
	if n == 1 {
		return append(out, [][2]byte{{byte(lo), byte(hi)}})
	}
	for i := 1; i < n; i++ {
		m := rune(1)<<(6*i) - 1
		if lo&^m != hi&^m {
			if lo&m != 0 {
				out = utf8Seqs(lo, lo|m, out)
				return utf8Seqs((lo|m)+1, hi, out)
			}
			if hi&m != m {
				out = utf8Seqs(lo, (hi&^m)-1, out)
				return utf8Seqs(hi&^m, hi, out)
			}
		}
	}
	var a, b [4]byte
	utf8.EncodeRune(a[:], lo)
	utf8.EncodeRune(b[:], hi)
	seq := make([][2]byte, n)
	for i := 0; i < n; i++ {
		seq[i] = [2]byte{a[i], b[i]}
	}
	return append(out, seq)
}

var shortEsc = map[rune]byte{'"': '"', '\\': '\\', '\n': 'n', '\r': 'r', '\t': 't', '\b': 'b', '\f': 'f'}

// strEnc shares states while encoding one string template: the "\\" and
// "\\u00X" escape states of each source state (escaped code points of
// different edges of one state are disjoint, so sharing keeps the automaton
// deterministic) and UTF-8 continuation suffixes.
type strEnc struct {
	wide map[wideKey][]bedge
	sfx  map[sfxKey]int32
	esc  map[escKey]int32
	u3   map[escKey]int32
	hex  map[hexKey]int32
}

// escKey names a shared escape subtree: the one after '\\' whose escapes
// are the escapable code points in mask (bits 0-31 the controls, 32 '"',
// 33 '\\', 34 '/'), all leading to state to. Shared by every source
// state with such an edge: a key trie's states all leave to the same
// "other key" state on every escape, and one subtree per source state was
// most of an object rule's NFA.
type escKey struct {
	to   int32
	mask uint64
}

// wideKey names the multi-byte code points lo..hi (lo ≥ 0x80) to state to.
type wideKey struct {
	lo, hi rune
	to     int32
}

type hexKey struct {
	e escKey
	k int32
}

var strEncPool = sync.Pool{New: func() any {
	return &strEnc{wide: map[wideKey][]bedge{}, sfx: map[sfxKey]int32{}, esc: map[escKey]int32{}, u3: map[escKey]int32{}, hex: map[hexKey]int32{}}
}}

// release empties se and returns it to strEncPool (maps that grew large
// are dropped: clearing costs their capacity).
func (se *strEnc) release() {
	if len(se.sfx) > 1024 || len(se.wide) > 1024 || len(se.hex) > 1024 {
		return
	}
	clear(se.wide)
	clear(se.sfx)
	clear(se.esc)
	clear(se.u3)
	clear(se.hex)
	strEncPool.Put(se)
}

// escMask is the set of escapable code points in lo..hi (see escKey).
func escMask(lo, hi rune) uint64 {
	var m uint64
	if lo < 0x20 {
		top := min(hi, 0x1F)
		m = (uint64(1)<<(top+1) - 1) &^ (uint64(1)<<lo - 1)
	}
	for i, r := range []rune{'"', '\\', '/'} {
		if lo <= r && r <= hi {
			m |= 1 << (32 + i)
		}
	}
	return m
}

// strRunes adds the JSON-string encodings of code points lo..hi from a to b
// (inside a string with limit lim).
func (n *bnfa) strRunes(a int32, lo, hi rune, b int32, lim int32, se *strEnc) {
	mid := func() int32 { return n.addStr(lim, false) }
	sfx := se.sfx
	ek := escKey{b, escMask(lo, hi)}
	escState := func() int32 {
		esc, ok := se.esc[ek]
		if !ok {
			esc = mid()
			se.esc[ek] = esc
			// the subtree's edges, once
			for r := lo; r <= hi && r < 0x20; r++ {
				if e, ok := shortEsc[r]; ok {
					n.edge(esc, e, e, b, 0)
					continue
				}
				k := r >> 4
				hx, ok := se.hex[hexKey{ek, k}]
				if !ok {
					u3, ok := se.u3[ek]
					if !ok {
						u1, u2 := mid(), mid()
						u3 = mid()
						n.edge(esc, 'u', 'u', u1, 0)
						n.edge(u1, '0', '0', u2, 0)
						n.edge(u2, '0', '0', u3, 0)
						se.u3[ek] = u3
					}
					hx = mid()
					n.edge(u3, '0'+byte(k), '0'+byte(k), hx, 0)
					se.hex[hexKey{ek, k}] = hx
				}
				h := byte("0123456789abcdef"[r&15])
				n.edge(hx, h, h, b, 0)
				if h >= 'a' {
					n.edge(hx, h-32, h-32, b, 0)
				}
			}
			for _, r := range []rune{'"', '\\', '/'} {
				if lo <= r && r <= hi {
					n.edge(esc, byte(r), byte(r), b, 0)
				}
			}
		}
		return esc
	}
	if ek.mask != 0 {
		n.edge(a, '\\', '\\', escState(), 0)
	}
	if lo < 0x80 {
		n.asciiRaw(a, lo, min(hi, 0x7F), b)
	}
	if hi < 0x80 {
		return
	}
	// The multi-byte code points: their first-byte edges are remembered
	// per (range, target), since every state of a key trie has "any other
	// character" to the same state. The states after the first byte depend
	// only on the rest of the sequence and the target: they are shared
	// (UTF-8 suffix sharing keeps the encoded automaton near minimal).
	wk := wideKey{max(lo, 0x80), hi, b}
	es, ok := se.wide[wk]
	if !ok {
		for _, seq := range rawSeqs(wk.lo, hi) {
			nx := b
			for i := len(seq) - 1; i >= 1; i-- {
				k := sfxKey{to: nx, lo: seq[i][0], hi: seq[i][1]}
				st, ok := sfx[k]
				if !ok {
					st = mid()
					n.edge(st, seq[i][0], seq[i][1], nx, 0)
					sfx[k] = st
				}
				nx = st
			}
			es = append(es, bedge{seq[0][0], seq[0][1], nx, 0})
		}
		se.wide[wk] = es
	}
	st := &n.st[a]
	if cap(st.edges)-len(st.edges) < len(es) {
		st.edges = n.grow(st.edges, len(es))
	}
	st.edges = append(st.edges, es...)
}

var rawSeqCache sync.Map // [2]rune → [][][2]byte

// rawSeqs returns the UTF-8 byte range sequences of the code points in
// lo..hi written raw in a JSON string (not controls, '"' or '\\'), cached:
// the same few ranges (any character, any but a few) recur in every string.
// (ASCII goes through asciiRaw.)
func rawSeqs(lo, hi rune) [][][2]byte {
	k := [2]rune{lo, hi}
	wide := hi-lo >= 128 // only wide ranges are cached (the map stays small)
	if wide {
		if v, ok := rawSeqCache.Load(k); ok {
			return v.([][][2]byte)
		}
	}
	var out [][][2]byte
	for _, rr := range (rset{{max(lo, 0x20), hi}}).minus(rset{{'"', '"'}, {'\\', '\\'}}) {
		if rr.lo <= rr.hi {
			out = utf8Seqs(rr.lo, rr.hi, out)
		}
	}
	if !wide {
		return out
	}
	v, _ := rawSeqCache.LoadOrStore(k, out)
	return v.([][][2]byte)
}

// asciiRaw adds the edges of the code points lo..hi (< 0x80) written raw in
// a JSON string, from a to b: the range without controls, '"' and '\\',
// each piece one byte.
func (n *bnfa) asciiRaw(a int32, lo, hi rune, b int32) {
	lo = max(lo, 0x20)
	for _, cut := range [...]rune{'"', '\\', 0x80} {
		if lo > hi {
			return
		}
		if cut > hi {
			n.edge(a, byte(lo), byte(hi), b, 0)
			return
		}
		if lo < cut {
			n.edge(a, byte(lo), byte(cut-1), b, 0)
		}
		lo = max(lo, cut+1)
	}
}

// str adds a JSON string ("..." with content in d) from a to b. closeOp is
// the op on the closing quote (0: none).
func (n *bnfa) str(d *rdfa, a, b int32, lim int32, closeOp int32) {
	t, tmp := strTemplate(d, lim)
	if tmp {
		defer t.release()
	}
	base := int32(len(n.st))
	n.st = slices.Grow(n.st, len(t.st))
	for i, s := range t.st {
		ns := bstate{lim: s.lim, rb: s.rb, si: -1}
		if i < len(d.st) {
			ns.sd, ns.si = d, int32(i)
		}
		if len(s.edges) > 0 {
			ns.edges = n.grow(nil, len(s.edges))[:len(s.edges)]
		}
		for i, e := range s.edges {
			e.to += base
			ns.edges[i] = e
		}
		n.st = append(n.st, ns)
	}
	n.edge(a, '"', '"', base, 0)
	for i, s := range d.st {
		if s.final {
			n.edge(base+int32(i), '"', '"', b, closeOp)
		}
	}
}

// strTagged adds a string over d whose closing quote, from a final state
// with tag c, carries ops[c] and goes to targets[c]. With avail (objects
// without undeclared keys), entering content state y carries the check
// avail[y], except where it cannot fail: when the state x the encoded code
// point starts from has the same set of reachable names (same(x, y)), the
// check made on entering x already covers y, and the opening quote needs no
// check (an object's first key has every name available, and the comma
// before a later key checks that one is left). So only the few bytes where
// the set of reachable names shrinks are checked edges, and tokens inside a
// key stay plain for the mask walk.
func (n *bnfa) strTagged(d *rdfa, tags []int32, a int32, targets, ops []int32, lim int32, avail []int32, same func(x, y int32) bool) {
	t, tmp := strTemplate(d, lim)
	if tmp {
		defer t.release()
	}
	base := int32(len(n.st))
	n.st = slices.Grow(n.st, len(t.st))
	nd := int32(len(d.st))
	var orig [][]int32 // template mid state → content states it starts from
	if avail != nil {
		orig = make([][]int32, len(t.st))
		for ci := int32(0); ci < nd; ci++ {
			stack := []int32{ci}
			for len(stack) > 0 {
				x := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				for _, e := range t.st[x].edges {
					if e.to >= nd && !slices.Contains(orig[e.to], ci) {
						orig[e.to] = append(orig[e.to], ci)
						stack = append(stack, e.to)
					}
				}
			}
		}
	}
	for i, s := range t.st {
		ns := bstate{lim: s.lim, rb: s.rb, si: -1}
		if i < len(d.st) && avail == nil { // checked edges: see plainProv
			ns.sd, ns.si = d, int32(i)
		}
		if len(s.edges) > 0 {
			ns.edges = n.grow(nil, len(s.edges))[:len(s.edges)]
		}
		for j, e := range s.edges {
			if avail != nil && e.to < nd {
				srcs := orig[i]
				if int32(i) < nd {
					srcs = []int32{int32(i)}
				}
				for _, x := range srcs {
					if !same(x, e.to) {
						e.op = avail[e.to]
						break
					}
				}
			}
			e.to += base
			ns.edges[j] = e
		}
		n.st = append(n.st, ns)
	}
	if avail != nil && !plainProvOff {
		n.plainProv(d, base, len(t.st))
	}
	n.edge(a, '"', '"', base, 0)
	for i, s := range d.st {
		if s.final && tags[i] >= 0 {
			n.edge(base+int32(i), '"', '"', targets[tags[i]], ops[tags[i]])
		}
	}
}

// plainProv gives the content states of a checked key string (strTagged
// with avail: states base..base+m-1, d's first) from which no checked edge
// is reachable inside the string their provenance: the tokens without '"'
// they accept are those d's language accepts from them, so their masks
// take the interior shared across grammars (docs/masks.md §3) instead of a
// walk of the whole token trie on each first visit.
// Those are the states past the last point where the set of names still
// reachable shrinks: in an object without undeclared keys, a pattern
// key's tail (Snowplow sp_280's "^contexts_.*" after "contexts_", which
// agrees with the free string) or the rest of a name no other shares.
func (n *bnfa) plainProv(d *rdfa, base int32, m int) {
	// predecessors in one array (off[t]..off[t+1]), and the states with a
	// checked edge, from which "reaches a check" spreads backwards
	off := make([]int32, m+2)
	checked := make([]bool, m) // reaches a checked edge
	var work []int32
	for i := range m {
		for _, e := range n.st[base+int32(i)].edges {
			if to := e.to - base; to >= 0 && int(to) < m {
				off[to+2]++
			}
			if e.op != 0 && !checked[i] {
				checked[i] = true
				work = append(work, int32(i))
			}
		}
	}
	if len(work) == 0 {
		for i := range d.st {
			n.st[base+int32(i)].sd, n.st[base+int32(i)].si = d, int32(i)
		}
		return
	}
	for t := 2; t < len(off); t++ {
		off[t] += off[t-1]
	}
	pred := make([]int32, off[m+1])
	for i := range m {
		for _, e := range n.st[base+int32(i)].edges {
			if to := e.to - base; to >= 0 && int(to) < m {
				pred[off[to+1]] = int32(i)
				off[to+1]++
			}
		}
	}
	// now off[t]..off[t+1] are t's predecessors
	for len(work) > 0 {
		x := work[len(work)-1]
		work = work[:len(work)-1]
		for _, p := range pred[off[x]:off[x+1]] {
			if !checked[p] {
				checked[p] = true
				work = append(work, p)
			}
		}
	}
	for i := range d.st {
		if !checked[i] {
			n.st[base+int32(i)].sd, n.st[base+int32(i)].si = d, int32(i)
		}
	}
}

// plainProvOff turns plainProv off (tests compare the masks with and
// without).
var plainProvOff bool

// sfxKey names a shared UTF-8 continuation state: one byte in lo..hi, then
// state to.
type sfxKey struct {
	to     int32
	lo, hi byte
}

type strTmplKey struct {
	d   *rdfa
	lim int32
}

var strTemplates sync.Map // strTmplKey → *bnfa (weakly bounded: shared DFAs only)

// strTemplate is the encoded content of d (states 0..len(d.st)-1 are d's).
func strTemplate(d *rdfa, lim int32) (t *bnfa, tmp bool) {
	k := strTmplKey{d, lim}
	if v, ok := strTemplates.Load(k); ok {
		return v.(*bnfa), false
	}
	keep := d.shared && (len(d.st) > 1 || len(d.st[0].edges) > 3)
	if keep {
		t = &bnfa{}
	} else {
		t = newNFA() // copied by the caller, then released
	}
	t.st = slices.Grow(t.st, 2*len(d.st)+8)
	for range d.st {
		t.addStr(lim, true)
	}
	se := strEncPool.Get().(*strEnc)
	for i, s := range d.st {
		for _, e := range s.edges {
			t.strRunes(int32(i), e.lo, e.hi, e.to, lim, se)
		}
	}
	se.release()
	if keep {
		strTemplates.Store(k, t)
	}
	return t, !keep
}

// ascii adds the (ASCII) language d from a to b.
func (n *bnfa) ascii(d *rdfa, a, b int32) {
	base := int32(len(n.st))
	for range d.st {
		n.add()
	}
	n.eps(a, base)
	for i, s := range d.st {
		for _, e := range s.edges {
			if e.lo > 0x7F {
				continue
			}
			n.edge(base+int32(i), byte(e.lo), byte(min(e.hi, 0x7F)), base+e.to, 0)
		}
		if s.final {
			n.eps(base+int32(i), b)
		}
	}
}

// ---- determinization ----

type spEdge struct {
	lo, hi byte
	op     int32
	to     int32
}

type callEdge struct {
	rule int32
	ret  int32
	op   int32 // checked on the return to ret (unique.go); 0: none
}

type dstate struct {
	plain []bedge // op 0, sorted disjoint
	spec  []spEdge
	calls []callEdge
	final bool
	lim   int32
	rb    bool
	sd    *rdfa
	si    int32
}

// Budgets of one rule's subset construction: a schema whose rule would
// exceed them fails at once with a CompileError instead of compiling for
// seconds. (Variables so that a test can make a build fail.)
var (
	maxRuleStates = 100000
	maxRuleWork   = 20_000_000 // sum of subset sizes
)

type closer struct {
	n     *bnfa
	mark  []uint32
	gen   uint32
	stack []int32
}

// closure appends the sorted epsilon closure of seed to out[:0].
func (c *closer) closure(seed []int32, out []int32) []int32 {
	c.gen++
	if c.gen == 0 { // wrapped: old marks could match
		clear(c.mark)
		c.gen = 1
	}
	if len(c.mark) < len(c.n.st) {
		c.mark = make([]uint32, len(c.n.st))
	}
	stack := append(c.stack[:0], seed...)
	out = out[:0]
	for len(stack) > 0 {
		s := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if c.mark[s] == c.gen {
			continue
		}
		c.mark[s] = c.gen
		out = append(out, s)
		stack = append(stack, c.n.st[s].eps...)
	}
	c.stack = stack
	slices.Sort(out)
	return out
}

func byteIntervals(pts []int) [][2]int {
	return appendByteIntervals(nil, pts)
}

// appendByteIntervals appends the elementary intervals between the
// boundary points pts (each in 0..256), by a bitmap rather than a sort.
func appendByteIntervals(out [][2]int, pts []int) [][2]int {
	var mark [5]uint64
	for _, p := range pts {
		mark[p>>6] |= 1 << (p & 63)
	}
	prev := -1
	for w, m := range mark {
		for m != 0 {
			p := w*64 + bits.TrailingZeros64(m)
			m &= m - 1
			if prev >= 0 {
				out = append(out, [2]int{prev, p - 1})
			}
			prev = p
		}
	}
	return out
}

// arena hands out subslices of large chunks: a rule's many short edge
// lists and subsets cost a few allocations instead of one each (allocation
// and GC were most of a cold build's time). Subslices have their capacity
// cut, so appending to one never overwrites its neighbour.
type arena[T any] struct{ buf []T }

func (a *arena[T]) copy(xs []T) []T {
	if len(xs) == 0 {
		return nil
	}
	if cap(a.buf)-len(a.buf) < len(xs) {
		a.buf = make([]T, 0, max(256, 2*len(xs), cap(a.buf)))
	}
	s := len(a.buf)
	a.buf = append(a.buf, xs...)
	return a.buf[s:len(a.buf):len(a.buf)]
}

type callTargets struct {
	rule, op int32
	to       []int32
}

// determinizeGeneral turns off determinizeBytes's one-state path (a test
// compares the two).
var determinizeGeneral bool

// disjointEdges reports whether es's byte ranges are pairwise disjoint,
// leaving them sorted by lo in *buf when they are.
func disjointEdges(es []bedge, buf *[]bedge) bool {
	*buf = append((*buf)[:0], es...)
	b := *buf
	if len(b) > 1 {
		slices.SortFunc(b, func(x, y bedge) int { return int(x.lo) - int(y.lo) })
	}
	for i := 1; i < len(b); i++ {
		if b[i].lo <= b[i-1].hi {
			return false
		}
	}
	return true
}

// determinize builds the DFA states of n from start. Scratch buffers are
// reused across states: only the subsets that become new states and the
// states' edge lists are allocated.
func determinizeBytes(n *bnfa, start int32) ([]dstate, error) {
	return determinizeWith(n, start, &detScratch{})
}

// detScratch is a subset construction's memory. Reused (ruleScratch) when
// the result is only read until the next build: the DFA states, their
// edge lists, the subsets and the lookup tables.
type detScratch struct {
	cl                      closer
	index                   map[string]int32
	byHash                  map[uint64]int32
	sets                    [][]int32
	ds                      []dstate
	setArena                arena[int32]
	plainArena              arena[bedge]
	specArena               arena[spEdge]
	callArena               arena[callEdge]
	plainBuf                []bedge
	specBuf                 []spEdge
	callBuf                 []callEdge
	kb                      []byte
	clBuf, memo, opList, tg []int32
	sorted                  []bedge
	pts                     []int
	ivs                     [][2]int
	calls                   []callTargets
}

func determinizeWith(n *bnfa, start int32, sc *detScratch) ([]dstate, error) {
	cl := &sc.cl
	cl.n = n
	if sc.index == nil || len(sc.index) > 0 {
		sc.index = map[string]int32{}
	}
	index := sc.index
	// a DFA has about as many states as its rule's NFA (no blow-up in
	// practice: 4,085 for 4,526 over 50 BFCL tools)
	sets := slices.Grow(sc.sets[:0], len(n.st)+1)
	ds := slices.Grow(sc.ds[:0], len(n.st)+1)
	setArena, plainArena, specArena, callArena := &sc.setArena, &sc.plainArena, &sc.specArena, &sc.callArena
	setArena.buf, plainArena.buf, specArena.buf, callArena.buf = setArena.buf[:0], plainArena.buf[:0], specArena.buf[:0], callArena.buf[:0]
	plainBuf, specBuf, callBuf := sc.plainBuf, sc.specBuf, sc.callBuf
	kb, clBuf := sc.kb, sc.clBuf
	// subsets by 64-bit hash, verified; the rare colliding subsets go to
	// a map keyed by their bytes
	if sc.byHash == nil || len(sc.byHash) > 1<<14 {
		sc.byHash = make(map[uint64]int32, len(n.st)+1)
	} else {
		clear(sc.byHash)
	}
	byHash := sc.byHash
	nedges := 0
	for i := range n.st {
		nedges += len(n.st[i].edges)
	}
	if cap(plainArena.buf) < nedges+16 {
		plainArena.buf = make([]bedge, 0, nedges+16)
	}
	if cap(setArena.buf) < 2*len(n.st)+16 {
		setArena.buf = make([]int32, 0, 2*len(n.st)+16)
	}
	add := func(set []int32) int32 {
		h := uint64(14695981039346656037)
		for _, x := range set {
			h = (h ^ uint64(uint32(x))) * 0x100000001b3
		}
		id, ok := byHash[h]
		if ok && slices.Equal(sets[id], set) {
			return id
		}
		if ok {
			kb = kb[:0]
			for _, x := range set {
				kb = append(kb, byte(x), byte(x>>8), byte(x>>16), byte(x>>24))
			}
			if id, ok := index[string(kb)]; ok {
				return id
			}
		}
		id = int32(len(sets))
		if ok {
			index[string(kb)] = id
		} else {
			byHash[h] = id
		}
		sets = append(sets, setArena.copy(set))
		ds = append(ds, dstate{})
		return id
	}
	// single(t) is the state of closure({t}), memoized: most transitions
	// of a rule's NFA lead to one state, and its closure and subset lookup
	// were most of the construction
	memo := sc.memo
	if cap(memo) < len(n.st) {
		memo = make([]int32, len(n.st))
	} else {
		memo = memo[:len(n.st)]
		clear(memo)
	}
	single := func(t int32) int32 {
		if m := memo[t]; m > 0 {
			return m - 1
		}
		clBuf = cl.closure([]int32{t}, clBuf)
		id := add(clBuf)
		memo[t] = id + 1
		return id
	}
	single(start)
	sorted, pts, ivs, opList, tg, calls := sc.sorted, sc.pts, sc.ivs, sc.opList, sc.tg, sc.calls
	defer func() {
		sc.sets, sc.ds, sc.plainBuf, sc.specBuf, sc.callBuf, sc.kb, sc.clBuf, sc.memo = sets, ds, plainBuf, specBuf, callBuf, kb, clBuf, memo
		sc.sorted, sc.pts, sc.ivs, sc.opList, sc.tg, sc.calls = sorted, pts, ivs, opList, tg, calls
		cl.n = nil
	}()
	work := 0
	for i := 0; i < len(sets); i++ {
		if len(sets) > maxRuleStates {
			return nil, fmt.Errorf("automaton too large (over %d states)", maxRuleStates)
		}
		set := sets[i]
		if work += len(set); work > maxRuleWork {
			return nil, fmt.Errorf("automaton too large (subset construction over %d NFA-state visits at %d states: overlapping alternatives, e.g. anyOf branches or whitespace, multiply)", maxRuleWork, len(sets))
		}
		d := dstate{lim: -1, si: -1}
		plainBuf, specBuf, callBuf = plainBuf[:0], specBuf[:0], callBuf[:0]
		if len(set) == 1 && n.st[set[0]].sd != nil {
			d.sd, d.si = n.st[set[0]].sd, n.st[set[0]].si
		}
		pts = pts[:0]
		opList = append(opList[:0], 0)
		calls = calls[:0]
		calls = subsetAttrs(n, set, &d, calls)
		emit := func(lo, hi byte, op, to int32) { emitEdge(&plainBuf, &specBuf, lo, hi, op, to) }
		if len(set) == 1 && !determinizeGeneral && disjointEdges(n.st[set[0]].edges, &sorted) {
			// one NFA state whose edges do not overlap (most of a rule:
			// keys, strings, literals): its edges in byte order are the
			// DFA state's, no elementary intervals needed
			for _, e := range sorted {
				emit(e.lo, e.hi, e.op, single(e.to))
			}
		} else {
			for _, s := range set {
				for _, e := range n.st[s].edges {
					pts = append(pts, int(e.lo), int(e.hi)+1)
					if e.op != 0 {
						opList = append(opList, e.op)
					}
				}
			}
			slices.Sort(opList)
			opList = slices.Compact(opList)
			ivs = appendByteIntervals(ivs[:0], pts)
			for _, iv := range ivs {
				for _, op := range opList {
					tg = tg[:0]
					for _, s := range set {
						for _, e := range n.st[s].edges {
							if e.op == op && int(e.lo) <= iv[0] && iv[0] <= int(e.hi) {
								tg = append(tg, e.to)
							}
						}
					}
					if len(tg) == 0 {
						continue
					}
					var to int32
					if len(tg) == 1 {
						to = single(tg[0])
					} else {
						clBuf = cl.closure(tg, clBuf)
						to = add(clBuf)
					}
					emit(byte(iv[0]), byte(iv[1]), op, to)
				}
			}
		}
		for _, ct := range calls {
			var to int32
			if len(ct.to) == 1 {
				to = single(ct.to[0])
			} else {
				clBuf = cl.closure(ct.to, clBuf)
				to = add(clBuf)
			}
			callBuf = append(callBuf, callEdge{ct.rule, to, ct.op})
		}
		d.plain, d.spec, d.calls = plainArena.copy(plainBuf), specArena.copy(specBuf), callArena.copy(callBuf)
		ds[i] = d
	}
	return ds, nil
}

// subsetAttrs gives d, the DFA state of the NFA states in set, their
// attributes: final if one is, the least lim, rb if one has it; and
// appends their calls to calls, grouped by rule.
func subsetAttrs(n *bnfa, set []int32, d *dstate, calls []callTargets) []callTargets {
	for _, s := range set {
		st := &n.st[s]
		if st.final {
			d.final = true
		}
		if st.lim >= 0 && (d.lim < 0 || st.lim < d.lim) {
			d.lim = st.lim
		}
		if st.rb {
			d.rb = true
		}
		for _, c := range st.calls {
			k := slices.IndexFunc(calls, func(ct callTargets) bool { return ct.rule == c.rule && ct.op == c.op })
			if k < 0 {
				calls = append(calls, callTargets{rule: c.rule, op: c.op})
				k = len(calls) - 1
			}
			calls[k].to = append(calls[k].to, c.to)
		}
	}
	return calls
}

// emitEdge appends the edge lo-hi (op 0: plain) to plain or spec, merged
// into the previous edge when that one is adjacent with the same target
// and op. Edges come in byte order, so this keeps each list minimal.
func emitEdge(plain *[]bedge, spec *[]spEdge, lo, hi byte, op, to int32) {
	if op == 0 {
		if k := len(*plain); k > 0 && (*plain)[k-1].to == to && int((*plain)[k-1].hi)+1 == int(lo) {
			(*plain)[k-1].hi = hi
		} else {
			*plain = append(*plain, bedge{lo: lo, hi: hi, to: to})
		}
		return
	}
	if k := len(*spec); k > 0 && (*spec)[k-1].to == to && (*spec)[k-1].op == op && int((*spec)[k-1].hi)+1 == int(lo) {
		(*spec)[k-1].hi = hi
	} else {
		*spec = append(*spec, spEdge{lo, hi, op, to})
	}
}

type sig128 struct{ a, b uint64 }

// stateSig is a 128-bit signature of d's own attributes and its edges by
// target class.
func stateSig(d *dstate, cls []int32) sig128 {
	const p1, p2 = 0x100000001b3, 0x9E3779B97F4A7C15
	h1, h2 := uint64(14695981039346656037), uint64(0x84222325cbf29ce4)
	mix := func(x uint64) {
		h1 = (h1 ^ x) * p1
		h2 = (h2 ^ (x + 0x9E37)) * p2
		h2 ^= h2 >> 29
	}
	var f uint64
	if d.final {
		f |= 1
	}
	if d.rb {
		f |= 2
	}
	mix(f | uint64(uint32(d.lim))<<8)
	plo, phi, pto := -1, -1, int32(-1)
	flush := func() {
		if plo >= 0 {
			mix(uint64(plo) | uint64(phi)<<8 | uint64(uint32(pto))<<16)
		}
	}
	for _, e := range d.plain {
		t := cls[e.to]
		if plo >= 0 && pto == t && phi+1 == int(e.lo) {
			phi = int(e.hi)
			continue
		}
		flush()
		plo, phi, pto = int(e.lo), int(e.hi), t
	}
	flush()
	mix(0xFFFFFFFFFFFF)
	for _, e := range d.spec {
		mix(uint64(e.lo) | uint64(e.hi)<<8 | uint64(uint32(e.op))<<16)
		mix(uint64(cls[e.to]))
	}
	mix(0xFFFFFFFFFFFE)
	for _, c := range d.calls {
		mix(uint64(uint32(c.rule))<<32 | uint64(uint32(cls[c.ret])))
		mix(uint64(uint32(c.op)))
	}
	return sig128{h1, h2}
}

// minScratch is minimization's memory (reused by ruleScratch): everything
// but the edge lists that a rule keeps (its checked edges and calls).
type minScratch struct {
	pstart, preds, fill, cls, perm, bstart, bend, touched, dirty, tmp, ren, order []int32
	sigs, distinct                                                                []sig128
	tmark, dmark                                                                  []bool
	gi                                                                            []uint8
	sortBuf                                                                       []keyedSig
	out                                                                           []dstate
	plainAll                                                                      []bedge
}

// keyedSig is a state and its signature's first half: sorting a block by
// it leaves equal signatures adjacent (a collision of the half alone only
// leaves two blocks unmerged).
type keyedSig struct {
	a uint64
	x int32
}

// zeroed returns (*s)[:n] cleared, reusing its memory when it is large
// enough.
func zeroed[T any](s *[]T, n int) []T {
	if cap(*s) < n {
		*s = make([]T, n)
	} else {
		*s = (*s)[:n]
		clear(*s)
	}
	return *s
}

// minimizeWith merges equivalent DFA states (partition refinement with
// 128-bit signatures), with ms's memory; state 0 stays the start. The
// refinement is incremental: after a round splits some blocks, only the
// predecessors of the states that changed block get new signatures, so a
// long chain costs its length once, not once per round.
func minimizeWith(ds []dstate, ms *minScratch) []dstate {
	n := len(ds)
	pstart, preds := predecessors(ds, ms)
	cls := zeroed(&ms.cls, n)
	sigs := zeroed(&ms.sigs, n)
	for i := range ds {
		sigs[i] = stateSig(&ds[i], cls)
	}
	// blocks are ranges of perm (bstart[b], bend[b]); a block splits in
	// place by sorting its range by signature
	perm := zeroed(&ms.perm, n)
	for i := range perm {
		perm[i] = int32(i)
	}
	bstart, bend := zeroed(&ms.bstart, 1), zeroed(&ms.bend, 1)
	bend[0] = int32(n)
	touched := append(ms.touched[:0], 0)
	tmark := zeroed(&ms.tmark, 1)
	dmark := zeroed(&ms.dmark, n)
	dirty := ms.dirty[:0]
	sortBuf, distinct, gi, tmp := ms.sortBuf[:0], ms.distinct[:0], ms.gi[:0], ms.tmp[:0]
	for len(touched) > 0 {
		dirty = dirty[:0]
		for _, bk := range touched {
			tmark[bk] = false
			mem := perm[bstart[bk]:bend[bk]]
			s0 := sigs[mem[0]]
			uniform := true
			for _, x := range mem[1:] {
				if sigs[x] != s0 {
					uniform = false
					break
				}
			}
			if uniform {
				continue
			}
			// group the members by signature: a linear scan over the few
			// distinct ones (a split is mostly in two or three), a sort
			// when there are many
			distinct = append(distinct[:0], s0)
			gi = gi[:0]
			for _, x := range mem {
				k := slices.Index(distinct, sigs[x])
				if k < 0 {
					if len(distinct) == 8 {
						break // many signatures: sorted below
					}
					distinct = append(distinct, sigs[x])
					k = len(distinct) - 1
				}
				gi = append(gi, uint8(k))
			}
			if len(gi) < len(mem) {
				sortBuf = sortBuf[:0]
				for _, x := range mem {
					sortBuf = append(sortBuf, keyedSig{sigs[x].a, x})
				}
				slices.SortFunc(sortBuf, func(p, q keyedSig) int { return cmp.Compare(p.a, q.a) })
				for i, k := range sortBuf {
					mem[i] = k.x
				}
			} else {
				var count [9]int
				for _, g := range gi {
					count[g+1]++
				}
				for g := 1; g < len(distinct); g++ {
					count[g] += count[g-1]
				}
				tmp = append(tmp[:0], mem...)
				for i, x := range tmp {
					g := gi[i]
					mem[count[g]] = x
					count[g]++
				}
			}
			base := bstart[bk]
			first := true
			for i := 0; i < len(mem); {
				j := i + 1
				for j < len(mem) && sigs[mem[j]] == sigs[mem[i]] {
					j++
				}
				if first {
					bend[bk] = base + int32(j) // the first run keeps the block
					first = false
				} else {
					id := int32(len(bstart))
					bstart = append(bstart, base+int32(i))
					bend = append(bend, base+int32(j))
					tmark = append(tmark, false)
					for _, x := range mem[i:j] {
						cls[x] = id
						for _, q := range preds[pstart[x]:pstart[x+1]] {
							if !dmark[q] {
								dmark[q] = true
								dirty = append(dirty, q)
							}
						}
					}
				}
				i = j
			}
		}
		touched = touched[:0]
		for _, q := range dirty {
			dmark[q] = false
			ns := stateSig(&ds[q], cls)
			if ns != sigs[q] {
				sigs[q] = ns
				if b := cls[q]; !tmark[b] {
					tmark[b] = true
					touched = append(touched, b)
				}
			}
		}
	}
	ncls := len(bstart)
	ms.bstart, ms.bend, ms.touched, ms.tmark, ms.dirty = bstart, bend, touched, tmark, dirty
	ms.sortBuf, ms.distinct, ms.gi, ms.tmp = sortBuf, distinct, gi, tmp
	return renumber(ds, cls, ncls, ms)
}

// predecessors lists every state's predecessors in CSR form: those of
// state i are preds[pstart[i]:pstart[i+1]], one per edge or call return.
func predecessors(ds []dstate, ms *minScratch) (pstart, preds []int32) {
	n := len(ds)
	pstart = zeroed(&ms.pstart, n+1)
	forEach := func(i int, f func(to int32)) {
		d := &ds[i]
		for _, e := range d.plain {
			f(e.to)
		}
		for _, e := range d.spec {
			f(e.to)
		}
		for _, c := range d.calls {
			f(c.ret)
		}
	}
	for i := range ds {
		forEach(i, func(to int32) { pstart[to+1]++ })
	}
	for i := 0; i < n; i++ {
		pstart[i+1] += pstart[i]
	}
	preds = zeroed(&ms.preds, int(pstart[n]))
	fill := append(ms.fill[:0], pstart[:n]...)
	ms.fill = fill
	for i := range ds {
		forEach(i, func(to int32) {
			preds[fill[to]] = int32(i)
			fill[to]++
		})
	}
	return pstart, preds
}

// renumber builds the minimized DFA: one state per class of cls (ncls
// classes), numbered in order of first appearance so the start stays 0,
// with edges retargeted to classes and adjacent plain edges merged.
func renumber(ds []dstate, cls []int32, ncls int, ms *minScratch) []dstate {
	ren := zeroed(&ms.ren, ncls)
	for i := range ren {
		ren[i] = -1
	}
	order := ms.order[:0]
	for i := range ds {
		if ren[cls[i]] < 0 {
			ren[cls[i]] = int32(len(order))
			order = append(order, int32(i))
		}
	}
	ms.order = order
	out := zeroed(&ms.out, len(order))
	var np, nsp, nc int
	for _, oi := range order {
		np, nsp, nc = np+len(ds[oi].plain), nsp+len(ds[oi].spec), nc+len(ds[oi].calls)
	}
	if cap(ms.plainAll) < np {
		ms.plainAll = make([]bedge, 0, np)
	}
	plainAll := ms.plainAll[:0]
	specAll := make([]spEdge, 0, nsp)
	callAll := make([]callEdge, 0, nc)
	for ni, oi := range order {
		d := ds[oi]
		nd := dstate{final: d.final, lim: d.lim, rb: d.rb, sd: d.sd, si: d.si}
		p0 := len(plainAll)
		for _, e := range d.plain {
			t := ren[cls[e.to]]
			if k := len(plainAll); k > p0 && plainAll[k-1].to == t && int(plainAll[k-1].hi)+1 == int(e.lo) {
				plainAll[k-1].hi = e.hi
			} else {
				plainAll = append(plainAll, bedge{lo: e.lo, hi: e.hi, to: t})
			}
		}
		s0 := len(specAll)
		for _, e := range d.spec {
			specAll = append(specAll, spEdge{e.lo, e.hi, e.op, ren[cls[e.to]]})
		}
		c0 := len(callAll)
		for _, c := range d.calls {
			callAll = append(callAll, callEdge{c.rule, ren[cls[c.ret]], c.op})
		}
		if len(plainAll) > p0 {
			nd.plain = plainAll[p0:len(plainAll):len(plainAll)]
		}
		if len(specAll) > s0 {
			nd.spec = specAll[s0:len(specAll):len(specAll)]
		}
		if len(callAll) > c0 {
			nd.calls = callAll[c0:len(callAll):len(callAll)]
		}
		out[ni] = nd
	}
	return out
}
