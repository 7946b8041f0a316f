package grammar

import (
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"unicode/utf8"
)

// An ECMA-262 regular expression parser (the syntax JSON Schema "pattern"
// uses) producing a syntax tree that compiles to an rnfa. Everything regular
// is supported: alternation, groups (capturing, non-capturing, named),
// greedy and lazy quantifiers, classes, escapes (\d \w \s and negations,
// \xHH \uHHHH \u{H..} \cX, identity escapes) and the anchors ^ and $
// (non-multiline). Lookarounds, backreferences, word boundaries and
// Unicode property escapes are reported as errors. ECMA "." excludes line
// terminators (\n \r \u2028 \u2029); \s is ECMA's white space set.

type reKind uint8

const (
	reEmpty reKind = iota
	reSet
	reCat
	reAlt
	reRep
	reBOL
	reEOL
	reLook // (?=sub) or, neg, (?!sub): lookahead.go
)

type reNode struct {
	kind     reKind
	set      rset
	subs     []*reNode
	min, max int  // reRep; max -1 = unbounded
	neg      bool // reLook: (?!…)
}

type reParser struct {
	src []rune
	pos int
}

type reError struct{ msg string }

func (e *reError) Error() string { return e.msg }

var (
	reDigit = rsetOf('0', '9')
	reWord  = rsetOf('0', '9', 'A', 'Z', '_', '_', 'a', 'z')
	reSpace = rsetOf('\t', '\r', ' ', ' ', 0xA0, 0xA0, 0x1680, 0x1680, 0x2000, 0x200A,
		0x2028, 0x2029, 0x202F, 0x202F, 0x205F, 0x205F, 0x3000, 0x3000, 0xFEFF, 0xFEFF)
	reDot = rsetOf('\n', '\n', '\r', '\r', 0x2028, 0x2029).negate()
)

func parseRegex(pattern string) (n *reNode, err error) {
	if !utf8.ValidString(pattern) {
		return nil, &reError{"pattern is not valid UTF-8"}
	}
	p := &reParser{src: []rune(pattern)}
	defer func() {
		if r := recover(); r != nil {
			if e, ok := r.(*reError); ok {
				n, err = nil, e
				return
			}
			panic(r)
		}
	}()
	n = p.alt(0)
	if p.pos < len(p.src) {
		p.fail("unexpected )")
	}
	return n, nil
}

func (p *reParser) fail(format string, a ...any) {
	panic(&reError{fmt.Sprintf("pattern at %d: %s", p.pos, fmt.Sprintf(format, a...))})
}

func (p *reParser) more() bool { return p.pos < len(p.src) }
func (p *reParser) peek() rune {
	if p.pos < len(p.src) {
		return p.src[p.pos]
	}
	return -1
}

func (p *reParser) alt(depth int) *reNode {
	if depth > 200 {
		p.fail("nested too deeply")
	}
	alts := []*reNode{p.cat(depth)}
	for p.peek() == '|' {
		p.pos++
		alts = append(alts, p.cat(depth))
	}
	if len(alts) == 1 {
		return alts[0]
	}
	return &reNode{kind: reAlt, subs: alts}
}

func (p *reParser) cat(depth int) *reNode {
	var items []*reNode
	for p.more() && p.peek() != '|' && p.peek() != ')' {
		a := p.atom(depth)
		a = p.quant(a)
		items = append(items, a)
	}
	switch len(items) {
	case 0:
		return &reNode{kind: reEmpty}
	case 1:
		return items[0]
	}
	return &reNode{kind: reCat, subs: items}
}

func (p *reParser) quant(a *reNode) *reNode {
	for {
		c := p.peek()
		var mn, mx int
		switch c {
		case '*':
			mn, mx = 0, -1
			p.pos++
		case '+':
			mn, mx = 1, -1
			p.pos++
		case '?':
			mn, mx = 0, 1
			p.pos++
		case '{':
			save := p.pos
			var ok bool
			mn, mx, ok = p.braces()
			if !ok {
				p.pos = save
				return a
			}
		default:
			return a
		}
		if p.peek() == '?' { // lazy: same language
			p.pos++
		}
		if a.kind == reBOL || a.kind == reEOL {
			p.fail("quantified anchor")
		}
		if a.kind == reLook {
			p.fail("quantified lookahead is not supported")
		}
		if mx >= 0 && mn > mx {
			p.fail("bad repetition {%d,%d}", mn, mx)
		}
		if mn > 1000 || mx > 1000 {
			p.fail("repetition count over 1000")
		}
		a = &reNode{kind: reRep, subs: []*reNode{a}, min: mn, max: mx}
	}
}

