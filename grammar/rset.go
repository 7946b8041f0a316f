package grammar

import "sort"

// maxRune is the largest code point; surrogates are never in a set (JSON
// text is UTF-8, which cannot encode them).
const maxRune = 0x10FFFF

// rrange is an inclusive code point range.
type rrange struct{ lo, hi rune }

// rset is a sorted list of disjoint, non-adjacent ranges.
type rset []rrange

func rsetOf(pairs ...rune) rset {
	var s rset
	for i := 0; i+1 < len(pairs); i += 2 {
		s = append(s, rrange{pairs[i], pairs[i+1]})
	}
	return s.norm()
}

// anyRune is every scalar value.
var anyRune = rset{{0, 0xD7FF}, {0xE000, maxRune}}

func (s rset) norm() rset {
	if len(s) == 0 {
		return nil
	}
	t := append(rset(nil), s...)
	sort.Slice(t, func(i, j int) bool { return t[i].lo < t[j].lo })
	out := t[:1]
	for _, r := range t[1:] {
		last := &out[len(out)-1]
		if r.lo <= last.hi+1 {
			if r.hi > last.hi {
				last.hi = r.hi
			}
			continue
		}
		out = append(out, r)
	}
	// drop surrogates
	var res rset
	for _, r := range out {
		if r.hi < 0xD800 || r.lo > 0xDFFF {
			res = append(res, r)
			continue
		}
		if r.lo < 0xD800 {
			res = append(res, rrange{r.lo, 0xD7FF})
		}
		if r.hi > 0xDFFF {
			res = append(res, rrange{0xE000, r.hi})
		}
	}
	return res
}

func (s rset) union(t rset) rset { return append(append(rset(nil), s...), t...).norm() }

func (s rset) negate() rset {
	var out rset
	next := rune(0)
	for _, r := range s {
		if r.lo > next {
			out = append(out, rrange{next, r.lo - 1})
		}
		next = r.hi + 1
	}
	if next <= maxRune {
		out = append(out, rrange{next, maxRune})
	}
	return out.norm()
}

func (s rset) intersect(t rset) rset {
	var out rset
	i, j := 0, 0
	for i < len(s) && j < len(t) {
		lo, hi := max(s[i].lo, t[j].lo), min(s[i].hi, t[j].hi)
		if lo <= hi {
			out = append(out, rrange{lo, hi})
		}
		if s[i].hi < t[j].hi {
			i++
		} else {
			j++
		}
	}
	return out
}

func (s rset) minus(t rset) rset { return s.intersect(t.negate()) }

func (s rset) has(r rune) bool {
	i := sort.Search(len(s), func(i int) bool { return s[i].hi >= r })
	return i < len(s) && s[i].lo <= r
}

func (s rset) empty() bool { return len(s) == 0 }
