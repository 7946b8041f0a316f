package grammar

import (
	"fmt"
	"maps"
	"math/big"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/airs-dev/airs/internal/jsonptr"

	"github.com/airs-dev/airs/internal/jsonvalue"
)

// The lowering stage: a schema (jsonvalue tree) becomes an IR node that says, per
// JSON type, which values are allowed. String and number constraints are
// regular languages (rdfa); object and array constraints are lists of
// alternatives whose members refer to child schemas lazily (so that
// recursive schemas lower in finite time); the builder turns them into rules.

// strCons: strings whose content is in d, with min..max code points (max <
// 0: no bound from the schema).
type strCons struct {
	d        *rdfa
	min, max int
}

type sref struct {
	v   *jsonvalue.Value
	ptr string
}

type propDef struct {
	name string
	s    sref
}

type patDef struct {
	re string
	d  *rdfa
	s  sref
}

// objPart is the object keywords of one schema object.
type objPart struct {
	props     []propDef
	patterns  []patDef
	addl      *sref // nil: any value
	addlFalse bool
	names     *rdfa // propertyNames, nil: any
}

type objCons struct {
	parts    []*objPart
	required []string
	minP     int
	maxP     int // -1: none
	depReq   map[string][]string
	// witness: some property whose name is in names and whose value
	// satisfies val (the complements of propertyNames, patternProperties,
	// additionalProperties); the builder enforces one (witness.go)
	witness []witnessDef
}

type arrPart struct {
	prefix     []sref
	items      *sref // nil: any
	itemsFalse bool
}

type arrCons struct {
	parts []*arrPart
	minI  int
	maxI  int // -1: none
	// unique is the pointer of a uniqueItems: true that applies ("": none);
	// the builder enforces it exactly or refuses (unique.go)
	unique string
	// contains: some item satisfies pos (neg is its exact complement);
	// the builder enforces at most one (contains.go)
	contains []containsDef
}

type node struct {
	null, tru, fal bool
	str            *strCons
	num            *rdfa
	objs           []*objCons
	arrs           []*arrCons
	lits           []string // canonical JSON texts of container enum values
	litsOnly       bool     // containers restricted to lits
}

const maxAlternatives = 128

type compiler struct {
	opts      Options
	root      *jsonvalue.Value
	loosened  []Loosening
	memo      map[*jsonvalue.Value]*node
	busy      map[*jsonvalue.Value]bool
	conjMemo  map[string]*node
	ids       map[string]*jsonvalue.Value
	anchors   map[string]*jsonvalue.Value
	jvID      map[*jsonvalue.Value]int
	rootBase  string
	freeNum   *rdfa
	intNum    *rdfa
	boundNum  *rdfa
	boundInt  *rdfa
	anyStr    *rdfa
	anyObj    *objCons
	anyArr    *arrCons
	anyMemo   *node
	emptyMemo *node

	// negation (negate.go)
	negOf       map[*jsonvalue.Value]sref // synthesized {"not": s} → s
	negWrapOf   map[*jsonvalue.Value]*jsonvalue.Value
	negMemo     map[*jsonvalue.Value]*node
	negBusy     map[*jsonvalue.Value]bool
	pruning     bool
	pruneChecks int
	noIf        bool // $schema is draft 3, 4 or 6: if/then/else are not keywords there
	checking    int  // > 0: lowering a child to check an enum/const member (lowerForCheck)
}

func fail(ptr, kw, format string, a ...any) {
	panic(&CompileError{Pointer: ptr, Keyword: kw, Msg: fmt.Sprintf(format, a...)})
}

// unsupported fails, or records a loosening when lenient.
func (c *compiler) unsupported(ptr, kw, format string, a ...any) {
	msg := fmt.Sprintf(format, a...)
	if c.opts.Lenient {
		c.loosened = append(c.loosened, Loosening{Pointer: ptr, Keyword: kw, Msg: msg})
		return
	}
	panic(&CompileError{Pointer: ptr, Keyword: kw, Msg: msg})
}

func newCompiler(opts Options) *compiler {
	c := &compiler{
		opts:     opts,
		memo:     map[*jsonvalue.Value]*node{},
		busy:     map[*jsonvalue.Value]bool{},
		conjMemo: map[string]*node{},
		ids:      map[string]*jsonvalue.Value{},
		anchors:  map[string]*jsonvalue.Value{},
		jvID:     map[*jsonvalue.Value]int{},
	}
	d := opts.MaxNumberDigits
	c.freeNum = cachedDFA(fmt.Sprintf("num%d", d), func() *rdfa { return numberSyntax(d, true, true) })
	c.intNum = cachedDFA(fmt.Sprintf("int%d", d), func() *rdfa { return numberSyntax(d, false, false) })
	c.boundNum = cachedDFA(fmt.Sprintf("bnum%d", d), func() *rdfa { return numberSyntax(d, false, true) })
	c.anyStr = anyStrDFA
	c.anyObj = &objCons{maxP: -1}
	c.anyArr = &arrCons{maxI: -1}
	return c
}

func (c *compiler) anyNode() *node {
	if c.anyMemo == nil {
		c.anyMemo = &node{null: true, tru: true, fal: true, str: &strCons{d: c.anyStr, max: -1}, num: c.freeNum,
			objs: []*objCons{c.anyObj}, arrs: []*arrCons{c.anyArr}}
	}
	return c.anyMemo
}

func (c *compiler) emptyNode() *node {
	if c.emptyMemo == nil {
		c.emptyMemo = &node{}
	}
	return c.emptyMemo
}

func (n *node) isEmpty() bool {
	return !n.null && !n.tru && !n.fal && n.str == nil && n.num == nil && len(n.objs) == 0 && len(n.arrs) == 0 && len(n.lits) == 0
}

// index walks the document for $id and $anchor.
func (c *compiler) index(v *jsonvalue.Value, base string) {
	if v == nil {
		return
	}
	switch v.Kind {
	case jsonvalue.Object:
		if id := v.Get("$id"); id != nil && id.Kind == jsonvalue.String {
			if u, err := resolveURL(base, id.Str); err == nil {
				base = strings.TrimSuffix(u, "#")
				c.ids[base] = v
			}
		}
		if a := v.Get("$anchor"); a != nil && a.Kind == jsonvalue.String {
			c.anchors[base+"#"+a.Str] = v
			c.anchors["#"+a.Str] = v
		}
		for i, k := range v.Keys {
			if k == "enum" || k == "const" || k == "examples" || k == "default" {
				continue
			}
			c.index(v.Vals[i], base)
		}
	case jsonvalue.Array:
		for _, x := range v.Vals {
			c.index(x, base)
		}
	}
}

