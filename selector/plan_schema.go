package selector

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"regexp"
	"regexp/syntax"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/airs-dev/airs/chains"
	"github.com/airs-dev/airs/pipeline"

	"github.com/airs-dev/airs/internal/jsonptr"
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

// OutlineSchema is the JSON Schema of a plan's outline over the named tools:
// {"steps": ["<tool>", ...]}, 1 to MaxSteps steps.
func OutlineSchema(tools []string, lim PlanLimits) (json.RawMessage, Budget, error) {
	lim = lim.withDefaults()
	if len(tools) == 0 {
		return nil, Budget{}, ErrNoTools
	}
	names := make([]any, len(tools))
	var name size
	for i, t := range tools {
		names[i] = t
		name = name.or(stringSize(utf8.RuneCountInString(t)))
	}
	steps := size{bytes: 2, toks: 2}.plus(name.plus(size{1, 1}).times(lim.MaxSteps))
	s := obj("type", "object",
		"properties", obj("steps", obj("type", "array", "minItems", 1, "maxItems", lim.MaxSteps, "items", obj("enum", names))),
		"required", []any{"steps"},
		"additionalProperties", false)
	raw, err := json.Marshal(s)
	return raw, objectSize([]string{"steps"}, []size{steps}).budget(), err
}

// PlanSchema is the JSON Schema of the plan that calls tools[0], tools[1], …
// in that order:
//
//	{"steps": [{"id": "s1", "function": "<tools[0]>", "arguments": {...}}, ...]}
//
// Step sK's arguments follow its tool's schema, narrowed for generation:
// only declared properties; strings, arrays and numbers bounded (see
// PlanLimits); and any top-level argument may instead be a reference to the
// output of s1 … s(K-1) that Chain.Validate accepts there. A required
// argument that can be neither is an error naming the step.
func PlanSchema(tools []pipeline.Tool, lim PlanLimits) (json.RawMessage, Budget, error) {
	lim = lim.withDefaults()
	if len(tools) == 0 {
		return nil, Budget{}, errors.New("selector: a plan needs at least one step")
	}
	if len(tools) > lim.MaxSteps {
		return nil, Budget{}, fmt.Errorf("selector: a plan of %d steps (at most %d)", len(tools), lim.MaxSteps)
	}
	items := make([]any, len(tools))
	arr := size{bytes: 2, toks: 2}
	for k, t := range tools {
		args, asz, err := planArguments(tools[:k], t, lim)
		if err != nil {
			return nil, Budget{}, fmt.Errorf("selector: step %s (%s): %w", StepID(k+1), t.Name, err)
		}
		id, fn := StepID(k+1), t.Name
		items[k] = obj("type", "object",
			"properties", obj("id", obj("const", id), "function", obj("const", fn), "arguments", args),
			"required", []any{"id", "function", "arguments"},
			"additionalProperties", false)
		step := objectSize([]string{"id", "function", "arguments"}, []size{constSize(id), constSize(fn), asz})
		arr = arr.plus(step).plus(size{1, 1})
	}
	s := obj("type", "object",
		"properties", obj("steps", obj("type", "array", "prefixItems", items, "items", false, "minItems", len(tools), "maxItems", len(tools))),
		"required", []any{"steps"},
		"additionalProperties", false)
	raw, err := json.Marshal(s)
	return raw, objectSize([]string{"steps"}, []size{arr}).budget(), err
}

