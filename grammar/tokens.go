package grammar

import (
	"bytes"
	"math/bits"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
)

// TokenizerInfo is a vocabulary prepared for masks: its token tries and
// byte tables. Built once per *Vocab (NewTokenizerInfo caches it); safe for
// concurrent use.
type TokenizerInfo struct {
	v       *Vocab
	all     *ttrie   // every non-special token
	noQuote *ttrie   // tokens without a '"' byte
	nqDec   []nqNode // per noQuote node: what it asks of a string DFA (interior.go)
	quote   *ttrie   // tokens with a '"' byte
	maxLen  int
	eos     []int32
	words   int
	// Near a string's length limit (FillMask): cpUp[id] is the number of
	// bytes of token id that may start a code point (all but UTF-8
	// continuation bytes), an upper bound on the code points it adds to a
	// string, exact for a token without '"' or '\\' taken at a code point
	// boundary. byCP lists the non-special tokens by cpUp, most first;
	// cpFrom[k] is the index in byCP of the first with cpUp ≤ k; cpSpec the
	// tokens with '"' or '\\', by cpUp, most first. cpLE[k] (built on first
	// use) is the bitset of the tokens with cpUp ≤ k or in cpSpec.
	cpUp   []uint16
	maxCP  int
	byCP   []int32
	cpFrom []int32
	cpSpec []int32
	cpMu   sync.Mutex
	cpLE   [][]uint64
	// interiorCache: canonical content language → []uint64
	interiorCache sync.Map
	// cut = min(interiorCut, maxLen); nqLong: the no-quote tokens longer
	// than cut bytes; cands: the last interiors walked, for states of other
	// automata that agree with one to the cut (the free string first)
	cut           int
	nqLong        []int32
	candMu        sync.Mutex
	bitsPool      sync.Pool // mask-sized scratch bitsets (computeStateMask)
	cands         []globalCand
	interiorWalks atomic.Int64 // walks done (the rest came from a cache)
}

// ttrie is a token trie in depth-first order; node 0 is the root.
type ttrie struct {
	nb    []byte  // byte on the edge into node i
	nend  []int32 // end of node i's subtree (exclusive)
	depth []uint8 // depth of node i (root 0; capped at 255)
	ntok0 []int32 // tokens ending at node i: toks[ntok0[i]:ntok0[i+1]]
	toks  []int32
}

var tiCache sync.Map // *Vocab → *TokenizerInfo

// NewTokenizerInfo returns the (cached) TokenizerInfo of v. v must not be
// modified afterwards.
func NewTokenizerInfo(v *Vocab) *TokenizerInfo {
	if x, ok := tiCache.Load(v); ok {
		return x.(*TokenizerInfo)
	}
	ti := buildTokenizerInfo(v)
	// The free string's interior is the one nearly every grammar needs (any
	// string value, any key of an open object) and the dearest to walk, as
	// nearly every token without '"' stays inside: computed here, with the
	// vocabulary, rather than on the first mask of the first grammar that
	// reaches a string (a whole-trie walk, the dearest part of a first mask).
	ti.interior(anyStrDFA, 0)
	x, _ := tiCache.LoadOrStore(v, ti)
	return x.(*TokenizerInfo)
}

func buildTokenizerInfo(v *Vocab) *TokenizerInfo {
	size := max(v.Size, len(v.Tokens))
	ti := &TokenizerInfo{v: v, words: (size + 63) / 64}
	var ids, q, nq []int32
	for id, t := range v.Tokens {
		if len(t) == 0 || id < len(v.Special) && v.Special[id] {
			continue
		}
		ids = append(ids, int32(id))
		if bytes.IndexByte(t, '"') >= 0 {
			q = append(q, int32(id))
		} else {
			nq = append(nq, int32(id))
		}
		ti.maxLen = max(ti.maxLen, len(t))
	}
	for _, e := range v.EOS {
		ti.eos = append(ti.eos, int32(e))
	}
	ti.cpUp = make([]uint16, len(v.Tokens))
	for _, id := range ids {
		n := 0
		for _, c := range v.Tokens[id] {
			if c < 0x80 || c >= 0xC0 {
				n++
			}
		}
		ti.cpUp[id] = uint16(min(n, 1<<16-1))
		ti.maxCP = max(ti.maxCP, n)
	}
	byCP := func(ids []int32) []int32 {
		out := slices.Clone(ids)
		sort.SliceStable(out, func(i, j int) bool { return ti.cpUp[out[i]] > ti.cpUp[out[j]] })
		return out
	}
	ti.byCP = byCP(ids)
	ti.cpFrom = make([]int32, ti.maxCP+1)
	for k, i := ti.maxCP, 0; k >= 0; k-- {
		for i < len(ti.byCP) && int(ti.cpUp[ti.byCP[i]]) > k {
			i++
		}
		ti.cpFrom[k] = int32(i)
	}
	var spec []int32
	for _, id := range ids {
		if bytes.IndexByte(v.Tokens[id], '"') >= 0 || bytes.IndexByte(v.Tokens[id], '\\') >= 0 {
			spec = append(spec, id)
		}
	}
	ti.cpSpec = byCP(spec)
	ti.cpLE = make([][]uint64, ti.maxCP+1)
	ti.all = buildTrie(v, ids)
	ti.quote = buildTrie(v, q)
	ti.noQuote = buildTrie(v, nq)
	ti.nqDec = decodeNoQuote(ti.noQuote)
	ti.cut = min(interiorCut, ti.maxLen)
	for _, id := range nq {
		if len(v.Tokens[id]) > ti.cut {
			ti.nqLong = append(ti.nqLong, id)
		}
	}
	return ti
}

