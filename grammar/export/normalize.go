package export

import (
	"fmt"
	"math/big"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/airs-dev/airs/grammar"
	"github.com/airs-dev/airs/internal/jsonptr"

	"github.com/airs-dev/airs/internal/jsonvalue"
)

// Loosening is a keyword the export could not carry: the exported grammar
// may accept output the original schema rejects there, so validate after
// generation.
type Loosening = grammar.Loosening

// Options bound what the exports leave unbounded. The zero value is the
// default.
type Options struct {
	// MaxStringLength is the maxLength given to strings without one (and
	// without a pattern); default 1000, never above llama.cpp's repetition
	// limit of 2000. Negative: leave strings unbounded.
	MaxStringLength int
	// MaxItems is the maxItems given to arrays without one; default 100.
	// Negative: unbounded.
	MaxItems int
	// Strict forbids undeclared properties even where the schema allows
	// them (a narrowing, never a loosening).
	Strict bool
}

func (o Options) withDefaults() Options {
	if o.MaxStringLength == 0 {
		o.MaxStringLength = 1000
	}
	if o.MaxStringLength > maxRepetition {
		o.MaxStringLength = maxRepetition
	}
	if o.MaxItems == 0 {
		o.MaxItems = 100
	}
	if o.MaxItems > maxRepetition {
		o.MaxItems = maxRepetition
	}
	return o
}

// The normalizer rewrites a JSON Schema into a small vocabulary both
// exports understand exactly (the subset llama.cpp's converter handles
// faithfully):
//
//	{"$ref":"#/$defs/NAME"}          (NAME in the root's $defs)
//	{"anyOf":[...]}                  (nothing else beside it)
//	{"const":v} / {"enum":[...]}
//	{"type":"object","properties":{...},"required":[...],"additionalProperties":false|true|S}
//	{"type":"array","prefixItems":[...],"minItems":n,"maxItems":n}   (fixed-length tuple)
//	{"type":"array","items":S,"minItems":m,"maxItems":n}
//	{"type":"string","minLength":m,"maxLength":n} / {"type":"string","pattern":"^...$"}
//	{"type":"integer","minimum":a,"maximum":b}
//	{"type":"number"} / {"type":"boolean"} / {"type":"null"}
//
// Every rewrite is either exact or a narrowing (the export accepts fewer
// documents: fixed property order, fixed-length tuples, anchored patterns,
// bounded strings, format subsets); what would widen is reported as a
// Loosening.
type normalizer struct {
	root   *jsonvalue.Value
	opts   Options
	loose  []Loosening
	defs   []member          // output $defs, in creation order
	defFor map[string]string // original pointer -> def name
	used   map[string]bool   // def names taken
	inline map[string]int    // pointers being inlined (recursion guard)
	anyDef bool
	prefix string // prepended to $defs names (tool-call documents)
	// forGBNF keeps patterns that need JSON escapes (GBNF can write them).
	forGBNF bool
	path    map[string]int // ref targets inlined or defined on the current path
	collect []string       // targets inlined by the current flatten
	steps   int
	depth   int
}

func (n *normalizer) loosen(ptr, kw, format string, a ...any) {
	n.loose = append(n.loose, Loosening{Pointer: ptr, Keyword: kw, Msg: fmt.Sprintf(format, a...)})
}

// maxSteps bounds the work of one export (schemas are normalized node by
// node; shared $refs under allOf are inlined).
const maxSteps = 20_000

// maxDepth bounds the nesting of the normalized schema (inlined allOf/$ref
// chains can nest deeply; parsers have depth limits).
const maxDepth = 100

var allTypes = []string{"object", "array", "string", "number", "boolean", "null"}

// annotations and keywords handled elsewhere; anything not in known is
// reported as unsupported only if it is a known assertion.
var annotationKeys = map[string]bool{
	"$schema": true, "$id": true, "id": true, "$comment": true, "title": true, "description": true,
	"default": true, "examples": true, "deprecated": true, "readOnly": true, "writeOnly": true,
	"$defs": true, "definitions": true, "$anchor": true, "$dynamicAnchor": true, "$vocabulary": true,
	"contentMediaType": true, "contentEncoding": true, "contentSchema": true, "nullable": true,
	"discriminator": true, "example": true, "x-": true,
}