func resolveURL(base, ref string) (string, error) {
	r, err := url.Parse(ref)
	if err != nil {
		return "", err
	}
	if base == "" {
		return r.String(), nil
	}
	b, err := url.Parse(base)
	if err != nil {
		return "", err
	}
	return b.ResolveReference(r).String(), nil
}

func (c *compiler) resolveRef(ref, ptr string) (*jsonvalue.Value, string) {
	if strings.HasPrefix(ref, "#") {
		return c.resolveFragment(c.root, ref[1:], ref, ptr)
	}
	full := ref
	if c.rootBase != "" {
		if u, err := resolveURL(c.rootBase, ref); err == nil {
			full = u
		}
	}
	doc, frag, _ := strings.Cut(full, "#")
	if target, ok := c.ids[doc]; ok {
		return c.resolveFragment(target, frag, ref, ptr)
	}
	if a, ok := c.anchors[full]; ok {
		return a, ""
	}
	fail(ptr, "$ref", "cannot resolve %q (only local references are supported)", ref)
	return nil, ""
}

func (c *compiler) resolveFragment(doc *jsonvalue.Value, frag, ref, ptr string) (*jsonvalue.Value, string) {
	frag, err := url.PathUnescape(frag)
	if err != nil {
		fail(ptr, "$ref", "bad reference %q", ref)
	}
	if frag == "" {
		return doc, ""
	}
	if !strings.HasPrefix(frag, "/") {
		if a, ok := c.anchors["#"+frag]; ok {
			return a, ""
		}
		fail(ptr, "$ref", "unknown anchor in %q", ref)
	}
	cur := doc
	p := ""
	toks, _ := jsonptr.Tokens(frag) // frag starts with "/"
	for _, tok := range toks {
		p += "/" + jsonptr.Escape(tok)
		cur, _ = cur.Child(tok)
		if cur == nil {
			fail(ptr, "$ref", "reference %q does not resolve", ref)
		}
	}
	return cur, p
}

var annotationKeywords = map[string]bool{
	"$schema": true, "$id": true, "id": true, "$anchor": true, "$dynamicAnchor": true, "$comment": true,
	"$defs": true, "definitions": true, "$vocabulary": true, "title": true, "description": true,
	"default": true, "examples": true, "example": true, "deprecated": true, "readOnly": true, "writeOnly": true,
	"contentEncoding": true, "contentMediaType": true, "contentSchema": true, "format": true,
}

// lower returns the IR of schema v (pointer ptr).
func (c *compiler) lower(s sref) *node {
	v := s.v
	if v.Kind == jsonvalue.Bool {
		if v.Bool {
			return c.anyNode()
		}
		return c.emptyNode()
	}
	if v.Kind != jsonvalue.Object {
		fail(s.ptr, "", "a schema must be an object or a boolean")
	}
	if n, ok := c.memo[v]; ok {
		return n
	}
	if c.busy[v] {
		if c.checking > 0 {
			panic(errBusyCheck)
		}
		fail(s.ptr, "$ref", "reference cycle that consumes no input")
	}
	c.busy[v] = true
	var n *node
	if o, ok := c.negOf[v]; ok {
		n = c.negate(o)
	} else {
		n = c.lowerObject(v, s.ptr)
	}
	delete(c.busy, v)
	c.memo[v] = n
	return n
}

func num(v *jsonvalue.Value) (string, bool) {
	if v != nil && v.Kind == jsonvalue.Number {
		return v.Str, true
	}
	return "", false
}

func nonNegInt(v *jsonvalue.Value, ptr, kw string) int {
	s, ok := num(v)
	if !ok {
		fail(ptr, kw, "must be a non-negative integer")
	}
	r, ok2 := new(big.Rat).SetString(s)
	if !ok2 || !r.IsInt() || r.Sign() < 0 {
		fail(ptr, kw, "must be a non-negative integer")
	}
	if !r.Num().IsInt64() || r.Num().Int64() > 1<<30 {
		return 1 << 30
	}
	return int(r.Num().Int64())
}

const (
	tNull = 1 << iota
	tBool
	tString
	tInteger
	tNumber
	tObject
	tArray
	tAll = tNull | tBool | tString | tNumber | tObject | tArray
)

var typeBits = map[string]int{"null": tNull, "boolean": tBool, "string": tString, "integer": tInteger, "number": tNumber, "object": tObject, "array": tArray}

func (c *compiler) lowerObject(v *jsonvalue.Value, ptr string) *node {
	types := c.schemaTypes(v, ptr)
	n := &node{}
	n.null = types&tNull != 0
	n.tru = types&tBool != 0
	n.fal = n.tru
	if types&tString != 0 {
		n.str = c.lowerString(v, ptr)
	}
	if types&(tInteger|tNumber) != 0 {
		n.num = c.lowerNumber(v, ptr, types)
	}
	if types&tObject != 0 {
		n.objs = []*objCons{c.lowerObjCons(v, ptr)}
	}
	if types&tArray != 0 {
		n.arrs = []*arrCons{c.lowerArrCons(v, ptr)}
	}
	n = c.lowerOtherKeywords(n, v, ptr, types)
	return c.lowerApplicators(n, v, ptr)
}

// schemaTypes is the set of types v's "type" keyword allows (all when
// absent); "number" takes in "integer".
func (c *compiler) schemaTypes(v *jsonvalue.Value, ptr string) int {
	at := func(k string) string { return ptr + "/" + jsonptr.Escape(k) }
	types := tAll
	if t := v.Get("type"); t != nil {
		types = 0
		add := func(x *jsonvalue.Value) {
			if x.Kind != jsonvalue.String || typeBits[x.Str] == 0 {
				fail(at("type"), "type", "unknown type")
			}
			types |= typeBits[x.Str]
		}
		if t.Kind == jsonvalue.Array {
			for _, x := range t.Vals {
				add(x)
			}
		} else {
			add(t)
		}
		if types&tNumber != 0 {
			types &^= tInteger
		}
	}
	return types
}

