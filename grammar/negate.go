package grammar

import (
	"maps"
	"strconv"
	"strings"

	"github.com/airs-dev/airs/internal/jsonptr"
	"github.com/airs-dev/airs/internal/jsonvalue"
)

// Exact complements. negate(s) is the IR of ¬s, built keyword by keyword:
// a schema object is the conjunction of its keywords, each of which
// constrains only the values of its type, so
//
//	¬(k1 ∧ k2 ∧ …) = ¬k1 ∨ ¬k2 ∨ …
//
// where ¬k is "a value of k's type that fails k" (¬minimum:5 is a number
// < 5, ¬required:[a] an object without a, ¬pattern a string that does not
// match). Every such piece is a language the IR carries exactly:
//
//   - types: the other types; ¬integer adds the numbers with a non-zero
//     fraction digit (over exponent-free lexemes, the only ones whose value
//     the automata compare).
//   - const/enum of scalars: the other scalars (numbers by value: < v or > v).
//   - minimum/maximum/exclusive*: the opposite comparison; multipleOf: the
//     complement of the remainder automaton over exponent-free lexemes.
//   - minLength/maxLength: the opposite bound; pattern: the complement of
//     the pattern's (exact, search-semantics) automaton.
//   - required / dependentRequired / array dependencies: an object whose
//     property names exclude the missing key (propertyNames, exact).
//   - min/maxProperties, min/maxItems: the opposite bound.
//   - properties (alone, no patternProperties/additionalProperties): some
//     declared key present whose value fails its schema (a child ¬schema,
//     lowered lazily so that recursion terminates).
//   - prefixItems / tuple items: some position present whose item fails;
//     contains: every item fails (items: ¬S); items: S (no tuple): some
//     item fails, contains: ¬S (exact, contains.go).
//   - not: the schema itself; allOf: ∨¬; anyOf: ∧¬; oneOf: none holds or
//     two hold; if/then/else: (I ∧ ¬T) ∨ (¬I ∧ ¬E); $ref: ¬target.
//
// Anything else that constrains (format, uniqueItems, items as a schema,
// patternProperties, additionalProperties, propertyNames, container
// consts …) is refused under "not" with its pointer: an "exists" quantifier
// over keys or items the IR does not have, or an automaton (format) that
// may under-approximate and whose complement would then over-accept.

// negKeywords are the keywords negate understands or must refuse; keys
// outside it (and outside annotationKeywords) are unknown and constrain
// nothing, as in lowering.
var negRefused = map[string]bool{
	"format": true, "uniqueItems": true, "items": true, "additionalItems": true, "patternProperties": true,
	"additionalProperties": true, "propertyNames": true, "unevaluatedProperties": true, "unevaluatedItems": true,
	"dependentSchemas": true, "$dynamicRef": true, "$recursiveRef": true, "minContains": true, "maxContains": true,
	"contentSchema": true,
}

// negWrap is a synthesized schema {"not": s} standing for ¬s where the IR
// needs a schema reference (a property's value, an array item).
func (c *compiler) negWrap(s sref) sref {
	if c.negOf == nil {
		c.negOf = map[*jsonvalue.Value]sref{}
		c.negWrapOf = map[*jsonvalue.Value]*jsonvalue.Value{}
	}
	if w, ok := c.negWrapOf[s.v]; ok {
		return sref{w, s.ptr}
	}
	w := &jsonvalue.Value{Kind: jsonvalue.Object, Keys: []string{"not"}, Vals: []*jsonvalue.Value{s.v}}
	c.negWrapOf[s.v] = w
	c.negOf[w] = s
	return sref{w, s.ptr}
}

// typeNode is every value of the given types (integer alone: integer
// lexemes).
func (c *compiler) typeNode(types int) *node {
	n := &node{null: types&tNull != 0, tru: types&tBool != 0, fal: types&tBool != 0}
	if types&tString != 0 {
		n.str = &strCons{d: c.anyStr, max: -1}
	}
	if types&tNumber != 0 {
		n.num = c.freeNum
	} else if types&tInteger != 0 {
		n.num = c.intNum
	}
	if types&tObject != 0 {
		n.objs = []*objCons{c.anyObj}
	}
	if types&tArray != 0 {
		n.arrs = []*arrCons{c.anyArr}
	}
	return n
}

var nonIntLex = anchoredDFA(`-?[0-9]+\.[0-9]*[1-9][0-9]*`)

