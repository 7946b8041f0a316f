package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/airs-dev/airs/pipeline"
)

const (
	// compareMaxChars bounds each text so the largest comparison fits the
	// Fast class (5 s) with room to spare, under the race detector too
	// (TestBuiltinLimitsFitClass checks it); two such texts already fill the
	// default 1 MiB request payload.
	compareMaxChars   = 500_000
	compareMaxChanges = 200
	compareMaxNumbers = 200
	compareMaxDiff    = 20_000
)

// CompareTool describes compare.
func CompareTool() pipeline.Tool {
	return pipeline.Tool{
		Name:    "compare",
		Version: "1.0.0",
		Description: "Compare two texts (for example two documents, two versions of a contract, or two price lists) and report the differences: " +
			"lines added, removed and changed, a unified diff, and the numbers that differ between them such as prices, amounts, dates or percentages, " +
			"each with its label, old and new value and the change in percent. Use it to find what changed, or to compare pricing in two documents.",
		Parameters: schema(`{
			"$schema": "https://json-schema.org/draft/2020-12/schema",
			"type": "object",
			"properties": {
				"a": {"type": "string", "maxLength": 500000, "description": "The first (old) text (at most 500,000 characters)."},
				"b": {"type": "string", "maxLength": 500000, "description": "The second (new) text (at most 500,000 characters)."},
				"a_label": {"type": "string", "maxLength": 200, "default": "A", "description": "Name of the first text in the report, e.g. its file name."},
				"b_label": {"type": "string", "maxLength": 200, "default": "B", "description": "Name of the second text in the report."},
				"ignore_whitespace": {"type": "boolean", "default": true,
					"description": "Treat lines that differ only in spacing as equal (default true; useful for text extracted from PDFs)."}
			},
			"required": ["a", "b"],
			"additionalProperties": false
		}`),
		ReturnSchema: schema(`{
			"$schema": "https://json-schema.org/draft/2020-12/schema",
			"$defs": {
				"change": {
					"type": "object",
					"properties": {
						"kind": {"enum": ["added", "removed", "changed"]},
						"a_line": {"type": "integer", "minimum": 0},
						"b_line": {"type": "integer", "minimum": 0},
						"a": {"type": "array", "items": {"type": "string"}},
						"b": {"type": "array", "items": {"type": "string"}}
					},
					"required": ["kind", "a_line", "b_line"],
					"additionalProperties": false
				},
				"number": {
					"type": "object",
					"properties": {
						"label": {"type": "string"},
						"a": {"type": "string"},
						"b": {"type": "string"},
						"a_value": {"type": "number"},
						"b_value": {"type": "number"},
						"delta": {"type": "number"},
						"percent": {"type": ["number", "null"]},
						"a_line": {"type": "integer", "minimum": 1},
						"b_line": {"type": "integer", "minimum": 1}
					},
					"required": ["label", "a", "b", "a_value", "b_value", "delta", "percent", "a_line", "b_line"],
					"additionalProperties": false
				}
			},
			"type": "object",
			"properties": {
				"identical": {"type": "boolean"},
				"summary": {"type": "string"},
				"added": {"type": "integer", "minimum": 0},
				"removed": {"type": "integer", "minimum": 0},
				"changed": {"type": "integer", "minimum": 0},
				"unchanged": {"type": "integer", "minimum": 0},
				"changes": {"type": "array", "items": {"$ref": "#/$defs/change"}},
				"numbers": {"type": "array", "items": {"$ref": "#/$defs/number"}},
				"diff": {"type": "string"},
				"truncated": {"type": "boolean"}
			},
			"required": ["identical", "summary", "added", "removed", "changed", "unchanged", "changes", "numbers", "diff", "truncated"],
			"additionalProperties": false
		}`),
		Trust:        pipeline.TL3,
		LatencyClass: pipeline.Fast,
		Idempotent:   true,
		ReadOnly:     true,
	}
}

type compareParams struct {
	A                string `json:"a"`
	B                string `json:"b"`
	ALabel           string `json:"a_label"`
	BLabel           string `json:"b_label"`
	IgnoreWhitespace *bool  `json:"ignore_whitespace"`
}

