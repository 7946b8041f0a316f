package export

import (
	"fmt"
	"regexp/syntax"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Patterns. A JSON Schema pattern is an ECMA-262 regular expression that may
// match anywhere in the string. We translate it to a small tree (rx) over
// code points: the ECMA escapes Go's regexp/syntax does not know (\uXXXX,
// \u{X}, \cX, \0, ECMA's wider \s, [^] and []) are rewritten first, then Go
// parses it. Lookarounds, backreferences, word boundaries and anchors other
// than a leading ^ and a trailing $ fail (the caller drops the pattern and
// reports a loosening). The match is then taken as anchored at both ends: a
// string matching the whole pattern also contains a match, so that is a
// narrowing, never a loosening.

type rxOp int

const (
	rxEmpty  rxOp = iota // ε
	rxClass              // one code point in cls
	rxConcat             // subs in sequence
	rxAlt                // one of subs
	rxRepeat             // subs[0] repeated min..max times (max < 0: unbounded)
)

type rx struct {
	op       rxOp
	cls      []rune // sorted, non-overlapping [lo, hi] pairs
	subs     []*rx
	min, max int
}

// ecmaWhite is ECMA-262's \s.
const ecmaWhite = `\t\n\x0B\f\r \x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}\x{FEFF}`

// ecmaToGo rewrites ECMA-262 regexp syntax into Go's.
func ecmaToGo(p string) (string, error) {
	var b strings.Builder
	inClass := false
	for i := 0; i < len(p); {
		c := p[i]
		switch {
		case c == '\\' && i+1 < len(p):
			n := p[i+1]
			switch {
			case n == 'u' && i+2 < len(p) && p[i+2] == '{':
				j := strings.IndexByte(p[i:], '}')
				if j < 0 {
					return "", fmt.Errorf("bad \\u{...}")
				}
				b.WriteString(`\x{` + p[i+3:i+j] + `}`)
				i += j + 1
				continue
			case n == 'u' && i+6 <= len(p) && isHex(p[i+2:i+6]):
				r, _ := strconv.ParseUint(p[i+2:i+6], 16, 32)
				i += 6
				if r >= 0xD800 && r < 0xDC00 && i+6 <= len(p) && p[i] == '\\' && p[i+1] == 'u' && isHex(p[i+2:i+6]) {
					lo, _ := strconv.ParseUint(p[i+2:i+6], 16, 32)
					if lo >= 0xDC00 && lo < 0xE000 {
						r = 0x10000 + (r-0xD800)<<10 + (lo - 0xDC00)
						i += 6
					}
				}
				if r >= 0xD800 && r < 0xE000 {
					return "", fmt.Errorf("lone surrogate in pattern")
				}
				fmt.Fprintf(&b, `\x{%X}`, r)
				continue
			case n == 'c' && i+2 < len(p) && isLetter(p[i+2]):
				fmt.Fprintf(&b, `\x{%X}`, p[i+2]%32)
				i += 3
				continue
			case n == '0' && (i+2 >= len(p) || p[i+2] < '0' || p[i+2] > '9'):
				b.WriteString(`\x00`)
			case n >= '1' && n <= '9', n == 'k':
				if inClass {
					return "", fmt.Errorf("octal escape in a class")
				}
				return "", fmt.Errorf("backreference \\%c", n)
			case n == 's':
				if inClass {
					b.WriteString(ecmaWhite)
				} else {
					b.WriteString("[" + ecmaWhite + "]")
				}
			case n == 'S':
				if inClass {
					return "", fmt.Errorf(`\S inside a class`)
				}
				b.WriteString("[^" + ecmaWhite + "]")
			case n == 'b' && inClass:
				b.WriteString(`\x08`)
			case n == '/':
				b.WriteString(`/`)
			case n == 'd' || n == 'D' || n == 'w' || n == 'W' || n == 'b' || n == 'B' || n == 'p' || n == 'P' ||
				n == 't' || n == 'n' || n == 'r' || n == 'f' || n == 'v' || n == 'x':
				b.WriteByte('\\')
				b.WriteByte(n)
			case n < utf8.RuneSelf && !isAlnum(n):
				b.WriteByte('\\')
				b.WriteByte(n)
			default:
				// identity escape of a letter or a non-ASCII character
				r, size := utf8.DecodeRuneInString(p[i+1:])
				if r < utf8.RuneSelf && isLetter(byte(r)) {
					return "", fmt.Errorf("unknown escape \\%c", r)
				}
				b.WriteString(p[i+1 : i+1+size])
				i += 1 + size
				continue
			}
			i += 2
			continue
		case !inClass && c == '[':
			if strings.HasPrefix(p[i:], "[^]") {
				b.WriteString(`[\x00-\x{10FFFF}]`)
				i += 3
				continue
			}
			if strings.HasPrefix(p[i:], "[]") {
				b.WriteString(`[^\x00-\x{10FFFF}]`)
				i += 2
				continue
			}
			inClass = true
			b.WriteByte('[')
			if strings.HasPrefix(p[i+1:], "^") {
				b.WriteByte('^')
				i++
			}
			if strings.HasPrefix(p[i+1:], "]") { // ECMA: []...] is an empty class then ']'
				return "", fmt.Errorf("empty class")
			}
			i++
			continue
		case inClass && c == '[':
			b.WriteString(`\[`)
		case inClass && c == ']':
			inClass = false
			b.WriteByte(']')
		case !inClass && c == '.':
			b.WriteString(`[^\n\r\x{2028}\x{2029}]`)
		case !inClass && c == '(' && strings.HasPrefix(p[i:], "(?"):
			rest := p[i+2:]
			switch {
			case strings.HasPrefix(rest, ":"):
				b.WriteString("(?:")
				i += 3
				continue
			case strings.HasPrefix(rest, "<") && !strings.HasPrefix(rest, "<=") && !strings.HasPrefix(rest, "<!"):
				b.WriteString("(?P<")
				i += 3
				continue
			default:
				return "", fmt.Errorf("lookaround or group flag %q", p[i:min(len(p), i+4)])
			}
		default:
			b.WriteByte(c)
		}
		i++
	}
	return b.String(), nil
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}
func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
func isAlnum(c byte) bool  { return isLetter(c) || '0' <= c && c <= '9' || c == '_' }

// parsePattern parses an ECMA-262 pattern into an anchored rx tree. A nil
// tree with a nil error is the empty language.
func parsePattern(p string) (*rx, error) {
	g, err := ecmaToGo(p)
	if err != nil {
		return nil, err
	}
	re, err := syntax.Parse(g, syntax.ClassNL|syntax.OneLine|syntax.PerlX|syntax.UnicodeGroups)
	if err != nil {
		return nil, err
	}
	re = stripAnchors(re)
	return buildRx(re, 0)
}

// stripAnchors removes ^ at the left edge and $ at the right edge.
func stripAnchors(re *syntax.Regexp) *syntax.Regexp {
	isBegin := func(r *syntax.Regexp) bool { return r.Op == syntax.OpBeginText || r.Op == syntax.OpBeginLine }
	isEnd := func(r *syntax.Regexp) bool { return r.Op == syntax.OpEndText || r.Op == syntax.OpEndLine }
	switch re.Op {
	case syntax.OpAlternate:
		c := *re
		c.Sub = make([]*syntax.Regexp, len(re.Sub))
		for i, s := range re.Sub {
			c.Sub[i] = stripAnchors(s)
		}
		return &c
	case syntax.OpCapture:
		c := *re
		c.Sub = []*syntax.Regexp{stripAnchors(re.Sub[0])}
		return &c
	case syntax.OpConcat:
		subs := re.Sub
		for len(subs) > 0 && isBegin(subs[0]) {
			subs = subs[1:]
		}
		for len(subs) > 0 && isEnd(subs[len(subs)-1]) {
			subs = subs[:len(subs)-1]
		}
		if len(subs) == 0 {
			return &syntax.Regexp{Op: syntax.OpEmptyMatch}
		}
		subs = append([]*syntax.Regexp(nil), subs...)
		if len(subs) == 1 {
			return stripAnchors(subs[0])
		}
		subs[0] = stripAnchors(subs[0])
		subs[len(subs)-1] = stripAnchors(subs[len(subs)-1])
		c := *re
		c.Sub = subs
		return &c
	}
	if isBegin(re) || isEnd(re) {
		return &syntax.Regexp{Op: syntax.OpEmptyMatch}
	}
	return re
}

var anyRunes = []rune{0, unicode.MaxRune}

func buildRx(re *syntax.Regexp, depth int) (*rx, error) {
	if depth > 200 {
		return nil, fmt.Errorf("pattern nested too deep")
	}
	switch re.Op {
	case syntax.OpNoMatch:
		return nil, nil
	case syntax.OpEmptyMatch:
		return &rx{op: rxEmpty}, nil
	case syntax.OpLiteral:
		c := &rx{op: rxConcat}
		for _, r := range re.Rune {
			cls := []rune{r, r}
			if re.Flags&syntax.FoldCase != 0 {
				cls = foldClass(r)
			}
			c.subs = append(c.subs, &rx{op: rxClass, cls: cls})
		}
		if len(c.subs) == 1 {
			return c.subs[0], nil
		}
		return c, nil
	case syntax.OpCharClass:
		if len(re.Rune) == 0 {
			return nil, nil
		}
		return &rx{op: rxClass, cls: append([]rune(nil), re.Rune...)}, nil
	case syntax.OpAnyChar:
		return &rx{op: rxClass, cls: anyRunes}, nil
	case syntax.OpAnyCharNotNL:
		return &rx{op: rxClass, cls: []rune{0, '\n' - 1, '\n' + 1, unicode.MaxRune}}, nil
	case syntax.OpCapture:
		return buildRx(re.Sub[0], depth+1)
	case syntax.OpStar, syntax.OpPlus, syntax.OpQuest, syntax.OpRepeat:
		lo, hi := re.Min, re.Max
		switch re.Op {
		case syntax.OpStar:
			lo, hi = 0, -1
		case syntax.OpPlus:
			lo, hi = 1, -1
		case syntax.OpQuest:
			lo, hi = 0, 1
		}
		sub, err := buildRx(re.Sub[0], depth+1)
		if err != nil {
			return nil, err
		}
		return mkRepeat(sub, lo, hi), nil
	case syntax.OpConcat:
		c := &rx{op: rxConcat}
		for _, s := range re.Sub {
			r, err := buildRx(s, depth+1)
			if err != nil {
				return nil, err
			}
			if r == nil {
				return nil, nil
			}
			c.subs = append(c.subs, r)
		}
		return c, nil
	case syntax.OpAlternate:
		a := &rx{op: rxAlt}
		for _, s := range re.Sub {
			r, err := buildRx(s, depth+1)
			if err != nil {
				return nil, err
			}
			if r != nil {
				a.subs = append(a.subs, r)
			}
		}
		if len(a.subs) == 0 {
			return nil, nil
		}
		return a, nil
	}
	return nil, fmt.Errorf("unsupported %s in pattern", opName(re.Op))
}

func opName(op syntax.Op) string {
	switch op {
	case syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return "word boundary"
	case syntax.OpBeginLine, syntax.OpBeginText, syntax.OpEndLine, syntax.OpEndText:
		return "inner anchor"
	}
	return fmt.Sprintf("op %d", op)
}

func mkRepeat(sub *rx, lo, hi int) *rx {
	if sub == nil {
		if lo == 0 {
			return &rx{op: rxEmpty}
		}
		return nil
	}
	return &rx{op: rxRepeat, subs: []*rx{sub}, min: lo, max: hi}
}

func foldClass(r rune) []rune {
	rs := []rune{r}
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		rs = append(rs, f)
	}
	return normRanges(rs, true)
}