// numNode is the numbers whose lexeme d accepts (nil or empty: none).
func numNode(d *rdfa) *node {
	if d == nil || d.isEmpty() {
		return &node{}
	}
	return &node{num: d}
}

// cmpNum is the exponent-free numbers x with x rel b.
func (c *compiler) cmpNum(lex string, rel uint8, ptr, kw string) *rdfa {
	b, err := parseDecimal(lex)
	if err != nil {
		c.unsupported(ptr, "not", "%s: %v", kw, err)
		return c.freeNum
	}
	return intersectDFA(c.boundNum, compareDFA(b, rel))
}

// objWithout is the objects that lack key k.
func (c *compiler) objWithout(k string) *objCons {
	return &objCons{parts: []*objPart{{names: complementDFA(literalsDFA([]string{k}), anyRune)}}, maxP: -1}
}

// tryNegate is negate, or false and why when ¬s cannot be carried exactly.
func (c *compiler) tryNegate(s sref) (n *node, why string) {
	lenient := c.opts.Lenient
	c.opts.Lenient = false
	defer func() { c.opts.Lenient = lenient }()
	busy := maps.Clone(c.busy)
	negBusy := maps.Clone(c.negBusy)
	defer func() {
		if r := recover(); r != nil {
			if _, isCE := r.(*CompileError); !isCE {
				if _, isRE := r.(*reError); !isRE {
					panic(r)
				}
			}
			c.busy, c.negBusy = busy, negBusy
			n, why = nil, recoveredError(r).Error()
		}
	}()
	return c.negate(s), ""
}

// negate is the IR of the values s rejects.
func (c *compiler) negate(s sref) *node {
	v := s.v
	if v.Kind == jsonvalue.Bool {
		if v.Bool {
			return c.emptyNode()
		}
		return c.anyNode()
	}
	if v.Kind != jsonvalue.Object {
		fail(s.ptr, "", "a schema must be an object or a boolean")
	}
	if o, ok := c.negOf[v]; ok { // ¬¬o
		return c.lower(o)
	}
	if n, ok := c.negMemo[v]; ok {
		return n
	}
	if c.negBusy == nil {
		c.negBusy = map[*jsonvalue.Value]bool{}
		c.negMemo = map[*jsonvalue.Value]*node{}
	}
	if c.negBusy[v] {
		c.unsupported(s.ptr, "not", "not over a reference cycle that consumes no input")
		return c.anyNode()
	}
	c.negBusy[v] = true
	n := c.negateObject(v, s.ptr)
	delete(c.negBusy, v)
	c.negMemo[v] = n
	return n
}

// negateObject is ¬s for a schema object: the disjunction of what each of
// its keywords rejects (a value fails s when it fails any keyword).
func (c *compiler) negateObject(v *jsonvalue.Value, ptr string) *node {
	out := c.emptyNode()
	or := func(m *node) { out = c.disj(out, m, ptr) }
	c.negTypes(v, ptr, or)
	for i, k := range v.Keys {
		x, kp := v.Vals[i], ptr+"/"+jsonptr.Escape(k)
		if negRefused[k] {
			c.negRefusedKeyword(v, k, x, kp, or)
			continue
		}
		c.negKeyword(v, ptr, k, x, kp, or)
	}
	return out
}

// negTypes adds the values of the types s does not allow.
func (c *compiler) negTypes(v *jsonvalue.Value, ptr string, or func(*node)) {
	types := c.schemaTypes(v, ptr)
	if types != tAll {
		other := tAll &^ types
		if types&(tNumber|tInteger) != 0 {
			other &^= tNumber | tInteger
		}
		or(c.typeNode(other))
		if types&tInteger != 0 && types&tNumber == 0 {
			or(numNode(intersectDFA(c.boundNum, nonIntLex)))
		}
	}
}

