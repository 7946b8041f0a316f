package selector

import (
	"math/big"
	"unicode/utf8"

	"github.com/airs-dev/airs/internal/jsonvalue"
)

// Budget is the most a schema's documents can take, as generated: Bytes of
// output at most, when Bounded. Every generated token adds at least one
// byte (the grammar admits no empty token), so Bytes also bounds the
// tokens: it is the num_predict that can never cut a document the grammar
// allows.
type Budget struct {
	Bytes   int
	Bounded bool
}

// size is the most a JSON value can take as generated: bytes, not counting
// whitespace, and toks, the JSON tokens (punctuation, keys, scalars) it has.
// Whitespace may come before and after each token, MaxWhitespace bytes at
// most each time (the stream check's bound; llama.cpp's converter allows
// 22). A negative bytes is unbounded.
type size struct{ bytes, toks int }

var unbounded = size{bytes: -1}

// numberSize: a sign, 20 digits, a point, 20 digits, an exponent of 20
// digits with its sign (the grammar's default MaxNumberDigits is 20;
// llama.cpp's converter allows 16).
var numberSize = size{bytes: 1 + 20 + 1 + 20 + 2 + 20, toks: 1}

// charBytes is the most one character of a JSON string takes: \u001F, the
// escape of a control character (four bytes for any other, as UTF-8; the
// grammar allows no other escapes, and llama.cpp counts a \u escape as one
// character too).
const charBytes = 6

func (a size) plus(b size) size {
	if a.bytes < 0 || b.bytes < 0 {
		return unbounded
	}
	return size{a.bytes + b.bytes, a.toks + b.toks}
}

func (a size) or(b size) size {
	if a.bytes < 0 || b.bytes < 0 {
		return unbounded
	}
	return size{max(a.bytes, b.bytes), max(a.toks, b.toks)}
}

func (a size) times(n int) size {
	if a.bytes < 0 {
		return unbounded
	}
	return size{a.bytes * n, a.toks * n}
}

// budget adds the whitespace: a gap before every token and one after the
// last.
func (a size) budget() Budget {
	if a.bytes < 0 {
		return Budget{}
	}
	return Budget{Bytes: a.bytes + (a.toks+1)*MaxWhitespace, Bounded: true}
}

func stringSize(chars int) size { return size{bytes: 2 + charBytes*chars, toks: 1} }

func constSize(s string) size { return stringSize(utf8.RuneCountInString(s)) }

// objectSize is {"k1":v1,"k2":v2}: braces, and per property its key, a
// colon, the value and a comma.
func objectSize(keys []string, vals []size) size {
	sz := size{bytes: 2, toks: 2}
	for i, k := range keys {
		sz = sz.plus(constSize(k)).plus(size{1, 1}).plus(vals[i]).plus(size{1, 1})
	}
	return sz
}

// valueSize measures a literal (const, enum) value.
func valueSize(v *jsonvalue.Value) size {
	switch v.Kind {
	case jsonvalue.String:
		return constSize(v.Str)
	case jsonvalue.Number:
		return size{len(v.Str), 1}
	case jsonvalue.Bool:
		return size{5, 1}
	case jsonvalue.Null:
		return size{4, 1}
	case jsonvalue.Array:
		sz := size{2, 2}
		for _, e := range v.Vals {
			sz = sz.plus(valueSize(e)).plus(size{1, 1})
		}
		return sz
	case jsonvalue.Object:
		vals := make([]size, len(v.Keys))
		for i := range v.Keys {
			vals[i] = valueSize(v.Vals[i])
		}
		return objectSize(v.Keys, vals)
	}
	return unbounded
}

// integerSize: the longer bound's digits and sign, or a sign and 20
// digits when a bound is missing (the grammar writes integers as plain
// digits, at most MaxNumberDigits, 20 by default).
func integerSize(s *jsonvalue.Value) size {
	lo, hi := s.Get("minimum"), s.Get("maximum")
	if !lo.Is(jsonvalue.Number) || !hi.Is(jsonvalue.Number) {
		return size{1 + 20, 1}
	}
	n := 0
	for _, b := range []string{lo.Str, hi.Str} {
		f, ok := new(big.Float).SetString(b)
		if !ok {
			return numberSize
		}
		i, _ := f.Int(nil)
		n = max(n, len(i.String()))
	}
	return size{n, 1}
}
