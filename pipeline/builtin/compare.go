package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
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
		ctx, done := heavy(ctx, len(p.A)+len(p.B))
		defer done()
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
		if len(out)%checkLines == 0 && stopped(ctx) != nil {
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
			if i%checkLines == 0 && stopped(ctx) != nil {
				return Comparison{}, ctx.Err()
			}
			ak[i] = collapseSpace(l)
		}
		for i, l := range bl {
			if i%checkLines == 0 && stopped(ctx) != nil {
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
