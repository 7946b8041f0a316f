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
	root   *value
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
func (n *normalizer) norm(s *value, ptr string) *value {
	if s == nil {
		return n.anySchema()
	}
	switch s.kind {
	case 'b':
		if s.b {
			return n.anySchema()
		}
		return nil
	case 'o':
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
	if s.kind == 'b' {
		return n.norm(s, ptr)
	}
	if !hasConstraints(s) {
		return n.anySchema()
	}
	// A lone $ref (siblings were merged by flatten when they constrain).
	if r := s.get("$ref"); r != nil && r.kind == 's' {
		name, ok := n.refDef(r.str, ptr)
		if !ok {
			return n.anySchema()
		}
		return newObj("$ref", "#/$defs/"+name)
	}
	if alts := s.get("anyOf"); alts != nil && alts.kind == 'a' {
		base := s.clone()
		base.del("anyOf")
		var out []*value
		for i, a := range alts.arr {
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
		if s.has(kw) && !(kw == "not" && isTrivialNot(s.get(kw))) {
			if kw == "then" || kw == "else" {
				if s.has("if") {
					continue
				}
			}
			n.loosen(ptr, kw, "%s is not expressible in the export; dropped", kw)
		}
	}
	// const / enum: the values, filtered by type.
	types := n.typesOf(s, ptr)
	if c := s.get("const"); c != nil {
		return n.enumOf([]*value{c}, types, s, ptr, "const")
	}
	if e := s.get("enum"); e != nil && e.kind == 'a' {
		return n.enumOf(e.arr, types, s, ptr, "enum")
	}
	var out []*value
	for _, t := range types {
		if v := n.typed(s, t, ptr); v != nil {
			out = append(out, v)
		}
	}
	return mkAnyOf(out)
}

func isTrivialNot(v *value) bool {
	return v != nil && v.kind == 'b' && !v.b
}

func mkAnyOf(out []*value) *value {
	switch len(out) {
	case 0:
		return nil
	case 1:
		return out[0]
	}
	var flat []*value
	for _, v := range out {
		if a := v.get("anyOf"); a != nil && len(v.obj) == 1 {
			flat = append(flat, a.arr...)
		} else {
			flat = append(flat, v)
		}
	}
	return newObj("anyOf", flat)
}

// hasConstraints reports whether s has any keyword besides annotations.
func hasConstraints(s *value) bool {
	if s.kind != 'o' {
		return true
	}
	for _, m := range s.obj {
		if !annotationKeys[m.key] && !strings.HasPrefix(m.key, "x-") {
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
func (n *normalizer) typesOf(s *value, ptr string) []string {
	var ts []string
	if t := s.get("type"); t != nil {
		switch t.kind {
		case 's':
			ts = []string{t.str}
		case 'a':
			for _, e := range t.arr {
				if e.kind == 's' {
					ts = append(ts, e.str)
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
		if s.get("nullable") != nil && s.get("nullable").kind == 'b' && s.get("nullable").b && !has["null"] {
			out = append(out, "null")
		}
		return dedupe(out)
	}
	if s.has("const") || s.has("enum") {
		return nil
	}
	for _, t := range []string{"object", "array", "string", "number"} {
		for _, kw := range typeKeywords[t] {
			if s.has(kw) {
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
func (n *normalizer) enumOf(vals []*value, types []string, s *value, ptr, kw string) *value {
	allowed := map[string]bool{}
	for _, t := range types {
		allowed[t] = true
	}
	var keep []*value
	for _, v := range vals {
		t := jsonType(v)
		if len(types) == 0 || allowed[t] || (t == "integer" && allowed["number"]) {
			keep = append(keep, v)
		}
	}
	for _, m := range s.obj {
		if m.key == "type" || m.key == "enum" || m.key == "const" || annotationKeys[m.key] || strings.HasPrefix(m.key, "x-") {
			continue
		}
		if isAssertion(m.key) {
			n.loosen(ptr, m.key, "%s beside %s: the %s values are not checked against it", m.key, kw, kw)
		}
	}
	if s.has("const") && s.has("enum") {
		var both []*value
		for _, v := range keep {
			for _, e := range s.get("enum").arr {
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
		return newObj("const", keep[0])
	}
	return newObj("enum", keep)
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
func (n *normalizer) anySchema() *value {
	if !n.anyDef {
		n.anyDef = true
		n.used[n.prefix+"airs-any"] = true
		ref := newObj("$ref", "#/$defs/"+n.prefix+"airs-any")
		body := newObj("anyOf", []*value{
			newObj("type", "object", "additionalProperties", ref),
			n.arraySchema(ref, 0, -1),
			n.stringSchema(0, -1),
			newObj("type", "number"),
			newObj("type", "boolean"),
			newObj("type", "null"),
		})
		n.defs = append(n.defs, member{n.prefix + "airs-any", body})
	}
	return newObj("$ref", "#/$defs/"+n.prefix+"airs-any")
}

func (n *normalizer) arraySchema(items *value, lo, hi int) *value {
	if hi < 0 && n.opts.MaxItems > 0 {
		hi = max(lo, n.opts.MaxItems)
	}
	o := newObj("type", "array", "items", items)
	if lo > 0 {
		o.set("minItems", toValue(lo))
	}
	if hi >= 0 {
		o.set("maxItems", toValue(hi))
	}
	return o
}

func (n *normalizer) stringSchema(lo, hi int) *value {
	if hi < 0 && n.opts.MaxStringLength > 0 {
		hi = max(lo, n.opts.MaxStringLength)
	}
	o := newObj("type", "string")
	if lo > 0 {
		o.set("minLength", toValue(lo))
	}
	if hi >= 0 {
		o.set("maxLength", toValue(hi))
	}
	return o
}

// ---- references -----------------------------------------------------------

// resolve finds the target of a $ref (local JSON pointer or $anchor).
func (n *normalizer) resolve(ref string) (*value, string, bool) {
	frag := ref
	if i := strings.IndexByte(ref, '#'); i >= 0 {
		if i > 0 {
			// "other.json#..." or "https://...#...": only the document itself
			if id := n.root.get("$id"); id == nil || id.kind != 's' || id.str != ref[:i] {
				if id2 := n.root.get("id"); id2 == nil || id2.kind != 's' || id2.str != ref[:i] {
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
		var found *value
		var fptr string
		walk(n.root, "", func(v *value, p string) {
			if a := v.get("$anchor"); found == nil && a != nil && a.kind == 's' && a.str == frag {
				found, fptr = v, p
			}
		})
		return found, fptr, found != nil
	}
	cur, ok := jsonptr.Resolve(n.root, frag, func(v *value, tok string) (*value, bool) {
		switch v.kind {
		case 'o':
			c := v.get(tok)
			return c, c != nil
		case 'a':
			if i, ok := jsonptr.Index(tok, len(v.arr)); ok {
				return v.arr[i], true
			}
		}
		return nil, false
	})
	if !ok {
		return nil, "", false
	}
	return cur, frag, true
}

func walk(v *value, ptr string, f func(*value, string)) {
	f(v, ptr)
	for _, m := range v.obj {
		walk(m.val, ptr+"/"+jsonptr.Escape(m.key), f)
	}
	for i, e := range v.arr {
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
		body = newObj("type", "null")
	}
	n.defs[k].val = body
	return name, true
}

// ---- flattening: $ref with siblings, allOf, oneOf ---------------------------

// flatten merges allOf (and a $ref that has constraining siblings) into one
// schema object, and turns oneOf into anyOf.
func (n *normalizer) flatten(s *value, ptr string) *value {
	if one := s.get("oneOf"); one != nil && one.kind == 'a' {
		s = s.clone()
		s.del("oneOf")
		if !n.disjoint(one.arr) {
			n.loosen(ptr, "oneOf", "branches may overlap; exported as anyOf")
		}
		if any := s.get("anyOf"); any != nil {
			all := newObj("anyOf", one.arr)
			s.set("allOf", toValue(append(append([]*value{}, allOfArr(s)...), all)))
		} else {
			s.set("anyOf", one)
		}
	}
	if r := s.get("$ref"); r != nil && r.kind == 's' {
		sib := s.clone()
		sib.del("$ref")
		if hasConstraints(sib) {
			target, tptr, ok := n.resolve(r.str)
			if !ok {
				n.loosen(ptr, "$ref", "cannot resolve %q; dropped", r.str)
				s = sib
			} else if n.inline[tptr] > 0 || n.path[tptr] > 0 {
				n.loosen(ptr, "$ref", "recursive $ref with sibling keywords; siblings dropped")
				return newObj("$ref", r.str)
			} else {
				n.inline[tptr]++
				n.collect = append(n.collect, tptr)
				defer func() { n.inline[tptr]-- }()
				s = n.merge(sib, target, ptr)
				if s == nil || s.kind == 'b' {
					return s
				}
				return n.flatten(s, ptr)
			}
		}
	}
	if all := s.get("allOf"); all != nil && all.kind == 'a' {
		m := s.clone()
		m.del("allOf")
		var cur *value = m
		for i, c := range all.arr {
			cptr := ptr + "/allOf/" + strconv.Itoa(i)
			cur = n.merge(cur, c, cptr)
			if cur == nil {
				return nil
			}
		}
		if cur.kind == 'b' {
			return cur
		}
		return n.flatten(cur, ptr)
	}
	return s
}

func allOfArr(s *value) []*value {
	if a := s.get("allOf"); a != nil && a.kind == 'a' {
		return a.arr
	}
	return nil
}

// disjoint reports whether no value can match two branches: pairwise
// different single types, or a required property with disjoint consts.
func (n *normalizer) disjoint(alts []*value) bool {
	sig := make([]map[string]bool, len(alts))
	for i, a := range alts {
		a = n.deref(a)
		if a == nil || a.kind != 'o' {
			return false
		}
		sig[i] = map[string]bool{}
		if c := a.get("const"); c != nil {
			sig[i]["const:"+c.String()] = true
			continue
		}
		if e := a.get("enum"); e != nil && e.kind == 'a' {
			for _, v := range e.arr {
				sig[i]["const:"+v.String()] = true
			}
			continue
		}
		t := a.get("type")
		if t == nil || t.kind != 's' {
			if d := discriminator(a); d != "" {
				sig[i]["disc:"+d] = true
				continue
			}
			return false
		}
		if d := discriminator(a); d != "" && t.str == "object" {
			sig[i]["disc:"+d] = true
			continue
		}
		sig[i]["type:"+t.str] = true
		if t.str == "number" {
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
func discriminator(a *value) string {
	req := a.get("required")
	props := a.get("properties")
	if req == nil || props == nil || req.kind != 'a' {
		return ""
	}
	for _, r := range req.arr {
		if r.kind != 's' {
			continue
		}
		p := props.get(r.str)
		if p == nil {
			continue
		}
		if c := p.get("const"); c != nil {
			return r.str + "=" + c.String()
		}
		if e := p.get("enum"); e != nil && e.kind == 'a' && len(e.arr) == 1 {
			return r.str + "=" + e.arr[0].String()
		}
	}
	return ""
}

func (n *normalizer) deref(a *value) *value {
	for i := 0; i < 8 && a != nil && a.kind == 'o'; i++ {
		r := a.get("$ref")
		if r == nil || r.kind != 's' || len(a.obj) > 1 {
			return a
		}
		t, _, ok := n.resolve(r.str)
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
func (n *normalizer) merge(a, b *value, ptr string) *value {
	if a == nil || b == nil {
		return nil
	}
	if b.kind == 'b' {
		if b.b {
			return a
		}
		return nil
	}
	if a.kind == 'b' {
		if a.b {
			return b
		}
		return nil
	}
	if b.kind != 'o' || a.kind != 'o' {
		return a
	}
	// Resolve b's $ref first (a is the accumulated schema).
	if r := b.get("$ref"); r != nil && r.kind == 's' {
		target, tptr, ok := n.resolve(r.str)
		switch {
		case !ok:
			n.loosen(ptr, "$ref", "cannot resolve %q; dropped", r.str)
		case n.inline[tptr] > 0 || n.path[tptr] > 0:
			if !hasConstraints(a) && len(b.obj) == 1 {
				return b
			}
			n.loosen(ptr, "$ref", "recursive $ref inside allOf; dropped")
		default:
			n.inline[tptr]++
			n.collect = append(n.collect, tptr)
			defer func() { n.inline[tptr]-- }()
			rest := b.clone()
			rest.del("$ref")
			t := n.merge(a, target, ptr)
			return n.merge(t, rest, ptr)
		}
		b = b.clone()
		b.del("$ref")
	}
	if all := b.get("allOf"); all != nil && all.kind == 'a' {
		b = n.flatten(b, ptr)
		if b == nil {
			return nil
		}
		if b.kind == 'b' {
			return n.merge(a, b, ptr)
		}
	}
	if one := b.get("oneOf"); one != nil {
		b = n.flatten(b, ptr)
	}
	if a.has("$ref") {
		// a is a recursive reference kept as is (see above)
		if hasConstraints(b) {
			n.loosen(ptr, "allOf", "recursive $ref combined with other keywords; kept the reference")
		}
		return a
	}
	out := a.clone()
	for _, m := range b.obj {
		k, bv := m.key, m.val
		av := out.get(k)
		if av == nil {
			out.set(k, bv)
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
func (n *normalizer) mergeKeyword(out, a, b *value, k string, av, bv *value, ptr string) bool {
	switch k {
	case "type":
		t := intersectTypes(av, bv)
		if len(t) == 0 {
			return false
		}
		out.set(k, toValue(t))
	case "enum", "const":
		var vals []*value
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
		out.set(k, toValue(vals))
		if k == "const" {
			out.del("const")
			out.set("enum", toValue(vals))
		}
	case "required":
		seen := map[string]bool{}
		var rs []string
		for _, x := range append(append([]*value{}, av.arr...), bv.arr...) {
			if x.kind == 's' && !seen[x.str] {
				seen[x.str] = true
				rs = append(rs, x.str)
			}
		}
		out.set(k, toValue(rs))
	case "properties", "patternProperties", "dependentSchemas", "$defs", "definitions":
		if av.kind != 'o' || bv.kind != 'o' {
			return true
		}
		out.set(k, mergeProperties(a, b, av, bv, k))
	case "additionalProperties", "items", "additionalItems", "contains", "propertyNames", "unevaluatedProperties", "unevaluatedItems", "not":
		if k == "not" {
			out.set(k, newObj("anyOf", []*value{av, bv}))
			return true
		}
		if k == "items" && (av.kind == 'a' || bv.kind == 'a') {
			n.loosen(ptr, k, "array-form items in allOf; kept one side")
			return true
		}
		out.set(k, newObj("allOf", []*value{av, bv}))
	case "prefixItems":
		if av.kind != 'a' || bv.kind != 'a' {
			return true
		}
		l := max(len(av.arr), len(bv.arr))
		arr := make([]*value, l)
		for i := range l {
			switch {
			case i < len(av.arr) && i < len(bv.arr):
				arr[i] = newObj("allOf", []*value{av.arr[i], bv.arr[i]})
			case i < len(av.arr):
				arr[i] = withRest(av.arr[i], b.get("items"))
			default:
				arr[i] = withRest(bv.arr[i], a.get("items"))
			}
		}
		out.set(k, toValue(arr))
	case "minimum", "minLength", "minItems", "minProperties", "minContains":
		if cmpNum(bv, av) > 0 {
			out.set(k, bv)
		}
	case "maximum", "maxLength", "maxItems", "maxProperties", "maxContains":
		if cmpNum(bv, av) < 0 {
			out.set(k, bv)
		}
	case "exclusiveMinimum":
		if av.kind == 'n' && bv.kind == 'n' && cmpNum(bv, av) > 0 {
			out.set(k, bv)
		}
	case "exclusiveMaximum":
		if av.kind == 'n' && bv.kind == 'n' && cmpNum(bv, av) < 0 {
			out.set(k, bv)
		}
	case "uniqueItems":
		if bv.kind == 'b' && bv.b {
			out.set(k, bv)
		}
	case "multipleOf":
		x, ok1 := av.rat()
		y, ok2 := bv.rat()
		if ok1 && ok2 && x.IsInt() && y.IsInt() && x.Sign() > 0 && y.Sign() > 0 {
			g := new(big.Int).GCD(nil, nil, x.Num(), y.Num())
			l := new(big.Int).Mul(x.Num(), y.Num())
			l.Div(l, g)
			out.set(k, toValue(l))
		} else if !equalJSON(av, bv) {
			n.loosen(ptr, k, "two multipleOf in allOf; kept one")
		}
	case "anyOf":
		// (a1|a2) & (b1|b2) = a1&b1 | a1&b2 | ...
		if av.kind != 'a' || bv.kind != 'a' {
			return true
		}
		if len(av.arr)*len(bv.arr) > 64 {
			n.loosen(ptr, k, "anyOf in allOf too large to distribute; kept one")
			return true
		}
		var prod []*value
		for _, x := range av.arr {
			for _, y := range bv.arr {
				prod = append(prod, newObj("allOf", []*value{x, y}))
			}
		}
		out.set(k, toValue(prod))
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
func mergeProperties(a, b, av, bv *value, k string) *value {
	mp := av.clone()
	for _, pm := range bv.obj {
		if x := mp.get(pm.key); x != nil {
			mp.set(pm.key, newObj("allOf", []*value{x, pm.val}))
		} else {
			mp.set(pm.key, pm.val)
		}
	}
	if k == "properties" {
		// a property declared on one side only is still bound by the
		// other side's additionalProperties
		for _, pm := range bv.obj {
			if av.get(pm.key) == nil {
				if ap := a.get("additionalProperties"); ap != nil && !(ap.kind == 'b' && ap.b) && !matchesPattern(a, pm.key) {
					mp.set(pm.key, newObj("allOf", []*value{pm.val, ap}))
				}
			}
		}
		for _, pm := range av.obj {
			if bv.get(pm.key) == nil {
				if bp := b.get("additionalProperties"); bp != nil && !(bp.kind == 'b' && bp.b) && !matchesPattern(b, pm.key) {
					mp.set(pm.key, newObj("allOf", []*value{pm.val, bp}))
				}
			}
		}
	}
	return mp
}

func withRest(item, rest *value) *value {
	if rest == nil {
		return item
	}
	return newObj("allOf", []*value{item, rest})
}

func matchesPattern(s *value, name string) bool {
	pp := s.get("patternProperties")
	if pp == nil {
		return false
	}
	for _, m := range pp.obj {
		if re, err := compileECMA(m.key); err == nil && re.MatchString(name) {
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

func valuesOf(v *value, k string) []*value {
	if k == "const" {
		return []*value{v}
	}
	if v.kind == 'a' {
		return v.arr
	}
	return nil
}

func intersectTypes(a, b *value) []string {
	list := func(v *value) []string {
		if v.kind == 's' {
			return []string{v.str}
		}
		var out []string
		for _, e := range v.arr {
			if e.kind == 's' {
				out = append(out, e.str)
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

func cmpNum(a, b *value) int {
	x, ok1 := a.rat()
	y, ok2 := b.rat()
	if !ok1 || !ok2 {
		return 0
	}
	return x.Cmp(y)
}