// lowerString is v's string constraints: length bounds, pattern and
// format; nil when no string satisfies them.
func (c *compiler) lowerString(v *jsonvalue.Value, ptr string) *strCons {
	at := func(k string) string { return ptr + "/" + jsonptr.Escape(k) }
	sc := &strCons{d: c.anyStr, max: -1}
	if x := v.Get("minLength"); x != nil {
		sc.min = nonNegInt(x, at("minLength"), "minLength")
	}
	if x := v.Get("maxLength"); x != nil {
		sc.max = nonNegInt(x, at("maxLength"), "maxLength")
	}
	var sk strDFAKey
	if x := v.Get("pattern"); x != nil {
		if x.Kind != jsonvalue.String {
			fail(at("pattern"), "pattern", "must be a string")
		}
		sk.pattern, sk.hasPattern = x.Str, true
	}
	if x := v.Get("format"); x != nil && x.Kind == jsonvalue.String {
		sk.format, sk.hasFormat = x.Str, true
	}
	if sk.hasPattern || sk.hasFormat {
		e := stringDFA(sk)
		if e.patErr != nil {
			c.unsupported(at("pattern"), "pattern", "%v", e.patErr)
		}
		if e.fmtErr != nil {
			c.unsupported(at("format"), "format", "%v", e.fmtErr)
		}
		sc.d = e.d
	}
	if sc.max >= 0 && sc.min > sc.max || sc.d.isEmpty() {
		sc = nil
	}
	return sc
}

// lowerNumber is v's numeric constraints as one DFA over number lexemes
// (integers only when types has no "number"); nil when none satisfies them.
func (c *compiler) lowerNumber(v *jsonvalue.Value, ptr string, types int) *rdfa {
	at := func(k string) string { return ptr + "/" + jsonptr.Escape(k) }
	d := c.freeNum
	integer := types&tNumber == 0
	if integer {
		d = c.intNum
	}
	bounded := false
	bound := func(kw string, want uint8) {
		x := v.Get(kw)
		if x == nil {
			return
		}
		if x.Kind == jsonvalue.Bool { // draft 4 exclusive flags
			return
		}
		s, ok := num(x)
		if !ok {
			fail(at(kw), kw, "must be a number")
		}
		if kw == "minimum" || kw == "maximum" {
			if ex := v.Get("exclusive" + strings.ToUpper(kw[:1]) + kw[1:]); ex != nil && ex.Kind == jsonvalue.Bool && ex.Bool {
				want &^= relEQ
			}
		}
		b, err := parseDecimal(s)
		if err != nil {
			c.unsupported(at(kw), kw, "%v", err)
			return
		}
		if !bounded && !integer {
			d = intersectDFA(d, c.boundNum)
		}
		bounded = true
		d = intersectDFA(d, compareDFA(b, want))
	}
	bound("minimum", relGT|relEQ)
	bound("exclusiveMinimum", relGT)
	bound("maximum", relLT|relEQ)
	bound("exclusiveMaximum", relLT)
	if x := v.Get("multipleOf"); x != nil {
		s, ok := num(x)
		if !ok {
			fail(at("multipleOf"), "multipleOf", "must be a number")
		}
		m, err := multipleDFA(s)
		if err != nil {
			c.unsupported(at("multipleOf"), "multipleOf", "%v", err)
		} else {
			if !bounded && !integer {
				d = intersectDFA(d, c.boundNum)
			}
			d = intersectDFA(d, m)
		}
	}
	if d.isEmpty() {
		return nil
	}
	return d
}

// lowerOtherKeywords handles "not" and reports the keywords the grammar
// cannot carry, in the schema's key order.
func (c *compiler) lowerOtherKeywords(n *node, v *jsonvalue.Value, ptr string, types int) *node {
	at := func(k string) string { return ptr + "/" + jsonptr.Escape(k) }
	for i, k := range v.Keys {
		x := v.Vals[i]
		switch k {
		case "not":
			n = c.lowerNot(n, sref{x, at(k)})
		case "if":
			if !c.noIf {
				n = c.lowerIf(n, v, sref{x, at(k)})
			}
		case "dependentSchemas":
			if x.Kind == jsonvalue.Object {
				for j, dk := range x.Keys {
					n = c.lowerDepSchema(n, dk, sref{x.Vals[j], at(k) + "/" + jsonptr.Escape(dk)})
				}
			}
		case "unevaluatedProperties", "unevaluatedItems", "$dynamicRef", "$recursiveRef":
			if k == "unevaluatedProperties" || k == "unevaluatedItems" {
				if x.Kind == jsonvalue.Bool && x.Bool {
					continue
				}
			}
			c.unsupported(at(k), k, "%s is not supported", k)
		case "contains":
			// lowerArrCons records it; the builder enforces it (contains.go)
		case "uniqueItems":
			// lowerArrCons records it; the builder enforces it (unique.go)
		case "dependencies":
			if x.Kind == jsonvalue.Object {
				for j, dk := range x.Keys {
					if x.Vals[j].Kind != jsonvalue.Array {
						n = c.lowerDepSchema(n, dk, sref{x.Vals[j], at(k) + "/" + jsonptr.Escape(dk)})
					}
				}
			}
		}
	}
	return n
}