// negRefusedKeyword adds what keyword k (one of negRefused: no direct
// complement) rejects, where a construction carries it exactly — a tuple,
// an item or a property that fails (contains.go, witness.go) — and refuses
// it otherwise (loosened to anything when lenient).
func (c *compiler) negRefusedKeyword(v *jsonvalue.Value, k string, x *jsonvalue.Value, kp string, or func(*node)) {
	if k == "format" && x.Kind != jsonvalue.String {
		return
	}
	if (k == "unevaluatedProperties" || k == "unevaluatedItems" || k == "additionalProperties" || k == "items" || k == "additionalItems") && x.Kind == jsonvalue.Bool && x.Bool {
		return
	}
	if k == "items" && x.Kind == jsonvalue.Array {
		or(c.negTuple(v, x, kp))
		return
	}
	if k == "items" && v.Get("prefixItems") == nil {
		// some item fails x: contains ¬x, whose complement is x
		// itself (contains.go)
		if x.Kind == jsonvalue.Bool { // items: false: a non-empty array
			or(&node{arrs: []*arrCons{{minI: 1, maxI: -1}}})
			return
		}
		s := sref{x, kp}
		a := &arrCons{maxI: -1, contains: []containsDef{{pos: c.negWrap(s), neg: s}}}
		or(&node{arrs: []*arrCons{a}})
		return
	}
	if k == "additionalItems" && v.Get("items").Is(jsonvalue.Array) && x.Kind == jsonvalue.Bool ||
		k == "items" && v.Get("prefixItems").Is(jsonvalue.Array) && x.Kind == jsonvalue.Bool {
		return // with the tuple
	}
	if k == "uniqueItems" && x.Kind == jsonvalue.Bool && !x.Bool {
		return
	}
	if k == "propertyNames" || k == "patternProperties" || k == "additionalProperties" {
		// some property fails: an object with a witness (witness.go)
		or(c.negProps(v, k, x, kp))
		return
	}
	c.unsupported(kp, "not", "not over %s is not supported (no exact complement)", k)
	or(c.anyNode()) // lenient: loosened to anything
	return
}

// negKeyword adds what keyword k of the schema object v at ptr rejects.
func (c *compiler) negKeyword(v *jsonvalue.Value, ptr, k string, x *jsonvalue.Value, kp string, or func(*node)) {
	at := func(k string) string { return ptr + "/" + jsonptr.Escape(k) }
	switch k {
	case "not":
		or(c.lower(sref{x, kp}))
	case "const":
		or(c.negEnum([]*jsonvalue.Value{x}, kp))
	case "enum":
		if x.Kind == jsonvalue.Array {
			or(c.negEnum(x.Vals, kp))
		}
	case "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum":
		if m := c.negBound(v, k, x, kp); m != nil {
			or(m)
		}
	case "multipleOf":
		lex, ok := num(x)
		if !ok {
			fail(kp, k, "must be a number")
		}
		m, err := multipleDFA(lex)
		if err != nil {
			c.unsupported(kp, "not", "%v", err)
			or(c.anyNode())
			return
		}
		or(numNode(intersectDFA(c.boundNum, complementDFA(m, anyRune))))
	case "minLength":
		if n := nonNegInt(x, kp, k); n > 0 {
			or(&node{str: &strCons{d: c.anyStr, max: n - 1}})
		}
	case "maxLength":
		n := nonNegInt(x, kp, k)
		if n < 1<<30 {
			or(&node{str: &strCons{d: c.anyStr, min: n + 1, max: -1}})
		}
	case "pattern":
		if x.Kind != jsonvalue.String {
			fail(kp, "pattern", "must be a string")
		}
		d, err := cachedRegexDFA(x.Str)
		if err != nil {
			c.unsupported(kp, "not", "pattern: %v", err)
			or(c.anyNode())
			return
		}
		if cd := complementDFA(d, anyRune); !cd.isEmpty() {
			or(&node{str: &strCons{d: cd, max: -1}})
		}
	case "required":
		if x.Kind == jsonvalue.Array {
			for _, r := range x.Vals {
				if r.Kind == jsonvalue.String {
					or(&node{objs: []*objCons{c.objWithout(r.Str)}})
				}
			}
		}
	case "minProperties":
		if n := nonNegInt(x, kp, k); n > 0 {
			or(&node{objs: []*objCons{{maxP: n - 1}}})
		}
	case "maxProperties":
		if n := nonNegInt(x, kp, k); n < 1<<30 {
			or(&node{objs: []*objCons{{minP: n + 1, maxP: -1}}})
		}
	case "minItems":
		if n := nonNegInt(x, kp, k); n > 0 {
			or(&node{arrs: []*arrCons{{maxI: n - 1}}})
		}
	case "maxItems":
		if n := nonNegInt(x, kp, k); n < 1<<30 {
			or(&node{arrs: []*arrCons{{minI: n + 1, maxI: -1}}})
		}
	case "properties":
		if x.Kind != jsonvalue.Object {
			return
		}
		for j, pk := range x.Keys {
			ps := sref{x.Vals[j], kp + "/" + jsonptr.Escape(pk)}
			if ps.v.Kind == jsonvalue.Bool && ps.v.Bool {
				continue
			}
			// an object with pk whose value fails ps.
			o := &objCons{parts: []*objPart{{props: []propDef{{pk, c.negWrap(ps)}}}}, required: []string{pk}, maxP: -1}
			or(&node{objs: []*objCons{o}})
		}
	case "prefixItems":
		if x.Kind == jsonvalue.Array {
			or(c.negTuple(v, x, kp))
		}
	case "contains":
		// no item satisfies x: every item fails it.
		a := &arrCons{parts: []*arrPart{{items: ptrTo(c.negWrap(sref{x, kp}))}}, maxI: -1}
		if v.Get("minContains") != nil || v.Get("maxContains") != nil {
			c.unsupported(kp, "not", "not over minContains/maxContains is not supported")
			a = c.anyArr
		}
		or(&node{arrs: []*arrCons{a}})
	case "dependentRequired", "dependencies":
		c.negDependencies(k, x, kp, or)
	case "$ref":
		if x.Kind == jsonvalue.String {
			t, p := c.resolveRef(x.Str, kp)
			if p == "" {
				p = kp
			}
			or(c.negate(sref{t, p}))
		}
	case "allOf":
		if x.Kind == jsonvalue.Array {
			for j, s := range x.Vals {
				or(c.negate(sref{s, kp + "/" + strconv.Itoa(j)}))
			}
		}
	case "anyOf":
		if x.Kind == jsonvalue.Array {
			m := c.anyNode()
			for j, s := range x.Vals {
				m = c.conj(m, c.negate(sref{s, kp + "/" + strconv.Itoa(j)}), kp)
			}
			or(m)
		}
	case "oneOf":
		if x.Kind == jsonvalue.Array {
			or(c.negOneOf(x, kp))
		}
	case "if":
		th, el := v.Get("then"), v.Get("else")
		if th == nil && el == nil {
			return
		}
		is := sref{x, kp}
		m := c.emptyNode()
		if th != nil {
			m = c.disj(m, c.conj(c.lower(is), c.negate(sref{th, at("then")}), kp), kp)
		}
		if el != nil {
			m = c.disj(m, c.conj(c.negate(is), c.negate(sref{el, at("else")}), kp), kp)
		}
		or(m)
	}
}

