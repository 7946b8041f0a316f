package selector

import (
	"math"
	"regexp/syntax"
	"slices"
	"strconv"
	"strings"

	"github.com/airs-dev/airs/grammar/export"
	"github.com/airs-dev/airs/internal/jsonptr"
	"github.com/airs-dev/airs/internal/jsonvalue"
)

// literalBuilder narrows a parameter schema to the literal values a plan
// may hold, and measures them.
type literalBuilder struct {
	root *jsonvalue.Value // the parameters schema, for local $refs
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
func (lb *literalBuilder) literal(s *jsonvalue.Value, depth int) (*jsonvalue.Value, size, bool) {
	switch s.Kind {
	case jsonvalue.Bool:
		if !s.Bool {
			return nil, size{}, false
		}
		return lb.anyScalar()
	case jsonvalue.Object:
		return lb.literalObject(s, depth)
	}
	return s, unbounded, true
}

// anyScalar stands for a schema that allows every value: in a plan, a
// bounded string, a number, a boolean or null.
func (lb *literalBuilder) anyScalar() (*jsonvalue.Value, size, bool) {
	str, ssz, _ := lb.stringLiteral(obj(), 0, -1)
	return obj("anyOf", []*jsonvalue.Value{str, obj("type", "number"), obj("type", "boolean"), obj("type", "null")}), ssz.or(numberSize), true
}

func (lb *literalBuilder) literalObject(s *jsonvalue.Value, depth int) (*jsonvalue.Value, size, bool) {
	var known []string
	for _, k := range s.Keys {
		if !annotations[k] {
			known = append(known, k)
		}
	}
	if ref, ok := s.Get("$ref").AsString(); ok {
		if len(known) != 1 || depth >= maxRefDepth || !strings.HasPrefix(ref, "#") {
			return s, unbounded, true
		}
		target, ok := jsonptr.Resolve(lb.root, ref[1:], (*jsonvalue.Value).Child)
		if !ok {
			return s, unbounded, true
		}
		return lb.literal(target, depth+1)
	}
	if len(known) == 0 {
		return lb.anyScalar()
	}
	if c := s.Get("const"); c != nil {
		return lb.values(s, []*jsonvalue.Value{c}, "const")
	}
	if e := s.Get("enum"); e.Is(jsonvalue.Array) {
		return lb.values(s, e.Vals, "enum")
	}
	for _, k := range []string{"anyOf", "oneOf"} {
		bs := s.Get(k)
		if !bs.Is(jsonvalue.Array) {
			continue
		}
		if len(known) != 1 {
			return s, unbounded, true
		}
		var alts []*jsonvalue.Value
		var sz size
		for _, b := range bs.Vals {
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
	var alts []*jsonvalue.Value
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
func (lb *literalBuilder) values(s *jsonvalue.Value, vals []*jsonvalue.Value, kw string) (*jsonvalue.Value, size, bool) {
	types := typesOf(obj("type", get(s, "type")))
	var keep []*jsonvalue.Value
	sz := size{}
	for _, v := range vals {
		if holdsRefSyntax(v) || get(s, "type") != nil && !typeAllows(types, v) {
			continue
		}
		keep = append(keep, v)
		sz = sz.or(valueSize(v))
	}
	if len(keep) == 0 {
		return nil, size{}, false
	}
	var out *jsonvalue.Value
	if kw == "const" {
		out = obj("const", keep[0])
	} else {
		out = obj("enum", keep)
	}
	rest := obj()
	for i, k := range s.Keys {
		if k != kw && k != "type" && !annotations[k] {
			rest.Set(k, s.Vals[i])
		}
	}
	if len(rest.Keys) > 0 {
		return obj("allOf", []*jsonvalue.Value{out, rest}), sz, true
	}
	return out, sz, true
}

// typeAllows reports whether a JSON value has one of types.
func typeAllows(types []string, v *jsonvalue.Value) bool {
	var t string
	switch v.Kind {
	case jsonvalue.String:
		t = "string"
	case jsonvalue.Bool:
		t = "boolean"
	case jsonvalue.Null:
		t = "null"
	case jsonvalue.Array:
		t = "array"
	case jsonvalue.Object:
		t = "object"
	case jsonvalue.Number:
		if slices.Contains(types, "number") {
			return true
		}
		if f, err := strconv.ParseFloat(v.Str, 64); err == nil && f == math.Trunc(f) {
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
func typesOf(s *jsonvalue.Value) []string {
	var types []string
	switch t := get(s, "type"); {
	case t.Is(jsonvalue.String):
		types = []string{t.Str}
	case t.Is(jsonvalue.Array):
		for _, x := range t.Vals {
			if ts, ok := x.AsString(); ok {
				types = append(types, ts)
			}
		}
	case t == nil:
		for _, k := range s.Keys {
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
	for _, k := range s.Keys {
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

func (lb *literalBuilder) literalOfType(s *jsonvalue.Value, t string, depth int) (*jsonvalue.Value, size, bool) {
	switch t {
	case "string":
		lo, hi := intKeyword(s, "minLength", 0), intKeyword(s, "maxLength", -1)
		return lb.stringLiteral(s, lo, hi)
	case "integer", "number":
		out := obj("type", t)
		for _, k := range typeKeywords[t] {
			if v := s.Get(k); v != nil {
				out.Set(k, v)
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
// pattern instead (export.FoldPatternLengths: ^[^{]{lo,cap}$).
func (lb *literalBuilder) stringLiteral(s *jsonvalue.Value, lo, hi int) (*jsonvalue.Value, size, bool) {
	limit := lb.lim.MaxLiteral
	if hi >= 0 {
		limit = min(limit, hi)
	}
	limit = max(limit, lo)
	format, _ := s.Get("format").AsString()
	pat, hasPat := s.Get("pattern").AsString()
	out := obj("type", "string")
	noRefs := false // whether the constraints keep "{{" out
	switch {
	case !hasPat:
		if format == "" {
			out.Set("pattern", jsonvalue.From(noBracePattern))
			noRefs = true
		}
	default:
		if class, qlo, qhi, ok := export.RepeatedClass(pat); ok {
			lo = max(lo, qlo)
			if qhi >= 0 {
				limit = min(limit, qhi)
			}
			c := export.ClassWithout(class, '{')
			if c == "" { // only "{" was allowed: only the empty string is left
				if lo > 0 {
					return nil, size{}, false
				}
				return obj("const", ""), stringSize(0), true
			}
			out.Set("pattern", jsonvalue.From("^"+c+"*$"))
			noRefs = true
		} else {
			out.Set("pattern", jsonvalue.From(pat))
			noRefs = !patternMayHold(pat, '{')
		}
	}
	if lo > limit {
		return nil, size{}, false
	}
	if format != "" {
		out.Set("format", jsonvalue.From(format))
	}
	if lo > 0 {
		out.Set("minLength", jsonvalue.From(lo))
	}
	out.Set("maxLength", jsonvalue.From(limit))
	if !noRefs {
		return obj("allOf", []*jsonvalue.Value{out, obj("pattern", noRefsPattern)}), stringSize(limit), true
	}
	return out, stringSize(limit), true
}

const (
	// noBracePattern is a string without "{"; noRefsPattern one without "{{".
	noBracePattern = `^[^{]*$`
	noRefsPattern  = `^(\{?[^{])*\{?$`
)

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

func (lb *literalBuilder) objectLiteral(s *jsonvalue.Value, depth int) (*jsonvalue.Value, size, bool) {
	props := objectOrNil(s.Get("properties"))
	required := requiredNames(s)
	out := obj()
	var req []string
	var keys []string
	var sizes []size
	if props != nil {
		for i, k := range props.Keys {
			l, sz, ok := lb.literal(props.Vals[i], depth)
			if !ok {
				if required[k] {
					return nil, size{}, false
				}
				continue
			}
			out.Set(k, l)
			keys, sizes = append(keys, k), append(sizes, sz)
			if required[k] {
				req = append(req, k)
			}
		}
	}
	for k := range required {
		if get(out, k) == nil {
			return nil, size{}, false // required but not declared: no literal with declared properties only
		}
	}
	o := obj("type", "object", "properties", out)
	if len(req) > 0 {
		o.Set("required", jsonvalue.From(req))
	}
	o.Set("additionalProperties", jsonvalue.From(false))
	return o, objectSize(keys, sizes), true
}

func (lb *literalBuilder) arrayLiteral(s *jsonvalue.Value, depth int) (*jsonvalue.Value, size, bool) {
	lo, hi := intKeyword(s, "minItems", 0), intKeyword(s, "maxItems", -1)
	limit := lb.lim.MaxItems
	if hi >= 0 {
		limit = min(limit, hi)
	}
	limit = max(limit, lo)
	out := obj("type", "array")
	sz := size{bytes: 2, toks: 2}
	n := 0 // items measured so far
	if pi := s.Get("prefixItems"); pi.Is(jsonvalue.Array) {
		var items []*jsonvalue.Value
		for _, p := range pi.Vals {
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
		if items == nil {
			out.Set("prefixItems", jsonvalue.From(nil)) // no item kept: null, as encoding/json wrote a nil list
		} else {
			out.Set("prefixItems", jsonvalue.From(items))
		}
		if len(items) < len(pi.Vals) {
			out.Set("items", jsonvalue.From(false))
			limit = len(items)
		}
	}
	switch it := get(s, "items"); {
	case it == nil:
		if n < limit {
			l, isz, _ := lb.anyScalar()
			out.Set("items", l)
			sz = sz.plus(isz.plus(size{1, 1}).times(limit - n))
		}
	case it.Kind == jsonvalue.Bool:
		if !it.Bool {
			out.Set("items", jsonvalue.From(false))
			limit = n
		} else if n < limit {
			l, isz, _ := lb.anyScalar()
			out.Set("items", l)
			sz = sz.plus(isz.plus(size{1, 1}).times(limit - n))
		}
	default:
		if n < limit {
			l, isz, ok := lb.literal(it, depth)
			if ok {
				out.Set("items", l)
				sz = sz.plus(isz.plus(size{1, 1}).times(limit - n))
			} else {
				out.Set("items", jsonvalue.From(false))
				limit = n
			}
		}
	}
	if limit < lo {
		return nil, size{}, false
	}
	if lo > 0 {
		out.Set("minItems", jsonvalue.From(lo))
	}
	out.Set("maxItems", jsonvalue.From(limit))
	return out, sz, true
}

// holdsRefSyntax reports whether a JSON value holds a string with "{{",
// which ParsePlan would read as a reference.
func holdsRefSyntax(v *jsonvalue.Value) bool {
	switch v.Kind {
	case jsonvalue.String:
		return strings.Contains(v.Str, "{{")
	case jsonvalue.Array, jsonvalue.Object:
		return slices.ContainsFunc(v.Vals, holdsRefSyntax)
	}
	return false
}

func intKeyword(s *jsonvalue.Value, k string, def int) int {
	n := s.Get(k)
	if !n.Is(jsonvalue.Number) {
		return def
	}
	f, err := strconv.ParseFloat(n.Str, 64)
	if err != nil || f < 0 || f != math.Trunc(f) {
		return def
	}
	return int(min(f, 1<<40))
}