func buildTrie(v *Vocab, ids []int32) *ttrie {
	ids = slices.Clone(ids)
	slices.SortStableFunc(ids, func(a, b int32) int { return bytes.Compare(v.Tokens[a], v.Tokens[b]) })
	tr := &ttrie{nb: []byte{0}, nend: []int32{0}, depth: []uint8{0}}
	tokOf := [][]int32{nil}
	var path []int32
	var prev []byte
	for _, id := range ids {
		t := v.Tokens[id]
		lcp := 0
		for lcp < len(prev) && lcp < len(t) && prev[lcp] == t[lcp] {
			lcp++
		}
		for len(path) > lcp {
			tr.nend[path[len(path)-1]] = int32(len(tr.nb))
			path = path[:len(path)-1]
		}
		for d := lcp; d < len(t); d++ {
			tr.nb = append(tr.nb, t[d])
			tr.nend = append(tr.nend, 0)
			tr.depth = append(tr.depth, uint8(min(d+1, 255)))
			tokOf = append(tokOf, nil)
			path = append(path, int32(len(tr.nb)-1))
		}
		last := path[len(path)-1]
		tokOf[last] = append(tokOf[last], id)
		prev = t
	}
	for _, p := range path {
		tr.nend[p] = int32(len(tr.nb))
	}
	tr.nend[0] = int32(len(tr.nb))
	tr.ntok0 = make([]int32, len(tr.nb)+1)
	for i, ts := range tokOf {
		tr.ntok0[i] = int32(len(tr.toks))
		tr.toks = append(tr.toks, ts...)
	}
	tr.ntok0[len(tr.nb)] = int32(len(tr.toks))
	return tr
}

// Vocab returns the vocabulary.
func (ti *TokenizerInfo) Vocab() *Vocab { return ti.v }

// MaskWords is the number of uint64 words of a mask for this vocabulary.
func (ti *TokenizerInfo) MaskWords() int { return ti.words }

// TrieNodes is the number of nodes of the token trie.
func (ti *TokenizerInfo) TrieNodes() int { return len(ti.all.nb) }

// cpMask returns cpLE[k] (0 ≤ k ≤ maxCP).
func (ti *TokenizerInfo) cpMask(k int) []uint64 {
	ti.cpMu.Lock()
	defer ti.cpMu.Unlock()
	if m := ti.cpLE[k]; m != nil {
		return m
	}
	m := make([]uint64, ti.words)
	for _, t := range ti.byCP[ti.cpFrom[k]:] {
		m[t>>6] |= 1 << (t & 63)
	}
	for _, t := range ti.cpSpec {
		m[t>>6] |= 1 << (t & 63)
	}
	ti.cpLE[k] = m
	return m
}

// ---- per-state mask cache ----

// stateMask is what a rule state allows regardless of context: tokens
// accepted through plain edges only (acc, as a list when short, else a
// bitset) and tokens whose fate depends on a checked edge, a call or a
// return (unc), simulated at run time.
type stateMask struct {
	// the tokens accepted on plain edges: accBits (read only: may be a
	// shared interior) and accList
	accList []int32
	accBits []uint64
	unc     []int32
	// fin: the tokens of acc that end in a final state, so return from the
	// rule; where the return is checked (callEdge.op) FillMask simulates them
	fin []int32
}

type ruleMasks struct {
	mu     sync.Mutex
	states []*stateMask
}

func (ti *TokenizerInfo) masksOf(r *rule) *ruleMasks {
	if x, ok := r.maskCache.Load(ti); ok {
		return x.(*ruleMasks)
	}
	x, _ := r.maskCache.LoadOrStore(ti, &ruleMasks{states: make([]*stateMask, r.nstates())})
	return x.(*ruleMasks)
}