// negBound is the numbers a bound (minimum, maximum, exclusiveMinimum,
// exclusiveMaximum) of v rejects, or nil for a draft-4 boolean exclusive
// bound, which only modifies its sibling.
func (c *compiler) negBound(v *jsonvalue.Value, k string, x *jsonvalue.Value, kp string) *node {
	if x.Kind == jsonvalue.Bool {
		return nil
	}
	lex, ok := num(x)
	if !ok {
		fail(kp, k, "must be a number")
	}
	var rel uint8
	switch k {
	case "minimum":
		rel = relLT
		if ex := v.Get("exclusiveMinimum"); ex.Is(jsonvalue.Bool) && ex.Bool {
			rel |= relEQ
		}
	case "maximum":
		rel = relGT
		if ex := v.Get("exclusiveMaximum"); ex.Is(jsonvalue.Bool) && ex.Bool {
			rel |= relEQ
		}
	case "exclusiveMinimum":
		rel = relLT | relEQ
	case "exclusiveMaximum":
		rel = relGT | relEQ
	}
	if seededBug == bugComplementBoundary {
		rel ^= relEQ
	}
	return numNode(c.cmpNum(lex, rel, kp, k))
}

// negDependencies adds the objects dependentRequired (or draft-7
// dependencies) rejects: one with a key and without a name it requires,
// or, for a schema dependency, with the key and failing the schema.
func (c *compiler) negDependencies(k string, x *jsonvalue.Value, kp string, or func(*node)) {
	if x.Kind != jsonvalue.Object {
		return
	}
	for j, dk := range x.Keys {
		dv := x.Vals[j]
		dp := kp + "/" + jsonptr.Escape(dk)
		switch dv.Kind {
		case jsonvalue.Array:
			for _, r := range dv.Vals {
				if r.Kind == jsonvalue.String {
					o := c.objWithout(r.Str)
					o.required = []string{dk}
					or(&node{objs: []*objCons{o}})
				}
			}
		default: // a schema dependency: dk present and the object fails dv.
			if k == "dependentRequired" {
				continue
			}
			or(c.conj(&node{objs: []*objCons{{required: []string{dk}, maxP: -1}}}, c.negate(sref{dv, dp}), dp))
		}
	}
}

