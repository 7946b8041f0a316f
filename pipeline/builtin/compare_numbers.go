package builtin

import (
	"context"
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The numbers of compare: found in a line (thousands separators, decimal
// commas, currencies, years that are not amounts), labelled by the line's
// words, and matched across the two texts' aligned lines.

// Numbers are found as people write them in documents: an optional
// currency sign, digits with thousands separators and decimals, an optional
// percent or trailing currency sign — the regexp
//
//	[$€£¥₹]?\s?[-−]?\d[\d,]*(?:\.\d+)?(?:\s?[%€])?
//
// numberSpans is a hand-written matcher for it (the same matches:
// TestNumberSpansMatchRegexp), several times faster than package regexp:
// compare scans every changed line of two large texts with it.

func isCurrency(r rune) bool {
	switch r {
	case '$', '€', '£', '¥', '₹':
		return true
	}
	return false
}

// isSpace is RE2's \s: ASCII white space only.
func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r' }

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func hasDigit(s string) bool {
	for i := 0; i < len(s); i++ {
		if isDigit(s[i]) {
			return true
		}
	}
	return false
}

// numberSpans returns the [start, end) byte spans numberRE.FindAllStringIndex
// would. Every part before the first digit is optional and each is a single
// character class, so a start position either reaches a digit or fails;
// everything after it is greedy and optional, so the first choice is the
// regexp's (leftmost-first) choice.
func numberSpans(line string) [][2]int {
	var out [][2]int
	for p := 0; p < len(line); {
		if end := numberAt(line, p); end > p {
			out = append(out, [2]int{p, end})
			p = end
			continue
		}
		_, n := utf8.DecodeRuneInString(line[p:])
		p += n
	}
	return out
}

// numberAt returns the end of numberRE's match starting at p, or p.
func numberAt(line string, p int) int {
	q := p
	if r, n := utf8.DecodeRuneInString(line[q:]); isCurrency(r) {
		q += n
	}
	if q < len(line) && isSpace(line[q]) {
		q++
	}
	if q < len(line) && line[q] == '-' {
		q++
	} else if strings.HasPrefix(line[q:], "−") {
		q += len("−")
	}
	if q >= len(line) || !isDigit(line[q]) {
		return p
	}
	for q < len(line) && (isDigit(line[q]) || line[q] == ',') {
		q++
	}
	if q+1 < len(line) && line[q] == '.' && isDigit(line[q+1]) {
		q += 2
		for q < len(line) && isDigit(line[q]) {
			q++
		}
	}
	r := q
	if r < len(line) && isSpace(line[r]) {
		r++
	}
	if r < len(line) && line[r] == '%' {
		return r + 1
	}
	if strings.HasPrefix(line[r:], "€") {
		return r + len("€")
	}
	return q
}

// replaceNumbers is numberRE.ReplaceAllString(line, with).
func replaceNumbers(line, with string) string {
	spans := numberSpans(line)
	if spans == nil {
		return line
	}
	var sb strings.Builder
	last := 0
	for _, sp := range spans {
		sb.WriteString(line[last:sp[0]])
		sb.WriteString(with)
		last = sp[1]
	}
	sb.WriteString(line[last:])
	return sb.String()
}

type number struct {
	text  string
	value float64
	start int
}

// findNumbers returns the numbers of a line, except years in a heading:
// "Pricing 2024" → "Pricing 2025" is a new edition of the document, not a
// price that rose by 1.
func findNumbers(line string) []number {
	if !hasDigit(line) {
		return nil // most changed lines: skip the scan
	}
	var out []number
	years := 0
	for _, m := range numberSpans(line) {
		text := strings.TrimSpace(line[m[0]:m[1]])
		text = strings.TrimRight(text, ",")
		v, ok := parseNumber(text)
		if !ok {
			continue
		}
		if yearLike(text) {
			years++
		}
		out = append(out, number{text: text, value: v, start: m[0]})
	}
	if years > 0 && isHeading(line, out) {
		kept := out[:0]
		for _, n := range out {
			if !yearLike(n.text) {
				kept = append(kept, n)
			}
		}
		out = kept
	}
	return out
}

// yearLike: four bare digits from 1900 to 2099, no sign, currency,
// separator, decimals or percent ("2024", not "$2024" or "2,024").
func yearLike(text string) bool {
	if len(text) != 4 || !(strings.HasPrefix(text, "19") || strings.HasPrefix(text, "20")) {
		return false
	}
	for i := 2; i < 4; i++ {
		if text[i] < '0' || text[i] > '9' {
			return false
		}
	}
	return true
}

// isHeading says whether a line reads as a title rather than a row of
// values: a Markdown heading ("# Pricing 2024"), or a short line (at most
// ten words) with no label separator (: = | tab) and no amount marked as
// money or a percentage. "Acme Cloud - Price list 2024" is a heading;
// "Valid until: 2025" and "Pro plan: $30" are rows.
func isHeading(line string, nums []number) bool {
	t := strings.TrimSpace(line)
	if strings.HasPrefix(t, "#") {
		return true
	}
	if strings.ContainsAny(t, ":=|\t") || len(strings.Fields(t)) > 10 {
		return false
	}
	for _, n := range nums {
		if strings.ContainsAny(n.text, "$€£¥₹%") {
			return false
		}
	}
	return true
}

// thousands: `^\d{1,3}(,\d{3})+(\.\d+)?$`, as in 1,234,567.89.
func thousands(s string) bool {
	intPart, frac, hasFrac := strings.Cut(s, ".")
	if hasFrac && (frac == "" || strings.IndexFunc(frac, func(r rune) bool { return r < '0' || r > '9' }) >= 0) {
		return false
	}
	groups := strings.Split(intPart, ",")
	if len(groups) < 2 || len(groups[0]) < 1 || len(groups[0]) > 3 {
		return false
	}
	for i, g := range groups {
		if i > 0 && len(g) != 3 {
			return false
		}
		for j := 0; j < len(g); j++ {
			if !isDigit(g[j]) {
				return false
			}
		}
	}
	return true
}

// decimalComma: `^\d+,\d{1,2}$`, as in 10,50.
func decimalComma(s string) bool {
	i := strings.IndexByte(s, ',')
	if i < 1 || len(s)-i-1 < 1 || len(s)-i-1 > 2 {
		return false
	}
	for j := 0; j < len(s); j++ {
		if j != i && !isDigit(s[j]) {
			return false
		}
	}
	return true
}

func parseNumber(text string) (float64, bool) {
	s := strings.Map(func(r rune) rune {
		switch r {
		case '$', '€', '£', '¥', '₹', '%', ' ':
			return -1
		case '−':
			return '-'
		}
		return r
	}, text)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	switch {
	case thousands(s):
		s = strings.ReplaceAll(s, ",", "")
	case decimalComma(s):
		s = strings.Replace(s, ",", ".", 1)
	default:
		s = strings.ReplaceAll(s, ",", "")
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, false
	}
	if neg {
		v = -v
	}
	return v, true
}

// lineKey is a line with its numbers blanked out, lowercased, punctuation
// collapsed: "Basic plan: $10 / month" → "basic plan # month". Two lines
// with the same key say the same thing about (possibly) different numbers.
func lineKey(line string) string {
	s := replaceNumbers(line, " # ")
	var sb strings.Builder
	space := false
	for _, r := range strings.ToLower(s) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) || r == '#' {
			if space && sb.Len() > 0 {
				sb.WriteByte(' ')
			}
			sb.WriteRune(r)
			space = false
		} else {
			space = true
		}
	}
	return sb.String()
}