func (ti *TokenizerInfo) stateMask(r *rule, s int32) *stateMask {
	rm := ti.masksOf(r)
	rm.mu.Lock()
	sm := rm.states[s]
	rm.mu.Unlock()
	if sm != nil {
		return sm
	}
	sm = ti.computeStateMask(r, s)
	rm.mu.Lock()
	if rm.states[s] == nil {
		rm.states[s] = sm
	}
	sm = rm.states[s]
	rm.mu.Unlock()
	return sm
}

// walk runs the token trie tr from state s of r through plain edges (see
// docs/masks.md): tokens accepted on plain edges go to acc; tokens that meet
// a checked edge, a call or a return before failing go to unc.
//
// Where a byte has no plain edge but only checked edges (and no call or
// return can intervene), the walk follows each checked edge assuming its
// check passes: tokens that then fail on every one are rejected outright,
// and only the survivors go to unc. (Only those edges could take the byte,
// and checks only restrict, so a token failing under the assumption fails.)
// Without this, a checked edge on the first byte of a key (the names still
// available) made every token starting with that letter uncertain, and the
// two checked commas of an object whose undeclared keys depend on
// maxProperties (build.go) every token starting with ','.
func walk(tr *ttrie, r *rule, s int32, acc []uint64, unc []int32, fin *[]int32) []int32 {
	return walkFrom(tr, r, 0, s, false, acc, unc, fin)
}

// walkFrom walks the subtree of trie node root (exclusive) from state s;
// spec: root was reached through an assumed check, so accepted tokens are
// uncertain.
func walkFrom(tr *ttrie, r *rule, root, s int32, spec bool, acc []uint64, unc []int32, fin *[]int32) []int32 {
	var st [256]int32
	var oth [256]bool
	var sp [256]bool // on an assumed-check path: accepted tokens are uncertain
	// cnt[d]: the code point counter of a string the token opened (-1: no
	// string opened mid-token; the counter of a string the walk starts in
	// is the runtime's, see FillMask)
	var cnt [256]int32
	d0 := tr.depth[root]
	st[d0], sp[d0], cnt[d0] = s, spec, -1
	n := tr.nend[root]
	ncls := r.ncls
	next, cls := r.next, &r.cls
	for i := root + 1; i < n; {
		d := tr.depth[i]
		ps := st[d-1]
		b := tr.nb[i]
		t := next[ps*ncls+int32(cls[b])]
		c := int32(-1)
		if t >= 0 && r.lim[t] >= 0 {
			// a string opened mid-token: its counter is known here, and
			// refuses as the runtime does (move)
			switch {
			case r.lim[ps] < 0:
				c = 0
			case cnt[d-1] >= 0:
				c = cnt[d-1]
				if r.rb[ps] {
					c++
				}
			}
			if c >= 0 && c+r.sdist[t] > r.lim[t] {
				t = -1
			}
		}
		other := oth[d-1]
		inSpec := sp[d-1]
		if !other {
			if d == 1 {
				other = r.otherStart[ps][b>>6]&(1<<(b&63)) != 0
			} else {
				other = r.otherMid[ps][b>>6]&(1<<(b&63)) != 0
			}
		}
		if t >= 0 {
			toks := tr.toks[tr.ntok0[i]:tr.ntok0[i+1]]
			if inSpec {
				unc = append(unc, toks...)
			} else {
				for _, x := range toks {
					acc[x>>6] |= 1 << (x & 63)
				}
				if r.final[t] {
					*fin = append(*fin, toks...)
				}
			}
			if d < 255 {
				st[d], oth[d], sp[d], cnt[d] = t, other, inSpec, c
				i++
				continue
			}
		} else if other && d < 255 {
			if t2, k := specOnly(r, ps, b, d == 1); k == 1 {
				unc = append(unc, tr.toks[tr.ntok0[i]:tr.ntok0[i+1]]...)
				st[d], oth[d], sp[d], cnt[d] = t2, false, true, -1
				i++
				continue
			} else if k > 1 {
				unc = append(unc, tr.toks[tr.ntok0[i]:tr.ntok0[i+1]]...)
				for _, e := range r.spec[ps] {
					if e.lo <= b && b <= e.hi {
						unc = walkFrom(tr, r, i, e.to, true, acc, unc, fin)
					}
				}
				i = tr.nend[i]
				continue
			}
		}
		if other {
			unc = append(unc, tr.toks[tr.ntok0[i]:tr.ntok0[tr.nend[i]]]...)
		}
		i = tr.nend[i]
	}
	return unc
}

