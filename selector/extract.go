package selector

import (
	"encoding/json"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"github.com/airs-dev/airs/understand"
)

// Hints are names the extractor should recognise as values even when the
// request does not quote them: the configured spaces and the files in them.
type Hints struct {
	Spaces []string
	Files  []string
}

// ExtractArguments fills a tool's arguments from the request text without a
// model: numbers, quoted strings, enum values, proper names, and file and space
// names found in the text, each assigned to the parameter whose name is
// mentioned nearest to it. It is the no-LLM mode's stand-in for generation;
// the result is a best effort that the caller validates like any other call.
// Optional parameters are filled only on evidence (an enum value or a value
// next to the parameter's name); required ones always get a value of their type.
func ExtractArguments(schema json.RawMessage, text string, hints Hints) (map[string]any, error) {
	args, _, err := ExtractArgumentsReport(schema, text, hints)
	return args, err
}

// ExtractArgumentsReport is ExtractArguments that also names the required
// parameters (top level) it found no value for in the text and filled with
// an empty value of their type: a call made of those is invented, not
// taken from the request. A required enum with one value, or a default,
// is not counted: it is the only value the tool takes.
func ExtractArgumentsReport(schema json.RawMessage, text string, hints Hints) (map[string]any, []string, error) {
	root, err := parseProp("", schema)
	if err != nil {
		return nil, nil, err
	}
	ex := newExtraction(text, hints)
	args := ex.object(root)
	return args, ex.missing, nil
}

type candKind int

const (
	kNumber candKind = iota
	kQuoted
	kProper
	kFile
	kSpace
	kExpr // an arithmetic expression: "2 + 3 * (4 - 1)"
)

type cand struct {
	kind    candKind
	text    string
	num     float64
	percent bool
	pos     int
	used    bool
}

type extraction struct {
	text    string
	lower   string
	cands   []*cand
	depth   int      // nesting of the object being filled
	missing []string // required top-level parameters filled with nothing
}

var (
	reQuoted = understand.MustPattern(`(?:^|[\s(\[,:=])(?:'([^']+)'|"([^"]+)"|“([^”]+)”)`)
	reNumber = understand.MustPattern(`(?:^|[^\w.])(-?\$?\d[\d,]*(?:\.\d+)?)(%?)`)
	reFile   = understand.MustPattern(`[\w./-]+\.(?:pdf|txt|md|csv|json|yaml|yml|docx?|xlsx?|pptx?|png|jpe?g|html?|go|py|js|log)\b`)
	reExpr   = understand.MustPattern(`(?:\(\s*)*-?\d+(?:\.\d+)?(?:\s*[-+*/^%]\s*(?:\(\s*)*-?\d+(?:\.\d+)?(?:\s*\))*)+`)
	reWord   = regexp.MustCompile(`[\p{L}\p{N}][\p{L}\p{N}'&-]*`)
)

var numberWords = map[string]float64{
	"zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
	"eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "fifteen": 15, "twenty": 20,
	"thirty": 30, "fifty": 50, "hundred": 100, "dozen": 12,
}

// leadWords are capitalised only because they start a request.
var leadWords = map[string]bool{
	"what": true, "find": true, "get": true, "calculate": true, "compute": true, "show": true,
	"list": true, "give": true, "tell": true, "can": true, "could": true, "please": true,
	"how": true, "which": true, "who": true, "when": true, "where": true, "i": true, "i'm": true,
	"the": true, "a": true, "an": true, "is": true, "are": true, "do": true, "does": true,
	"search": true, "retrieve": true, "fetch": true, "play": true, "book": true, "send": true,
	"summarize": true, "compare": true, "read": true, "create": true, "make": true, "let": true,
	"would": true, "will": true, "my": true, "we": true, "you": true, "in": true, "for": true,
	"and": true, "or": true, "of": true, "on": true, "at": true, "to": true, "also": true,
	"then": true, "after": true, "using": true, "use": true, "check": true, "provide": true,
	"identify": true, "determine": true, "predict": true, "generate": true, "convert": true,
	"hey": true, "hi": true, "hello": true, "yes": true, "no": true, "it": true, "this": true,
	"that": true, "these": true, "those": true, "there": true, "what's": true, "i'd": true,
}