// planArguments is the arguments schema of a step calling t after the
// steps calling prev.
func planArguments(prev []pipeline.Tool, t pipeline.Tool, lim PlanLimits) (any, size, error) {
	root, err := decodeOrdered(t.Parameters)
	if err != nil {
		return nil, size{}, fmt.Errorf("parameters schema: %v", err)
	}
	ps, _ := root.(*object)
	if ps == nil { // no schema, or a boolean one: no arguments
		return obj("type", "object", "properties", obj(), "additionalProperties", false), objectSize(nil, nil), nil
	}
	lb := &literalBuilder{root: root, lim: lim}
	props, _ := ps.get("properties").(*object)
	required := map[string]bool{}
	if req, ok := ps.get("required").([]any); ok {
		for _, r := range req {
			if s, ok := r.(string); ok {
				required[s] = true
			}
		}
	}
	out := obj()
	var req []any
	var keys []string
	var sizes []size
	if props != nil {
		for _, name := range props.keys {
			lit, lsz, litOK := lb.literal(props.vals[name], 0)
			ref, rsz, refOK, err := refSchema(prev, t, name, lim)
			if err != nil {
				return nil, size{}, err
			}
			var v any
			var sz size
			switch {
			case litOK && refOK:
				v, sz = obj("anyOf", []any{lit, ref}), lsz.or(rsz)
			case litOK:
				v, sz = lit, lsz
			case refOK:
				v, sz = ref, rsz
			default:
				if required[name] {
					return nil, size{}, fmt.Errorf("required argument %q has no bounded literal form and no earlier output fits it", name)
				}
				continue
			}
			out.set(name, v)
			keys = append(keys, name)
			sizes = append(sizes, sz)
			if required[name] {
				req = append(req, name)
			}
		}
	}
	for name := range required {
		if props == nil || props.get(name) == nil {
			return nil, size{}, fmt.Errorf("required argument %q is not declared in properties", name)
		}
	}
	s := obj("type", "object", "properties", out)
	if len(req) > 0 {
		s.set("required", req)
	}
	s.set("additionalProperties", false)
	return s, objectSize(keys, sizes), nil
}

// refSchema is the schema of the whole-value references to earlier steps'
// outputs that Chain.Validate accepts for parameter name of tool t: one
// anchored pattern, {{steps.sJ.output<path>}} for each earlier step sJ and
// each path of its tool's output whose type fits the parameter.
func refSchema(prev []pipeline.Tool, t pipeline.Tool, name string, lim PlanLimits) (any, size, bool, error) {
	if len(prev) == 0 {
		return nil, size{}, false, nil
	}
	want, err := chains.ParamTypes(t, name)
	if err != nil {
		return nil, size{}, false, err
	}
	var stepAlts []string
	longest := 0
	for j, from := range prev {
		paths, err := chains.OutputPaths(from, lim.MaxRefPath, maxOutputPaths)
		if err != nil {
			return nil, size{}, false, fmt.Errorf("output of %s (%s): %w", StepID(j+1), from.Name, err)
		}
		var alts []string
		whole := false
		for _, p := range paths {
			if !chains.TypesCompatible(p.Types, want) {
				continue
			}
			re, n := pathPattern(p.Elems)
			if p.Open {
				if r := lim.MaxRefPath - len(p.Elems); r > 0 {
					re += "(" + anyKeyRE + "|" + anyIndexRE + "){0," + strconv.Itoa(r) + "}"
					n += r * anyKeyLen
				}
			}
			if re == "" {
				whole = true
			} else {
				alts = append(alts, re)
			}
			longest = max(longest, len(StepID(j+1))+n)
		}
		if len(alts) == 0 && !whole {
			continue
		}
		// s1\.output(\.text|\.path)? — the group optional when the whole
		// output fits too.
		a := regexp.QuoteMeta(StepID(j+1)) + `\.output`
		if len(alts) > 0 {
			a += "(" + strings.Join(alts, "|") + ")"
			if whole {
				a += "?"
			}
		}
		stepAlts = append(stepAlts, a)
	}
	if len(stepAlts) == 0 {
		return nil, size{}, false, nil
	}
	pat := `^\{\{steps\.(` + strings.Join(stepAlts, "|") + `)\}\}$`
	chars := len("{{steps.") + longest + len(".output") + len("}}")
	return obj("type", "string", "pattern", pat), stringSize(chars), true, nil
}

// maxOutputPaths bounds how many paths of one tool's output a reference
// grammar lists (breadth first: the shallow ones are kept).
const maxOutputPaths = 64