// specOnly returns the target of a checked edge on byte b at state s and the
// number k of checked edges on b, when checked edges are the only way b can
// be taken (mid-token, no return or call at s); else k = 0. The caller knows
// there is no plain edge.
func specOnly(r *rule, s int32, b byte, start bool) (int32, int) {
	if !start && (r.final[s] || len(r.calls[s]) > 0) {
		return -1, 0
	}
	to, k := int32(-1), 0
	for _, e := range r.spec[s] {
		if e.lo <= b && b <= e.hi {
			to = e.to
			k++
		}
	}
	return to, k
}

// interior returns the tokens without '"' that stay inside a string from
// state si of content DFA sd. It depends only on which code point sequences
// may follow (finality does not matter inside a token), so it is cached
// under a canonical form of that prefix-closed language: every free string,
// every key of an object that allows any key, every state of a format that
// recurs in another schema share one entry.
func (ti *TokenizerInfo) interior(sd *rdfa, si int32) []uint64 {
	if !sd.cheapDone.Load() {
		// the automaton's quotient is not built: a state whose language
		// agrees to the longest token with one walked before (the free
		// string first) takes its interior without it. Every key state of
		// an object that allows any key agrees with the free string, and
		// each object has its own key automaton: the first key of
		// Github_medium o39217 (32 object rules) built 32 quotients, ~25
		// KB of fresh memory each, for the free string's interior.
		ti.candMu.Lock()
		gc := slices.Clone(ti.cands)
		ti.candMu.Unlock()
		for i := range gc {
			if gc[i].sd != sd && sameCutRaw(gc[i].sd, gc[i].si, sd, si, ti.maxLen, 512) >= ti.maxLen {
				return gc[i].m
			}
		}
	}
	canon := sd.prefixCheap()
	var key sig128
	if canon {
		key = sd.canonKey(si)
		if m, ok := ti.interiorCache.Load(key); ok {
			return m.([]uint64)
		}
	}
	x, _ := sd.icand.LoadOrStore(ti, &interiorCands{})
	ic := x.(*interiorCands)
	ic.mu.Lock()
	if m, ok := ic.local[si]; ok {
		ic.mu.Unlock()
		return m
	}
	cands := slices.Clone(ic.list)
	ic.mu.Unlock()
	wd, ws := sd, si // what the walk runs on: the quotient where there is one
	if canon && sd.msig == nil {
		cls, q := sd.prefixClasses()
		wd, ws = q, cls[si]
	}
	// A token of n bytes spans at most n code points, so the interior is
	// decided by the language cut to maxLen code points, and on the tokens
	// of at most cut bytes by the language cut to cut code points: a state
	// that agrees with si to maxLen has its interior; one that agrees to
	// cut, its interior with the few longer tokens decided one by one
	// (fixLong). The state is looked for among the last walked from the
	// same automaton (a word counter's next word), then among the last
	// walked anywhere, the free string first (a word counter far from its
	// bound, a length bound written as a pattern).
	var m, base []uint64
	for i := len(cands) - 1; i >= 0 && m == nil; i-- {
		switch k := sameCutDepth(sd, cands[i].si, sd, si, ti.maxLen, 4096); {
		case k >= ti.maxLen:
			m = cands[i].m
		case k >= ti.cut && base == nil:
			base = cands[i].m
		}
	}
	if m == nil {
		ti.candMu.Lock()
		gc := slices.Clone(ti.cands)
		ti.candMu.Unlock()
		for i := len(gc) - 1; i >= 0 && m == nil; i-- {
			if gc[i].sd == sd {
				continue // compared above
			}
			switch k := sameCutDepth(gc[i].sd, gc[i].si, sd, si, ti.maxLen, 1024); {
			case k >= ti.maxLen:
				m = gc[i].m
			case k >= ti.cut && base == nil:
				base = gc[i].m
			}
		}
	}
	switch {
	case m != nil:
	case base != nil:
		m = slices.Clone(base)
		ti.fixLong(wd, ws, m)
	default:
		m = make([]uint64, ti.words)
		ti.interiorWalk(wd, ws, m) // without the quotient, every state taken as final: the same language
		ti.interiorWalks.Add(1)
		ic.mu.Lock()
		if len(ic.list) == maxInteriorCands {
			ic.list = append(ic.list[:0], ic.list[1:]...)
		}
		ic.list = append(ic.list, interiorCand{si, m})
		ic.mu.Unlock()
		ti.candMu.Lock()
		if len(ti.cands) == maxGlobalCands {
			// the first (the free string) stays
			ti.cands = append(ti.cands[:1], ti.cands[2:]...)
		}
		ti.cands = append(ti.cands, globalCand{sd, si, m})
		ti.candMu.Unlock()
	}
	if !canon {
		// no canonical key without the quotient: kept on the automaton
		ic.mu.Lock()
		if ic.local == nil {
			ic.local = map[int32][]uint64{}
		}
		ic.local[si] = m
		ic.mu.Unlock()
		return m
	}
	y, _ := ti.interiorCache.LoadOrStore(key, m)
	return y.([]uint64)
}

