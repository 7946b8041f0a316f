package export

import (
	"bytes"
	"fmt"
	"math"
	"regexp/syntax"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/airs-dev/airs/internal/jsonvalue"
)

// FoldPatternLengths rewrites a schema for llama.cpp's converter, which
// ignores minLength and maxLength beside a pattern: a string whose pattern
// is one repeated character class, ^C*$, with a maxLength gets its length
// bounds folded into the repetition, ^C{lo,hi}$ — the same language, in the
// form the converter enforces. Everything else is left as it is. The
// selector's plan schemas (selector.PlanFormat) are written so that every
// free string has that form; OllamaFormat handles arbitrary schemas.
func FoldPatternLengths(schema []byte) ([]byte, error) {
	v, err := jsonvalue.Parse(schema)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.Write(foldPatternLengths(v).AppendCompact(nil))
	return b.Bytes(), nil
}

// noBracePattern is the selector's "no {" string pattern, ^[^{]*$, whose
// class is kept as written rather than as its ranges.
const noBracePattern = `^[^{]*$`

func foldPatternLengths(v *jsonvalue.Value) *jsonvalue.Value {
	switch v.Kind {
	case jsonvalue.Array:
		out := &jsonvalue.Value{Kind: jsonvalue.Array, Vals: make([]*jsonvalue.Value, len(v.Vals))}
		for i, e := range v.Vals {
			out.Vals[i] = foldPatternLengths(e)
		}
		return out
	case jsonvalue.Object:
	default:
		return v
	}
	out := jsonvalue.NewObject()
	for k, x := range v.Members() {
		out.Set(k, foldPatternLengths(x))
	}
	pat, typ := out.Get("pattern"), out.Get("type")
	if pat == nil || pat.Kind != jsonvalue.String || typ == nil || typ.Kind != jsonvalue.String || typ.Str != "string" {
		return out
	}
	ranges, qlo, qhi, ok := RepeatedClass(pat.Str)
	if !ok || qlo != 0 || qhi != -1 {
		return out
	}
	lo, hi := intKeyword(out, "minLength", 0), intKeyword(out, "maxLength", -1)
	if hi < 0 {
		return out
	}
	class := ClassWithout(ranges, -1)
	if pat.Str == noBracePattern {
		class = "[^{]" // the same class, as written
	}
	if class == "" {
		return out
	}
	folded := jsonvalue.NewObject()
	for k, v := range out.Members() {
		switch k {
		case "minLength", "maxLength":
		case "pattern":
			folded.Set(k, jsonvalue.From(fmt.Sprintf("^%s{%d,%d}$", class, lo, hi)))
		default:
			folded.Set(k, v)
		}
	}
	return folded
}

// intKeyword reads a non-negative integral number keyword (capped at
// 2^40), def when it is absent or not one.
func intKeyword(s *jsonvalue.Value, k string, def int) int {
	n := s.Get(k)
	if n == nil || n.Kind != jsonvalue.Number {
		return def
	}
	f, err := strconv.ParseFloat(n.Str, 64)
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
