package selector

import (
	"regexp"
	"strconv"
	"strings"
	"unicode"

	"github.com/airs-dev/airs/understand"
)

// Values by type for any tool: a parameter's schema says what type of
// value it takes — one of an enum, a date, a shape its description shows
// by example ("e.g. acme/web", "#general"), a number, a quoted text — and
// the request's words are searched for a value of that type. A value of
// a specific type (an enum word, a date, an example's shape, a quoted
// text) is evidence the request is for this tool even when its other
// words are few: "convert 100 EUR to USD" names two of the converter's
// currencies.

var (
	reDate      = regexp.MustCompile(`\b\d{4}-\d{2}-\d{2}\b`)
	reExample   = regexp.MustCompile(`(?i)\be\.g\.?,?\s+("[^"]+"|'[^']+'|[^\s,;)]+)`)
	reTypedNum  = regexp.MustCompile(`(?:^|[^\w.\-/])(-?\d[\d,]*(?:\.\d+)?)\b`)
	reTypedQuot = regexp.MustCompile(`"([^"]+)"|'([^']+)'|“([^”]+)”`)
)

// shapeOfExample turns an example value into the pattern of its shape
// when it has punctuation that marks a kind ("acme/web" → word/word,
// "#general" → #word); plain words have no telling shape.
func shapeOfExample(ex string) *regexp.Regexp {
	ex = strings.Trim(strings.TrimRight(ex, "."), `"'`)
	if ex == "" || !strings.ContainsAny(ex, "/#@:") || strings.ContainsAny(ex, " ") {
		return nil
	}
	var b strings.Builder
	b.WriteString(`(?:^|[\s("'])(`)
	inWord := false
	for _, r := range ex {
		if unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || r == '-' {
			if !inWord {
				b.WriteString(`[\w][\w.-]*`)
				inWord = true
			}
			continue
		}
		inWord = false
		b.WriteString(regexp.QuoteMeta(string(r)))
	}
	b.WriteString(`)`)
	re, err := regexp.Compile(b.String())
	if err != nil {
		return nil
	}
	return re
}

// typedValues fills the parameters of sh whose type the request gives a
// value of. specific counts the values of a telling type; used marks the
// request's spans taken.
type typedFill struct {
	args     map[string]any
	specific int
	taken    [][2]int
}

func (tf *typedFill) free(a, b int) bool {
	for _, t := range tf.taken {
		if a < t[1] && t[0] < b {
			return false
		}
	}
	return true
}

func typedValues(sh *toolShape, text string) *typedFill {
	tf := &typedFill{args: map[string]any{}}
	lower := strings.ToLower(text)
	// Quoted texts are values whatever else they look like.
	quoted := reTypedQuot.FindAllStringSubmatchIndex(text, -1)
	// 1. Enums, in the order the request says their values.
	for _, p := range sh.root.Props {
		if len(p.Enum) == 0 || sh.roles[p.Name] == roleSpace {
			continue // a space is the interpretation's to resolve
		}
		best, at := "", -1
		for _, e := range p.Enum {
			s, ok := e.(string)
			if !ok || len(s) < 2 {
				continue
			}
			for _, form := range []string{strings.ToLower(s), strings.ToLower(strings.ReplaceAll(s, "_", " "))} {
				off := 0
				for {
					i := indexWord(lower[off:], form)
					if i < 0 {
						break
					}
					i += off
					if tf.free(i, i+len(form)) {
						if at < 0 || i < at {
							best, at = s, i
						}
						break
					}
					off = i + 1
				}
			}
		}
		if at >= 0 {
			tf.args[p.Name] = best
			tf.taken = append(tf.taken, [2]int{at, at + len(best)})
			tf.specific++
		}
	}
	// 2. Dates and example shapes.
	for _, p := range sh.root.Props {
		if _, set := tf.args[p.Name]; set || !p.is("string") {
			continue
		}
		var re *regexp.Regexp
		d := p.Description
		switch {
		case p.Format == "date" || strings.Contains(d, "YYYY-MM-DD"):
			re = cachedRegexp(`(` + reDate.String() + `)`)
		default:
			if m := reExample.FindStringSubmatch(d); m != nil {
				re = shapeOfExample(m[1])
			}
		}
		if re == nil {
			continue
		}
		for _, m := range re.FindAllStringSubmatchIndex(text, -1) {
			if tf.free(m[2], m[3]) && !insideQuote(quoted, m[2]) {
				tf.args[p.Name] = text[m[2]:m[3]]
				tf.taken = append(tf.taken, [2]int{m[2], m[3]})
				tf.specific++
				break
			}
		}
	}
	// 3. Quoted texts, to the required strings left, in order.
	qi := 0
	for _, p := range sh.required {
		if _, set := tf.args[p.Name]; set || !p.is("string") || len(p.Enum) > 0 {
			continue
		}
		if r := sh.roles[p.Name]; r == roleSpace || r == rolePath || r == roleExpr || r == roleDir {
			continue
		}
		for qi < len(quoted) {
			m := quoted[qi]
			qi++
			for g := 2; g+1 < len(m); g += 2 {
				if m[g] >= 0 && tf.free(m[g], m[g+1]) {
					tf.args[p.Name] = text[m[g]:m[g+1]]
					tf.taken = append(tf.taken, [2]int{m[0], m[1]})
					tf.specific++
					goto next
				}
			}
		}
	next:
	}
	// 4. Numbers, to the number parameters left.
	for _, p := range sh.root.Props {
		if _, set := tf.args[p.Name]; set || !(p.is("number") || p.is("integer")) {
			continue
		}
		if !sh.root.Required[p.Name] && !numberNear(text, p.Name) {
			continue
		}
		for _, m := range reTypedNum.FindAllStringSubmatchIndex(text, -1) {
			if !tf.free(m[2], m[3]) || insideQuote(quoted, m[2]) {
				continue
			}
			v, err := strconv.ParseFloat(strings.ReplaceAll(text[m[2]:m[3]], ",", ""), 64)
			if err != nil {
				continue
			}
			tf.args[p.Name] = v
			tf.taken = append(tf.taken, [2]int{m[2], m[3]})
			break
		}
	}
	return tf
}

func insideQuote(quoted [][]int, at int) bool {
	for _, q := range quoted {
		if at >= q[0] && at < q[1] {
			return true
		}
	}
	return false
}

func cachedRegexp(pattern string) *regexp.Regexp { return understand.CachedRegexp(pattern) }