const (
	// anyKeyRE is a key a reference writes plainly (chains' isPlainKey),
	// at most 32 characters; anyIndexRE an index, without leading zeros.
	anyKeyRE   = `\.[A-Za-z0-9_$-]{1,32}`
	anyIndexRE = `\[(0|[1-9][0-9]{0,3})\]`
	anyKeyLen  = 33 // the longer of the two
)

// pathPattern is the pattern of a path's elements, and its longest match.
func pathPattern(elems []chains.PathElem) (string, int) {
	var b strings.Builder
	n := 0
	for _, e := range elems {
		switch {
		case e.IsIndex && e.Index == chains.AnyIndex:
			b.WriteString(anyIndexRE)
			n += 6
		case e.IsIndex:
			s := "[" + strconv.Itoa(e.Index) + "]"
			b.WriteString(regexp.QuoteMeta(s))
			n += len(s)
		case e.Key == "":
			b.WriteString(anyKeyRE)
			n += anyKeyLen
		default:
			b.WriteString(`\.` + regexp.QuoteMeta(e.Key))
			n += 1 + len(e.Key)
		}
	}
	return b.String(), n
}

// literalBuilder narrows a parameter schema to the literal values a plan
// may hold, and measures them.
type literalBuilder struct {
	root any // the parameters schema, for local $refs
	lim  PlanLimits
}

// maxRefDepth bounds how many $refs a literal schema follows (recursive
// schemas are cut there: no literal below).
const maxRefDepth = 8

// annotations are keywords that say nothing about which values are valid.
var annotations = map[string]bool{
	"$schema": true, "$id": true, "$comment": true, "$anchor": true, "title": true, "description": true,
	"default": true, "examples": true, "deprecated": true, "readOnly": true, "writeOnly": true,
	"$defs": true, "definitions": true,
}

// literal returns the narrowed schema of s, its size, and whether any
// literal value is left. A sub-schema with keywords it does not know is
// kept as it is, and unbounded.
func (lb *literalBuilder) literal(s any, depth int) (any, size, bool) {
	switch v := s.(type) {
	case bool:
		if !v {
			return nil, size{}, false
		}
		return lb.anyScalar()
	case *object:
		return lb.literalObject(v, depth)
	}
	return s, unbounded, true
}

// anyScalar stands for a schema that allows every value: in a plan, a
// bounded string, a number, a boolean or null.
func (lb *literalBuilder) anyScalar() (any, size, bool) {
	str, ssz, _ := lb.stringLiteral(obj(), 0, -1)
	return obj("anyOf", []any{str, obj("type", "number"), obj("type", "boolean"), obj("type", "null")}), ssz.or(numberSize), true
}

func (lb *literalBuilder) literalObject(s *object, depth int) (any, size, bool) {
	var known []string
	for _, k := range s.keys {
		if !annotations[k] {
			known = append(known, k)
		}
	}
	if ref, ok := s.get("$ref").(string); ok {
		if len(known) != 1 || depth >= maxRefDepth || !strings.HasPrefix(ref, "#") {
			return s, unbounded, true
		}
		target, ok := pointer(lb.root, ref[1:])
		if !ok {
			return s, unbounded, true
		}
		return lb.literal(target, depth+1)
	}
	if len(known) == 0 {
		return lb.anyScalar()
	}
	if c, ok := s.has("const"); ok {
		return lb.values(s, []any{c}, "const")
	}
	if e, ok := s.get("enum").([]any); ok {
		return lb.values(s, e, "enum")
	}
	for _, k := range []string{"anyOf", "oneOf"} {
		bs, ok := s.get(k).([]any)
		if !ok {
			continue
		}
		if len(known) != 1 {
			return s, unbounded, true
		}
		var alts []any
		var sz size
		for _, b := range bs {
			if l, bsz, ok := lb.literal(b, depth); ok {
				alts = append(alts, l)
				sz = sz.or(bsz)
			}
		}
		if len(alts) == 0 {
			return nil, size{}, false
		}
		return obj(k, alts), sz, true
	}
	types := typesOf(s)
	if types == nil {
		return s, unbounded, true
	}
	var alts []any
	var sz size
	for _, t := range types {
		l, tsz, ok := lb.literalOfType(s, t, depth)
		if ok {
			alts = append(alts, l)
			sz = sz.or(tsz)
		}
	}
	switch len(alts) {
	case 0:
		return nil, size{}, false
	case 1:
		return alts[0], sz, true
	}
	return obj("anyOf", alts), sz, true
}