// braces parses {n}, {n,}, {n,m}; ok false means a literal '{' (Annex B).
func (p *reParser) braces() (int, int, bool) {
	p.pos++ // {
	num := func() (int, bool) {
		st := p.pos
		for p.more() && p.peek() >= '0' && p.peek() <= '9' {
			p.pos++
		}
		if st == p.pos {
			return 0, false
		}
		v, err := strconv.Atoi(string(p.src[st:p.pos]))
		if err != nil {
			return 1 << 30, true
		}
		return v, true
	}
	mn, ok := num()
	if !ok {
		return 0, 0, false
	}
	mx := mn
	if p.peek() == ',' {
		p.pos++
		if p.peek() == '}' {
			mx = -1
		} else if mx, ok = num(); !ok {
			return 0, 0, false
		}
	}
	if p.peek() != '}' {
		return 0, 0, false
	}
	p.pos++
	return mn, mx, true
}

func (p *reParser) atom(depth int) *reNode {
	c := p.src[p.pos]
	p.pos++
	switch c {
	case '^':
		return &reNode{kind: reBOL}
	case '$':
		return &reNode{kind: reEOL}
	case '.':
		return &reNode{kind: reSet, set: reDot}
	case '(':
		if p.peek() == '?' {
			p.pos++
			switch p.peek() {
			case ':':
				p.pos++
			case '=', '!':
				neg := p.peek() == '!'
				p.pos++
				n := p.alt(depth + 1)
				if p.peek() != ')' {
					p.fail("missing )")
				}
				p.pos++
				return &reNode{kind: reLook, neg: neg, subs: []*reNode{n}}
			case '<':
				p.pos++
				if p.peek() == '=' || p.peek() == '!' {
					p.fail("lookbehind is not supported")
				}
				for p.more() && p.peek() != '>' {
					p.pos++
				}
				if !p.more() {
					p.fail("unterminated group name")
				}
				p.pos++
			default:
				p.fail("unsupported group (?%c", p.peek())
			}
		}
		n := p.alt(depth + 1)
		if p.peek() != ')' {
			p.fail("missing )")
		}
		p.pos++
		return n
	case ')':
		p.fail("unexpected )")
	case '[':
		return &reNode{kind: reSet, set: p.class()}
	case '\\':
		return &reNode{kind: reSet, set: p.escape(false)}
	case '*', '+', '?':
		p.fail("nothing to repeat")
	case '{':
		save := p.pos - 1
		p.pos = save
		if _, _, ok := p.braces(); ok {
			p.pos = save
			p.fail("nothing to repeat")
		}
		p.pos = save + 1
	}
	return &reNode{kind: reSet, set: rset{{c, c}}.norm()}
}

func (p *reParser) class() rset {
	neg := false
	if p.peek() == '^' {
		neg = true
		p.pos++
	}
	var s rset
	for {
		if !p.more() {
			p.fail("missing ]")
		}
		c := p.src[p.pos]
		if c == ']' {
			p.pos++
			break
		}
		lo, single := p.classAtom()
		if p.peek() == '-' && p.pos+1 < len(p.src) && p.src[p.pos+1] != ']' && single != nil {
			p.pos++
			hi, hsingle := p.classAtom()
			if hsingle == nil {
				p.fail("bad class range")
			}
			if *hsingle < *single {
				p.fail("class range out of order")
			}
			s = append(s, rrange{*single, *hsingle})
			_ = hi
			continue
		}
		s = append(s, lo...)
	}
	s = s.norm()
	if neg {
		s = s.negate()
	}
	return s
}

// classAtom returns the set and, when it is one character, that character.
func (p *reParser) classAtom() (rset, *rune) {
	c := p.src[p.pos]
	p.pos++
	if c == '\\' {
		if p.peek() == 'b' {
			p.pos++
			r := rune(8)
			return rset{{8, 8}}, &r
		}
		if p.peek() == '-' {
			p.pos++
			r := rune('-')
			return rset{{r, r}}, &r
		}
		s := p.escape(true)
		if len(s) == 1 && s[0].lo == s[0].hi {
			r := s[0].lo
			return s, &r
		}
		return s, nil
	}
	return rset{{c, c}}, &c
}