func ptrTo[T any](x T) *T { return &x }

// seededBug plants one known bug in a construction so that the
// differential tests can show they would catch it (negate_diff_test.go).
// Only tests set it; the compile paths that read it are not on the mask path.
var seededBug string

const (
	bugComplementBoundary = "complement: a numeric bound's complement keeps the bound itself"
	bugDifference         = "difference: overlapping oneOf branches left as a plain union"
	bugIfElse             = "if/then/else: the else branch without ¬if"
)

var trueSchema = &jsonvalue.Value{Kind: jsonvalue.Bool, Bool: true}

// negTuple: an array where some tuple position i is present and fails its
// schema, or (items/additionalItems false after the tuple) longer than it.
func (c *compiler) negTuple(v, x *jsonvalue.Value, kp string) *node {
	m := &node{}
	for i, s := range x.Vals {
		if s.Kind == jsonvalue.Bool && s.Bool {
			continue
		}
		p := &arrPart{}
		for j := 0; j < i; j++ {
			p.prefix = append(p.prefix, sref{trueSchema, kp})
		}
		p.prefix = append(p.prefix, c.negWrap(sref{s, kp + "/" + strconv.Itoa(i)}))
		m.arrs = append(m.arrs, &arrCons{parts: []*arrPart{p}, minI: i + 1, maxI: -1})
	}
	rest := v.Get("additionalItems")
	if v.Get("prefixItems") != nil {
		rest = v.Get("items")
	}
	if rest != nil {
		if rest.Kind == jsonvalue.Bool {
			if !rest.Bool {
				m.arrs = append(m.arrs, &arrCons{minI: len(x.Vals) + 1, maxI: -1})
			}
		} else {
			c.unsupported(kp, "not", "not over items after a tuple is not supported")
			m.arrs = append(m.arrs, c.anyArr)
		}
	}
	if len(m.arrs) > maxAlternatives {
		c.unsupported(kp, "not", "too many alternatives")
	}
	return m
}

// negOneOf: no branch holds, or two do.
func (c *compiler) negOneOf(x *jsonvalue.Value, kp string) *node {
	bs := make([]sref, len(x.Vals))
	ns := make([]*node, len(x.Vals))
	none := c.anyNode()
	for j, s := range x.Vals {
		bs[j] = sref{s, kp + "/" + strconv.Itoa(j)}
		ns[j] = c.lower(bs[j])
		none = c.conj(none, c.negate(bs[j]), kp)
	}
	m := none
	for i := range ns {
		for j := i + 1; j < len(ns); j++ {
			if !c.disjoint(ns[i], ns[j], 0) {
				m = c.disj(m, c.conj(ns[i], ns[j], kp), kp)
			}
		}
	}
	return m
}

// negEnum is every value other than vals (scalars only).
func (c *compiler) negEnum(vals []*jsonvalue.Value, kp string) *node {
	n := c.typeNode(tAll)
	n = &node{null: n.null, tru: n.tru, fal: n.fal, str: n.str, num: c.freeNum, objs: n.objs, arrs: n.arrs}
	var strs []string
	for _, x := range vals {
		switch x.Kind {
		case jsonvalue.Null:
			n.null = false
		case jsonvalue.Bool:
			if x.Bool {
				n.tru = false
			} else {
				n.fal = false
			}
		case jsonvalue.String:
			strs = append(strs, x.Str)
		case jsonvalue.Number:
			if n.num == c.freeNum {
				n.num = c.boundNum
			}
			ne := unionDFA(c.cmpNum(x.Str, relLT, kp, "enum"), c.cmpNum(x.Str, relGT, kp, "enum"))
			n.num = intersectDFA(n.num, ne)
		default:
			c.unsupported(kp, "not", "not over an object or array const/enum is not supported")
		}
	}
	if len(strs) > 0 {
		d := complementDFA(literalsDFA(strs), anyRune)
		n.str = &strCons{d: d, max: -1}
	}
	if n.num != nil && n.num.isEmpty() {
		n.num = nil
	}
	return n
}