// values narrows a const or enum schema: values with "{{" (ParsePlan would
// read a reference) or of a type the schema's "type" excludes are dropped;
// other keywords beside them are kept in an allOf. It is as long as its
// longest value.
func (lb *literalBuilder) values(s *object, vals []any, kw string) (any, size, bool) {
	types := typesOf(obj("type", s.get("type")))
	var keep []any
	sz := size{}
	for _, v := range vals {
		if holdsRefSyntax(v) || s.get("type") != nil && !typeAllows(types, v) {
			continue
		}
		keep = append(keep, v)
		sz = sz.or(valueSize(v))
	}
	if len(keep) == 0 {
		return nil, size{}, false
	}
	var out *object
	if kw == "const" {
		out = obj("const", keep[0])
	} else {
		out = obj("enum", keep)
	}
	rest := obj()
	for _, k := range s.keys {
		if k != kw && k != "type" && !annotations[k] {
			rest.set(k, s.vals[k])
		}
	}
	if len(rest.keys) > 0 {
		return obj("allOf", []any{out, rest}), sz, true
	}
	return out, sz, true
}

// typeAllows reports whether a JSON value has one of types.
func typeAllows(types []string, v any) bool {
	var t string
	switch x := v.(type) {
	case string:
		t = "string"
	case bool:
		t = "boolean"
	case nil:
		t = "null"
	case []any:
		t = "array"
	case *object:
		t = "object"
	case json.Number:
		if slices.Contains(types, "number") {
			return true
		}
		if f, err := strconv.ParseFloat(x.String(), 64); err == nil && f == math.Trunc(f) {
			t = "integer"
		} else {
			t = "number"
		}
	}
	return slices.Contains(types, t)
}