// Change is one hunk of compare's result. Lines are 1-based; for an
// addition a_line is the line of A after which B's lines were added (0:
// at the top), likewise b_line for a removal.
type Change struct {
	Kind  string   `json:"kind"` // added, removed, changed
	ALine int      `json:"a_line"`
	BLine int      `json:"b_line"`
	A     []string `json:"a,omitempty"`
	B     []string `json:"b,omitempty"`
}

// NumberChange is a number that differs between the texts, matched by the
// words around it (its label).
type NumberChange struct {
	Label   string   `json:"label"`
	A       string   `json:"a"` // as written, e.g. "$1,200.00"
	B       string   `json:"b"`
	AValue  float64  `json:"a_value"`
	BValue  float64  `json:"b_value"`
	Delta   float64  `json:"delta"`
	Percent *float64 `json:"percent"` // nil when A's value is 0
	ALine   int      `json:"a_line"`
	BLine   int      `json:"b_line"`
}

// Comparison is compare's result.
type Comparison struct {
	Identical bool           `json:"identical"`
	Summary   string         `json:"summary"`
	Added     int            `json:"added"`
	Removed   int            `json:"removed"`
	Changed   int            `json:"changed"`
	Unchanged int            `json:"unchanged"`
	Changes   []Change       `json:"changes"`
	Numbers   []NumberChange `json:"numbers"`
	Diff      string         `json:"diff"`
	Truncated bool           `json:"truncated"`
}

// Compare is compare's handler.
func Compare() pipeline.Handler {
	return pipeline.HandlerFunc(func(ctx context.Context, params json.RawMessage, call *pipeline.Call) (json.RawMessage, error) {
		p := compareParams{ALabel: "A", BLabel: "B"}
		if err := decodeParams(ctx, params, &p); err != nil {
			return nil, err
		}
		if len(p.A) > compareMaxChars || len(p.B) > compareMaxChars {
			return nil, reject(CodeTooLarge, "each text may have at most %d bytes", compareMaxChars)
		}
		ignoreWS := p.IgnoreWhitespace == nil || *p.IgnoreWhitespace
		c, err := compareTexts(ctx, p.A, p.B, p.ALabel, p.BLabel, ignoreWS)
		if err != nil {
			return nil, err
		}
		return result(c)
	})
}

func splitLines(s string) []string {
	out, _ := splitLinesCtx(context.Background(), s)
	return out
}

// splitLinesCtx splits s into lines (\n or \r\n), checking ctx every
// checkLines lines: under the race detector, splitting 500 KB of short
// lines in one go takes a fifth of a second.
func splitLinesCtx(ctx context.Context, s string) ([]string, error) {
	if t, ok := strings.CutSuffix(s, "\n"); ok {
		s = strings.TrimSuffix(t, "\r") // a final \r\n
	}
	if s == "" {
		return nil, ctx.Err()
	}
	out := make([]string, 0, strings.Count(s, "\n")+1)
	for {
		if len(out)%checkLines == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			return append(out, s), nil
		}
		out = append(out, strings.TrimSuffix(s[:i], "\r"))
		s = s[i+1:]
	}
}

// collapseSpace trims s and turns each run of white space into one space.
func collapseSpace(s string) string {
	tidy := true // the common case: nothing to do, no allocation
	for i := 0; i < len(s) && tidy; i++ {
		c := s[i]
		switch {
		case c >= utf8.RuneSelf, c == '\t', c == '\n', c == '\v', c == '\f', c == '\r':
			tidy = false // non-ASCII may hold Unicode spaces: the slow path decides
		case c == ' ':
			tidy = i > 0 && i < len(s)-1 && s[i+1] != ' '
		}
	}
	if tidy {
		return s
	}
	return strings.Join(strings.Fields(s), " ")
}

// CompareTexts compares two texts line by line and pairs up the numbers
// that differ.
func CompareTexts(a, b, aLabel, bLabel string, ignoreWhitespace bool) Comparison {
	c, _ := compareTexts(context.Background(), a, b, aLabel, bLabel, ignoreWhitespace)
	return c
}