func newExtraction(text string, hints Hints) *extraction {
	ex := &extraction{text: text, lower: strings.ToLower(text)}
	taken := make([]bool, len(text)+1)
	mark := func(a, b int) {
		for i := a; i < b && i < len(taken); i++ {
			taken[i] = true
		}
	}
	for _, m := range reQuoted.FindAllStringSubmatchIndex(text, -1) {
		for g := 2; g+1 < len(m); g += 2 {
			if m[g] >= 0 {
				ex.cands = append(ex.cands, &cand{kind: kQuoted, text: text[m[g]:m[g+1]], pos: m[g]})
				mark(m[g]-1, m[g+1]+1)
			}
		}
	}
	for _, m := range reFile.FindAllStringIndex(text, -1) {
		if taken[m[0]] {
			continue
		}
		ex.cands = append(ex.cands, &cand{kind: kFile, text: text[m[0]:m[1]], pos: m[0]})
		mark(m[0], m[1])
	}
	for _, f := range hints.Files {
		if i := strings.Index(ex.lower, strings.ToLower(f)); i >= 0 && !taken[i] {
			ex.cands = append(ex.cands, &cand{kind: kFile, text: f, pos: i})
			mark(i, i+len(f))
		}
	}
	for _, s := range hints.Spaces {
		if i := indexWord(ex.lower, strings.ToLower(s)); i >= 0 && !taken[i] {
			ex.cands = append(ex.cands, &cand{kind: kSpace, text: s, pos: i})
		}
	}
	for _, m := range reExpr.FindAllStringIndex(text, -1) {
		if taken[m[0]] || strings.Trim(text[m[0]:m[1]], "0123456789-.") == "" {
			continue // a date or an id like 2024-01-05, not arithmetic
		}
		ex.cands = append(ex.cands, &cand{kind: kExpr, text: strings.TrimSpace(text[m[0]:m[1]]), pos: m[0]})
		mark(m[0], m[1])
	}
	for _, m := range reNumber.FindAllStringSubmatchIndex(text, -1) {
		a, b := m[2], m[3]
		if taken[a] {
			continue
		}
		raw := strings.NewReplacer("$", "", ",", "").Replace(text[a:b])
		v, err := strconv.ParseFloat(raw, 64)
		if err != nil {
			continue
		}
		ex.cands = append(ex.cands, &cand{kind: kNumber, text: text[a:b], num: v, percent: m[5] > m[4], pos: a})
		mark(a, b)
	}
	words := reWord.FindAllStringIndex(text, -1)
	for _, w := range words {
		lw := strings.ToLower(text[w[0]:w[1]])
		if v, ok := numberWords[lw]; ok && !taken[w[0]] {
			ex.cands = append(ex.cands, &cand{kind: kNumber, text: lw, num: v, pos: w[0]})
		}
	}
	// Proper names: runs of capitalised words, joined by "of"/"de"/"&".
	for i := 0; i < len(words); i++ {
		w := words[i]
		if taken[w[0]] || !isCapitalised(text[w[0]:w[1]]) {
			continue
		}
		start, end := w[0], w[1]
		j := i + 1
		for j < len(words) {
			gap := text[end:words[j][0]]
			if strings.TrimSpace(gap) != "" && gap != " & " {
				break
			}
			if !isCapitalised(text[words[j][0]:words[j][1]]) || taken[words[j][0]] {
				break
			}
			end = words[j][1]
			j++
		}
		phrase := text[start:end]
		if j == i+1 && leadWords[strings.ToLower(phrase)] {
			continue
		}
		if j > i+1 && leadWords[strings.ToLower(text[w[0]:w[1]])] && atSentenceStart(text, start) {
			phrase = text[words[i+1][0]:end]
			start = words[i+1][0]
		}
		ex.cands = append(ex.cands, &cand{kind: kProper, text: phrase, pos: start})
		i = j - 1
	}
	sort.SliceStable(ex.cands, func(a, b int) bool { return ex.cands[a].pos < ex.cands[b].pos })
	return ex
}

func isCapitalised(w string) bool {
	for _, r := range w {
		return unicode.IsUpper(r)
	}
	return false
}

func atSentenceStart(text string, pos int) bool {
	t := strings.TrimRight(text[:pos], " ")
	return t == "" || strings.HasSuffix(t, ".") || strings.HasSuffix(t, "?") || strings.HasSuffix(t, "!")
}

func indexWord(s, w string) int {
	off := 0
	for {
		i := strings.Index(s[off:], w)
		if i < 0 {
			return -1
		}
		i += off
		before := i == 0 || !isWordByte(s[i-1])
		after := i+len(w) >= len(s) || !isWordByte(s[i+len(w)])
		if before && after {
			return i
		}
		off = i + 1
	}
}