// label is the text before a line's first number, or the line without its
// numbers, tidied: "Basic plan: $10/month" → "Basic plan".
func label(line string, nums []number) string {
	trim := func(s string) string { return strings.Trim(collapseSpace(s), " :=-–—.|\t") }
	if len(nums) > 0 {
		if l := trim(line[:nums[0].start]); l != "" {
			return l
		}
	}
	return trim(replaceNumbers(line, " "))
}

// compareNumbers pairs lines of A and B that say the same thing (equal
// lineKey, first in order) anywhere in the texts, so a price list whose
// rows moved still compares row by row; changed line pairs from the diff
// that no key paired are compared position by position as a fallback.
// Only pairs with the same count of numbers are compared. It stops once it
// has more numbers than compare reports (the caller cuts the list there).
func compareNumbers(ctx context.Context, al, bl []string, ops []DiffOp, pairs [][2]int) ([]NumberChange, error) {
	equalA := make([]bool, len(al))
	equalB := make([]bool, len(bl))
	for _, op := range ops {
		if op.Kind == OpEqual {
			for i := op.ALo; i < op.AHi; i++ {
				equalA[i] = true
			}
			for j := op.BLo; j < op.BHi; j++ {
				equalB[j] = true
			}
		}
	}
	type entry struct {
		line int
		nums []number
	}
	// B's lines by key and count of numbers, in order; next[k] is the
	// first one not yet paired (a queue: no removal from the middle, which
	// made a text of many same-key rows quadratic).
	type slot struct {
		key string
		n   int
	}
	byKey := map[slot][]entry{}
	next := map[slot]int{}
	for j, l := range bl {
		if j%checkLines == 0 && stopped(ctx) != nil {
			return nil, ctx.Err()
		}
		if equalB[j] {
			continue
		}
		if nums := findNumbers(l); len(nums) > 0 {
			k := slot{lineKey(l), len(nums)}
			byKey[k] = append(byKey[k], entry{j, nums})
		}
	}
	var out []NumberChange
	usedA := make([]bool, len(al))
	usedB := make([]bool, len(bl))
	emit := func(i int, an []number, j int, bn []number) {
		usedA[i], usedB[j] = true, true
		lab, labelled := "", false
		for x := range an {
			if an[x].value == bn[x].value {
				continue
			}
			if len(out) > compareMaxNumbers {
				return // the caller cuts the list here anyway
			}
			if !labelled {
				lab, labelled = label(al[i], an), true // once per line: it scans the line
			}
			nc := NumberChange{
				Label: lab, A: an[x].text, B: bn[x].text,
				AValue: an[x].value, BValue: bn[x].value,
				Delta: round6(bn[x].value - an[x].value),
				ALine: i + 1, BLine: j + 1,
			}
			if an[x].value != 0 {
				pct := round6((bn[x].value - an[x].value) / math.Abs(an[x].value) * 100)
				nc.Percent = &pct
			}
			out = append(out, nc)
		}
	}
	for i, l := range al {
		if i%checkLines == 0 && stopped(ctx) != nil {
			return nil, ctx.Err()
		}
		if len(out) > compareMaxNumbers {
			return out, nil
		}
		if equalA[i] {
			continue
		}
		an := findNumbers(l)
		if len(an) == 0 {
			continue
		}
		k := slot{lineKey(l), len(an)}
		if strings.Trim(k.key, "# ") == "" {
			continue // only numbers: no words to match on
		}
		if q := byKey[k]; next[k] < len(q) {
			e := q[next[k]]
			next[k]++
			emit(i, an, e.line, e.nums)
		}
	}
	for n, pr := range pairs {
		if n%checkLines == 0 && stopped(ctx) != nil {
			return nil, ctx.Err()
		}
		if len(out) > compareMaxNumbers {
			return out, nil
		}
		i, j := pr[0], pr[1]
		if usedA[i] || usedB[j] {
			continue
		}
		an, bn := findNumbers(al[i]), findNumbers(bl[j])
		if len(an) > 0 && len(an) == len(bn) {
			emit(i, an, j, bn)
		}
	}
	return out, nil
}

func round6(v float64) float64 { return math.Round(v*1e6) / 1e6 }