// lowerApplicators conjoins n with enum/const, $ref, allOf, anyOf and
// oneOf.
func (c *compiler) lowerApplicators(n *node, v *jsonvalue.Value, ptr string) *node {
	at := func(k string) string { return ptr + "/" + jsonptr.Escape(k) }
	// enum / const
	if x := v.Get("const"); x != nil {
		n = c.conj(n, c.enumNode([]*jsonvalue.Value{x}), at("const"))
	}
	if x := v.Get("enum"); x != nil {
		if x.Kind != jsonvalue.Array {
			fail(at("enum"), "enum", "must be an array")
		}
		n = c.conj(n, c.enumNode(x.Vals), at("enum"))
	}

	// applicators
	if x := v.Get("$ref"); x != nil && x.Kind == jsonvalue.String {
		t, p := c.resolveRef(x.Str, at("$ref"))
		if p == "" {
			p = at("$ref")
		}
		n = c.conj(n, c.lower(sref{t, p}), at("$ref"))
	}
	if x := v.Get("allOf"); x != nil && x.Kind == jsonvalue.Array {
		for i, s := range x.Vals {
			n = c.conj(n, c.lower(sref{s, at("allOf") + "/" + strconv.Itoa(i)}), at("allOf"))
		}
	}
	if x := v.Get("anyOf"); x != nil && x.Kind == jsonvalue.Array {
		u := c.emptyNode()
		for i, s := range x.Vals {
			u = c.disj(u, c.lower(sref{s, at("anyOf") + "/" + strconv.Itoa(i)}), at("anyOf"))
		}
		n = c.conj(n, u, at("anyOf"))
	}
	if x := v.Get("oneOf"); x != nil && x.Kind == jsonvalue.Array {
		var branches []*node
		var srefs []sref
		for i, s := range x.Vals {
			r := sref{s, at("oneOf") + "/" + strconv.Itoa(i)}
			b := c.conj(n, c.lower(r), at("oneOf"))
			if !b.isEmpty() {
				branches = append(branches, b)
				srefs = append(srefs, r)
			}
		}
		branches = c.oneOfExact(branches, srefs, at("oneOf"))
		u := c.emptyNode()
		for _, b := range branches {
			u = c.disj(u, b, at("oneOf"))
		}
		n = u
	}
	return n
}

// lowerNot conjoins n with the exact complement of s (negate.go), or
// refuses.
func (c *compiler) lowerNot(n *node, s sref) *node {
	return c.conj(n, c.negate(s), s.ptr)
}

func (c *compiler) lowerObjCons(v *jsonvalue.Value, ptr string) *objCons {
	at := func(k string) string { return ptr + "/" + jsonptr.Escape(k) }
	has := false
	p := &objPart{}
	oc := &objCons{maxP: -1}
	if x := v.Get("properties"); x != nil && x.Kind == jsonvalue.Object {
		has = true
		for i, k := range x.Keys {
			p.props = append(p.props, propDef{k, sref{x.Vals[i], at("properties") + "/" + jsonptr.Escape(k)}})
		}
	}
	if x := v.Get("patternProperties"); x != nil && x.Kind == jsonvalue.Object {
		has = true
		for i, k := range x.Keys {
			pp := at("patternProperties") + "/" + jsonptr.Escape(k)
			d, err := cachedRegexDFA(k)
			if err != nil {
				c.unsupported(pp, "patternProperties", "%v", err)
				continue
			}
			p.patterns = append(p.patterns, patDef{k, d, sref{x.Vals[i], pp}})
		}
	}
	if x := v.Get("additionalProperties"); x != nil {
		has = true
		if x.Kind == jsonvalue.Bool {
			p.addlFalse = !x.Bool
		} else {
			p.addl = &sref{x, at("additionalProperties")}
		}
	}
	if x := v.Get("propertyNames"); x != nil {
		has = true
		pn := c.lower(sref{x, at("propertyNames")})
		if pn.str == nil {
			p.names = emptyDFA()
		} else {
			p.names = c.materialize(pn.str, at("propertyNames"))
		}
	}
	if has {
		oc.parts = []*objPart{p}
	}
	if x := v.Get("required"); x != nil && x.Kind == jsonvalue.Array {
		for _, r := range x.Vals {
			if r.Kind == jsonvalue.String && !slices.Contains(oc.required, r.Str) {
				oc.required = append(oc.required, r.Str)
			}
		}
	}
	if x := v.Get("minProperties"); x != nil {
		oc.minP = nonNegInt(x, at("minProperties"), "minProperties")
	}
	if x := v.Get("maxProperties"); x != nil {
		oc.maxP = nonNegInt(x, at("maxProperties"), "maxProperties")
	}
	dep := v.Get("dependentRequired")
	if dep == nil {
		dep = v.Get("dependencies")
	}
	if dep != nil && dep.Kind == jsonvalue.Object {
		for i, k := range dep.Keys {
			if dep.Vals[i].Kind != jsonvalue.Array {
				continue
			}
			for _, r := range dep.Vals[i].Vals {
				if r.Kind == jsonvalue.String {
					if oc.depReq == nil {
						oc.depReq = map[string][]string{}
					}
					oc.depReq[k] = append(oc.depReq[k], r.Str)
				}
			}
		}
	}
	if !has && len(oc.required) == 0 && oc.minP == 0 && oc.depReq == nil && oc.maxP < 0 {
		return c.anyObj
	}
	return oc
}

func (c *compiler) lowerArrCons(v *jsonvalue.Value, ptr string) *arrCons {
	at := func(k string) string { return ptr + "/" + jsonptr.Escape(k) }
	p := &arrPart{}
	has := false
	ac := &arrCons{maxI: -1}
	if x := v.Get("prefixItems"); x != nil && x.Kind == jsonvalue.Array {
		has = true
		for i, s := range x.Vals {
			p.prefix = append(p.prefix, sref{s, at("prefixItems") + "/" + strconv.Itoa(i)})
		}
	}
	if x := v.Get("items"); x != nil {
		has = true
		if x.Kind == jsonvalue.Array { // draft 4-2019 tuple form
			for i, s := range x.Vals {
				p.prefix = append(p.prefix, sref{s, at("items") + "/" + strconv.Itoa(i)})
			}
			if ai := v.Get("additionalItems"); ai != nil {
				if ai.Kind == jsonvalue.Bool {
					p.itemsFalse = !ai.Bool
				} else {
					p.items = &sref{ai, at("additionalItems")}
				}
			}
		} else if x.Kind == jsonvalue.Bool {
			p.itemsFalse = !x.Bool
		} else {
			p.items = &sref{x, at("items")}
		}
	}
	if has {
		ac.parts = []*arrPart{p}
	}
	if x := v.Get("minItems"); x != nil {
		ac.minI = nonNegInt(x, at("minItems"), "minItems")
	}
	if x := v.Get("maxItems"); x != nil {
		ac.maxI = nonNegInt(x, at("maxItems"), "maxItems")
	}
	if x := v.Get("uniqueItems"); x != nil && x.Kind == jsonvalue.Bool && x.Bool {
		ac.unique = at("uniqueItems")
	}
	if x := v.Get("contains"); x != nil {
		if cd, ok := c.lowerContains(v, sref{x, at("contains")}); ok {
			ac.contains = append(ac.contains, cd)
		}
	}
	if !has && ac.minI == 0 && ac.maxI < 0 && ac.unique == "" && len(ac.contains) == 0 {
		return c.anyArr
	}
	return ac
}