// norm normalizes schema s found at ptr. nil means "no value matches".
func (n *normalizer) norm(s *jsonvalue.Value, ptr string) *jsonvalue.Value {
	if s == nil {
		return n.anySchema()
	}
	switch s.Kind {
	case jsonvalue.Bool:
		if s.Bool {
			return n.anySchema()
		}
		return nil
	case jsonvalue.Object:
	default:
		n.loosen(ptr, "", "schema is not an object or a boolean; taken as any value")
		return n.anySchema()
	}
	n.depth++
	defer func() { n.depth-- }()
	if n.depth > maxDepth {
		n.loosen(ptr, "", "schema nested deeper than %d after inlining; any value from here", maxDepth)
		return n.anySchema()
	}
	n.steps++
	if n.steps > maxSteps {
		if n.steps == maxSteps+1 {
			n.loosen(ptr, "", "schema too large to export exactly; any value from here")
		}
		return n.anySchema()
	}
	saved := n.collect
	n.collect = nil
	s = n.flatten(s, ptr)
	mine := n.collect
	n.collect = saved
	for _, t := range mine {
		n.path[t]++
	}
	defer func() {
		for _, t := range mine {
			n.path[t]--
		}
	}()
	if s == nil {
		return nil
	}
	if s.Kind == jsonvalue.Bool {
		return n.norm(s, ptr)
	}
	if !hasConstraints(s) {
		return n.anySchema()
	}
	// A lone $ref (siblings were merged by flatten when they constrain).
	if r := s.Get("$ref"); r != nil && r.Kind == jsonvalue.String {
		name, ok := n.refDef(r.Str, ptr)
		if !ok {
			return n.anySchema()
		}
		return jsonvalue.NewObject("$ref", "#/$defs/"+name)
	}
	if alts := s.Get("anyOf"); alts != nil && alts.Kind == jsonvalue.Array {
		base := s.Clone()
		base.Delete("anyOf")
		var out []*jsonvalue.Value
		for i, a := range alts.Vals {
			aptr := ptr + "/anyOf/" + strconv.Itoa(i)
			m := a
			if hasConstraints(base) {
				m = n.merge(base, a, aptr)
			}
			if v := n.norm(m, aptr); v != nil {
				out = append(out, v)
			}
		}
		return mkAnyOf(out)
	}
	for _, kw := range []string{"not", "if", "then", "else"} {
		if s.Has(kw) && !(kw == "not" && isTrivialNot(s.Get(kw))) {
			if kw == "then" || kw == "else" {
				if s.Has("if") {
					continue
				}
			}
			n.loosen(ptr, kw, "%s is not expressible in the export; dropped", kw)
		}
	}
	// const / enum: the values, filtered by type.
	types := n.typesOf(s, ptr)
	if c := s.Get("const"); c != nil {
		return n.enumOf([]*jsonvalue.Value{c}, types, s, ptr, "const")
	}
	if e := s.Get("enum"); e != nil && e.Kind == jsonvalue.Array {
		return n.enumOf(e.Vals, types, s, ptr, "enum")
	}
	var out []*jsonvalue.Value
	for _, t := range types {
		if v := n.typed(s, t, ptr); v != nil {
			out = append(out, v)
		}
	}
	return mkAnyOf(out)
}

func isTrivialNot(v *jsonvalue.Value) bool {
	return v != nil && v.Kind == jsonvalue.Bool && !v.Bool
}

func mkAnyOf(out []*jsonvalue.Value) *jsonvalue.Value {
	switch len(out) {
	case 0:
		return nil
	case 1:
		return out[0]
	}
	var flat []*jsonvalue.Value
	for _, v := range out {
		if a := v.Get("anyOf"); a != nil && len(v.Keys) == 1 {
			flat = append(flat, a.Vals...)
		} else {
			flat = append(flat, v)
		}
	}
	return jsonvalue.NewObject("anyOf", flat)
}

// hasConstraints reports whether s has any keyword besides annotations.
func hasConstraints(s *jsonvalue.Value) bool {
	if s.Kind != jsonvalue.Object {
		return true
	}
	for _, k := range s.Keys {
		if !annotationKeys[k] && !strings.HasPrefix(k, "x-") {
			return true
		}
	}
	return false
}

