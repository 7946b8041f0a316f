package grammar

import (
	"fmt"
	"math/big"
	"strconv"
	"strings"
)

// Number lexemes as regular languages. A number constraint is an rdfa over
// the lexeme's characters: the JSON syntax (digits bounded), intersected with
// a comparison automaton per bound and a remainder automaton per multipleOf.
// Bounded numbers are written without exponent so that comparison is a
// digit-by-digit walk.

// buildDFA explores an abstract automaton from start over alphabet.
func buildDFA[S comparable](start S, alphabet []rune, step func(S, rune) (S, bool), final func(S) bool) *rdfa {
	index := map[S]int32{start: 0}
	states := []S{start}
	d := &rdfa{st: []rdstate{{}}}
	for i := 0; i < len(states); i++ {
		s := states[i]
		d.st[i].final = final(s)
		for _, c := range alphabet {
			t, ok := step(s, c)
			if !ok {
				continue
			}
			id, seen := index[t]
			if !seen {
				id = int32(len(states))
				index[t] = id
				states = append(states, t)
				d.st = append(d.st, rdstate{})
			}
			es := d.st[i].edges
			if k := len(es); k > 0 && es[k-1].to == id && es[k-1].hi+1 == c {
				es[k-1].hi = c
			} else {
				es = append(es, rdedge{c, c, id})
			}
			d.st[i].edges = es
		}
		if len(states) > 200000 {
			panic(&reError{"number automaton too large"})
		}
	}
	return d.trim().minimize()
}

var numAlphabet = []rune("+-.0123456789Ee")

func numberSyntax(digits int, exp, frac bool) *rdfa {
	p := fmt.Sprintf(`-?(?:0|[1-9][0-9]{0,%d})`, digits-1)
	if frac {
		p += fmt.Sprintf(`(?:\.[0-9]{1,%d})?`, digits)
	}
	if exp {
		p += `(?:[eE][+-]?[0-9]{1,3})?`
	}
	return anchoredDFA(p)
}

// decimal is an exact non-negative decimal I.F (I without leading zeros,
// "0" for zero; F without trailing zeros) with a sign.
type decimal struct {
	neg  bool
	I, F string
}

func parseDecimal(s string) (decimal, error) {
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return decimal{}, fmt.Errorf("bad number %q", s)
	}
	return ratDecimal(r)
}

func ratDecimal(r *big.Rat) (decimal, error) {
	var d decimal
	if r.Sign() < 0 {
		d.neg = true
		r = new(big.Rat).Neg(r)
	}
	// exact decimal expansion only if the denominator is 2^a 5^b
	den := new(big.Int).Set(r.Denom())
	k := 0
	for _, p := range []int64{2, 5} {
		bp := big.NewInt(p)
		for new(big.Int).Mod(den, bp).Sign() == 0 {
			den.Div(den, bp)
		}
	}
	if den.Cmp(big.NewInt(1)) != 0 {
		return d, fmt.Errorf("not a finite decimal")
	}
	scaled := new(big.Rat).Set(r)
	ten := big.NewRat(10, 1)
	for !scaled.IsInt() {
		scaled.Mul(scaled, ten)
		k++
		if k > 400 {
			return d, fmt.Errorf("too many decimals")
		}
	}
	digits := scaled.Num().String()
	for len(digits) <= k {
		digits = "0" + digits
	}
	d.I = digits[:len(digits)-k]
	d.F = strings.TrimRight(digits[len(digits)-k:], "0")
	d.I = strings.TrimLeft(d.I, "0")
	if d.I == "" {
		d.I = "0"
	}
	if d.I == "0" && d.F == "" {
		d.neg = false
	}
	return d, nil
}

const (
	relLT = 1 << iota
	relEQ
	relGT
)

type cmpState struct {
	phase uint8 // 0 start, 1 after sign, 2 int, 3 frac
	neg   bool
	n     int16 // int digits read (capped)
	j     int16 // frac digits matched
	st    uint8 // relLT/relEQ/relGT of |x| vs |B| so far
}