func (p *reParser) hex(n int) rune {
	if p.pos+n > len(p.src) {
		p.fail("short hex escape")
	}
	v, err := strconv.ParseUint(string(p.src[p.pos:p.pos+n]), 16, 32)
	if err != nil {
		p.fail("bad hex escape")
	}
	p.pos += n
	return rune(v)
}

func (p *reParser) escape(inClass bool) rset {
	if !p.more() {
		p.fail("trailing backslash")
	}
	c := p.src[p.pos]
	p.pos++
	one := func(r rune) rset { return rset{{r, r}}.norm() }
	switch c {
	case 'd':
		return reDigit
	case 'D':
		return reDigit.negate()
	case 'w':
		return reWord
	case 'W':
		return reWord.negate()
	case 's':
		return reSpace
	case 'S':
		return reSpace.negate()
	case 't':
		return one('\t')
	case 'n':
		return one('\n')
	case 'r':
		return one('\r')
	case 'v':
		return one('\v')
	case 'f':
		return one('\f')
	case '0':
		if p.more() && p.peek() >= '0' && p.peek() <= '9' {
			p.fail("octal escape is not supported")
		}
		return one(0)
	case 'x':
		return one(p.hex(2))
	case 'u':
		if p.peek() == '{' {
			p.pos++
			st := p.pos
			for p.more() && p.peek() != '}' {
				p.pos++
			}
			v, err := strconv.ParseUint(string(p.src[st:p.pos]), 16, 32)
			if err != nil || v > maxRune || !p.more() {
				p.fail("bad \\u{} escape")
			}
			p.pos++
			return one(rune(v))
		}
		r := p.hex(4)
		if r >= 0xD800 && r <= 0xDBFF && p.pos+6 <= len(p.src) && p.src[p.pos] == '\\' && p.src[p.pos+1] == 'u' {
			save := p.pos
			p.pos += 2
			lo := p.hex(4)
			if lo >= 0xDC00 && lo <= 0xDFFF {
				return one((r-0xD800)<<10 + (lo - 0xDC00) + 0x10000)
			}
			p.pos = save
		}
		if r >= 0xD800 && r <= 0xDFFF {
			p.fail("lone surrogate escape")
		}
		return one(r)
	case 'c':
		if p.more() && (p.peek()|0x20 >= 'a' && p.peek()|0x20 <= 'z') {
			r := p.src[p.pos] % 32
			p.pos++
			return one(r)
		}
		p.fail("bad \\c escape")
	case 'b', 'B':
		p.fail("word boundary \\%c is not supported", c)
	case 'p', 'P':
		p.fail("Unicode property escape \\%c is not supported", c)
	case 'k':
		p.fail("named backreference is not supported")
	}
	if c >= '1' && c <= '9' {
		p.fail("backreference is not supported")
	}
	if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' {
		p.fail("unknown escape \\%c", c)
	}
	return one(c)
}

// reCompiler builds an rnfa from a syntax tree.
type reCompiler struct {
	n     *rnfa
	limit int
}

func (c *reCompiler) comp(x *reNode) (int32, int32) {
	if len(c.n.eps) > c.limit {
		panic(&reError{"pattern too large"})
	}
	n := c.n
	switch x.kind {
	case reEmpty:
		s := n.add()
		return s, s
	case reSet:
		s, e := n.add(), n.add()
		n.edge(s, x.set, e)
		return s, e
	case reBOL, reEOL:
		s, e := n.add(), n.add()
		k := uint8(epsBOL)
		if x.kind == reEOL {
			k = epsEOL
		}
		n.eps[s] = append(n.eps[s], eedge{k, e})
		return s, e
	case reCat:
		s, e := c.comp(x.subs[0])
		for _, sub := range x.subs[1:] {
			s2, e2 := c.comp(sub)
			n.epsTo(e, s2)
			e = e2
		}
		return s, e
	case reAlt:
		s, e := n.add(), n.add()
		for _, sub := range x.subs {
			s2, e2 := c.comp(sub)
			n.epsTo(s, s2)
			n.epsTo(e2, e)
		}
		return s, e
	case reRep:
		s := n.add()
		e := s
		for i := 0; i < x.min; i++ {
			s2, e2 := c.comp(x.subs[0])
			n.epsTo(e, s2)
			e = e2
		}
		if x.max < 0 {
			s2, e2 := c.comp(x.subs[0])
			n.epsTo(e, s2)
			n.epsTo(e2, e)
			return s, e
		}
		end := n.add()
		n.epsTo(e, end)
		for i := x.min; i < x.max; i++ {
			s2, e2 := c.comp(x.subs[0])
			n.epsTo(e, s2)
			n.epsTo(e2, end)
			e = e2
		}
		return s, end
	case reLook:
		panic(&reError{"lookahead is not supported here (inside a repetition, or with ^ or $ inside the pattern): only where the rest of the pattern is a concatenation, an alternation or an optional group (lookahead.go)"})
	}
	panic("unreachable")
}