// fixLong decides in m the no-quote tokens longer than the cut (nqLong)
// from state start of d, one by one, as interiorWalk would.
func (ti *TokenizerInfo) fixLong(d *rdfa, start int32, m []uint64) {
	w := newCPWalker(d)
	toks := ti.v.Tokens
	for _, t := range ti.nqLong {
		ok := len(toks[t]) <= 255 // interiorWalk stops at depth 255
		p := cpPos{q: start}
		for _, b := range toks[t] {
			if !ok {
				break
			}
			p, ok = w.step(p, b)
		}
		if ok {
			m[t>>6] |= 1 << (t & 63)
		} else {
			m[t>>6] &^= 1 << (t & 63)
		}
	}
}

// interiorCands are the last interiors walked from one automaton's states.
type interiorCands struct {
	mu    sync.Mutex
	list  []interiorCand
	local map[int32][]uint64 // by state, where prefixClasses is too dear
}

type interiorCand struct {
	si int32
	m  []uint64
}

// globalCand is an interior walked from state si of sd, for other
// automata whose languages agree with it to the cut.
type globalCand struct {
	sd *rdfa
	si int32
	m  []uint64
}

// maxInteriorCands bounds the states a new one is compared with (each
// comparison is at most a few thousand state pairs).
const maxInteriorCands = 8

// maxGlobalCands bounds the interiors of other automata a new state is
// compared with (each comparison at most 1,024 state pairs; most end at the
// first, on different first code points).
const maxGlobalCands = 16

// interiorCut is the cut in code points under which interiors are shared
// across states (interior); llama3 has 128-byte tokens but ~1% of its
// tokens are longer than 16 bytes.
const interiorCut = 16

// computeStateMask is the context-independent part of the mask at state s.
func (ti *TokenizerInfo) computeStateMask(r *rule, s int32) *stateMask {
	sm := &stateMask{}
	// acc is a scratch bitset: most states keep a list, and a string state
	// the shared interior plus a list, so a first visit allocates no
	// vocabulary-wide mask (fresh memory: a mask with dozens of first
	// visits would page-fault on each)
	acc := ti.scratchBits()
	defer ti.putScratchBits(acc)
	var in []uint64
	if p := r.prov[s]; p.sd != nil {
		in = ti.interior(p.sd, p.si)
		sm.unc = walk(ti.quote, r, s, acc, nil, &sm.fin)
	} else {
		sm.unc = walk(ti.all, r, s, acc, nil, &sm.fin)
	}
	cnt, icnt := 0, 0
	for _, w := range acc {
		cnt += bits.OnesCount64(w)
	}
	for _, w := range in {
		icnt += bits.OnesCount64(w)
	}
	switch {
	case icnt > 0 && icnt+cnt > 2048:
		// the interior (no '"' tokens) and the quote trie's (with one)
		// are disjoint: accBits is the shared interior, read only
		sm.accBits = in
	case icnt+cnt > 2048:
		for i, w := range in {
			acc[i] |= w
		}
		sm.accBits = slices.Clone(acc)
		return sm
	default:
		for i, w := range in {
			acc[i] |= w
		}
		cnt += icnt
	}
	sm.accList = make([]int32, 0, cnt)
	for i, w := range acc {
		for w != 0 {
			sm.accList = append(sm.accList, int32(i*64+bits.TrailingZeros64(w)))
			w &= w - 1
		}
	}
	return sm
}

// scratchBits is a zeroed mask-sized bitset; putScratchBits takes it back
// (zeroing it).
func (ti *TokenizerInfo) scratchBits() []uint64 {
	if x := ti.bitsPool.Get(); x != nil {
		return *(x.(*[]uint64))
	}
	return make([]uint64, ti.words)
}

func (ti *TokenizerInfo) putScratchBits(b []uint64) {
	clear(b)
	ti.bitsPool.Put(&b)
}

// TokenMatcher runs a Grammar over tokens of a vocabulary. Not safe for
// concurrent use; many TokenMatchers may share a Grammar and TokenizerInfo.
type TokenMatcher struct {
	g    *Grammar
	ti   *TokenizerInfo
	cur  []cfg
	hist []tmStep
	term bool
	out  []byte // the bytes accepted (runCtx)
	bufA []cfg
	bufB []cfg
	tmp  []uint64
	// groups: FillMask's configurations by top (shared.go)
	groups []cfgGroup
	// scr[:nscr]: the buffers of the shared runs in progress (shared.go)
	scr  []*runScratch
	nscr int
	ps   prefixSim // a lone configuration's simulations (shared.go)
}