// normRanges sorts and merges [lo,hi] pairs (singles: each rune its own pair).
func normRanges(rs []rune, singles bool) []rune {
	var pairs [][2]rune
	if singles {
		for _, r := range rs {
			pairs = append(pairs, [2]rune{r, r})
		}
	} else {
		for i := 0; i+1 < len(rs); i += 2 {
			pairs = append(pairs, [2]rune{rs[i], rs[i+1]})
		}
	}
	for i := 1; i < len(pairs); i++ {
		for j := i; j > 0 && pairs[j][0] < pairs[j-1][0]; j-- {
			pairs[j], pairs[j-1] = pairs[j-1], pairs[j]
		}
	}
	var out []rune
	for _, p := range pairs {
		if n := len(out); n > 0 && p[0] <= out[n-1]+1 {
			if p[1] > out[n-1] {
				out[n-1] = p[1]
			}
			continue
		}
		out = append(out, p[0], p[1])
	}
	return out
}

// subtractRanges returns cls minus the ranges in sub (both normalised).
func subtractRanges(cls, sub []rune) []rune {
	var out []rune
	for i := 0; i+1 < len(cls); i += 2 {
		lo, hi := cls[i], cls[i+1]
		for j := 0; j+1 < len(sub) && lo <= hi; j += 2 {
			slo, shi := sub[j], sub[j+1]
			if shi < lo || slo > hi {
				continue
			}
			if slo > lo {
				out = append(out, lo, slo-1)
			}
			lo = shi + 1
		}
		if lo <= hi {
			out = append(out, lo, hi)
		}
	}
	return out
}