var typeKeywords = map[string][]string{
	"object":  {"properties", "required", "additionalProperties", "patternProperties", "minProperties", "maxProperties", "propertyNames", "dependentRequired", "dependentSchemas", "dependencies", "unevaluatedProperties"},
	"array":   {"items", "prefixItems", "additionalItems", "minItems", "maxItems", "uniqueItems", "contains", "minContains", "maxContains", "unevaluatedItems"},
	"string":  {"minLength", "maxLength", "pattern", "format"},
	"number":  {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"},
	"integer": {},
}

// typesOf returns the JSON types a schema is generated as: its "type" (an
// integer/number pair collapses to number), else the types its keywords
// constrain (a narrowing: {"properties":...} alone also accepts strings, but
// is generated as an object), else all types.
func (n *normalizer) typesOf(s *jsonvalue.Value, ptr string) []string {
	var ts []string
	if t := s.Get("type"); t != nil {
		switch t.Kind {
		case jsonvalue.String:
			ts = []string{t.Str}
		case jsonvalue.Array:
			for _, e := range t.Vals {
				if e.Kind == jsonvalue.String {
					ts = append(ts, e.Str)
				}
			}
		}
		has := map[string]bool{}
		for _, x := range ts {
			has[x] = true
		}
		var out []string
		for _, x := range ts {
			if x == "integer" && has["number"] {
				continue
			}
			if x == "object" || x == "array" || x == "string" || x == "number" || x == "integer" || x == "boolean" || x == "null" {
				out = append(out, x)
			} else {
				n.loosen(ptr, "type", "unknown type %q ignored", x)
			}
		}
		if s.Get("nullable") != nil && s.Get("nullable").Kind == jsonvalue.Bool && s.Get("nullable").Bool && !has["null"] {
			out = append(out, "null")
		}
		return dedupe(out)
	}
	if s.Has("const") || s.Has("enum") {
		return nil
	}
	for _, t := range []string{"object", "array", "string", "number"} {
		for _, kw := range typeKeywords[t] {
			if s.Has(kw) {
				ts = append(ts, t)
				break
			}
		}
	}
	if len(ts) == 0 {
		return allTypes
	}
	return ts
}

func dedupe(ss []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range ss {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// enumOf keeps the values whose type is allowed; other constraints beside
// the values are not checked, which is a loosening when there are any.
func (n *normalizer) enumOf(vals []*jsonvalue.Value, types []string, s *jsonvalue.Value, ptr, kw string) *jsonvalue.Value {
	allowed := map[string]bool{}
	for _, t := range types {
		allowed[t] = true
	}
	var keep []*jsonvalue.Value
	for _, v := range vals {
		t := jsonType(v)
		if len(types) == 0 || allowed[t] || (t == "integer" && allowed["number"]) {
			keep = append(keep, v)
		}
	}
	for _, k := range s.Keys {
		if k == "type" || k == "enum" || k == "const" || annotationKeys[k] || strings.HasPrefix(k, "x-") {
			continue
		}
		if isAssertion(k) {
			n.loosen(ptr, k, "%s beside %s: the %s values are not checked against it", k, kw, kw)
		}
	}
	if s.Has("const") && s.Has("enum") {
		var both []*jsonvalue.Value
		for _, v := range keep {
			for _, e := range s.Get("enum").Vals {
				if equalJSON(v, e) {
					both = append(both, v)
					break
				}
			}
		}
		keep = both
	}
	switch len(keep) {
	case 0:
		return nil
	case 1:
		return jsonvalue.NewObject("const", keep[0])
	}
	return jsonvalue.NewObject("enum", keep)
}

func isAssertion(kw string) bool {
	for _, ks := range typeKeywords {
		for _, k := range ks {
			if k == kw {
				return true
			}
		}
	}
	return false
}

// anySchema is any JSON value, with strings and arrays bounded.
func (n *normalizer) anySchema() *jsonvalue.Value {
	if !n.anyDef {
		n.anyDef = true
		n.used[n.prefix+"airs-any"] = true
		ref := jsonvalue.NewObject("$ref", "#/$defs/"+n.prefix+"airs-any")
		body := jsonvalue.NewObject("anyOf", []*jsonvalue.Value{
			jsonvalue.NewObject("type", "object", "additionalProperties", ref),
			n.arraySchema(ref, 0, -1),
			n.stringSchema(0, -1),
			jsonvalue.NewObject("type", "number"),
			jsonvalue.NewObject("type", "boolean"),
			jsonvalue.NewObject("type", "null"),
		})
		n.defs = append(n.defs, member{n.prefix + "airs-any", body})
	}
	return jsonvalue.NewObject("$ref", "#/$defs/"+n.prefix+"airs-any")
}

func (n *normalizer) arraySchema(items *jsonvalue.Value, lo, hi int) *jsonvalue.Value {
	if hi < 0 && n.opts.MaxItems > 0 {
		hi = max(lo, n.opts.MaxItems)
	}
	o := jsonvalue.NewObject("type", "array", "items", items)
	if lo > 0 {
		o.Set("minItems", jsonvalue.From(lo))
	}
	if hi >= 0 {
		o.Set("maxItems", jsonvalue.From(hi))
	}
	return o
}

func (n *normalizer) stringSchema(lo, hi int) *jsonvalue.Value {
	if hi < 0 && n.opts.MaxStringLength > 0 {
		hi = max(lo, n.opts.MaxStringLength)
	}
	o := jsonvalue.NewObject("type", "string")
	if lo > 0 {
		o.Set("minLength", jsonvalue.From(lo))
	}
	if hi >= 0 {
		o.Set("maxLength", jsonvalue.From(hi))
	}
	return o
}

// ---- references -----------------------------------------------------------

// resolve finds the target of a $ref (local JSON pointer or $anchor).
func (n *normalizer) resolve(ref string) (*jsonvalue.Value, string, bool) {
	frag := ref
	if i := strings.IndexByte(ref, '#'); i >= 0 {
		if i > 0 {
			// "other.json#..." or "https://...#...": only the document itself
			if id := n.root.Get("$id"); id == nil || id.Kind != jsonvalue.String || id.Str != ref[:i] {
				if id2 := n.root.Get("id"); id2 == nil || id2.Kind != jsonvalue.String || id2.Str != ref[:i] {
					return nil, "", false
				}
			}
		}
		frag = ref[i+1:]
	} else if ref != "" {
		return nil, "", false
	}
	if f, err := url.PathUnescape(frag); err == nil {
		frag = f
	}
	if frag == "" {
		return n.root, "", true
	}
	if !strings.HasPrefix(frag, "/") {
		var found *jsonvalue.Value
		var fptr string
		walk(n.root, "", func(v *jsonvalue.Value, p string) {
			if a := v.Get("$anchor"); found == nil && a != nil && a.Kind == jsonvalue.String && a.Str == frag {
				found, fptr = v, p
			}
		})
		return found, fptr, found != nil
	}
	cur, ok := jsonptr.Resolve(n.root, frag, (*jsonvalue.Value).Child)
	if !ok {
		return nil, "", false
	}
	return cur, frag, true
}

func walk(v *jsonvalue.Value, ptr string, f func(*jsonvalue.Value, string)) {
	f(v, ptr)
	for k, x := range v.Members() {
		walk(x, ptr+"/"+jsonptr.Escape(k), f)
	}
	for i, e := range v.Vals {
		walk(e, ptr+"/"+strconv.Itoa(i), f)
	}
}

var nameRE = regexp.MustCompile(`[^A-Za-z0-9-]+`)

// refDef returns the output $defs name of a $ref's target, normalizing the
// target the first time (the name is taken first, so recursion works).
func (n *normalizer) refDef(ref, ptr string) (string, bool) {
	target, tptr, ok := n.resolve(ref)
	if !ok {
		n.loosen(ptr, "$ref", "cannot resolve %q; taken as any value", ref)
		return "", false
	}
	if name, ok := n.defFor[tptr]; ok {
		return name, true
	}
	base := "root"
	if tptr != "" {
		base = tptr[strings.LastIndexByte(tptr, '/')+1:]
	}
	base = strings.Trim(nameRE.ReplaceAllString(base, "-"), "-")
	if base == "" {
		base = "def"
	}
	name := n.prefix + base
	for i := 2; n.used[name]; i++ {
		name = n.prefix + base + "-" + strconv.Itoa(i)
	}
	n.used[name] = true
	n.defFor[tptr] = name
	k := len(n.defs)
	n.defs = append(n.defs, member{name, nil})
	n.path[tptr]++
	body := n.norm(target, tptr)
	n.path[tptr]--
	if body == nil {
		// No value matches; the converter has no "never": an empty enum is
		// not allowed either, so use a schema nothing generated can reach.
		n.loosen(tptr, "$ref", "the referenced schema matches nothing; exported as null")
		body = jsonvalue.NewObject("type", "null")
	}
	n.defs[k].val = body
	return name, true
}

// ---- flattening: $ref with siblings, allOf, oneOf ---------------------------

// flatten merges allOf (and a $ref that has constraining siblings) into one
// schema object, and turns oneOf into anyOf.
func (n *normalizer) flatten(s *jsonvalue.Value, ptr string) *jsonvalue.Value {
	if one := s.Get("oneOf"); one != nil && one.Kind == jsonvalue.Array {
		s = s.Clone()
		s.Delete("oneOf")
		if !n.disjoint(one.Vals) {
			n.loosen(ptr, "oneOf", "branches may overlap; exported as anyOf")
		}
		if any := s.Get("anyOf"); any != nil {
			all := jsonvalue.NewObject("anyOf", one.Vals)
			s.Set("allOf", jsonvalue.From(append(append([]*jsonvalue.Value{}, allOfArr(s)...), all)))
		} else {
			s.Set("anyOf", one)
		}
	}
	if r := s.Get("$ref"); r != nil && r.Kind == jsonvalue.String {
		sib := s.Clone()
		sib.Delete("$ref")
		if hasConstraints(sib) {
			target, tptr, ok := n.resolve(r.Str)
			if !ok {
				n.loosen(ptr, "$ref", "cannot resolve %q; dropped", r.Str)
				s = sib
			} else if n.inline[tptr] > 0 || n.path[tptr] > 0 {
				n.loosen(ptr, "$ref", "recursive $ref with sibling keywords; siblings dropped")
				return jsonvalue.NewObject("$ref", r.Str)
			} else {
				n.inline[tptr]++
				n.collect = append(n.collect, tptr)
				defer func() { n.inline[tptr]-- }()
				s = n.merge(sib, target, ptr)
				if s == nil || s.Kind == jsonvalue.Bool {
					return s
				}
				return n.flatten(s, ptr)
			}
		}
	}
	if all := s.Get("allOf"); all != nil && all.Kind == jsonvalue.Array {
		m := s.Clone()
		m.Delete("allOf")
		var cur *jsonvalue.Value = m
		for i, c := range all.Vals {
			cptr := ptr + "/allOf/" + strconv.Itoa(i)
			cur = n.merge(cur, c, cptr)
			if cur == nil {
				return nil
			}
		}
		if cur.Kind == jsonvalue.Bool {
			return cur
		}
		return n.flatten(cur, ptr)
	}
	return s
}

func allOfArr(s *jsonvalue.Value) []*jsonvalue.Value {
	if a := s.Get("allOf"); a != nil && a.Kind == jsonvalue.Array {
		return a.Vals
	}
	return nil
}

// disjoint reports whether no value can match two branches: pairwise
// different single types, or a required property with disjoint consts.
func (n *normalizer) disjoint(alts []*jsonvalue.Value) bool {
	sig := make([]map[string]bool, len(alts))
	for i, a := range alts {
		a = n.deref(a)
		if a == nil || a.Kind != jsonvalue.Object {
			return false
		}
		sig[i] = map[string]bool{}
		if c := a.Get("const"); c != nil {
			sig[i]["const:"+c.String()] = true
			continue
		}
		if e := a.Get("enum"); e != nil && e.Kind == jsonvalue.Array {
			for _, v := range e.Vals {
				sig[i]["const:"+v.String()] = true
			}
			continue
		}
		t := a.Get("type")
		if t == nil || t.Kind != jsonvalue.String {
			if d := discriminator(a); d != "" {
				sig[i]["disc:"+d] = true
				continue
			}
			return false
		}
		if d := discriminator(a); d != "" && t.Str == "object" {
			sig[i]["disc:"+d] = true
			continue
		}
		sig[i]["type:"+t.Str] = true
		if t.Str == "number" {
			sig[i]["type:integer"] = true
		}
	}
	for i := range sig {
		for j := i + 1; j < len(sig); j++ {
			for k := range sig[i] {
				if sig[j][k] {
					return false
				}
				// a type and a const of that type overlap
				if strings.HasPrefix(k, "type:") {
					for k2 := range sig[j] {
						if !strings.HasPrefix(k2, "type:") {
							return false
						}
					}
				}
			}
			for k := range sig[j] {
				if strings.HasPrefix(k, "type:") {
					for k2 := range sig[i] {
						if !strings.HasPrefix(k2, "type:") {
							return false
						}
					}
				}
			}
			// discriminated objects vs typed non-objects are fine; two
			// discriminators on different properties are not known disjoint
			if discProp(sig[i]) != discProp(sig[j]) && discProp(sig[i]) != "" && discProp(sig[j]) != "" {
				return false
			}
		}
	}
	return true
}

func discProp(m map[string]bool) string {
	for k := range m {
		if strings.HasPrefix(k, "disc:") {
			p := k[5:]
			return p[:strings.IndexByte(p, '=')]
		}
	}
	return ""
}

// discriminator returns "prop=value" for an object schema with a required
// property whose schema is a const (or one-value enum).
func discriminator(a *jsonvalue.Value) string {
	req := a.Get("required")
	props := a.Get("properties")
	if req == nil || props == nil || req.Kind != jsonvalue.Array {
		return ""
	}
	for _, r := range req.Vals {
		if r.Kind != jsonvalue.String {
			continue
		}
		p := props.Get(r.Str)
		if p == nil {
			continue
		}
		if c := p.Get("const"); c != nil {
			return r.Str + "=" + c.String()
		}
		if e := p.Get("enum"); e != nil && e.Kind == jsonvalue.Array && len(e.Vals) == 1 {
			return r.Str + "=" + e.Vals[0].String()
		}
	}
	return ""
}

func (n *normalizer) deref(a *jsonvalue.Value) *jsonvalue.Value {
	for i := 0; i < 8 && a != nil && a.Kind == jsonvalue.Object; i++ {
		r := a.Get("$ref")
		if r == nil || r.Kind != jsonvalue.String || len(a.Keys) > 1 {
			return a
		}
		t, _, ok := n.resolve(r.Str)
		if !ok {
			return nil
		}
		a = t
	}
	return a
}

// merge is the conjunction of two schemas as one schema object (nil: no
// value matches). Keywords that cannot be combined exactly keep a's value
// and are reported.
func (n *normalizer) merge(a, b *jsonvalue.Value, ptr string) *jsonvalue.Value {
	if a == nil || b == nil {
		return nil
	}
	if b.Kind == jsonvalue.Bool {
		if b.Bool {
			return a
		}
		return nil
	}
	if a.Kind == jsonvalue.Bool {
		if a.Bool {
			return b
		}
		return nil
	}
	if b.Kind != jsonvalue.Object || a.Kind != jsonvalue.Object {
		return a
	}
	// Resolve b's $ref first (a is the accumulated schema).
	if r := b.Get("$ref"); r != nil && r.Kind == jsonvalue.String {
		target, tptr, ok := n.resolve(r.Str)
		switch {
		case !ok:
			n.loosen(ptr, "$ref", "cannot resolve %q; dropped", r.Str)
		case n.inline[tptr] > 0 || n.path[tptr] > 0:
			if !hasConstraints(a) && len(b.Keys) == 1 {
				return b
			}
			n.loosen(ptr, "$ref", "recursive $ref inside allOf; dropped")
		default:
			n.inline[tptr]++
			n.collect = append(n.collect, tptr)
			defer func() { n.inline[tptr]-- }()
			rest := b.Clone()
			rest.Delete("$ref")
			t := n.merge(a, target, ptr)
			return n.merge(t, rest, ptr)
		}
		b = b.Clone()
		b.Delete("$ref")
	}
	if all := b.Get("allOf"); all != nil && all.Kind == jsonvalue.Array {
		b = n.flatten(b, ptr)
		if b == nil {
			return nil
		}
		if b.Kind == jsonvalue.Bool {
			return n.merge(a, b, ptr)
		}
	}
	if one := b.Get("oneOf"); one != nil {
		b = n.flatten(b, ptr)
	}
	if a.Has("$ref") {
		// a is a recursive reference kept as is (see above)
		if hasConstraints(b) {
			n.loosen(ptr, "allOf", "recursive $ref combined with other keywords; kept the reference")
		}
		return a
	}
	out := a.Clone()
	for k, bv := range b.Members() {
		av := out.Get(k)
		if av == nil {
			out.Set(k, bv)
			continue
		}
		if !n.mergeKeyword(out, a, b, k, av, bv, ptr) {
			return nil
		}
	}
	return out
}

// mergeKeyword merges keyword k, av in a (already in out) and bv in b,
// into out; false when the two leave no value (disjoint types or enums).
func (n *normalizer) mergeKeyword(out, a, b *jsonvalue.Value, k string, av, bv *jsonvalue.Value, ptr string) bool {
	switch k {
	case "type":
		t := intersectTypes(av, bv)
		if len(t) == 0 {
			return false
		}
		out.Set(k, jsonvalue.From(t))
	case "enum", "const":
		var vals []*jsonvalue.Value
		for _, x := range valuesOf(av, k) {
			for _, y := range valuesOf(bv, k) {
				if equalJSON(x, y) {
					vals = append(vals, x)
					break
				}
			}
		}
		if len(vals) == 0 {
			return false
		}
		out.Set(k, jsonvalue.From(vals))
		if k == "const" {
			out.Delete("const")
			out.Set("enum", jsonvalue.From(vals))
		}
	case "required":
		seen := map[string]bool{}
		var rs []string
		for _, x := range append(append([]*jsonvalue.Value{}, av.Vals...), bv.Vals...) {
			if x.Kind == jsonvalue.String && !seen[x.Str] {
				seen[x.Str] = true
				rs = append(rs, x.Str)
			}
		}
		out.Set(k, jsonvalue.From(rs))
	case "properties", "patternProperties", "dependentSchemas", "$defs", "definitions":
		if av.Kind != jsonvalue.Object || bv.Kind != jsonvalue.Object {
			return true
		}
		out.Set(k, mergeProperties(a, b, av, bv, k))
	case "additionalProperties", "items", "additionalItems", "contains", "propertyNames", "unevaluatedProperties", "unevaluatedItems", "not":
		if k == "not" {
			out.Set(k, jsonvalue.NewObject("anyOf", []*jsonvalue.Value{av, bv}))
			return true
		}
		if k == "items" && (av.Kind == jsonvalue.Array || bv.Kind == jsonvalue.Array) {
			n.loosen(ptr, k, "array-form items in allOf; kept one side")
			return true
		}
		out.Set(k, jsonvalue.NewObject("allOf", []*jsonvalue.Value{av, bv}))
	case "prefixItems":
		if av.Kind != jsonvalue.Array || bv.Kind != jsonvalue.Array {
			return true
		}
		l := max(len(av.Vals), len(bv.Vals))
		arr := make([]*jsonvalue.Value, l)
		for i := range l {
			switch {
			case i < len(av.Vals) && i < len(bv.Vals):
				arr[i] = jsonvalue.NewObject("allOf", []*jsonvalue.Value{av.Vals[i], bv.Vals[i]})
			case i < len(av.Vals):
				arr[i] = withRest(av.Vals[i], b.Get("items"))
			default:
				arr[i] = withRest(bv.Vals[i], a.Get("items"))
			}
		}
		out.Set(k, jsonvalue.From(arr))
	case "minimum", "minLength", "minItems", "minProperties", "minContains":
		if cmpNum(bv, av) > 0 {
			out.Set(k, bv)
		}
	case "maximum", "maxLength", "maxItems", "maxProperties", "maxContains":
		if cmpNum(bv, av) < 0 {
			out.Set(k, bv)
		}
	case "exclusiveMinimum":
		if av.Kind == jsonvalue.Number && bv.Kind == jsonvalue.Number && cmpNum(bv, av) > 0 {
			out.Set(k, bv)
		}
	case "exclusiveMaximum":
		if av.Kind == jsonvalue.Number && bv.Kind == jsonvalue.Number && cmpNum(bv, av) < 0 {
			out.Set(k, bv)
		}
	case "uniqueItems":
		if bv.Kind == jsonvalue.Bool && bv.Bool {
			out.Set(k, bv)
		}
	case "multipleOf":
		x, ok1 := rat(av)
		y, ok2 := rat(bv)
		if ok1 && ok2 && x.IsInt() && y.IsInt() && x.Sign() > 0 && y.Sign() > 0 {
			g := new(big.Int).GCD(nil, nil, x.Num(), y.Num())
			l := new(big.Int).Mul(x.Num(), y.Num())
			l.Div(l, g)
			out.Set(k, jsonvalue.From(l))
		} else if !equalJSON(av, bv) {
			n.loosen(ptr, k, "two multipleOf in allOf; kept one")
		}
	case "anyOf":
		// (a1|a2) & (b1|b2) = a1&b1 | a1&b2 | ...
		if av.Kind != jsonvalue.Array || bv.Kind != jsonvalue.Array {
			return true
		}
		if len(av.Vals)*len(bv.Vals) > 64 {
			n.loosen(ptr, k, "anyOf in allOf too large to distribute; kept one")
			return true
		}
		var prod []*jsonvalue.Value
		for _, x := range av.Vals {
			for _, y := range bv.Vals {
				prod = append(prod, jsonvalue.NewObject("allOf", []*jsonvalue.Value{x, y}))
			}
		}
		out.Set(k, jsonvalue.From(prod))
	case "pattern", "format":
		if !equalJSON(av, bv) {
			n.loosen(ptr, k, "two different %s values in allOf; kept the first", k)
		}
	default:
		if !equalJSON(av, bv) && !annotationKeys[k] {
			n.loosen(ptr, k, "%s on both sides of allOf; kept the first", k)
		}
	}
	return true
}

// mergeProperties merges two keyword maps (properties, $defs, ...): a key
// on both sides becomes the allOf of its schemas. For properties, a key on
// one side only is also bound by the other side's additionalProperties.
func mergeProperties(a, b, av, bv *jsonvalue.Value, k string) *jsonvalue.Value {
	mp := av.Clone()
	for pk, pv := range bv.Members() {
		if x := mp.Get(pk); x != nil {
			mp.Set(pk, jsonvalue.NewObject("allOf", []*jsonvalue.Value{x, pv}))
		} else {
			mp.Set(pk, pv)
		}
	}
	if k == "properties" {
		// a property declared on one side only is still bound by the
		// other side's additionalProperties
		for pk, pv := range bv.Members() {
			if av.Get(pk) == nil {
				if ap := a.Get("additionalProperties"); ap != nil && !(ap.Kind == jsonvalue.Bool && ap.Bool) && !matchesPattern(a, pk) {
					mp.Set(pk, jsonvalue.NewObject("allOf", []*jsonvalue.Value{pv, ap}))
				}
			}
		}
		for pk, pv := range av.Members() {
			if bv.Get(pk) == nil {
				if bp := b.Get("additionalProperties"); bp != nil && !(bp.Kind == jsonvalue.Bool && bp.Bool) && !matchesPattern(b, pk) {
					mp.Set(pk, jsonvalue.NewObject("allOf", []*jsonvalue.Value{pv, bp}))
				}
			}
		}
	}
	return mp
}

func withRest(item, rest *jsonvalue.Value) *jsonvalue.Value {
	if rest == nil {
		return item
	}
	return jsonvalue.NewObject("allOf", []*jsonvalue.Value{item, rest})
}

func matchesPattern(s *jsonvalue.Value, name string) bool {
	pp := s.Get("patternProperties")
	if pp == nil {
		return false
	}
	for _, k := range pp.Keys {
		if re, err := compileECMA(k); err == nil && re.MatchString(name) {
			return true
		}
	}
	return false
}

// compileECMA compiles an ECMA-262 pattern with Go's regexp (unanchored).
func compileECMA(p string) (*regexp.Regexp, error) {
	g, err := ecmaToGo(p)
	if err != nil {
		return nil, err
	}
	return regexp.Compile(g)
}

func valuesOf(v *jsonvalue.Value, k string) []*jsonvalue.Value {
	if k == "const" {
		return []*jsonvalue.Value{v}
	}
	if v.Kind == jsonvalue.Array {
		return v.Vals
	}
	return nil
}

func intersectTypes(a, b *jsonvalue.Value) []string {
	list := func(v *jsonvalue.Value) []string {
		if v.Kind == jsonvalue.String {
			return []string{v.Str}
		}
		var out []string
		for _, e := range v.Vals {
			if e.Kind == jsonvalue.String {
				out = append(out, e.Str)
			}
		}
		return out
	}
	bs := map[string]bool{}
	for _, t := range list(b) {
		bs[t] = true
	}
	var out []string
	for _, t := range list(a) {
		switch {
		case bs[t]:
			out = append(out, t)
		case t == "integer" && bs["number"]:
			out = append(out, "integer")
		case t == "number" && bs["integer"]:
			out = append(out, "integer")
		}
	}
	sort.Strings(out)
	return dedupe(out)
}

func cmpNum(a, b *jsonvalue.Value) int {
	x, ok1 := rat(a)
	y, ok2 := rat(b)
	if !ok1 || !ok2 {
		return 0
	}
	return x.Cmp(y)
}