type tmStep struct {
	cfgs []cfg
	term bool
	n    int // len(out) before the step
}

// NewTokenMatcher returns a token matcher at the start of the grammar.
func (g *Grammar) NewTokenMatcher(ti *TokenizerInfo) *TokenMatcher {
	return &TokenMatcher{g: g, ti: ti, cur: g.initial()}
}

// simulate reports whether token bytes t are accepted from configuration c.
func (tm *TokenMatcher) simulate(c *cfg, t []byte) bool {
	a := append(tm.bufA[:0], *c)
	b := tm.bufB[:0]
	for i, x := range t {
		b = tm.g.step(a, x, b[:0], &runCtx{base: tm.out, ext: t[:i]})
		if len(b) == 0 {
			tm.bufA, tm.bufB = a, b
			return false
		}
		a, b = b, a
	}
	tm.bufA, tm.bufB = a, b
	return true
}

// inString decides token bytes tok from string content state s with
// counter cnt when they stay inside the string on plain edges: the rule's
// byte DFA and the counter rule of move, without the configuration set
// simulate steps (near a string's limit most tokens are checked, and a
// simulation each would be tens of thousands per mask).
// known is false when a byte leaves the string or has no plain edge: the
// matcher decides those.
func inString(r *rule, s, cnt int32, tok []byte) (ok, known bool) {
	_, ok, known = inStringTo(r, s, cnt, tok)
	return ok, known
}

// plainWalk is the state tok leads to from s on r's plain edges alone,
// with the string counter rule of move, or -1 where a byte has no plain
// edge, the counter refuses it, or the token ends where the rule returns
// at once (popOnly: its fate is the caller's). Acceptance on that path is
// acceptance; failure says nothing of the other paths.
func plainWalk(r *rule, s, cnt int32, tok []byte) int32 {
	c := cfg{cnt: cnt}
	for _, b := range tok {
		t := r.next[s*r.ncls+int32(r.cls[b])]
		if t < 0 || !move(r, s, t, &c) {
			return -1
		}
		s = t
	}
	if r.popOnly[s] {
		return -1
	}
	return s
}

// nearWalk decides, for every token without '"' set in tmp, what inString
// would decide token by token from string content state s with counter
// cnt, in one walk of the no-quote trie: a prefix the counter refuses
// refuses its whole subtree, which inString pays for once per token. Near a
// binding limit over a string that needs many code points to finish
// (Github_easy o44204's [0-9]{10,10} under maxLength 10: sdist 10 at the
// start, so every token is checked) that would be an inString call for
// nearly every token on every visit; the walk stops at the first byte
// that cannot be a digit. Where inString would not know (a byte without a
// plain edge, or out of the string: not for tokens a string's interior
// holds), the subtree's tokens are left to decide (undecided).
func nearWalk(tr *ttrie, r *rule, s, cnt int32, tmp []uint64, undecided func(ts []int32)) {
	var st, cn [256]int32
	st[0], cn[0] = s, cnt
	n := tr.nend[0]
	ncls := r.ncls
	next, cls := r.next, &r.cls
	lim, rb, sdist := r.lim, r.rb, r.sdist
	for i := int32(1); i < n; {
		d := tr.depth[i]
		ps, c := st[d-1], cn[d-1]
		t := next[ps*ncls+int32(cls[tr.nb[i]])]
		if t < 0 || lim[t] < 0 {
			undecided(tr.toks[tr.ntok0[i]:tr.ntok0[tr.nend[i]]])
			i = tr.nend[i]
			continue
		}
		if rb[ps] {
			c++
		}
		if c+sdist[t] > lim[t] {
			for _, x := range tr.toks[tr.ntok0[i]:tr.ntok0[tr.nend[i]]] {
				tmp[x>>6] &^= 1 << (x & 63)
			}
			i = tr.nend[i]
			continue
		}
		// the tokens ending here are accepted: left as they are
		if d == 255 {
			// (depth is capped: longer tokens are decided one by one)
			undecided(tr.toks[tr.ntok0[i+1]:tr.ntok0[tr.nend[i]]])
			i = tr.nend[i]
			continue
		}
		st[d], cn[d] = t, c
		i++
	}
}

// nearWalkMin is the number of tokens to check near a string's limit from
// which FillMask walks the no-quote trie (nearWalk) rather than checking
// them one by one: a walk visits up to the whole trie (~300,000 nodes), so
// a few thousand single checks are cheaper.
var nearWalkMin = 4096 // a variable for TestMaskNearLimit