func intersectRanges(a, b []rune) []rune {
	var out []rune
	for i := 0; i+1 < len(a); i += 2 {
		for j := 0; j+1 < len(b); j += 2 {
			lo, hi := max(a[i], b[j]), min(a[i+1], b[j+1])
			if lo <= hi {
				out = append(out, lo, hi)
			}
		}
	}
	return normRanges(out, false)
}

// jsonUnsafe are the code points a JSON string cannot hold raw (plus the
// surrogates, which UTF-8 cannot hold at all).
var jsonUnsafe = []rune{0, 0x1F, '"', '"', '\\', '\\', 0xD800, 0xDFFF}

// safeOnly restricts r to strings whose characters need no JSON escape, so
// the pattern text can stand for the raw JSON string content. nil: empty.
func safeOnly(r *rx) *rx {
	switch r.op {
	case rxEmpty:
		return r
	case rxClass:
		c := subtractRanges(r.cls, jsonUnsafe)
		if len(c) == 0 {
			return nil
		}
		return &rx{op: rxClass, cls: c}
	case rxConcat:
		c := &rx{op: rxConcat}
		for _, s := range r.subs {
			t := safeOnly(s)
			if t == nil {
				return nil
			}
			c.subs = append(c.subs, t)
		}
		return c
	case rxAlt:
		a := &rx{op: rxAlt}
		for _, s := range r.subs {
			if t := safeOnly(s); t != nil {
				a.subs = append(a.subs, t)
			}
		}
		if len(a.subs) == 0 {
			return nil
		}
		return a
	default:
		return mkRepeat(safeOnly(r.subs[0]), r.min, r.max)
	}
}