// materialize folds length bounds into the DFA.
func (c *compiler) materialize(s *strCons, ptr string) *rdfa {
	if s.min == 0 && s.max < 0 {
		return s.d
	}
	if s.min > 1000 || s.max > 1000 {
		c.unsupported(ptr, "maxLength", "length bound too large to combine here")
		return s.d
	}
	return intersectDFA(s.d, lengthDFA(s.min, s.max))
}

func (c *compiler) enumNode(vals []*jsonvalue.Value) *node {
	n := &node{litsOnly: true}
	var strs []string
	var nums []string
	for _, x := range vals {
		switch x.Kind {
		case jsonvalue.Null:
			n.null = true
		case jsonvalue.Bool:
			if x.Bool {
				n.tru = true
			} else {
				n.fal = true
			}
		case jsonvalue.String:
			strs = append(strs, x.Str)
		case jsonvalue.Number:
			nums = append(nums, x.Str)
		default:
			n.lits = append(n.lits, string(x.AppendCompact(nil)))
		}
	}
	if len(strs) > 0 {
		n.str = &strCons{d: literalsDFA(strs), max: -1}
	}
	if len(nums) > 0 {
		n.num = literalsDFA(nums)
	}
	return n
}

func unionStr(a, b *strCons, c *compiler, ptr string) *strCons {
	if a == nil {
		return b
	}
	if b == nil {
		return a
	}
	if a.min == b.min && a.max == b.max {
		return &strCons{d: unionDFA(a.d, b.d), min: a.min, max: a.max}
	}
	// One side often contains the other (a free or length-bounded string
	// and a pattern, say a reference syntax): no product, and no length
	// bound folded into states.
	if strIncludes(a, b) {
		return a
	}
	if strIncludes(b, a) {
		return b
	}
	// The side with the smaller effective maximum is folded into states;
	// the other keeps its maximum as the runtime counter (only its minimum
	// is folded, which is cheap), when that counter cannot cut the first.
	ea, eb := a.effMax(), b.effMax()
	if lessMax(ea, eb) {
		a, b, ea, eb = b, a, eb, ea
	}
	// now eb ≤ ea (-1: unbounded)
	if eb >= 0 && (a.max < 0 || eb <= a.max) && a.min <= 1000 {
		da := a.d
		if a.min > 0 {
			da = intersectDFA(a.d, lengthDFA(a.min, -1))
		}
		return &strCons{d: unionDFA(da, c.materializeEff(b, ptr)), max: a.max}
	}
	mx := -1
	if a.max >= 0 && b.max >= 0 {
		mx = max(a.max, b.max)
	}
	return &strCons{d: unionDFA(c.materialize(a, ptr), c.materialize(b, ptr)), max: mx}
}

// lessMax orders maxima with -1 as unbounded.
func lessMax(x, y int) bool {
	if x < 0 {
		return false
	}
	return y < 0 || x < y
}

// effMax is the longest string s accepts (-1: unbounded).
func (s *strCons) effMax() int {
	_, dm := s.d.lenRange()
	switch {
	case s.max < 0:
		return dm
	case dm < 0:
		return s.max
	}
	return min(s.max, dm)
}

// materializeEff folds s's bounds into its DFA, skipping bounds the DFA
// already implies.
func (c *compiler) materializeEff(s *strCons, ptr string) *rdfa {
	lo, hi := s.d.lenRange()
	t := *s
	if t.min <= lo {
		t.min = 0
	}
	if t.max >= 0 && hi >= 0 && hi <= t.max {
		t.max = -1
	}
	return c.materialize(&t, ptr)
}

// strIncludes reports (conservatively) whether every string of b is one of a.
func strIncludes(a, b *strCons) bool {
	blo, bhi := b.d.lenRange()
	blo = max(blo, b.min)
	bhi = b.effMax()
	if blo < a.min || a.max >= 0 && (bhi < 0 || bhi > a.max) {
		return false
	}
	if a.d == b.d || a.d.isUniversal() {
		return true
	}
	if len(a.d.st)*len(b.d.st) > 20000 {
		return false
	}
	return intersectDFA(b.d, complementDFA(a.d, anyRune)).isEmpty()
}

func (c *compiler) disj(a, b *node, ptr string) *node {
	if a.isEmpty() {
		return b
	}
	if b.isEmpty() {
		return a
	}
	n := &node{null: a.null || b.null, tru: a.tru || b.tru, fal: a.fal || b.fal}
	n.str = unionStr(a.str, b.str, c, ptr)
	switch {
	case a.num == nil:
		n.num = b.num
	case b.num == nil:
		n.num = a.num
	case a.num == b.num:
		n.num = a.num
	default:
		n.num = unionDFA(a.num, b.num)
	}
	n.objs = append(slices.Clone(a.objs), b.objs...)
	n.arrs = append(slices.Clone(a.arrs), b.arrs...)
	if len(a.objs) > 0 && slices.Contains(a.objs, c.anyObj) || len(b.objs) > 0 && slices.Contains(b.objs, c.anyObj) {
		n.objs = []*objCons{c.anyObj}
	}
	if slices.Contains(n.arrs, c.anyArr) {
		n.arrs = []*arrCons{c.anyArr}
	}
	n.objs = slices.Compact(n.objs)
	n.arrs = slices.Compact(n.arrs)
	n.lits = append(slices.Clone(a.lits), b.lits...)
	slices.Sort(n.lits)
	n.lits = slices.Compact(n.lits)
	n.litsOnly = a.litsOnly && b.litsOnly
	if len(n.objs)+len(n.arrs) > maxAlternatives {
		n.objs = c.pruneObjs(n.objs) // drop the alternatives no object satisfies
	}
	if len(n.objs)+len(n.arrs) > maxAlternatives {
		c.unsupported(ptr, "anyOf", "too many object/array alternatives")
		n.objs, n.arrs = []*objCons{c.anyObj}, []*arrCons{c.anyArr}
	}
	return n
}