// inStringTo is inString with the state the token ends in (when ok).
func inStringTo(r *rule, s, cnt int32, tok []byte) (end int32, ok, known bool) {
	for _, b := range tok {
		t := r.next[s*r.ncls+int32(r.cls[b])]
		if t < 0 || r.lim[t] < 0 {
			return -1, false, false
		}
		if r.rb[s] {
			cnt++
		}
		if cnt+r.sdist[t] > r.lim[t] {
			return -1, false, true
		}
		s = t
	}
	return s, true, true
}

// FillMask sets bits (len ≥ MaskWords) to the allowed next tokens: bit id of
// word id/64. EOS ids are allowed only when the output is complete; special
// tokens never; after EOS was accepted nothing is allowed.
func (tm *TokenMatcher) FillMask(bits []uint64) {
	clear(bits[:tm.ti.words])
	if tm.term {
		return
	}
	ti := tm.ti
	toks := ti.v.Tokens
	// configurations that differ only below their top share their
	// simulations (shared.go)
	tm.groups = groupCfgs(tm.cur, tm.groups)
	for gi := range tm.groups {
		tm.ps.reset() // the sets hold this mask's output and configuration
		gr := &tm.groups[gi]
		c := &gr.rep
		sg, lr := tm.g.seg(c.rule)
		r := sg.rules[lr]
		sm := ti.stateMask(r, c.state)
		// Inside a string, the cached mask assumes the length limit is far:
		// safe is how many code points a token may add and still leave the
		// string finishable (rules.go, sdist), whatever state it ends in.
		lim := r.lim[c.state]
		hard, safe := -1, -1
		if lim >= 0 {
			hard = int(lim - c.cnt)
			safe = hard - int(r.sdmax[c.state])
		}
		// Where no path from here can reach the limit (the automaton bounds
		// the string itself), it refuses nothing the cached mask allows.
		near := lim >= 0 && safe < ti.maxCP && c.cnt+r.slong[c.state] > lim
		// Near the depth limit a token that stays inside the rule may still
		// end in a state that cannot finish (depth.go): check every one.
		di := sg.depths()
		deep := frameDepth(c)+di.maxNeed[lr] > int32(tm.g.opts.MaxDepth)
		need := di.need[lr]
		// A token that ends the rule returns from it; where that return is
		// checked (a uniqueItems item, unique.go) the cached mask cannot
		// know whether it is taken.
		checkedRet := c.stack != nil && c.stack.op != 0
		if !near && !deep && !checkedRet {
			for i, w := range sm.accBits {
				bits[i] |= w
			}
			for _, t := range sm.accList {
				bits[t>>6] |= 1 << (t & 63)
			}
		} else {
			if len(tm.tmp) < ti.words {
				tm.tmp = make([]uint64, ti.words)
			}
			tmp := tm.tmp[:ti.words]
			if sm.accBits != nil {
				copy(tmp, sm.accBits)
			} else {
				clear(tmp)
			}
			for _, t := range sm.accList {
				tmp[t>>6] |= 1 << (t & 63)
			}
			check1 := func(t int32) {
				if tmp[t>>6]&(1<<(t&63)) == 0 {
					return
				}
				ok, known := false, false
				if !deep {
					ok, known = inString(r, c.state, c.cnt, toks[t])
				} else if end := plainWalk(r, c.state, c.cnt, toks[t]); end >= 0 && frameDepth(c)+need[end] <= int32(tm.g.opts.MaxDepth) {
					// on plain edges need only grows (depth.go), so the
					// state the token ends in decides what add would;
					// where that fails another path (a return mid-token)
					// may not: the matcher decides
					ok, known = true, true
				}
				if !known {
					ok = tm.anyAccepts(gr, toks[t])
				}
				if !ok {
					tmp[t>>6] &^= 1 << (t & 63)
				}
			}
			check := func(ts []int32) {
				for _, t := range ts {
					check1(t)
				}
			}
			if checkedRet && !deep {
				for _, t := range sm.fin {
					if tmp[t>>6]&(1<<(t&63)) != 0 && !tm.anyAccepts(gr, toks[t]) {
						tmp[t>>6] &^= 1 << (t & 63)
					}
				}
			}
			// how many tokens the limit makes FillMask check (below)
			span := 0
			switch {
			case !near || deep:
			case safe < 0 && !r.rb[c.state]:
				span = len(ti.byCP)
			case !r.rb[c.state]:
				span = int(ti.cpFrom[safe])
			default:
				span = len(ti.byCP) - int(ti.cpFrom[min(hard, ti.maxCP)])
				if safe >= 0 {
					span = int(ti.cpFrom[safe]) - int(ti.cpFrom[min(hard, ti.maxCP)])
				}
			}
			switch {
			case !near && !deep:
			case !deep && span >= nearWalkMin:
				// the tokens without '"' in one walk, exactly as check
				// would decide them; those with '"', as check would
				// (every one with more than safe code points)
				nearWalk(ti.noQuote, r, c.state, c.cnt, tmp, check)
				for _, t := range ti.quote.toks {
					if int(ti.cpUp[t]) > safe {
						check1(t)
					}
				}
			case deep || safe < 0 && !r.rb[c.state]:
				check(ti.byCP) // every token
			case !r.rb[c.state]:
				// mid code point (a UTF-8 sequence or an escape): cpUp is only
				// an upper bound; tokens within safe are fine
				check(ti.byCP[:ti.cpFrom[safe]])
			default:
				// at a code point boundary a token without '"' or '\\' adds
				// exactly cpUp code points: more than hard fails, at most safe
				// is fine, and in between depends on the state it ends in
				h := min(hard, ti.maxCP)
				for i, w := range ti.cpMask(h) {
					tmp[i] &= w
				}
				end := len(ti.byCP)
				if safe >= 0 {
					end = int(ti.cpFrom[safe])
				}
				check(ti.byCP[ti.cpFrom[h]:end])
				for _, t := range ti.cpSpec {
					if int(ti.cpUp[t]) <= h {
						break
					}
					if tmp[t>>6]&(1<<(t&63)) != 0 && !tm.anyAccepts(gr, toks[t]) {
						tmp[t>>6] &^= 1 << (t & 63)
					}
				}
			}
			for i, w := range tmp {
				bits[i] |= w
			}
		}
		for _, t := range sm.unc {
			if bits[t>>6]&(1<<(t&63)) != 0 {
				continue
			}
			if tm.anyAccepts(gr, toks[t]) {
				bits[t>>6] |= 1 << (t & 63)
			}
		}
	}
	if tm.g.accepting(tm.cur) {
		for _, e := range ti.eos {
			bits[e>>6] |= 1 << (e & 63)
		}
	}
}