func isWordByte(b byte) bool {
	return b == '_' || b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z'
}

// nameWords splits a parameter name into the words a request would use:
// "initial_temperature" → initial, temperature; "playerName" → player, name.
func nameWords(name string) []string {
	var out []string
	var cur []rune
	flush := func() {
		if len(cur) > 1 {
			out = append(out, strings.ToLower(string(cur)))
		}
		cur = cur[:0]
	}
	prevLower := false
	for _, r := range name {
		switch {
		case !unicode.IsLetter(r) && !unicode.IsDigit(r):
			flush()
			prevLower = false
		case unicode.IsUpper(r) && prevLower:
			flush()
			cur = append(cur, r)
			prevLower = false
		default:
			cur = append(cur, r)
			prevLower = unicode.IsLower(r)
		}
	}
	flush()
	return out
}

// mentions returns the byte offsets where the parameter's name words occur.
func (ex *extraction) mentions(p *prop) []int {
	var at []int
	for _, w := range nameWords(p.Name) {
		if len(w) < 3 {
			continue
		}
		stem := w
		if len(stem) > 5 {
			stem = stem[:len(stem)-1] // crude plural/verb-form tolerance
		}
		off := 0
		for {
			i := strings.Index(ex.lower[off:], stem)
			if i < 0 {
				break
			}
			at = append(at, off+i)
			off += i + 1
		}
	}
	return at
}

// pick chooses the unused candidate of an accepted kind that sits nearest
// after a mention of the parameter (or, when required, the first unused one).
func (ex *extraction) pick(p *prop, required bool, kinds ...candKind) *cand {
	place := understand.PlaceParam(p.Name)
	ok := func(c *cand) bool {
		if c.used {
			return false
		}
		if place && c.kind == kProper && understand.FormatWord(c.text) {
			return false // "as JSON" names the answer's format, never a city
		}
		for _, k := range kinds {
			if c.kind == k {
				return true
			}
		}
		return false
	}
	mentions := ex.mentions(p)
	var best *cand
	bestD := math.MaxInt
	for _, c := range ex.cands {
		if !ok(c) {
			continue
		}
		for _, m := range mentions {
			d := c.pos - m
			if d < 0 {
				d = -d * 2 // a value before its name is less likely than after
			}
			if d < 40 && d < bestD {
				best, bestD = c, d
			}
		}
	}
	if best == nil && required {
		for _, c := range ex.cands {
			if ok(c) {
				best = c
				break
			}
		}
	}
	if best != nil {
		best.used = true
	}
	return best
}

func (ex *extraction) object(p *prop) map[string]any {
	out := map[string]any{}
	// Required parameters first: they must get a value, and they are the
	// ones a request is most likely to state.
	order := make([]*prop, 0, len(p.Props))
	for _, c := range p.Props {
		if p.Required[c.Name] {
			order = append(order, c)
		}
	}
	for _, c := range p.Props {
		if !p.Required[c.Name] {
			order = append(order, c)
		}
	}
	ex.depth++
	defer func() { ex.depth-- }()
	for _, c := range order {
		if v, ok := ex.value(c, p.Required[c.Name]); ok {
			out[c.Name] = v
		}
	}
	return out
}

func (ex *extraction) value(p *prop, required bool) (any, bool) {
	if len(p.Enum) > 0 {
		if v, ok := ex.enumValue(p); ok {
			return v, true
		}
		if !required {
			return nil, false
		}
		if p.HasDefault {
			return p.Default, true
		}
		if len(p.Enum) > 1 && ex.depth == 1 {
			ex.missing = append(ex.missing, p.Name)
		}
		return p.Enum[0], true
	}
	switch {
	case p.is("integer") || p.is("number"):
		if c := ex.pick(p, required, kNumber); c != nil {
			v := c.num
			if c.percent && !p.is("integer") {
				v /= 100
			}
			if p.is("integer") && !p.is("number") {
				v = math.Round(v)
			}
			return v, true
		}
	case p.is("boolean"):
		if ex.mentioned(p) {
			return !ex.negatedNear(p), true
		}
	case p.is("string"):
		kinds := []candKind{kExpr, kQuoted, kSpace, kProper}
		if namesFile(p) {
			kinds = append(kinds, kFile)
		}
		if c := ex.pick(p, required, kinds...); c != nil {
			return c.text, true
		}
		if required {
			if s := ex.phraseAfterMention(p); s != "" {
				return s, true
			}
		}
	case p.is("array"):
		if p.Items == nil {
			break
		}
		var vals []any
		kinds := []candKind{kQuoted, kFile, kProper}
		if p.Items.is("integer") || p.Items.is("number") {
			kinds = []candKind{kNumber}
		}
		for _, c := range ex.cands {
			if c.used || !hasKind(kinds, c.kind) {
				continue
			}
			c.used = true
			if c.kind == kNumber {
				vals = append(vals, c.num)
			} else {
				vals = append(vals, c.text)
			}
		}
		if len(vals) > 0 || required {
			if vals == nil {
				vals = []any{}
			}
			return vals, true
		}
	case p.is("object"):
		if required || ex.mentioned(p) {
			return ex.object(p), true
		}
	}
	if p.HasDefault && required {
		return p.Default, true
	}
	if required {
		if ex.depth == 1 {
			ex.missing = append(ex.missing, p.Name)
		}
		return zeroOf(p), true
	}
	return nil, false
}

