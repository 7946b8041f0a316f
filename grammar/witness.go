package grammar

import (
	"github.com/airs-dev/airs/internal/jsonptr"
	"github.com/airs-dev/airs/internal/jsonvalue"
)

// Object witnesses: "some property whose name is in N and whose value
// satisfies V", the complement of the universal object keywords:
//
//	¬propertyNames: P          some name outside P (any value)
//	¬patternProperties: {p: S} some name matching p whose value fails S
//	¬additionalProperties: A   some undeclared, unmatched name whose value fails A
//
// Like contains (contains.go), the object rule runs a second copy of its
// key/value loop, "no witness yet", whose key categories are split by N and
// whose values in N are split into V (moving to the plain loop, the only
// one that may close) and ¬V (staying). With a bound on the number of keys
// (maxProperties, or the generation bound) the copy is unrolled by count so
// that its last key must be a witness. One witness per object; refused
// with required or dependent keys under a key bound (the runtime budget
// for them does not know the copy), or when the plain loop splits its key
// starts (declared and undeclared keys under maxProperties).

type witnessDef struct {
	ptr      string // the negated keyword's pointer, for refusals
	names    *rdfa
	val, neg sref // val's exact complement is neg
	valAny   bool
}

// maxWitnessUnroll bounds the unrolled "no witness yet" positions.
const maxWitnessUnroll = 32

// negProps is the objects that fail keyword k (value x) of schema v.
func (c *compiler) negProps(v *jsonvalue.Value, k string, x *jsonvalue.Value, kp string) *node {
	obj := func(w witnessDef) *node {
		w.ptr = kp
		if w.names.isEmpty() {
			return &node{}
		}
		return &node{objs: []*objCons{{maxP: -1, witness: []witnessDef{w}}}}
	}
	valOf := func(s sref) witnessDef {
		if s.v.Kind == jsonvalue.Bool && !s.v.Bool {
			return witnessDef{valAny: true}
		}
		return witnessDef{val: c.negWrap(s), neg: s}
	}
	switch k {
	case "propertyNames":
		pn := c.lower(sref{x, kp})
		names := c.anyStr
		if pn.str != nil {
			names = complementDFA(c.materialize(pn.str, kp), anyRune)
		}
		return obj(witnessDef{names: names, valAny: true})
	case "patternProperties":
		out := &node{}
		if x.Kind != jsonvalue.Object {
			return out
		}
		for i, pk := range x.Keys {
			s := x.Vals[i]
			if s.Kind == jsonvalue.Bool && s.Bool {
				continue
			}
			d, err := cachedRegexDFA(pk)
			if err != nil {
				c.unsupported(kp, "not", "patternProperties: %v", err)
				return c.anyNode()
			}
			w := valOf(sref{s, kp + "/" + jsonptr.Escape(pk)})
			w.names = d
			out = c.disj(out, obj(w), kp)
		}
		return out
	default: // additionalProperties
		names := c.anyStr
		if ps := v.Get("properties"); ps != nil && ps.Kind == jsonvalue.Object && len(ps.Keys) > 0 {
			names = complementDFA(literalsDFA(ps.Keys), anyRune)
		}
		if pp := v.Get("patternProperties"); pp != nil && pp.Kind == jsonvalue.Object {
			for _, pk := range pp.Keys {
				d, err := cachedRegexDFA(pk)
				if err != nil {
					c.unsupported(kp, "not", "patternProperties: %v", err)
					return c.anyNode()
				}
				names = intersectDFA(names, complementDFA(d, anyRune))
			}
		}
		w := valOf(sref{x, kp})
		w.names = names
		return obj(w)
	}
}