func (c *compiler) conj(a, b *node, ptr string) *node {
	if a == c.anyMemo {
		return b
	}
	if b == c.anyMemo {
		return a
	}
	n := &node{null: a.null && b.null, tru: a.tru && b.tru, fal: a.fal && b.fal}
	if a.str != nil && b.str != nil {
		s := &strCons{min: max(a.str.min, b.str.min), max: a.str.max}
		if s.max < 0 || b.str.max >= 0 && b.str.max < s.max {
			s.max = b.str.max
		}
		if a.str.d == b.str.d {
			s.d = a.str.d
		} else if a.str.d == c.anyStr {
			s.d = b.str.d
		} else if b.str.d == c.anyStr {
			s.d = a.str.d
		} else {
			s.d = intersectDFA(a.str.d, b.str.d)
		}
		if !(s.max >= 0 && s.min > s.max) && !s.d.isEmpty() {
			n.str = s
		}
	}
	if a.num != nil && b.num != nil {
		switch {
		case a.num == b.num || b.num == c.freeNum:
			n.num = a.num
		case a.num == c.freeNum:
			n.num = b.num
		default:
			n.num = intersectDFA(a.num, b.num)
		}
		if n.num.isEmpty() {
			n.num = nil
		}
	}
	switch {
	case a.litsOnly && b.litsOnly:
		for _, l := range a.lits {
			if slices.Contains(b.lits, l) {
				n.lits = append(n.lits, l)
			}
		}
		n.litsOnly = true
	case a.litsOnly || b.litsOnly:
		lits, other := a.lits, b
		if b.litsOnly {
			lits, other = b.lits, a
		}
		for _, l := range lits {
			if slices.Contains(other.lits, l) {
				n.lits = append(n.lits, l)
				continue
			}
			// the member must satisfy other's container constraints: kept
			// unchecked it would be an invalid instance accepted
			v, err := jsonvalue.Parse([]byte(l))
			if err != nil {
				fail(ptr, litKeyword(ptr), "enum/const value %s cannot be parsed back: %v", l, err)
			}
			ok, why := c.containerAccepts(other, v, 0)
			if why != nil {
				if why.Pointer == "" {
					why.Pointer, why.Keyword = ptr, litKeyword(ptr)
				}
				c.unsupported(why.Pointer, why.Keyword, "cannot decide whether the enum/const value %s satisfies the constraints combined with it at %s: %s; remove the enum/const or that constraint", l, ptr, why.Msg)
				ok = true // lenient: kept, recorded as a loosening
			}
			if ok {
				n.lits = append(n.lits, l)
			}
		}
		n.litsOnly = true
	default:
		for _, x := range a.objs {
			for _, y := range b.objs {
				n.objs = append(n.objs, mergeObj(x, y, c))
			}
		}
		for _, x := range a.arrs {
			for _, y := range b.arrs {
				n.arrs = append(n.arrs, mergeArr(x, y, c))
			}
		}
		if len(n.objs)+len(n.arrs) > maxAlternatives {
			n.objs = c.pruneObjs(n.objs)
		}
		if len(n.objs)+len(n.arrs) > maxAlternatives {
			c.unsupported(ptr, "allOf", "too many object/array alternatives")
			n.objs, n.arrs = n.objs[:1], nil
		}
	}
	return n
}

func mergeObj(x, y *objCons, c *compiler) *objCons {
	if x == c.anyObj {
		return y
	}
	if y == c.anyObj {
		return x
	}
	o := &objCons{parts: append(slices.Clone(x.parts), y.parts...), minP: max(x.minP, y.minP), maxP: x.maxP,
		witness: append(slices.Clone(x.witness), y.witness...)}
	if o.maxP < 0 || y.maxP >= 0 && y.maxP < o.maxP {
		o.maxP = y.maxP
	}
	o.required = slices.Clone(x.required)
	for _, r := range y.required {
		if !slices.Contains(o.required, r) {
			o.required = append(o.required, r)
		}
	}
	if x.depReq != nil || y.depReq != nil {
		o.depReq = map[string][]string{}
		for k, v := range x.depReq {
			o.depReq[k] = append(o.depReq[k], v...)
		}
		for k, v := range y.depReq {
			o.depReq[k] = append(o.depReq[k], v...)
		}
	}
	return o
}

func mergeArr(x, y *arrCons, c *compiler) *arrCons {
	if x == c.anyArr {
		return y
	}
	if y == c.anyArr {
		return x
	}
	a := &arrCons{parts: append(slices.Clone(x.parts), y.parts...), minI: max(x.minI, y.minI), maxI: x.maxI, unique: x.unique,
		contains: mergeContains(x.contains, y.contains)}
	if a.unique == "" {
		a.unique = y.unique
	}
	if a.maxI < 0 || y.maxI >= 0 && y.maxI < a.maxI {
		a.maxI = y.maxI
	}
	return a
}

// conjRefs lowers the conjunction of schemas (memoized by identity).
func (c *compiler) conjRefs(refs []sref) *node {
	if len(refs) == 0 {
		return c.anyNode()
	}
	if len(refs) == 1 {
		return c.lower(refs[0])
	}
	var key strings.Builder
	ids := make([]int, len(refs))
	for i, r := range refs {
		id, ok := c.jvID[r.v]
		if !ok {
			id = len(c.jvID)
			c.jvID[r.v] = id
		}
		ids[i] = id
	}
	slices.Sort(ids)
	for _, id := range ids {
		fmt.Fprintf(&key, "%d,", id)
	}
	if n, ok := c.conjMemo[key.String()]; ok {
		return n
	}
	n := c.lower(refs[0])
	for _, r := range refs[1:] {
		n = c.conj(n, c.lower(r), r.ptr)
	}
	c.conjMemo[key.String()] = n
	return n
}

var (
	noDotNum  = anchoredDFA(`-?[0-9]+`)
	dotNum    = anchoredDFA(`-?[0-9]+\.[0-9]+`)
	zeroTail  = anchoredDFA(`(?:\.0+)?`)
	zerosTail = anchoredDFA(`0*`)
	expNum    = anchoredDFA(`.*[eE].*`)
)

