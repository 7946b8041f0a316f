package grammar

// The interior of a string language (docs/masks.md §3) is computed by
// walking the no-quote token trie directly over the code point DFA,
// decoding UTF-8 and JSON escapes on the way. Before, the DFA was first
// encoded as a byte automaton (strTemplate), determinized and tabulated
// (newRule), then walked: linear in the encoded size, which for a large
// Unicode class under a counter (a pattern such as [\p{L}…]{1,200}: 201
// states of 427 ranges each, no UTF-8 suffix shared between states) was
// 140,000 byte states and 0.3–1 s on a mask's first visit. The direct walk
// costs what the trie walk cost, whatever the DFA's size.
//
// What it accepts is exactly what the encoded automaton accepted: a byte
// prefix of the JSON-string encoding (strRunes) of a code point sequence of
// the language — raw UTF-8 for code points ≥ 0x20 other than '"' and '\\',
// the short escapes \" \\ \/ \b \f \n \r \t, \u00XX (either hex case) for the
// other controls. A token ending inside a code point or an escape is
// accepted when some code point of the current state completes it.
// TestInteriorDirectMatchesEncoded checks the two agree.

// cpPos is a walk position: DFA state q and what is pending inside the
// current code point.
type cpPos struct {
	q    int32
	mode uint8 // cpAt, cpUTF8, cpEsc, cpU, cpU0, cpU00, cpU00k
	n    uint8 // cpUTF8: the sequence's length in bytes
	need uint8 // cpUTF8: continuation bytes still to come
	cp   rune  // cpUTF8: the bits so far; cpU00k: the high hex digit
}

const (
	cpAt   = iota // at a code point boundary
	cpUTF8        // inside a multi-byte UTF-8 sequence
	cpEsc         // after '\\'
	cpU           // after "\\u"
	cpU0          // after "\\u0"
	cpU00         // after "\\u00"
	cpU00k        // after "\\u00" and a hex digit (0 or 1)
)

// cpWalker holds one walk's per-state ASCII tables, built on first use,
// and for states with many edges (a big Unicode class), an index of their
// edges by block of 64 code points over the BMP, built after a few
// lookups: a binary search over hundreds of ranges at every byte of every
// non-ASCII token would be most of the walk of such a class.
type cpWalker struct {
	d     *rdfa
	ascii []*[128]int32
	blk   []*[1024]uint16 // blk[q][c>>6]: the first edge of q with hi ≥ c&^63
	looks []uint8         // binary searches done per state, up to bigLooks
}

const (
	bigEdges = 32 // states with at least this many edges get an index…
	bigLooks = 16 // …after this many lookups
)

func newCPWalker(d *rdfa) *cpWalker {
	return &cpWalker{d: d, ascii: make([]*[128]int32, len(d.st))}
}

func (w *cpWalker) table(q int32) *[128]int32 {
	if t := w.ascii[q]; t != nil {
		return t
	}
	t := new([128]int32)
	for i := range t {
		t[i] = -1
	}
	for _, e := range w.d.st[q].edges {
		if e.lo >= 0x80 {
			break
		}
		for c := e.lo; c <= min(e.hi, 0x7F); c++ {
			t[c] = e.to
		}
	}
	// written raw only from 0x20 on, and never '"' ('\\' is an escape:
	// step does not look it up)
	for c := 0; c < 0x20; c++ {
		t[c] = -1
	}
	t['"'] = -1
	w.ascii[q] = t
	return t
}

// first is the index of the first edge of q with hi ≥ c (len when none).
func (w *cpWalker) first(q int32, c rune) int {
	es := w.d.st[q].edges
	if len(es) >= bigEdges && c < 0x10000 {
		if b := w.index(q); b != nil {
			i := int(b[c>>6])
			for i < len(es) && es[i].hi < c {
				i++
			}
			return i
		}
	}
	i, j := 0, len(es)
	for i < j {
		h := int(uint(i+j) >> 1)
		if es[h].hi < c {
			i = h + 1
		} else {
			j = h
		}
	}
	return i
}

// index is q's block index, built on the bigLooks-th lookup (nil before).
func (w *cpWalker) index(q int32) *[1024]uint16 {
	if w.blk == nil {
		w.blk = make([]*[1024]uint16, len(w.d.st))
		w.looks = make([]uint8, len(w.d.st))
	}
	if b := w.blk[q]; b != nil {
		return b
	}
	es := w.d.st[q].edges
	if w.looks[q]++; w.looks[q] < bigLooks || len(es) > 0xFFFF {
		return nil
	}
	b := new([1024]uint16)
	i := 0
	for k := range b {
		for i < len(es) && es[i].hi < rune(k)<<6 {
			i++
		}
		b[k] = uint16(i)
	}
	w.blk[q] = b
	return b
}

// has reports whether state q has a code point in lo..hi.
func (w *cpWalker) has(q int32, lo, hi rune) bool {
	es := w.d.st[q].edges
	i := w.first(q, lo)
	return i < len(es) && es[i].lo <= hi
}