func hasKind(ks []candKind, k candKind) bool {
	for _, x := range ks {
		if x == k {
			return true
		}
	}
	return false
}

func (ex *extraction) enumValue(p *prop) (any, bool) {
	bestPos := -1
	var best any
	for _, e := range p.Enum {
		s, ok := e.(string)
		if !ok {
			continue
		}
		for _, form := range []string{strings.ToLower(s), strings.ToLower(strings.ReplaceAll(s, "_", " "))} {
			if form == "" {
				continue
			}
			if i := indexWord(ex.lower, form); i >= 0 && (bestPos < 0 || len(form) > len(toLowerString(best))) {
				bestPos, best = i, e
			}
		}
	}
	return best, bestPos >= 0
}

func toLowerString(v any) string {
	s, _ := v.(string)
	return strings.ToLower(s)
}

func (ex *extraction) mentioned(p *prop) bool {
	for _, w := range nameWords(p.Name) {
		if len(w) >= 4 && indexWord(ex.lower, w) >= 0 {
			return true
		}
	}
	return false
}

func (ex *extraction) negatedNear(p *prop) bool {
	for _, m := range ex.mentions(p) {
		from := m - 12
		if from < 0 {
			from = 0
		}
		w := ex.lower[from:m]
		if strings.Contains(w, "not ") || strings.Contains(w, "no ") || strings.Contains(w, "without ") || strings.Contains(w, "n't ") {
			return true
		}
	}
	return false
}

// phraseAfterMention takes up to three words that follow the parameter's
// name in the text ("substance ice" → "ice"), the last resort for a required
// string that nothing else supplied.
func (ex *extraction) phraseAfterMention(p *prop) string {
	for _, m := range ex.mentions(p) {
		rest := ex.text[m:]
		ws := reWord.FindAllString(rest, 5)
		if len(ws) < 2 {
			continue
		}
		var out []string
		for _, w := range ws[1:] {
			lw := strings.ToLower(w)
			if lw == "of" || lw == "is" || lw == "to" || lw == "for" || lw == "the" || lw == "a" || lw == "as" {
				if len(out) == 0 {
					continue
				}
				break
			}
			out = append(out, w)
			if len(out) == 3 {
				break
			}
		}
		if len(out) > 0 {
			return strings.Join(out, " ")
		}
	}
	return ""
}

func zeroOf(p *prop) any {
	switch {
	case p.is("string"):
		return ""
	case p.is("integer"), p.is("number"):
		return 0.0
	case p.is("boolean"):
		return false
	case p.is("array"):
		return []any{}
	case p.is("object"):
		return map[string]any{}
	}
	return nil
}

// fileWords are the parameter-name words of a parameter that takes a file's
// name or path.
var fileWords = map[string]bool{"path": true, "file": true, "filename": true, "files": true, "dir": true, "directory": true,
	"folder": true, "pattern": true, "glob": true, "name": true, "label": true, "document": true, "doc": true, "url": true, "uri": true}

// namesFile reports whether a string parameter takes a file's name or path
// (its name says so, or its description speaks of a path or a file name).
// A file name in a request goes only to such parameters: given to a text
// parameter (compare's a and b, summarize's text) it would make the tool
// work on the name instead of the file — "compare a.pdf and b.pdf" would
// compare the two names and find them different.
func namesFile(p *prop) bool {
	for _, w := range nameWords(p.Name) {
		if fileWords[w] {
			return true
		}
	}
	d := strings.ToLower(p.Description)
	return strings.Contains(d, "path") || strings.Contains(d, "file name") || strings.Contains(d, "filename")
}