func trailingZeros(w uint64) int { return bits.TrailingZeros64(w) }

func (tm *TokenMatcher) isEOS(id int) bool {
	for _, e := range tm.ti.eos {
		if int(e) == id {
			return true
		}
	}
	return false
}

// Accept consumes token id; false (and no change) if it is not allowed.
func (tm *TokenMatcher) Accept(id int) bool {
	if tm.term || id < 0 || id >= len(tm.ti.v.Tokens) {
		return false
	}
	if tm.isEOS(id) {
		if !tm.g.accepting(tm.cur) {
			return false
		}
		tm.hist = append(tm.hist, tmStep{tm.cur, false, len(tm.out)})
		tm.term = true
		return true
	}
	v := tm.ti.v
	if id < len(v.Special) && v.Special[id] || len(v.Tokens[id]) == 0 {
		return false
	}
	return tm.AcceptBytes(v.Tokens[id])
}

// AcceptBytes consumes raw bytes as one step (e.g. forced bytes); false
// (and no change) if they are not allowed.
func (tm *TokenMatcher) AcceptBytes(p []byte) bool {
	if tm.term {
		return false
	}
	cur := tm.cur
	for i, b := range p {
		next := tm.g.step(cur, b, nil, &runCtx{base: tm.out, ext: p[:i]})
		if len(next) == 0 {
			return false
		}
		cur = next
	}
	tm.hist = append(tm.hist, tmStep{tm.cur, tm.term, len(tm.out)})
	tm.cur = cur
	tm.out = append(tm.out, p...)
	return true
}

// IsAccepting reports whether the output so far is complete (EOS allowed).
func (tm *TokenMatcher) IsAccepting() bool { return !tm.term && tm.g.accepting(tm.cur) }

// IsTerminated reports whether an EOS token was accepted.
func (tm *TokenMatcher) IsTerminated() bool { return tm.term }

// Steps is the number of steps (tokens or AcceptBytes calls) accepted.
func (tm *TokenMatcher) Steps() int { return len(tm.hist) }

// Rollback undoes the last n steps.
func (tm *TokenMatcher) Rollback(n int) {
	if n <= 0 {
		return
	}
	if n > len(tm.hist) {
		n = len(tm.hist)
	}
	k := len(tm.hist) - n
	tm.cur, tm.term = tm.hist[k].cfgs, tm.hist[k].term
	tm.out = tm.out[:tm.hist[k].n]
	tm.hist = tm.hist[:k]
}

// Reset returns to the start.
func (tm *TokenMatcher) Reset() {
	tm.cur = tm.g.initial()
	tm.hist = nil
	tm.out = tm.out[:0]
	tm.term = false
}

// Forced returns the bytes the grammar forces next (see Matcher.Forced).
func (tm *TokenMatcher) Forced() []byte {
	if tm.term {
		return nil
	}
	return tm.g.forced(tm.cur, 4096, tm.out)
}