// witnessCopy adds the "no witness yet" copy of an object rule to n: it
// starts at s2 (after "{" and blanks) and moves into the plain loop at W
// (after a value) with a witness property.
func (b *builder) witnessCopy(n *bnfa, oc *objCons, cats []keyCat, allowed []string, oi *objInfo, s2, W, lim, extraOp, commaOp int32) {
	c := b.c
	wd := oc.witness[0]
	ptr := ""
	M := oi.maxP
	if M > maxWitnessUnroll { // (witnessOK refused it)
		M = maxWitnessUnroll
	}
	if M == 0 {
		return // no key, no witness
	}
	var yesN, noN *node
	if !wd.valAny {
		yesN, noN = c.lower(wd.val), c.lower(wd.neg)
	}
	splitVal := func(nd *node) (*node, *node) {
		if wd.valAny {
			return nd, nil
		}
		y, no := c.conj(nd, yesN, ptr), c.conj(nd, noN, ptr)
		if y.isEmpty() {
			y = nil
		}
		if no.isEmpty() {
			no = nil
		}
		return y, no
	}
	type wcat struct {
		ct      keyCat
		yes, no *node
	}
	var all, wit []wcat
	add := func(w wcat) {
		if w.yes != nil || w.no != nil {
			all = append(all, w)
		}
		if w.yes != nil {
			wit = append(wit, wcat{w.ct, w.yes, nil})
		}
	}
	notNames := complementDFA(wd.names, anyRune)
	for _, ct := range cats {
		if ct.decl >= 0 {
			if wd.names.accepts(allowed[ct.decl]) {
				y, no := splitVal(ct.nd)
				add(wcat{ct, y, no})
			} else {
				add(wcat{ct, nil, ct.nd})
			}
			continue
		}
		L := ct.lang
		if L == nil {
			L = c.anyStr
			if len(ct.other) > 0 {
				L = complementDFA(literalsDFA(ct.other), anyRune)
			}
		}
		if Lw := intersectDFA(L, wd.names); !Lw.isEmpty() {
			y, no := splitVal(ct.nd)
			add(wcat{keyCat{lang: Lw, decl: -1, nd: ct.nd}, y, no})
		}
		if Ln := intersectDFA(L, notNames); !Ln.isEmpty() {
			add(wcat{keyCat{lang: Ln, decl: -1, nd: ct.nd}, nil, ct.nd})
		}
	}
	if len(wit) == 0 {
		return // no witness can be written: no object
	}
	// the copy's key starts: one per count when bounded, else a loop
	K := 1
	if M > 0 {
		K = M
	}
	ks := make([]int32, K)
	for j := range ks {
		ks[j] = n.add()
	}
	n.eps(s2, ks[0])
	for j := 0; j < K; j++ {
		next := int32(-1)
		switch {
		case M < 0:
			next = ks[0]
		case j+1 < M:
			next = ks[j+1]
		}
		sub := all
		if next < 0 {
			sub = wit // the last key must be a witness
		}
		cs := make([]keyCat, len(sub))
		tg := make([]int32, len(sub))
		op := make([]int32, len(sub))
		for i, w := range sub {
			cs[i], tg[i], op[i] = w.ct, n.add(), extraOp
			if w.ct.decl >= 0 {
				op[i] = b.op(opDef{kind: opKey, arg: int32(w.ct.decl), obj: oi})
			}
		}
		kd, tags := keyDFA(cs, allowed)
		avail, same := b.keyAvailOps(kd, tags, cs, oi)
		n.strTagged(kd, tags, ks[j], tg, op, lim, avail, same)
		WU, XU := int32(-1), int32(-1)
		for i, w := range sub {
			A2 := n.add()
			b.ws(n, tg[i], A2)
			V0 := n.add()
			n.lit(A2, ":", V0)
			V := n.add()
			b.ws(n, V0, V)
			if w.yes != nil {
				b.fragment(n, w.yes, V, W)
			}
			if w.no != nil && next >= 0 {
				if WU < 0 {
					WU, XU = n.add(), n.add()
					b.ws(n, WU, XU)
					Y := n.add()
					n.edge(XU, ',', ',', Y, commaOp)
					b.ws(n, Y, next)
				}
				b.fragment(n, w.no, V, WU)
			}
		}
	}
}

// witnessOK reports whether oc's witness is enforced (checked once, while
// lowering, so that a refusal is a compile error, or under Lenient a
// loosening: the witness dropped).
func (b *builder) witnessOK(oc *objCons) bool {
	if len(oc.witness) == 0 {
		return false
	}
	if ok, done := b.witOK[oc]; done {
		return ok
	}
	if b.witOK == nil {
		b.witOK = map[*objCons]bool{}
	}
	b.witOK[oc] = false
	c := b.c
	// the key bound objRule will use (the generation bound included)
	M := oc.maxP
	if m := b.opts.MaxContainerItems; m > 0 && M < 0 && !b.shared {
		M = max(m, oc.minP, len(oc.required))
	}
	cats, _ := b.categories(oc)
	extras, decl := false, false
	for _, ct := range cats {
		if ct.decl >= 0 {
			decl = true
		} else {
			extras = true
		}
	}
	ptr := oc.witness[0].ptr
	switch {
	case len(oc.witness) > 1:
		c.unsupported(ptr, "not", "more than one 'some property fails' on one object is not supported")
	case M >= 0 && extras && decl:
		c.unsupported(ptr, "not", "'some property fails' with declared and other keys under a key bound (maxProperties or the generation bound) is not supported")
	case M >= 0 && (len(oc.required) > 0 || len(oc.depReq) > 0):
		c.unsupported(ptr, "not", "'some property fails' with required keys under a key bound is not supported")
	case M > maxWitnessUnroll:
		c.unsupported(ptr, "not", "'some property fails' on an object of up to %d keys is not supported (over %d)", M, maxWitnessUnroll)
	default:
		b.witOK[oc] = true
	}
	return b.witOK[oc]
}