// lengthRange is the least and greatest number of code points of the
// strings r matches (hi < 0: unbounded).
func lengthRange(r *rx) (lo, hi int) {
	switch r.op {
	case rxEmpty:
		return 0, 0
	case rxClass:
		return 1, 1
	case rxConcat:
		for _, s := range r.subs {
			a, b := lengthRange(s)
			lo += a
			if hi >= 0 {
				if b < 0 {
					hi = -1
				} else {
					hi += b
				}
			}
		}
		return lo, hi
	case rxAlt:
		lo, hi = -1, 0
		for _, s := range r.subs {
			a, b := lengthRange(s)
			if lo < 0 || a < lo {
				lo = a
			}
			if hi >= 0 && (b < 0 || b > hi) {
				hi = b
			}
		}
		return lo, hi
	}
	a, b := lengthRange(r.subs[0])
	lo = a * r.min
	switch {
	case b == 0:
		hi = 0
	case r.max < 0 || b < 0:
		hi = -1
	default:
		hi = b * r.max
	}
	return lo, hi
}

// maxRepetition is llama.cpp's MAX_REPETITION_THRESHOLD: a GBNF x{m,n} with
// m or n above it is a parse error.
const maxRepetition = 2000

func checkRepeats(r *rx) error {
	if r.op == rxRepeat && (r.min > maxRepetition || r.max > maxRepetition) {
		return fmt.Errorf("repetition {%d,%d} over llama.cpp's limit of %d", r.min, r.max, maxRepetition)
	}
	for _, s := range r.subs {
		if err := checkRepeats(s); err != nil {
			return err
		}
	}
	return nil
}

// regexText prints a safeOnly tree as a pattern that means the same to
// ECMA-262, Go's regexp and llama.cpp's json-schema-to-grammar (whose
// pattern reader is a loose tokenizer: every quantifier is put on a group,
// classes use \xHH escapes for ASCII punctuation, non-ASCII stays raw).
func regexText(r *rx) string {
	var b strings.Builder
	b.WriteByte('^')
	writeRegex(&b, r, false)
	b.WriteByte('$')
	return b.String()
}

const regexMeta = `^$.[]()|{}*+?`