// compareTexts is CompareTexts that stops with ctx.Err() when ctx ends:
// every pass over the lines checks it every checkLines lines, and the diff
// checks it as it works (diffLines).
func compareTexts(ctx context.Context, a, b, aLabel, bLabel string, ignoreWhitespace bool) (Comparison, error) {
	al, err := splitLinesCtx(ctx, a)
	if err != nil {
		return Comparison{}, err
	}
	bl, err := splitLinesCtx(ctx, b)
	if err != nil {
		return Comparison{}, err
	}
	ak, bk := al, bl
	if ignoreWhitespace {
		ak, bk = make([]string, len(al)), make([]string, len(bl))
		for i, l := range al {
			if i%checkLines == 0 && ctx.Err() != nil {
				return Comparison{}, ctx.Err()
			}
			ak[i] = collapseSpace(l)
		}
		for i, l := range bl {
			if i%checkLines == 0 && ctx.Err() != nil {
				return Comparison{}, ctx.Err()
			}
			bk[i] = collapseSpace(l)
		}
	}
	ops, err := diffLines(ctx, ak, bk)
	if err != nil {
		return Comparison{}, err
	}

	c := Comparison{Changes: []Change{}, Numbers: []NumberChange{}}
	var pairs [][2]int // changed line pairs (a index, b index), for number matching
	for i := 0; i < len(ops); i++ {
		op := ops[i]
		if op.Kind == OpEqual {
			c.Unchanged += op.AHi - op.ALo
			continue
		}
		// A hunk: a delete run, an insert run, or both (adjacent).
		var del, ins DiffOp
		if op.Kind == OpDelete {
			del = op
			ins = DiffOp{Kind: OpInsert, ALo: op.AHi, AHi: op.AHi, BLo: op.BHi, BHi: op.BHi}
			if i+1 < len(ops) && ops[i+1].Kind == OpInsert {
				ins = ops[i+1]
				i++
			}
		} else {
			ins = op
			del = DiffOp{Kind: OpDelete, ALo: op.ALo, AHi: op.ALo, BLo: op.BLo, BHi: op.BLo}
			if i+1 < len(ops) && ops[i+1].Kind == OpDelete {
				del = ops[i+1]
				i++
			}
		}
		nd, ni := del.AHi-del.ALo, ins.BHi-ins.BLo
		ch := Change{A: al[del.ALo:del.AHi], B: bl[ins.BLo:ins.BHi]}
		switch {
		case nd > 0 && ni > 0:
			ch.Kind, ch.ALine, ch.BLine = "changed", del.ALo+1, ins.BLo+1
			m := min(nd, ni)
			c.Changed += m
			c.Removed += nd - m
			c.Added += ni - m
			for k := 0; k < m; k++ {
				pairs = append(pairs, [2]int{del.ALo + k, ins.BLo + k})
			}
		case nd > 0:
			ch.Kind, ch.ALine, ch.BLine = "removed", del.ALo+1, ins.BLo
			c.Removed += nd
		default:
			ch.Kind, ch.ALine, ch.BLine = "added", del.ALo, ins.BLo+1
			c.Added += ni
		}
		if len(c.Changes) < compareMaxChanges {
			c.Changes = append(c.Changes, ch)
		} else {
			c.Truncated = true
		}
	}
	c.Identical = c.Added == 0 && c.Removed == 0 && c.Changed == 0
	nums, err := compareNumbers(ctx, al, bl, ops, pairs)
	if err != nil {
		return Comparison{}, err
	}
	if nums != nil {
		c.Numbers = nums
	}
	if len(c.Numbers) > compareMaxNumbers {
		c.Numbers, c.Truncated = c.Numbers[:compareMaxNumbers], true
	}
	diff, cut := unifiedDiff(al, bl, ops, aLabel, bLabel, 2)
	c.Diff = diff
	c.Truncated = c.Truncated || cut
	c.Summary = summarizeComparison(c, aLabel, bLabel, len(al), len(bl))
	return c, ctx.Err()
}

