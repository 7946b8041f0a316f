package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"unicode"

	"github.com/airs-dev/airs/pipeline"
)

const (
	compareMaxChars   = 2_000_000
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
				"a": {"type": "string", "maxLength": 2000000, "description": "The first (old) text."},
				"b": {"type": "string", "maxLength": 2000000, "description": "The second (new) text."},
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
		if err := decodeParams(params, &p); err != nil {
			return nil, err
		}
		if len(p.A) > compareMaxChars || len(p.B) > compareMaxChars {
			return nil, reject(CodeTooLarge, "each text may have at most %d bytes", compareMaxChars)
		}
		ignoreWS := p.IgnoreWhitespace == nil || *p.IgnoreWhitespace
		return result(CompareTexts(p.A, p.B, p.ALabel, p.BLabel, ignoreWS))
	})
}

func splitLines(s string) []string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.TrimSuffix(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

func collapseSpace(s string) string { return strings.Join(strings.Fields(s), " ") }

// CompareTexts compares two texts line by line and pairs up the numbers
// that differ.
func CompareTexts(a, b, aLabel, bLabel string, ignoreWhitespace bool) Comparison {
	al, bl := splitLines(a), splitLines(b)
	ak, bk := al, bl
	if ignoreWhitespace {
		ak, bk = make([]string, len(al)), make([]string, len(bl))
		for i, l := range al {
			ak[i] = collapseSpace(l)
		}
		for i, l := range bl {
			bk[i] = collapseSpace(l)
		}
	}
	ops := DiffLines(ak, bk)

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
	if nums := compareNumbers(al, bl, ops, pairs); nums != nil {
		c.Numbers = nums
	}
	if len(c.Numbers) > compareMaxNumbers {
		c.Numbers, c.Truncated = c.Numbers[:compareMaxNumbers], true
	}
	diff, cut := unifiedDiff(al, bl, ops, aLabel, bLabel, 2)
	c.Diff = diff
	c.Truncated = c.Truncated || cut
	c.Summary = summarizeComparison(c, aLabel, bLabel, len(al), len(bl))
	return c
}

// numberRE finds numbers as people write them in documents: an optional
// currency sign, digits with thousands separators and decimals, an optional
// percent or trailing currency sign.
var numberRE = regexp.MustCompile(`[$€£¥₹]?\s?[-−]?\d[\d,]*(?:\.\d+)?(?:\s?[%€])?`)

type number struct {
	text  string
	value float64
	start int
}

func findNumbers(line string) []number {
	var out []number
	for _, m := range numberRE.FindAllStringIndex(line, -1) {
		text := strings.TrimSpace(line[m[0]:m[1]])
		text = strings.TrimRight(text, ",")
		v, ok := parseNumber(text)
		if !ok {
			continue
		}
		out = append(out, number{text: text, value: v, start: m[0]})
	}
	return out
}

var thousandsRE = regexp.MustCompile(`^\d{1,3}(,\d{3})+(\.\d+)?$`)
var decimalCommaRE = regexp.MustCompile(`^\d+,\d{1,2}$`)

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
	case thousandsRE.MatchString(s):
		s = strings.ReplaceAll(s, ",", "")
	case decimalCommaRE.MatchString(s):
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
	s := numberRE.ReplaceAllString(line, " # ")
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
	return trim(numberRE.ReplaceAllString(line, " "))
}

// compareNumbers pairs lines of A and B that say the same thing (equal
// lineKey, first in order) anywhere in the texts, so a price list whose
// rows moved still compares row by row; changed line pairs from the diff
// that no key paired are compared position by position as a fallback.
// Only pairs with the same count of numbers are compared.
func compareNumbers(al, bl []string, ops []DiffOp, pairs [][2]int) []NumberChange {
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
	byKey := map[string][]entry{}
	for j, l := range bl {
		if equalB[j] {
			continue
		}
		if nums := findNumbers(l); len(nums) > 0 {
			k := lineKey(l)
			byKey[k] = append(byKey[k], entry{j, nums})
		}
	}
	var out []NumberChange
	usedA := map[int]bool{}
	usedB := map[int]bool{}
	emit := func(i int, an []number, j int, bn []number) {
		usedA[i], usedB[j] = true, true
		for x := range an {
			if an[x].value == bn[x].value {
				continue
			}
			nc := NumberChange{
				Label: label(al[i], an), A: an[x].text, B: bn[x].text,
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
		if equalA[i] {
			continue
		}
		an := findNumbers(l)
		if len(an) == 0 {
			continue
		}
		k := lineKey(l)
		if strings.Trim(k, "# ") == "" {
			continue // only numbers: no words to match on
		}
		cands := byKey[k]
		for ci, e := range cands {
			if !usedB[e.line] && len(e.nums) == len(an) {
				emit(i, an, e.line, e.nums)
				byKey[k] = append(cands[:ci:ci], cands[ci+1:]...)
				break
			}
		}
	}
	for _, pr := range pairs {
		i, j := pr[0], pr[1]
		if usedA[i] || usedB[j] {
			continue
		}
		an, bn := findNumbers(al[i]), findNumbers(bl[j])
		if len(an) > 0 && len(an) == len(bn) {
			emit(i, an, j, bn)
		}
	}
	return out
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