func writeRegex(b *strings.Builder, r *rx, inAlt bool) {
	switch r.op {
	case rxEmpty:
	case rxClass:
		if len(r.cls) == 2 && r.cls[0] == r.cls[1] {
			c := r.cls[0]
			switch {
			case c < 0x80 && strings.ContainsRune(regexMeta, c):
				b.WriteByte('\\')
				b.WriteRune(c)
			case c == 0x7F:
				b.WriteString(`\x7F`)
			default:
				b.WriteRune(c)
			}
			return
		}
		b.WriteByte('[')
		for i := 0; i+1 < len(r.cls); i += 2 {
			writeClassRune(b, r.cls[i])
			if r.cls[i+1] != r.cls[i] {
				if r.cls[i+1] > r.cls[i]+1 {
					b.WriteByte('-')
				}
				writeClassRune(b, r.cls[i+1])
			}
		}
		b.WriteByte(']')
	case rxConcat:
		for _, s := range r.subs {
			if s.op == rxAlt {
				b.WriteByte('(')
				writeRegex(b, s, true)
				b.WriteByte(')')
			} else {
				writeRegex(b, s, false)
			}
		}
	case rxAlt:
		var nonEmpty []*rx
		hasEmpty := false
		for _, s := range r.subs {
			if s.op == rxEmpty {
				hasEmpty = true
			} else {
				nonEmpty = append(nonEmpty, s)
			}
		}
		if hasEmpty {
			if len(nonEmpty) == 0 {
				return
			}
			b.WriteByte('(')
			for i, s := range nonEmpty {
				if i > 0 {
					b.WriteByte('|')
				}
				writeRegex(b, s, true)
			}
			b.WriteString(")?")
			return
		}
		if !inAlt {
			b.WriteByte('(')
		}
		for i, s := range nonEmpty {
			if i > 0 {
				b.WriteByte('|')
			}
			writeRegex(b, s, true)
		}
		if !inAlt {
			b.WriteByte(')')
		}
	case rxRepeat:
		if r.max == 0 || r.subs[0].op == rxEmpty {
			return
		}
		b.WriteByte('(')
		writeRegex(b, r.subs[0], true)
		b.WriteByte(')')
		switch {
		case r.min == 0 && r.max < 0:
			b.WriteByte('*')
		case r.min == 1 && r.max < 0:
			b.WriteByte('+')
		case r.min == 0 && r.max == 1:
			b.WriteByte('?')
		case r.min == r.max:
			fmt.Fprintf(b, "{%d}", r.min)
		case r.max < 0:
			fmt.Fprintf(b, "{%d,}", r.min)
		default:
			fmt.Fprintf(b, "{%d,%d}", r.min, r.max)
		}
	}
}

func writeClassRune(b *strings.Builder, c rune) {
	switch {
	case c < 0x80 && !isAlnum(byte(c)) || c == '_':
		fmt.Fprintf(b, `\x%02X`, c)
	default:
		b.WriteRune(c)
	}
}

// foldLength narrows r to the strings of lo..hi code points (hi < 0: no
// upper bound) where r is a sequence of fixed-length parts around at most
// one repeated character class (^[A-Za-z ]+$, ^[A-Z][a-z]*$): the bounds
// go into that repetition, the form llama.cpp's converter enforces (it
// ignores minLength and maxLength beside a pattern). ok is false for other
// shapes; a nil result with ok is the empty language.
func foldLength(r *rx, lo, hi int) (out *rx, ok bool) {
	parts := []*rx{r}
	if r.op == rxConcat {
		parts = r.subs
	}
	fixed, at := 0, -1
	for i, p := range parts {
		if a, b := lengthRange(p); a == b {
			fixed += a
			continue
		}
		if at >= 0 || p.op != rxRepeat || p.subs[0].op != rxClass {
			return nil, false
		}
		at = i
	}
	if at < 0 {
		if fixed < lo || hi >= 0 && fixed > hi {
			return nil, true
		}
		return r, true
	}
	rep := parts[at]
	nmin, nmax := max(rep.min, lo-fixed), rep.max
	if hi >= 0 && (nmax < 0 || hi-fixed < nmax) {
		nmax = hi - fixed
	}
	if nmax >= 0 && nmin > nmax {
		return nil, true
	}
	nr := &rx{op: rxRepeat, subs: rep.subs, min: nmin, max: nmax}
	if r.op != rxConcat {
		return nr, true
	}
	subs := append([]*rx(nil), parts...)
	subs[at] = nr
	return &rx{op: rxConcat, subs: subs}, true
}