func concatDFA(a, b *rdfa) *rdfa {
	n := &rnfa{}
	s1, e1 := a.toNFA(n)
	s2, e2 := b.toNFA(n)
	n.epsTo(e1, s2)
	return n.determinize(s1, e2)
}

// widenNum adds the other lexemes of the same values (trailing zeros).
func widenNum(d *rdfa) *rdfa {
	if !intersectDFA(d, expNum).isEmpty() {
		return nil // exponents: give up (callers treat as overlapping)
	}
	return unionDFA(concatDFA(intersectDFA(d, noDotNum), zeroTail), concatDFA(intersectDFA(d, dotNum), zerosTail))
}

// disjoint reports whether no JSON value can be valid for both a and b.
func (c *compiler) disjoint(a, b *node, depth int) bool {
	if depth > 3 {
		return false
	}
	if a.null && b.null || a.tru && b.tru || a.fal && b.fal {
		return false
	}
	if a.str != nil && b.str != nil {
		if !intersectDFA(a.str.d, b.str.d).isEmpty() && !(a.str.max >= 0 && b.str.min > a.str.max) && !(b.str.max >= 0 && a.str.min > b.str.max) {
			return false
		}
	}
	if a.num != nil && b.num != nil {
		wa, wb := widenNum(a.num), widenNum(b.num)
		if wa == nil || wb == nil || !intersectDFA(wa, wb).isEmpty() {
			return false
		}
	}
	for _, l := range a.lits {
		if slices.Contains(b.lits, l) || l[0] == '{' && len(b.objs) > 0 || l[0] == '[' && len(b.arrs) > 0 {
			return false
		}
	}
	for _, l := range b.lits {
		if l[0] == '{' && len(a.objs) > 0 || l[0] == '[' && len(a.arrs) > 0 {
			return false
		}
	}
	for _, x := range a.objs {
		for _, y := range b.objs {
			if !c.objDisjoint(x, y, depth) {
				return false
			}
		}
	}
	for _, x := range a.arrs {
		for _, y := range b.arrs {
			if !(x.maxI >= 0 && y.minI > x.maxI || y.maxI >= 0 && x.minI > y.maxI) {
				return false
			}
		}
	}
	return true
}

// propNode is the schema a value of property name must satisfy in o, and
// whether the name is allowed at all.
func (c *compiler) propRefs(o *objCons, name string) ([]sref, bool) {
	var refs []sref
	for _, p := range o.parts {
		if p.names != nil && !p.names.accepts(name) {
			return nil, false
		}
		matched := false
		for _, pd := range p.props {
			if pd.name == name {
				refs = append(refs, pd.s)
				matched = true
			}
		}
		for _, pt := range p.patterns {
			if pt.d.accepts(name) {
				refs = append(refs, pt.s)
				matched = true
			}
		}
		if !matched {
			if p.addlFalse {
				return nil, false
			}
			if p.addl != nil {
				refs = append(refs, *p.addl)
			}
		}
	}
	return refs, true
}

func (c *compiler) objDisjoint(x, y *objCons, depth int) bool {
	if x.maxP >= 0 && y.minP > x.maxP || y.maxP >= 0 && x.minP > y.maxP {
		return true
	}
	check := func(x, y *objCons) bool {
		for _, r := range x.required {
			ry, ok := c.propRefs(y, r)
			if !ok {
				return true
			}
			rx, ok := c.propRefs(x, r)
			if !ok {
				return true
			}
			if slices.Contains(y.required, r) && c.disjoint(c.conjRefs(rx), c.conjRefs(ry), depth+1) {
				return true
			}
		}
		return false
	}
	return check(x, y) || check(y, x)
}

var dfaCache = map[string]*rdfa{}

var anyStrDFA = func() *rdfa { d := starDFA(anyRune); d.shared = true; return d }()

func cachedDFA(key string, f func() *rdfa) *rdfa {
	dfaCacheMu.Lock()
	defer dfaCacheMu.Unlock()
	if d, ok := dfaCache[key]; ok {
		return d
	}
	d := f()
	dfaCache[key] = d
	return d
}

// litKeyword is the keyword a conjunction pointer names, for errors
// ("enum" when it names none: the enum/const is what cannot be checked).
func litKeyword(ptr string) string {
	switch k := ptr[strings.LastIndexByte(ptr, '/')+1:]; k {
	case "const", "allOf", "anyOf", "oneOf", "$ref", "not", "if", "then", "else":
		return k
	}
	return "enum"
}

// maxLitDepth bounds the recursion of the literal checks below; deeper
// values are undecided (refused), not kept.
const maxLitDepth = 64

// valueAccepts reports whether n accepts the JSON value v. A non-nil
// reason means it cannot be decided here (the caller refuses): a child
// schema still being lowered, uniqueItems where equality is not textual.
func (c *compiler) valueAccepts(n *node, v *jsonvalue.Value, depth int) (bool, *CompileError) {
	switch v.Kind {
	case jsonvalue.Null:
		return n.null, nil
	case jsonvalue.Bool:
		if v.Bool {
			return n.tru, nil
		}
		return n.fal, nil
	case jsonvalue.String:
		if n.str == nil {
			return false, nil
		}
		k := utf8.RuneCountInString(v.Str)
		return k >= n.str.min && (n.str.max < 0 || k <= n.str.max) && n.str.d.accepts(v.Str), nil
	case jsonvalue.Number:
		if n.num == nil {
			return false, nil
		}
		if n.num.accepts(v.Str) {
			return true, nil
		}
		// The number automata read the grammar's own spellings (no exponent
		// when bounded, at most MaxNumberDigits digits a side): the value is
		// judged by its plainest spelling, undecided when it has none.
		p, ok := plainNumber(v.Str, c.opts.MaxNumberDigits)
		if !ok {
			return false, &CompileError{Msg: "the number " + v.Str + " (too many digits to check)"}
		}
		return p != v.Str && n.num.accepts(p), nil
	}
	if slices.Contains(n.lits, string(v.AppendCompact(nil))) {
		return true, nil
	}
	if n.litsOnly {
		return false, nil
	}
	return c.containerAccepts(n, v, depth)
}

