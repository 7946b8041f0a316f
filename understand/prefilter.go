package understand

import (
	"iter"
	"regexp"
	"regexp/syntax"
	"strings"
	"unicode/utf8"
)

// Most of the patterns this package reads a request with have no literal
// prefix, so Go's regexp runs its automaton over every byte of the text,
// and a long request pays for each pattern in full even where the words
// the pattern needs are nowhere in it. A prefilter is what every match of
// a pattern must contain, worked out once from the pattern's syntax tree:
// a conjunction of alternatives of literals ("sum" or "total", and a
// digit or "("). A text that lacks one of them cannot match, and costs a
// few substring searches instead of a run of the automaton; a text that
// has them all runs the pattern as before, so answers never change.

// lit is a literal a match must contain: compared with the text as it
// is, or, when fold, with the text folded (fold) as (?i) compares.
type lit struct {
	s    string
	fold bool
}

// prefilter is a conjunction: each entry is a set of literals of which a
// match contains at least one.
type prefilter [][]lit

// maxClassRunes bounds the character classes taken as literals (\d is
// ten): a larger class is no filter worth its searches.
const maxClassRunes = 16

func prefilterOf(expr string) prefilter {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return nil
	}
	return required(re)
}

// required is what every match of re contains.
func required(re *syntax.Regexp) prefilter {
	switch re.Op {
	case syntax.OpLiteral:
		l, ok := literalOf(re)
		if !ok {
			return nil
		}
		return prefilter{{l}}
	case syntax.OpCharClass:
		var set []lit
		n := 0
		for i := 0; i+1 < len(re.Rune); i += 2 {
			n += int(re.Rune[i+1]-re.Rune[i]) + 1
			if n > maxClassRunes {
				return nil
			}
			for r := re.Rune[i]; r <= re.Rune[i+1]; r++ {
				set = append(set, lit{s: string(r)})
			}
		}
		if len(set) == 0 {
			return nil
		}
		return prefilter{set}
	case syntax.OpCapture, syntax.OpPlus:
		return required(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min < 1 {
			return nil
		}
		return required(re.Sub[0])
	case syntax.OpConcat:
		var out prefilter
		for _, sub := range re.Sub {
			out = append(out, required(sub)...)
		}
		return out
	case syntax.OpAlternate:
		// One set from each alternative, joined: a match contains a member
		// of the alternative it took.
		var set []lit
		for _, sub := range re.Sub {
			best := selective(required(sub))
			if best == nil {
				return nil
			}
			set = append(set, best...)
		}
		return prefilter{set}
	}
	return nil
}

// literalOf is re's literal when it is one the text can be searched for
// as bytes: case-insensitive literals only of ASCII (folding other runes
// is not a byte-for-byte matter).
func literalOf(re *syntax.Regexp) (lit, bool) {
	s := string(re.Rune)
	if re.Flags&syntax.FoldCase == 0 {
		return lit{s: s}, s != ""
	}
	for _, r := range re.Rune {
		if r >= utf8.RuneSelf {
			return lit{}, false
		}
	}
	return lit{s: strings.ToLower(s), fold: true}, s != ""
}

// selective is the set of f whose shortest literal is longest: the one a
// text that does not match lacks most often.
func selective(f prefilter) []lit {
	var best []lit
	bestLen := 0
	for _, set := range f {
		short := len(set[0].s)
		for _, l := range set[1:] {
			short = min(short, len(l.s))
		}
		if short > bestLen {
			best, bestLen = set, short
		}
	}
	return best
}

// fold is s as a case-insensitive pattern of ASCII literals sees it:
// ASCII letters in lower case, and the two other runes that fold to one
// (the Kelvin sign to k, the long s to s); other runes stay as they are.
func fold(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'A' && r <= 'Z':
			return r + 'a' - 'A'
		case r == '\u212A':
			return 'k'
		case r == '\u017F':
			return 's'
		}
		return r
	}, s)
}

// haystack is a request as prefilters read it: as it is, and folded when a
// case-insensitive literal asks (once).
type haystack struct {
	s      string
	folded string
	done   bool
}

func (t *haystack) fold() string {
	if !t.done {
		t.folded, t.done = fold(t.s), true
	}
	return t.folded
}

// may reports whether t has every literal set of f (a match is possible).
func (f prefilter) may(t *haystack) bool {
	for _, set := range f {
		found := false
		for _, l := range set {
			s := t.s
			if l.fold {
				s = t.fold()
			}
			if strings.Contains(s, l.s) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// Pattern is a compiled regexp with its prefilter: the methods below
// answer "no match" at the cost of a few substring searches when the text
// lacks what every match needs, and run the regexp otherwise.
type Pattern struct {
	*regexp.Regexp
	pre prefilter
}

// MustPattern is regexp.MustCompile with the pattern's prefilter.
func MustPattern(expr string) Pattern {
	return Pattern{regexp.MustCompile(expr), prefilterOf(expr)}
}

// May reports whether s can hold a match (false: it cannot).
func (p Pattern) May(s string) bool { return p.pre.may(&haystack{s: s}) }

func (p Pattern) MatchString(s string) bool { return p.May(s) && p.Regexp.MatchString(s) }

func (p Pattern) FindStringIndex(s string) []int {
	if !p.May(s) {
		return nil
	}
	return p.Regexp.FindStringIndex(s)
}

func (p Pattern) FindStringSubmatch(s string) []string {
	if !p.May(s) {
		return nil
	}
	return p.Regexp.FindStringSubmatch(s)
}

func (p Pattern) FindAllString(s string, n int) []string {
	if !p.May(s) {
		return nil
	}
	return p.Regexp.FindAllString(s, n)
}

func (p Pattern) FindAllStringIndex(s string, n int) [][]int {
	if !p.May(s) {
		return nil
	}
	return p.Regexp.FindAllStringIndex(s, n)
}

func (p Pattern) FindAllStringSubmatch(s string, n int) [][]string {
	if !p.May(s) {
		return nil
	}
	return p.Regexp.FindAllStringSubmatch(s, n)
}

func (p Pattern) ReplaceAllString(s, repl string) string {
	if !p.May(s) {
		return s
	}
	return p.Regexp.ReplaceAllString(s, repl)
}

func (p Pattern) ReplaceAllStringFunc(s string, repl func(string) string) string {
	if !p.May(s) {
		return s
	}
	return p.Regexp.ReplaceAllStringFunc(s, repl)
}

// matches are re's matches in s in order, as FindAllStringIndex finds
// them, found only as far as the caller reads: a loop that stops at the
// first match it accepts does not pay for the rest of a long text.
func matches(re *regexp.Regexp, s string) iter.Seq[[]int] {
	return func(yield func([]int) bool) {
		seen := 0
		for n := 1; ; n *= 2 {
			locs := re.FindAllStringIndex(s, n)
			for _, loc := range locs[seen:] {
				if !yield(loc) {
					return
				}
			}
			if len(locs) < n {
				return
			}
			seen = len(locs)
		}
	}
}