// oneOfExact makes the branches (each already conjoined with the schema's
// other constraints) pairwise disjoint: a branch that may overlap others
// becomes B_i ∧ ¬B_j for every such j, so the union holds exactly one
// branch. Refused when a needed complement is not exact.
func (c *compiler) oneOfExact(branches []*node, srefs []sref, ptr string) []*node {
	if seededBug == bugDifference {
		return branches
	}
	overlap := make([][]int, len(branches))
	for i := range branches {
		for j := i + 1; j < len(branches); j++ {
			if !c.disjoint(branches[i], branches[j], 0) {
				overlap[i] = append(overlap[i], j)
				overlap[j] = append(overlap[j], i)
			}
		}
	}
	neg := make([]*node, len(branches))
	out := make([]*node, len(branches))
	for i, b := range branches {
		for _, j := range overlap[i] {
			if neg[j] == nil {
				m, why := c.tryNegate(srefs[j])
				if m == nil {
					c.unsupported(ptr, "oneOf", "branches %d and %d may both match and branch %d has no exact complement (%s)", min(i, j), max(i, j), j, why)
					return branches
				}
				neg[j] = m
			}
			b = c.conj(b, neg[j], ptr)
		}
		out[i] = b
	}
	return out
}

// lowerIf conjoins n with if/then/else: (I ∧ T) ∨ (¬I ∧ E), a missing
// branch being true.
func (c *compiler) lowerIf(n *node, v *jsonvalue.Value, is sref) *node {
	th, el := v.Get("then"), v.Get("else")
	if th == nil && el == nil {
		return n
	}
	ni, why := c.tryNegate(is)
	if ni == nil {
		c.unsupported(is.ptr, "if", "if/then/else needs the exact complement of if (%s)", why)
		return n
	}
	base := strings.TrimSuffix(is.ptr, "/if")
	yes, no := c.lower(is), ni
	if seededBug == bugIfElse {
		no = c.anyNode()
	}
	if th != nil {
		yes = c.conj(yes, c.lower(sref{th, base + "/then"}), is.ptr)
	}
	if el != nil {
		no = c.conj(no, c.lower(sref{el, base + "/else"}), is.ptr)
	}
	return c.conj(n, c.disj(yes, no, is.ptr), is.ptr)
}

// lowerDepSchema conjoins n with a schema dependency: a non-object, an
// object without key dk, or a value of s.
func (c *compiler) lowerDepSchema(n *node, dk string, s sref) *node {
	u := c.typeNode(tAll &^ tObject)
	u.objs = []*objCons{c.objWithout(dk)}
	return c.conj(n, c.disj(u, c.lower(s), s.ptr), s.ptr)
}

// pruneObjs drops the object alternatives no object satisfies (a required
// property that is forbidden or whose value schema is empty, or minimum
// above maximum count): the conjunction of several if/then/else (a
// discriminator switch) multiplies alternatives, most of them empty.
func (c *compiler) pruneObjs(objs []*objCons) []*objCons {
	if c.pruning || c.pruneChecks > maxPruneChecks {
		return objs
	}
	c.pruning = true
	defer func() { c.pruning = false }()
	out := objs[:0:0]
	for _, o := range objs {
		c.pruneChecks++
		if c.pruneChecks > maxPruneChecks || !c.objEmptySafe(o) {
			out = append(out, o)
		}
	}
	return out
}

// objEmptySafe is objEmpty, false when deciding it needs a schema being
// lowered (a cycle) or fails: keeping an alternative is always exact.
func (c *compiler) objEmptySafe(o *objCons) (empty bool) {
	lenient := c.opts.Lenient
	c.opts.Lenient = false
	nl := len(c.loosened)
	busy := maps.Clone(c.busy)
	negBusy := maps.Clone(c.negBusy)
	defer func() {
		c.opts.Lenient = lenient
		if r := recover(); r != nil {
			if _, isCE := r.(*CompileError); !isCE {
				if _, isRE := r.(*reError); !isRE {
					panic(r)
				}
			}
			c.busy, c.negBusy = busy, negBusy
			c.loosened = c.loosened[:nl]
			empty = false
		}
	}()
	return c.objEmpty(o)
}

// maxPruneChecks bounds the emptiness checks of one compile (each may
// lower child schemas); past it, alternatives are kept and a schema that
// needs more than maxAlternatives is refused as before.
const maxPruneChecks = 2000

func (c *compiler) objEmpty(o *objCons) bool {
	if o.maxP >= 0 && (o.minP > o.maxP || len(o.required) > o.maxP) {
		return true
	}
	for _, r := range o.required {
		refs, ok := c.propRefs(o, r)
		if !ok {
			return true
		}
		if len(refs) > 8 {
			continue
		}
		if len(refs) > 1 && c.conjRefs(refs).isEmpty() {
			return true
		}
		if len(refs) == 1 && c.lower(refs[0]).isEmpty() {
			return true
		}
	}
	return false
}