// target is the state after code point c from q, or -1.
func (w *cpWalker) target(q int32, c rune) int32 {
	es := w.d.st[q].edges
	if i := w.first(q, c); i < len(es) && es[i].lo <= c {
		return es[i].to
	}
	return -1
}

// escapable reports whether q has a code point written with an escape
// (strRunes: escMask ≠ 0).
func (w *cpWalker) escapable(q int32) bool {
	return w.has(q, 0, 0x1F) || w.has(q, '"', '"') || w.has(q, '\\', '\\') || w.has(q, '/', '/')
}

// uEsc reports whether q has a control written as \u00XX with high digit k
// (k < 0: either), i.e. one without a short escape.
func (w *cpWalker) uEsc(q int32, k rune) bool {
	if k != 1 && (w.has(q, 0, 7) || w.has(q, 0xB, 0xB) || w.has(q, 0xE, 0xF)) {
		return true
	}
	return k != 0 && w.has(q, 0x10, 0x1F)
}

var utf8Min = [5]rune{0, 0, 0x80, 0x800, 0x10000}
var utf8Max = [5]rune{0, 0, 0x7FF, 0xFFFF, maxRune}

// partial reports whether some code point of q has a UTF-8 encoding that
// starts with the bytes of p.
func (w *cpWalker) partial(p cpPos) bool {
	sh := 6 * uint(p.need)
	lo := max(p.cp<<sh, utf8Min[p.n])
	hi := min(p.cp<<sh|(1<<sh-1), utf8Max[p.n])
	return lo <= hi && w.has(p.q, lo, hi)
}