// containerAccepts reports whether one of n's object or array
// alternatives accepts the container v (n's lits are checked by the
// caller).
func (c *compiler) containerAccepts(n *node, v *jsonvalue.Value, depth int) (bool, *CompileError) {
	if depth > maxLitDepth {
		return false, &CompileError{Keyword: "enum", Msg: "a value nested this deep"}
	}
	var why *CompileError
	try := func(ok bool, w *CompileError) bool {
		if w != nil && why == nil {
			why = w
		}
		return ok && w == nil
	}
	switch v.Kind {
	case jsonvalue.Array:
		for _, a := range n.arrs {
			if try(c.arrAccepts(a, v, depth)) {
				return true, nil
			}
		}
	case jsonvalue.Object:
		for _, o := range n.objs {
			if try(c.objAccepts(o, v, depth)) {
				return true, nil
			}
		}
	}
	return false, why
}

// refAccepts checks v against the child schema s.
func (c *compiler) refAccepts(s sref, v *jsonvalue.Value, depth int) (bool, *CompileError) {
	n, why := c.lowerForCheck(s)
	if why != nil {
		return false, why
	}
	return c.valueAccepts(n, v, depth+1)
}

// errBusyCheck: lowerForCheck reached a schema that is still being lowered.
var errBusyCheck = &CompileError{Msg: "a child schema that refers back to the schema being compiled"}

// lowerForCheck lowers s for a member check. The check runs in the middle
// of lowering a schema, so a child may refer back to it (a recursive
// schema); its node does not exist yet and the check is undecided, which
// must not surface as a reference cycle.
func (c *compiler) lowerForCheck(s sref) (n *node, why *CompileError) {
	busy, negBusy := maps.Clone(c.busy), maps.Clone(c.negBusy)
	c.checking++
	defer func() {
		c.checking--
		if r := recover(); r != nil {
			if r != errBusyCheck {
				panic(r)
			}
			// the lowerings the panic cut short left their marks
			c.busy, c.negBusy = busy, negBusy
			n, why = nil, &CompileError{Msg: errBusyCheck.Msg + " (" + s.ptr + ")"}
		}
	}()
	return c.lower(s), nil
}

func (c *compiler) arrAccepts(a *arrCons, v *jsonvalue.Value, depth int) (bool, *CompileError) {
	k := len(v.Vals)
	if k < a.minI || a.maxI >= 0 && k > a.maxI {
		return false, nil
	}
	for _, p := range a.parts {
		for i, x := range v.Vals {
			var s *sref
			switch {
			case i < len(p.prefix):
				s = &p.prefix[i]
			case p.itemsFalse:
				return false, nil
			default:
				s = p.items
			}
			if s == nil {
				continue
			}
			if ok, why := c.refAccepts(*s, x, depth); !ok || why != nil {
				return ok, why
			}
		}
	}
	for _, cd := range a.contains {
		found := false
		for _, x := range v.Vals {
			ok, why := c.refAccepts(cd.pos, x, depth)
			if why != nil {
				return false, why
			}
			if ok {
				found = true
				break
			}
		}
		if !found {
			return false, nil
		}
	}
	if a.unique != "" {
		seen := map[string]bool{}
		plain := true
		for _, x := range v.Vals {
			t := string(x.AppendCompact(nil))
			if seen[t] {
				return false, nil // textually equal is equal
			}
			seen[t] = true
			plain = plain && textualEquality(x)
		}
		if !plain {
			return false, &CompileError{Pointer: a.unique, Keyword: "uniqueItems", Msg: "uniqueItems over numbers or objects"}
		}
	}
	return true, nil
}

// textualEquality reports whether JSON equality on v's kind of value is
// equality of compact texts (no numbers, whose spellings vary, and no
// objects, whose key order does).
func textualEquality(v *jsonvalue.Value) bool {
	switch v.Kind {
	case jsonvalue.Number, jsonvalue.Object:
		return false
	case jsonvalue.Array:
		for _, x := range v.Vals {
			if !textualEquality(x) {
				return false
			}
		}
	}
	return true
}

func (c *compiler) objAccepts(o *objCons, v *jsonvalue.Value, depth int) (bool, *CompileError) {
	k := len(v.Keys)
	if k < o.minP || o.maxP >= 0 && k > o.maxP {
		return false, nil
	}
	for _, r := range o.required {
		if !slices.Contains(v.Keys, r) {
			return false, nil
		}
	}
	for key, deps := range o.depReq {
		if !slices.Contains(v.Keys, key) {
			continue
		}
		for _, d := range deps {
			if !slices.Contains(v.Keys, d) {
				return false, nil
			}
		}
	}
	for _, wd := range o.witness {
		found := false
		for i, name := range v.Keys {
			if !wd.names.accepts(name) {
				continue
			}
			ok, why := true, (*CompileError)(nil)
			if !wd.valAny {
				ok, why = c.refAccepts(wd.val, v.Vals[i], depth)
			}
			if why != nil {
				return false, why
			}
			if ok {
				found = true
				break
			}
		}
		if !found {
			return false, nil
		}
	}
	for i, name := range v.Keys {
		refs, allowed := c.propRefs(o, name)
		if !allowed {
			return false, nil
		}
		for _, s := range refs {
			if ok, why := c.refAccepts(s, v.Vals[i], depth); !ok || why != nil {
				return ok, why
			}
		}
	}
	return true, nil
}

// plainNumber spells the JSON number text s without exponent, sign of
// zero, leading or trailing zeros, and false when that needs more than
// digits digits in the integer or the fraction part.
func plainNumber(s string, digits int) (string, bool) {
	if len(s) > 64 {
		return "", false // exponents could make the spelling huge
	}
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return "", false
	}
	if r.IsInt() {
		p := r.Num().String()
		return p, len(strings.TrimPrefix(p, "-")) <= digits
	}
	p := r.FloatString(digits + 1)
	p = strings.TrimRight(p, "0")
	q, ok := new(big.Rat).SetString(p)
	if !ok || q.Cmp(r) != 0 {
		return "", false
	}
	i := strings.TrimPrefix(p, "-")
	dot := strings.IndexByte(i, '.')
	return p, dot <= digits && len(i)-dot-1 <= digits
}