// compareDFA accepts lexemes (no exponent) whose value v satisfies rel(v, b)
// where rel is a set of relLT/relEQ/relGT.
func compareDFA(b decimal, want uint8) *rdfa {
	I, F := b.I, b.F
	alphabet := []rune("-.0123456789")
	flip := func(r uint8) uint8 {
		switch r {
		case relLT:
			return relGT
		case relGT:
			return relLT
		}
		return r
	}
	// relation of |x| vs |b| at the end of the lexeme
	absRel := func(s cmpState) uint8 {
		switch s.phase {
		case 2:
			if int(s.n) < len(I) {
				return relLT
			}
			if int(s.n) > len(I) {
				return relGT
			}
			if s.st == relEQ && F != "" {
				return relLT
			}
			return s.st
		case 3:
			if s.st != relEQ {
				return s.st
			}
			if int(s.j) < len(F) {
				return relLT
			}
			return relEQ
		}
		return 0
	}
	signed := func(s cmpState) uint8 {
		r := absRel(s)
		if r == 0 {
			return 0
		}
		bZero := I == "0" && F == ""
		switch {
		case !s.neg && !b.neg:
			return r
		case !s.neg && b.neg:
			return relGT // x >= 0 > b
		case s.neg && (b.neg || bZero):
			// x = -|x|, b = -|b| (or 0): relation flips
			if bZero {
				// x = -y <= 0 = b; equal only if y == 0
				if r == relEQ {
					return relEQ
				}
				return relLT
			}
			return flip(r)
		default: // x <= 0 < b
			return relLT
		}
	}
	step := func(s cmpState, c rune) (cmpState, bool) {
		switch {
		case c == '-':
			if s.phase != 0 {
				return s, false
			}
			s.phase, s.neg = 1, true
			return s, true
		case c >= '0' && c <= '9':
			d := byte(c)
			switch s.phase {
			case 0, 1, 2:
				if s.phase < 2 {
					s.phase, s.n, s.st = 2, 0, relEQ
				}
				if int(s.n) >= len(I) {
					s.n, s.st = int16(len(I)+1), relGT
					return s, true
				}
				if s.st == relEQ {
					switch {
					case d < I[s.n]:
						s.st = relLT
					case d > I[s.n]:
						s.st = relGT
					}
				}
				s.n++
				return s, true
			case 3:
				if s.st != relEQ {
					return s, true
				}
				if int(s.j) >= len(F) {
					if d != '0' {
						s.st = relGT
					}
					return s, true
				}
				switch {
				case d < F[s.j]:
					s.st = relLT
				case d > F[s.j]:
					s.st = relGT
				default:
					s.j++
				}
				return s, true
			}
		case c == '.':
			if s.phase != 2 {
				return s, false
			}
			r := s.st
			if int(s.n) < len(I) {
				r = relLT
			} else if int(s.n) > len(I) {
				r = relGT
			}
			s.phase, s.st, s.j, s.n = 3, r, 0, 0
			return s, true
		}
		return s, false
	}
	final := func(s cmpState) bool { return signed(s)&want != 0 }
	return buildDFA(cmpState{}, alphabet, step, final)
}

type modState struct {
	phase uint8 // 0 int, 1 frac
	r     int32
	j     int16
	any   bool
}

// multipleDFA accepts lexemes (no exponent) whose value is a multiple of m;
// error when m is not a finite decimal with a small enough numerator.
func multipleDFA(m string) (*rdfa, error) {
	d, err := parseDecimal(m)
	if err != nil || d.neg || d.I == "0" && d.F == "" {
		return nil, fmt.Errorf("multipleOf %s is not a positive finite decimal", m)
	}
	k := len(d.F)
	p64, err := strconv.ParseInt(strings.TrimLeft(d.I+d.F, "0"), 10, 64)
	if err != nil || p64 > 100000 {
		return nil, fmt.Errorf("multipleOf %s: numerator too large for an exact automaton", m)
	}
	p := int32(p64)
	alphabet := []rune("-.0123456789")
	step := func(s modState, c rune) (modState, bool) {
		switch {
		case c == '-':
			return s, !s.any && s.phase == 0
		case c == '.':
			if s.phase != 0 || !s.any {
				return s, false
			}
			s.phase = 1
			return s, true
		case c >= '0' && c <= '9':
			dg := int32(c - '0')
			s.any = true
			if s.phase == 1 {
				if int(s.j) >= k {
					return s, dg == 0
				}
				s.j++
			}
			s.r = (s.r*10 + dg) % p
			return s, true
		}
		return s, false
	}
	final := func(s modState) bool {
		if !s.any {
			return false
		}
		r := s.r
		for i := int(s.j); i < k; i++ {
			r = r * 10 % p
		}
		return r == 0
	}
	return buildDFA(modState{}, alphabet, step, final), nil
}
