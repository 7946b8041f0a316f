package export

import (
	"bytes"
	"fmt"
	"math"
	"regexp/syntax"
	"strconv"
	"strings"
	"unicode/utf8"
)

// FoldPatternLengths rewrites a schema for llama.cpp's converter, which
// ignores minLength and maxLength beside a pattern: a string whose pattern
// is one repeated character class, ^C*$, with a maxLength gets its length
// bounds folded into the repetition, ^C{lo,hi}$ — the same language, in the
// form the converter enforces. Everything else is left as it is. The
// selector's plan schemas (selector.PlanFormat) are written so that every
// free string has that form; OllamaFormat handles arbitrary schemas.
func FoldPatternLengths(schema []byte) ([]byte, error) {
	v, err := parseValue(schema)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	foldPatternLengths(v).encode(&b)
	return b.Bytes(), nil
}

// noBracePattern is the selector's "no {" string pattern, ^[^{]*$, whose
// class is kept as written rather than as its ranges.
const noBracePattern = `^[^{]*$`

func foldPatternLengths(v *value) *value {
	switch v.kind {
	case 'a':
		out := &value{kind: 'a', arr: make([]*value, len(v.arr))}
		for i, e := range v.arr {
			out.arr[i] = foldPatternLengths(e)
		}
		return out
	case 'o':
	default:
		return v
	}
	out := newObj()
	for _, m := range v.obj {
		out.set(m.key, foldPatternLengths(m.val))
	}
	pat, typ := out.get("pattern"), out.get("type")
	if pat == nil || pat.kind != 's' || typ == nil || typ.kind != 's' || typ.str != "string" {
		return out
	}
	ranges, qlo, qhi, ok := RepeatedClass(pat.str)
	if !ok || qlo != 0 || qhi != -1 {
		return out
	}
	lo, hi := intKeyword(out, "minLength", 0), intKeyword(out, "maxLength", -1)
	if hi < 0 {
		return out
	}
	class := ClassWithout(ranges, -1)
	if pat.str == noBracePattern {
		class = "[^{]" // the same class, as written
	}
	if class == "" {
		return out
	}
	folded := newObj()
	for _, m := range out.obj {
		switch m.key {
		case "minLength", "maxLength":
		case "pattern":
			folded.set(m.key, toValue(fmt.Sprintf("^%s{%d,%d}$", class, lo, hi)))
		default:
			folded.set(m.key, m.val)
		}
	}
	return folded
}

// intKeyword reads a non-negative integral number keyword (capped at
// 2^40), def when it is absent or not one.
func intKeyword(s *value, k string, def int) int {
	n := s.get(k)
	if n == nil || n.kind != 'n' {
		return def
	}
	f, err := strconv.ParseFloat(n.str, 64)
	if err != nil || f < 0 || f != math.Trunc(f) {
		return def
	}
	return int(min(f, 1<<40))
}

// RepeatedClass parses an anchored pattern that is one repeated character
// class, ^C*$, ^C+$, ^C?$, ^C{m,n}$ (or a single character, or .), into the
// class's ranges (pairs) and the repetition's bounds (-1: none).
func RepeatedClass(pat string) (ranges []rune, lo, hi int, ok bool) {
	re, err := syntax.Parse(pat, syntax.Perl)
	if err != nil {
		return nil, 0, 0, false
	}
	if re.Op != syntax.OpConcat || len(re.Sub) != 3 || re.Sub[0].Op != syntax.OpBeginText || re.Sub[2].Op != syntax.OpEndText {
		return nil, 0, 0, false
	}
	body := re.Sub[1]
	for body.Op == syntax.OpCapture {
		body = body.Sub[0]
	}
	qlo, qhi := 1, 1
	switch body.Op {
	case syntax.OpStar:
		qlo, qhi, body = 0, -1, body.Sub[0]
	case syntax.OpPlus:
		qlo, qhi, body = 1, -1, body.Sub[0]
	case syntax.OpQuest:
		qlo, qhi, body = 0, 1, body.Sub[0]
	case syntax.OpRepeat:
		qlo, qhi, body = body.Min, body.Max, body.Sub[0]
	}
	for body.Op == syntax.OpCapture {
		body = body.Sub[0]
	}
	switch body.Op {
	case syntax.OpCharClass:
		return body.Rune, qlo, qhi, true
	case syntax.OpLiteral:
		if len(body.Rune) != 1 || body.Flags&syntax.FoldCase != 0 {
			return nil, 0, 0, false
		}
		return []rune{body.Rune[0], body.Rune[0]}, qlo, qhi, true
	case syntax.OpAnyCharNotNL:
		return []rune{0, '\n' - 1, '\n' + 1, utf8.MaxRune}, qlo, qhi, true
	case syntax.OpAnyChar:
		return []rune{0, utf8.MaxRune}, qlo, qhi, true
	}
	return nil, 0, 0, false
}

// ClassWithout writes the character class of ranges (pairs) without r, in
// a syntax ECMA-262 and Go share; "" when nothing is left.
func ClassWithout(ranges []rune, r rune) string {
	var b strings.Builder
	b.WriteByte('[')
	n := 0
	emit := func(lo, hi rune) {
		if lo > hi {
			return
		}
		n++
		b.WriteString(ecmaClassRune(lo))
		if hi > lo {
			b.WriteByte('-')
			b.WriteString(ecmaClassRune(hi))
		}
	}
	for i := 0; i+1 < len(ranges); i += 2 {
		lo, hi := ranges[i], ranges[i+1]
		if lo <= r && r <= hi {
			emit(lo, r-1)
			emit(r+1, hi)
		} else {
			emit(lo, hi)
		}
	}
	if n == 0 {
		return ""
	}
	b.WriteByte(']')
	return b.String()
}

func ecmaClassRune(r rune) string {
	switch {
	case r < 0x20 || r == 0x7f:
		return fmt.Sprintf(`\x%02X`, r)
	case r >= 0xD800 && r <= 0xDFFF:
		return fmt.Sprintf(`\u%04X`, r)
	case strings.ContainsRune(`\]^-[`, r):
		return `\` + string(r)
	}
	return string(r)
}