var shortEscOf = [256]int16{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

func hexVal(b byte) rune {
	switch {
	case '0' <= b && b <= '9':
		return rune(b - '0')
	case 'a' <= b && b <= 'f':
		return rune(b-'a') + 10
	case 'A' <= b && b <= 'F':
		return rune(b-'A') + 10
	}
	return -1
}

// step is the position after byte b, and whether there is one.
func (w *cpWalker) step(p cpPos, b byte) (cpPos, bool) {
	switch p.mode {
	case cpAt:
		switch {
		case b < 0x80:
			if b == '\\' {
				return cpPos{q: p.q, mode: cpEsc}, w.escapable(p.q)
			}
			t := w.table(p.q)[b]
			return cpPos{q: t}, t >= 0
		case b >= 0xC2 && b <= 0xDF:
			p = cpPos{q: p.q, mode: cpUTF8, n: 2, need: 1, cp: rune(b & 0x1F)}
		case b >= 0xE0 && b <= 0xEF:
			p = cpPos{q: p.q, mode: cpUTF8, n: 3, need: 2, cp: rune(b & 0x0F)}
		case b >= 0xF0 && b <= 0xF4:
			p = cpPos{q: p.q, mode: cpUTF8, n: 4, need: 3, cp: rune(b & 0x07)}
		default:
			return p, false
		}
		return p, w.partial(p)
	case cpUTF8:
		if b&0xC0 != 0x80 {
			return p, false
		}
		p.cp = p.cp<<6 | rune(b&0x3F)
		p.need--
		if p.need > 0 {
			return p, w.partial(p)
		}
		// not overlong: partial checked the sequence's range at every byte
		t := w.target(p.q, p.cp)
		return cpPos{q: t}, t >= 0
	case cpEsc:
		if b == 'u' {
			return cpPos{q: p.q, mode: cpU}, w.uEsc(p.q, -1)
		}
		c := shortEscOf[b]
		if c == 0 {
			return p, false
		}
		t := w.target(p.q, rune(c))
		return cpPos{q: t}, t >= 0
	case cpU, cpU0:
		p.mode++
		return p, b == '0'
	case cpU00:
		if b != '0' && b != '1' {
			return p, false
		}
		k := rune(b - '0')
		return cpPos{q: p.q, mode: cpU00k, cp: k}, w.uEsc(p.q, k)
	case cpU00k:
		h := hexVal(b)
		if h < 0 {
			return p, false
		}
		c := p.cp<<4 | h
		if escLetter[c] != 0 {
			return p, false // has a short escape: \u00XX is not accepted
		}
		t := w.target(p.q, c)
		return cpPos{q: t}, t >= 0
	}
	return p, false
}

// escLetter is the short-escape letter of a control (0: none).
var escLetter = [0x20]byte{'\b': 'b', '\f': 'f', '\n': 'n', '\r': 'r', '\t': 't'}

// What a no-quote trie node asks of the DFA, decoded once per vocabulary
// (decodeNoQuote): a walk starts at a code point boundary, so whether a
// node's byte completes a code point, and which, or what the bytes so far
// leave pending, depends on the node's path only. The walk then keeps only
// the DFA state of the last boundary per depth and does one lookup per node
// (the first visit of a new string language is this walk).
const (
	nqDead  = iota // no code point sequence is encoded so: skip the subtree
	nqASCII        // completes ASCII code point lo (the state's table)
	nqCP           // completes code point lo (UTF-8 or an escape)
	nqRange        // inside a UTF-8 sequence: some code point in lo..hi
	nqEsc          // after '\\': an escapable code point
	nqUEsc         // after "\\u" (lo < 0) or "\\u00" and digit lo: a control written \\u00XX
	nqPass         // inside "\\u00": nothing new to ask
)

type nqNode struct {
	op     uint8
	lo, hi rune
}

// decodeNoQuote decodes every node of the no-quote trie tr (see nqDead…):
// cpWalker.step's modes, taken along the path instead of per walk.
func decodeNoQuote(tr *ttrie) []nqNode {
	out := make([]nqNode, len(tr.nb))
	var ps [256]cpPos // the pending part only; q unused
	for i := 1; i < len(tr.nb); i++ {
		// (depth is capped at 255: below a node at 255 the decoding is
		// wrong, but no walk goes there)
		dp := tr.depth[i]
		p := ps[dp-1]
		b := tr.nb[i]
		nd := nqNode{op: nqDead}
		np := cpPos{}
		switch p.mode {
		case cpAt:
			switch {
			case b < 0x80:
				if b == '\\' {
					nd.op, np.mode = nqEsc, cpEsc
				} else {
					nd = nqNode{op: nqASCII, lo: rune(b)}
				}
			case b >= 0xC2 && b <= 0xDF:
				np = cpPos{mode: cpUTF8, n: 2, need: 1, cp: rune(b & 0x1F)}
			case b >= 0xE0 && b <= 0xEF:
				np = cpPos{mode: cpUTF8, n: 3, need: 2, cp: rune(b & 0x0F)}
			case b >= 0xF0 && b <= 0xF4:
				np = cpPos{mode: cpUTF8, n: 4, need: 3, cp: rune(b & 0x07)}
			}
			if np.mode == cpUTF8 {
				nd = nqRangeOf(np)
			}
		case cpUTF8:
			if b&0xC0 == 0x80 {
				np = p
				np.cp = np.cp<<6 | rune(b&0x3F)
				np.need--
				if np.need > 0 {
					nd = nqRangeOf(np)
				} else {
					nd, np = nqNode{op: nqCP, lo: np.cp}, cpPos{}
				}
			}
		case cpEsc:
			if b == 'u' {
				nd, np.mode = nqNode{op: nqUEsc, lo: -1}, cpU
			} else if c := shortEscOf[b]; c != 0 {
				nd = nqNode{op: nqCP, lo: rune(c)}
			}
		case cpU, cpU0:
			if b == '0' {
				nd.op, np.mode = nqPass, p.mode+1
			}
		case cpU00:
			if b == '0' || b == '1' {
				k := rune(b - '0')
				nd, np = nqNode{op: nqUEsc, lo: k}, cpPos{mode: cpU00k, cp: k}
			}
		case cpU00k:
			if h := hexVal(b); h >= 0 {
				if c := p.cp<<4 | h; escLetter[c] == 0 {
					nd = nqNode{op: nqCP, lo: c}
				}
			}
		}
		out[i] = nd
		ps[dp] = np
	}
	return out
}

// nqRangeOf is the code point range a pending UTF-8 sequence p may still
// complete to (cpWalker.partial), or a dead node where it is empty.
func nqRangeOf(p cpPos) nqNode {
	sh := 6 * uint(p.need)
	lo := max(p.cp<<sh, utf8Min[p.n])
	hi := min(p.cp<<sh|(1<<sh-1), utf8Max[p.n])
	if lo > hi {
		return nqNode{op: nqDead}
	}
	return nqNode{op: nqRange, lo: lo, hi: hi}
}

// interiorWalk sets in m the tokens of the no-quote trie that stay inside a
// string from state start of d (every state of d taken as final: a token
// is accepted when its bytes can be continued).
func (ti *TokenizerInfo) interiorWalk(d *rdfa, start int32, m []uint64) {
	tr := ti.noQuote
	dec := ti.nqDec
	w := newCPWalker(d)
	var qs [256]int32 // the DFA state at the last code point boundary
	qs[0] = start
	n := tr.nend[0]
	depth, nend, ntok0, toks := tr.depth, tr.nend, tr.ntok0, tr.toks
	for i := int32(1); i < n; {
		dp := depth[i]
		q := qs[dp-1]
		t := int32(-1)
		switch nd := &dec[i]; nd.op {
		case nqASCII:
			tb := w.ascii[q]
			if tb == nil {
				tb = w.table(q)
			}
			t = tb[nd.lo&0x7F]
		case nqCP:
			t = w.target(q, nd.lo)
		case nqRange:
			if w.has(q, nd.lo, nd.hi) {
				t = q
			}
		case nqEsc:
			if w.escapable(q) {
				t = q
			}
		case nqUEsc:
			if w.uEsc(q, nd.lo) {
				t = q
			}
		case nqPass:
			t = q
		}
		if t >= 0 {
			for _, x := range toks[ntok0[i]:ntok0[i+1]] {
				m[x>>6] |= 1 << (x & 63)
			}
			if dp < 255 {
				qs[dp] = t
				i++
				continue
			}
		}
		i = nend[i]
	}
}