// regexDFA compiles pattern with ECMA search semantics (a string matches
// when the pattern matches some substring, subject to ^ and $).
func regexDFA(pattern string) (d *rdfa, err error) {
	tree, err := parseRegex(pattern)
	if err != nil {
		return nil, err
	}
	if hasLook(tree) {
		return lookaheadDFA(tree)
	}
	defer func() {
		if r := recover(); r != nil {
			if e, ok := r.(*reError); ok {
				d, err = nil, e
				return
			}
			panic(r)
		}
	}()
	c := &reCompiler{n: &rnfa{}, limit: 40000}
	start := c.n.add()
	pre := c.n.add()
	c.n.epsTo(start, pre)
	c.n.edge(pre, anyRune, pre)
	s, e := c.comp(tree)
	c.n.epsTo(pre, s)
	post := c.n.add()
	c.n.epsTo(e, post)
	c.n.edge(post, anyRune, post)
	return c.n.determinize(start, post), nil
}

// Schemas repeat the same few patterns and formats (dates, identifiers,
// a collection's conventions), and compiling a pattern, then its product
// with the string universe and a format, was a fifth of lowering a typical
// schema. The caches are process-wide and bounded by the states they hold:
// each is cleared when it reaches regexCacheStates. Their automata are
// read-only once made (lazily computed fields use their own sync.Once).
const regexCacheStates = 1 << 20

var (
	regexCache, strDFACache   sync.Map
	regexCacheN, strDFACacheN atomic.Int64 // states held (an error counts one)
)

// cacheStore stores v under k in m, clearing m first when its states would
// go over regexCacheStates.
func cacheStore(m *sync.Map, n *atomic.Int64, k, v any, d *rdfa) {
	size := int64(1)
	if d != nil {
		size += int64(len(d.st))
	}
	if n.Add(size) > regexCacheStates {
		m.Clear()
		n.Store(size)
	}
	m.Store(k, v)
}

type regexEntry struct {
	d   *rdfa
	err error
}

// cachedRegexDFA is regexDFA through regexCache.
func cachedRegexDFA(pattern string) (*rdfa, error) {
	if v, ok := regexCache.Load(pattern); ok {
		e := v.(regexEntry)
		return e.d, e.err
	}
	d, err := regexDFA(pattern)
	cacheStore(&regexCache, &regexCacheN, pattern, regexEntry{d, err}, d)
	return d, err
}

// strDFAKey is a string schema's pattern and format.
type strDFAKey struct {
	pattern, format       string
	hasPattern, hasFormat bool
}

// strDFAEntry is the content language of a string schema with its pattern
// and format (every string where one cannot be enforced), and why not.
type strDFAEntry struct {
	d              *rdfa
	patErr, fmtErr error
}

// stringDFA is the content language of a string schema's pattern and
// format, through strDFACache.
func stringDFA(k strDFAKey) strDFAEntry {
	if v, ok := strDFACache.Load(k); ok {
		return v.(strDFAEntry)
	}
	e := strDFAEntry{d: anyStrDFA}
	if k.hasPattern {
		d, err := cachedRegexDFA(k.pattern)
		if err != nil {
			e.patErr = err
		} else {
			e.d = intersectDFA(e.d, d)
		}
	}
	if k.hasFormat {
		d, ok, err := formatDFA(k.format)
		if err != nil {
			e.fmtErr = err
		} else if ok {
			e.d = intersectDFA(e.d, d)
		}
	}
	cacheStore(&strDFACache, &strDFACacheN, k, e, e.d)
	return e
}

// anchoredDFA compiles a regex that must match the whole string (used for
// formats and number lexemes written as regexes).
func anchoredDFA(pattern string) *rdfa {
	d, err := regexDFA("^(?:" + pattern + ")$")
	if err != nil {
		panic(err)
	}
	return d
}