// checkLines is how many lines a pass over a text handles between two
// context checks: a few hundred microseconds of work at most.
const checkLines = 1024

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
		if j%checkLines == 0 && ctx.Err() != nil {
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
		if i%checkLines == 0 && ctx.Err() != nil {
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
		if n%checkLines == 0 && ctx.Err() != nil {
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

// unifiedDiff renders ops in unified format with ctx lines of context,
// cut at compareMaxDiff bytes.
func unifiedDiff(al, bl []string, ops []DiffOp, aLabel, bLabel string, ctx int) (string, bool) {
	if len(ops) == 0 || len(ops) == 1 && ops[0].Kind == OpEqual {
		return "", false
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "--- %s\n+++ %s\n", aLabel, bLabel)
	// Group ops into hunks separated by more than 2*ctx equal lines.
	type span struct{ lo, hi int } // indices into ops
	var hunks []span
	for i, op := range ops {
		if op.Kind == OpEqual {
			continue
		}
		if n := len(hunks); n > 0 {
			gap := 0
			for k := hunks[n-1].hi; k < i; k++ {
				gap += ops[k].AHi - ops[k].ALo
			}
			if gap <= 2*ctx {
				hunks[n-1].hi = i + 1
				continue
			}
		}
		hunks = append(hunks, span{i, i + 1})
	}
	for _, h := range hunks {
		first, last := ops[h.lo], ops[h.hi-1]
		aStart := max(first.ALo-ctx, 0)
		bStart := max(first.BLo-ctx, 0)
		aEnd := min(last.AHi+ctx, len(al))
		bEnd := min(last.BHi+ctx, len(bl))
		// An empty range is written as the line before it (-0,0 at the top).
		hunkStart := func(start, n int) int {
			if n == 0 {
				return start
			}
			return start + 1
		}
		fmt.Fprintf(&sb, "@@ -%d,%d +%d,%d @@\n", hunkStart(aStart, aEnd-aStart), aEnd-aStart, hunkStart(bStart, bEnd-bStart), bEnd-bStart)
		for i := aStart; i < first.ALo; i++ {
			sb.WriteString(" " + al[i] + "\n")
		}
		for k := h.lo; k < h.hi; k++ {
			op := ops[k]
			switch op.Kind {
			case OpEqual:
				for i := op.ALo; i < op.AHi; i++ {
					sb.WriteString(" " + al[i] + "\n")
				}
			case OpDelete:
				for i := op.ALo; i < op.AHi; i++ {
					sb.WriteString("-" + al[i] + "\n")
				}
			case OpInsert:
				for j := op.BLo; j < op.BHi; j++ {
					sb.WriteString("+" + bl[j] + "\n")
				}
			}
		}
		for i := last.AHi; i < aEnd; i++ {
			sb.WriteString(" " + al[i] + "\n")
		}
		if sb.Len() > compareMaxDiff {
			break
		}
	}
	s := sb.String()
	if len(s) > compareMaxDiff {
		cut := strings.LastIndexByte(s[:compareMaxDiff], '\n')
		return s[:cut+1] + "… (diff truncated)\n", true
	}
	return s, false
}

func plural(n int, word string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}

func summarizeComparison(c Comparison, aLabel, bLabel string, na, nb int) string {
	if c.Identical {
		return fmt.Sprintf("%s and %s are identical (%s).", aLabel, bLabel, plural(na, "line"))
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s → %s: %s changed, %s added, %s removed (%s in %s, %d in %s).",
		aLabel, bLabel, plural(c.Changed, "line"), plural(c.Added, "line"), plural(c.Removed, "line"),
		plural(na, "line"), aLabel, nb, bLabel)
	if len(c.Numbers) > 0 {
		fmt.Fprintf(&sb, " %s differ:", plural(len(c.Numbers), "number"))
		for i, n := range c.Numbers {
			if i == 5 {
				fmt.Fprintf(&sb, " and %d more", len(c.Numbers)-5)
				break
			}
			if i > 0 {
				sb.WriteString(";")
			}
			fmt.Fprintf(&sb, " %s %s → %s", n.Label, n.A, n.B)
			if n.Percent != nil {
				fmt.Fprintf(&sb, " (%+.1f%%)", *n.Percent)
			}
		}
		sb.WriteString(".")
	}
	return sb.String()
}
