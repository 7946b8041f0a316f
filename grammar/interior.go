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

// cpWalker holds one walk's per-state ASCII tables, built on first use.
type cpWalker struct {
	d     *rdfa
	ascii []*[128]int32
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

// has reports whether state q has a code point in lo..hi.
func (w *cpWalker) has(q int32, lo, hi rune) bool {
	es := w.d.st[q].edges
	i, j := 0, len(es)
	for i < j { // first edge with hi ≥ lo
		h := int(uint(i+j) >> 1)
		if es[h].hi < lo {
			i = h + 1
		} else {
			j = h
		}
	}
	return i < len(es) && es[i].lo <= hi
}

// target is the state after code point c from q, or -1.
func (w *cpWalker) target(q int32, c rune) int32 {
	es := w.d.st[q].edges
	i, j := 0, len(es)
	for i < j {
		h := int(uint(i+j) >> 1)
		if es[h].hi < c {
			i = h + 1
		} else {
			j = h
		}
	}
	if i < len(es) && es[i].lo <= c {
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

// interiorWalk sets in m the tokens of the no-quote trie that stay inside a
// string from state start of d (every state of d taken as final: a token
// is accepted when its bytes can be continued).
func (ti *TokenizerInfo) interiorWalk(d *rdfa, start int32, m []uint64) {
	tr := ti.noQuote
	w := &cpWalker{d: d, ascii: make([]*[128]int32, len(d.st))}
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