// typeKeywords are the keywords literalOfType understands, per type.
var typeKeywords = map[string][]string{
	"string":  {"minLength", "maxLength", "pattern", "format"},
	"integer": {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"},
	"number":  {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"},
	"object":  {"properties", "required", "additionalProperties"},
	"array":   {"items", "prefixItems", "minItems", "maxItems"},
	"boolean": {},
	"null":    {},
}

// typesOf is the types a schema with "type" (or, without it, its
// keywords) allows; nil when it uses a keyword no type here understands.
func typesOf(s *object) []string {
	var types []string
	switch t := s.get("type").(type) {
	case string:
		types = []string{t}
	case []any:
		for _, x := range t {
			if ts, ok := x.(string); ok {
				types = append(types, ts)
			}
		}
	case nil:
		for _, k := range s.keys {
			for t, kws := range typeKeywords {
				if slices.Contains(kws, k) && !slices.Contains(types, t) {
					types = append(types, t)
				}
			}
		}
		slices.Sort(types)
		if len(types) == 0 {
			return nil
		}
	default:
		return nil
	}
	for _, k := range s.keys {
		if k == "type" || annotations[k] {
			continue
		}
		known := false
		for _, t := range types {
			known = known || slices.Contains(typeKeywords[t], k)
		}
		if !known {
			return nil
		}
	}
	if slices.Contains(types, "number") {
		types = slices.DeleteFunc(types, func(t string) bool { return t == "integer" })
	}
	return types
}

func (lb *literalBuilder) literalOfType(s *object, t string, depth int) (any, size, bool) {
	switch t {
	case "string":
		lo, hi := intKeyword(s, "minLength", 0), intKeyword(s, "maxLength", -1)
		return lb.stringLiteral(s, lo, hi)
	case "integer", "number":
		out := obj("type", t)
		for _, k := range typeKeywords[t] {
			if v, ok := s.has(k); ok {
				out.set(k, v)
			}
		}
		if t == "integer" {
			return out, integerSize(s), true
		}
		return out, numberSize, true
	case "boolean":
		return obj("type", "boolean"), size{5, 1}, true
	case "null":
		return obj("type", "null"), size{4, 1}, true
	case "object":
		return lb.objectLiteral(s, depth)
	case "array":
		return lb.arrayLiteral(s, depth)
	}
	return nil, size{}, false
}

// stringLiteral bounds a string to [lo, cap] characters, cap the smaller of
// hi (-1: none) and MaxLiteral but never below lo, and keeps "{" out of it:
//
//	{"type": "string", "pattern": "^[^{]*$", "minLength": lo, "maxLength": cap}
//
// A schema's own pattern is kept, with "{" taken out of it where it is one
// repeated character class (^[A-Za-z ]+$), else intersected with a pattern
// that has no "{{". The length bounds stay minLength/maxLength, which the
// grammar enforces with a counter; llama.cpp's converter ignores them
// beside a pattern, so the format sent to Ollama has them folded into the
// pattern instead (ollamaFormat: ^[^{]{lo,cap}$).
func (lb *literalBuilder) stringLiteral(s *object, lo, hi int) (any, size, bool) {
	limit := lb.lim.MaxLiteral
	if hi >= 0 {
		limit = min(limit, hi)
	}
	limit = max(limit, lo)
	format, _ := s.get("format").(string)
	pat, hasPat := s.get("pattern").(string)
	out := obj("type", "string")
	noRefs := false // whether the constraints keep "{{" out
	switch {
	case !hasPat:
		if format == "" {
			out.set("pattern", noBracePattern)
			noRefs = true
		}
	default:
		if class, qlo, qhi, ok := repeatedClass(pat); ok {
			lo = max(lo, qlo)
			if qhi >= 0 {
				limit = min(limit, qhi)
			}
			c := classWithout(class, '{')
			if c == "" { // only "{" was allowed: only the empty string is left
				if lo > 0 {
					return nil, size{}, false
				}
				return obj("const", ""), stringSize(0), true
			}
			out.set("pattern", "^"+c+"*$")
			noRefs = true
		} else {
			out.set("pattern", pat)
			noRefs = !patternMayHold(pat, '{')
		}
	}
	if lo > limit {
		return nil, size{}, false
	}
	if format != "" {
		out.set("format", format)
	}
	if lo > 0 {
		out.set("minLength", lo)
	}
	out.set("maxLength", limit)
	if !noRefs {
		return obj("allOf", []any{out, obj("pattern", noRefsPattern)}), stringSize(limit), true
	}
	return out, stringSize(limit), true
}

const (
	// noBracePattern is a string without "{"; noRefsPattern one without "{{".
	noBracePattern = `^[^{]*$`
	noRefsPattern  = `^(\{?[^{])*\{?$`
)

// repeatedClass parses an anchored pattern that is one repeated character
// class, ^C*$, ^C+$, ^C?$, ^C{m,n}$ (or a single character, or .), into the
// class's ranges (pairs) and the repetition's bounds (-1: none).
func repeatedClass(pat string) ([]rune, int, int, bool) {
	re, err := syntax.Parse(pat, syntax.Perl)
	if err != nil {
		return nil, 0, 0, false
	}
	if re.Op != syntax.OpConcat || len(re.Sub) != 3 || re.Sub[0].Op != syntax.OpBeginText || re.Sub[2].Op != syntax.OpEndText {
		return nil, 0, 0, false
	}
	body := re.Sub[1]
	for body.Op == syntax.OpCapture {
		body = body.Sub[0]
	}
	qlo, qhi := 1, 1
	switch body.Op {
	case syntax.OpStar:
		qlo, qhi, body = 0, -1, body.Sub[0]
	case syntax.OpPlus:
		qlo, qhi, body = 1, -1, body.Sub[0]
	case syntax.OpQuest:
		qlo, qhi, body = 0, 1, body.Sub[0]
	case syntax.OpRepeat:
		qlo, qhi, body = body.Min, body.Max, body.Sub[0]
	}
	for body.Op == syntax.OpCapture {
		body = body.Sub[0]
	}
	switch body.Op {
	case syntax.OpCharClass:
		return body.Rune, qlo, qhi, true
	case syntax.OpLiteral:
		if len(body.Rune) != 1 || body.Flags&syntax.FoldCase != 0 {
			return nil, 0, 0, false
		}
		return []rune{body.Rune[0], body.Rune[0]}, qlo, qhi, true
	case syntax.OpAnyCharNotNL:
		return []rune{0, '\n' - 1, '\n' + 1, utf8.MaxRune}, qlo, qhi, true
	case syntax.OpAnyChar:
		return []rune{0, utf8.MaxRune}, qlo, qhi, true
	}
	return nil, 0, 0, false
}

// ollamaFormat rewrites a plan schema for llama.cpp's converter, which
// ignores minLength and maxLength beside a pattern: a string whose pattern
// is one repeated character class gets its length bounds folded into the
// repetition, ^C{lo,hi}$ — the same language, in the form the converter
// enforces. Everything else is left as it is.
func ollamaFormat(v any) any {
	switch x := v.(type) {
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = ollamaFormat(e)
		}
		return out
	case *object:
		out := obj()
		for _, k := range x.keys {
			out.set(k, ollamaFormat(x.vals[k]))
		}
		pat, ok := out.get("pattern").(string)
		if !ok || out.get("type") != "string" {
			return out
		}
		ranges, qlo, qhi, ok := repeatedClass(pat)
		if !ok || qlo != 0 || qhi != -1 {
			return out
		}
		lo, hi := intKeyword(out, "minLength", 0), intKeyword(out, "maxLength", -1)
		if hi < 0 {
			return out
		}
		class := classWithout(ranges, -1)
		if pat == noBracePattern {
			class = "[^{]" // the same class, as written
		}
		if class == "" {
			return out
		}
		folded := obj()
		for _, k := range out.keys {
			switch k {
			case "minLength", "maxLength":
			case "pattern":
				folded.set(k, fmt.Sprintf("^%s{%d,%d}$", class, lo, hi))
			default:
				folded.set(k, out.vals[k])
			}
		}
		return folded
	}
	return v
}

// classWithout writes the character class of ranges (pairs) without r, in
// a syntax ECMA-262 and Go share; "" when nothing is left.
func classWithout(ranges []rune, r rune) string {
	var b strings.Builder
	b.WriteByte('[')
	n := 0
	emit := func(lo, hi rune) {
		if lo > hi {
			return
		}
		n++
		b.WriteString(classRune(lo))
		if hi > lo {
			b.WriteByte('-')
			b.WriteString(classRune(hi))
		}
	}
	for i := 0; i+1 < len(ranges); i += 2 {
		lo, hi := ranges[i], ranges[i+1]
		if lo <= r && r <= hi {
			emit(lo, r-1)
			emit(r+1, hi)
		} else {
			emit(lo, hi)
		}
	}
	if n == 0 {
		return ""
	}
	b.WriteByte(']')
	return b.String()
}

func classRune(r rune) string {
	switch {
	case r < 0x20 || r == 0x7f:
		return fmt.Sprintf(`\x%02X`, r)
	case r >= 0xD800 && r <= 0xDFFF:
		return fmt.Sprintf(`\u%04X`, r)
	case strings.ContainsRune(`\]^-[`, r):
		return `\` + string(r)
	}
	return string(r)
}

// patternMayHold reports whether a string matching pat may contain r
// (conservatively: true when unsure).
func patternMayHold(pat string, r rune) bool {
	re, err := syntax.Parse(pat, syntax.Perl)
	if err != nil {
		return true
	}
	var may func(re *syntax.Regexp) bool
	may = func(re *syntax.Regexp) bool {
		switch re.Op {
		case syntax.OpLiteral:
			return slices.Contains(re.Rune, r) || re.Flags&syntax.FoldCase != 0
		case syntax.OpCharClass:
			for i := 0; i+1 < len(re.Rune); i += 2 {
				if re.Rune[i] <= r && r <= re.Rune[i+1] {
					return true
				}
			}
			return false
		case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
			return true
		}
		for _, s := range re.Sub {
			if may(s) {
				return true
			}
		}
		return false
	}
	// The pattern keyword matches anywhere: unanchored ends hold anything.
	if !strings.HasPrefix(pat, "^") || !strings.HasSuffix(pat, "$") {
		return true
	}
	return may(re)
}

func (lb *literalBuilder) objectLiteral(s *object, depth int) (any, size, bool) {
	props, _ := s.get("properties").(*object)
	required := map[string]bool{}
	if req, ok := s.get("required").([]any); ok {
		for _, r := range req {
			if k, ok := r.(string); ok {
				required[k] = true
			}
		}
	}
	out := obj()
	var req []any
	var keys []string
	var sizes []size
	if props != nil {
		for _, k := range props.keys {
			l, sz, ok := lb.literal(props.vals[k], depth)
			if !ok {
				if required[k] {
					return nil, size{}, false
				}
				continue
			}
			out.set(k, l)
			keys, sizes = append(keys, k), append(sizes, sz)
			if required[k] {
				req = append(req, k)
			}
		}
	}
	for k := range required {
		if out.get(k) == nil {
			return nil, size{}, false // required but not declared: no literal with declared properties only
		}
	}
	o := obj("type", "object", "properties", out)
	if len(req) > 0 {
		o.set("required", req)
	}
	o.set("additionalProperties", false)
	return o, objectSize(keys, sizes), true
}

func (lb *literalBuilder) arrayLiteral(s *object, depth int) (any, size, bool) {
	lo, hi := intKeyword(s, "minItems", 0), intKeyword(s, "maxItems", -1)
	limit := lb.lim.MaxItems
	if hi >= 0 {
		limit = min(limit, hi)
	}
	limit = max(limit, lo)
	out := obj("type", "array")
	sz := size{bytes: 2, toks: 2}
	n := 0 // items measured so far
	if pi, ok := s.get("prefixItems").([]any); ok {
		var items []any
		for _, p := range pi {
			if len(items) == limit {
				break
			}
			l, isz, ok := lb.literal(p, depth)
			if !ok {
				break // no value for this position: the array ends before it
			}
			items = append(items, l)
			sz = sz.plus(isz).plus(size{1, 1})
			n++
		}
		if len(items) < lo {
			return nil, size{}, false
		}
		out.set("prefixItems", items)
		if len(items) < len(pi) {
			out.set("items", false)
			limit = len(items)
		}
	}
	switch it := s.get("items").(type) {
	case nil:
		if n < limit {
			l, isz, _ := lb.anyScalar()
			out.set("items", l)
			sz = sz.plus(isz.plus(size{1, 1}).times(limit - n))
		}
	case bool:
		if !it {
			out.set("items", false)
			limit = n
		} else if n < limit {
			l, isz, _ := lb.anyScalar()
			out.set("items", l)
			sz = sz.plus(isz.plus(size{1, 1}).times(limit - n))
		}
	default:
		if n < limit {
			l, isz, ok := lb.literal(it, depth)
			if ok {
				out.set("items", l)
				sz = sz.plus(isz.plus(size{1, 1}).times(limit - n))
			} else {
				out.set("items", false)
				limit = n
			}
		}
	}
	if limit < lo {
		return nil, size{}, false
	}
	if lo > 0 {
		out.set("minItems", lo)
	}
	out.set("maxItems", limit)
	return out, sz, true
}

// holdsRefSyntax reports whether a JSON value holds a string with "{{",
// which ParsePlan would read as a reference.
func holdsRefSyntax(v any) bool {
	switch x := v.(type) {
	case string:
		return strings.Contains(x, "{{")
	case []any:
		return slices.ContainsFunc(x, holdsRefSyntax)
	case *object:
		for _, k := range x.keys {
			if holdsRefSyntax(x.vals[k]) {
				return true
			}
		}
	}
	return false
}

func intKeyword(s *object, k string, def int) int {
	n, ok := s.get(k).(json.Number)
	if !ok {
		return def
	}
	f, err := strconv.ParseFloat(n.String(), 64)
	if err != nil || f < 0 || f != math.Trunc(f) {
		return def
	}
	return int(min(f, 1<<40))
}

func pointer(doc any, ptr string) (any, bool) {
	return jsonptr.Resolve(doc, ptr, func(n any, tok string) (any, bool) {
		switch c := n.(type) {
		case *object:
			v, ok := c.vals[tok]
			return v, ok
		case []any:
			if i, ok := jsonptr.Index(tok, len(c)); ok {
				return c[i], true
			}
		}
		return nil, false
	})
}

// ---- sizes ------------------------------------------------------------------

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
func valueSize(v any) size {
	switch x := v.(type) {
	case string:
		return constSize(x)
	case json.Number:
		return size{len(x), 1}
	case bool:
		return size{5, 1}
	case nil:
		return size{4, 1}
	case []any:
		sz := size{2, 2}
		for _, e := range x {
			sz = sz.plus(valueSize(e)).plus(size{1, 1})
		}
		return sz
	case *object:
		vals := make([]size, len(x.keys))
		for i, k := range x.keys {
			vals[i] = valueSize(x.vals[k])
		}
		return objectSize(x.keys, vals)
	}
	return unbounded
}

// integerSize: the longer bound's digits and sign, or a sign and 20
// digits when a bound is missing (the grammar writes integers as plain
// digits, at most MaxNumberDigits, 20 by default).
func integerSize(s *object) size {
	lo, okLo := s.get("minimum").(json.Number)
	hi, okHi := s.get("maximum").(json.Number)
	if !okLo || !okHi {
		return size{1 + 20, 1}
	}
	n := 0
	for _, b := range []json.Number{lo, hi} {
		f, ok := new(big.Float).SetString(b.String())
		if !ok {
			return numberSize
		}
		i, _ := f.Int(nil)
		n = max(n, len(i.String()))
	}
	return size{n, 1}
}

// ---- ordered JSON -----------------------------------------------------------

// object is a JSON object that keeps its keys' order: the export writes
// properties in declared order (required ones first), and a model writes
// them in that order, so a step's id and function come before its
// arguments, and a tool's parameters keep its author's order.
type object struct {
	keys []string
	vals map[string]any
}

// obj builds an object from key, value pairs.
func obj(kv ...any) *object {
	o := &object{vals: map[string]any{}}
	for i := 0; i+1 < len(kv); i += 2 {
		o.set(kv[i].(string), kv[i+1])
	}
	return o
}

func (o *object) set(k string, v any) {
	if _, ok := o.vals[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.vals[k] = v
}

func (o *object) get(k string) any {
	if o == nil {
		return nil
	}
	return o.vals[k]
}

func (o *object) has(k string) (any, bool) {
	v, ok := o.vals[k]
	return v, ok
}

func (o *object) MarshalJSON() ([]byte, error) {
	var b strings.Builder
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		b.Write(kb)
		b.WriteByte(':')
		vb, err := json.Marshal(o.vals[k])
		if err != nil {
			return nil, err
		}
		b.Write(vb)
	}
	b.WriteByte('}')
	return []byte(b.String()), nil
}

// decodeOrdered decodes JSON with objects as *object and numbers as
// json.Number; empty input is nil.
func decodeOrdered(raw []byte) (any, error) {
	if len(strings.TrimSpace(string(raw))) == 0 {
		return nil, nil
	}
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.UseNumber()
	v, err := decodeValue(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err == nil {
		return nil, errors.New("trailing data")
	}
	return v, nil
}

func decodeValue(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			o := obj()
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				v, err := decodeValue(dec)
				if err != nil {
					return nil, err
				}
				o.set(kt.(string), v)
			}
			_, err := dec.Token()
			return o, err
		case '[':
			out := []any{}
			for dec.More() {
				v, err := decodeValue(dec)
				if err != nil {
					return nil, err
				}
				out = append(out, v)
			}
			_, err := dec.Token()
			return out, err
		}
		return nil, fmt.Errorf("unexpected %v", t)
	}
	return tok, nil
}
