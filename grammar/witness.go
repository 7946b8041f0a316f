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

// maxWitnesses bounds the witnesses of one object: k of them need 2^k
// copies of the key loop.
const maxWitnesses = 3

// witnessCopy adds the "witnesses still missing" copies of an object rule
// to n, one per set m of witnesses seen (per key count when the keys are
// bounded): they start at s2 (after "{" and blanks) and move into the
// plain loop at W (after a value) once every witness was seen.
func (b *builder) witnessCopy(n *bnfa, oc *objCons, cats []keyCat, allowed []string, oi *objInfo, s2, W, lim, extraOp, commaOp int32) {
	c := b.c
	wds := oc.witness
	k := len(wds)
	full := 1<<k - 1
	M := min(oi.maxP, maxWitnessUnroll) // (witnessOK refused more)
	if M == 0 {
		return // no key, no witness
	}
	J := 1 // key counts unrolled (1: a loop)
	if M > 0 {
		J = M
	}
	yes := make([]*node, k)
	no := make([]*node, k)
	for j, wd := range wds {
		if !wd.valAny {
			yes[j], no[j] = c.lower(wd.val), c.lower(wd.neg)
		}
	}
	// key regions: a category's keys split by which witnesses' names hold them
	type region struct {
		ct keyCat
		r  int
	}
	var regions []region
	for _, ct := range cats {
		if ct.decl >= 0 {
			r := 0
			for j, wd := range wds {
				if wd.names.accepts(allowed[ct.decl]) {
					r |= 1 << j
				}
			}
			regions = append(regions, region{ct, r})
			continue
		}
		L := ct.lang
		if L == nil {
			L = c.anyStr
			if len(ct.other) > 0 {
				L = complementDFA(literalsDFA(ct.other), anyRune)
			}
		}
		for r := 0; r <= full; r++ {
			lang := L
			for j, wd := range wds {
				if r&(1<<j) != 0 {
					lang = intersectDFA(lang, wd.names)
				} else {
					lang = intersectDFA(lang, complementDFA(wd.names, anyRune))
				}
				if lang.isEmpty() {
					break
				}
			}
			if !lang.isEmpty() {
				regions = append(regions, region{keyCat{lang: lang, decl: -1, nd: ct.nd}, r})
			}
		}
	}
	// value classes: in copy m, a key of region r witnesses exactly t ⊆ r∖m
	type class struct {
		t  int
		nd *node
	}
	memo := map[[3]int][]class{}
	classes := func(ri, m int) []class {
		key := [3]int{ri, m, 0}
		if cl, ok := memo[key]; ok {
			return cl
		}
		rel := regions[ri].r &^ m
		var out []class
		for t := rel; ; t = (t - 1) & rel {
			nd := regions[ri].ct.nd
			for j := 0; j < k && nd != nil; j++ {
				if rel&(1<<j) == 0 {
					continue
				}
				x := yes[j]
				if t&(1<<j) == 0 {
					x = no[j]
				}
				if wds[j].valAny {
					if t&(1<<j) == 0 {
						nd = nil
					}
					continue
				}
				if nd = c.conj(nd, x, ""); nd.isEmpty() {
					nd = nil
				}
			}
			if nd != nil {
				out = append(out, class{t, nd})
			}
			if t == 0 {
				break
			}
		}
		memo[key] = out
		return out
	}
	// live[m][j]: from copy m at count j every witness can still come
	live := make([][]bool, full)
	for m := range live {
		live[m] = make([]bool, J)
	}
	reaches := func(m, j int, t int) bool {
		if m|t == full {
			return true
		}
		switch {
		case M < 0:
			return live[m|t][0]
		case j+1 < J:
			return live[m|t][j+1]
		}
		return false
	}
	for changed := true; changed; { // (a loop's copies reach each other: to a fixpoint)
		changed = false
		for m := full - 1; m >= 0; m-- {
			for j := J - 1; j >= 0; j-- {
				if live[m][j] {
					continue
				}
				for ri := range regions {
					for _, cl := range classes(ri, m) {
						if (cl.t != 0 || M >= 0) && reaches(m, j, cl.t) {
							live[m][j] = true
						}
					}
				}
				if live[m][j] {
					changed = true
				}
			}
		}
	}
	if !live[0][0] {
		return // no object has every witness
	}
	ks := make([][]int32, full)
	for m := range ks {
		ks[m] = make([]int32, J)
		for j := range ks[m] {
			if live[m][j] {
				ks[m][j] = n.add()
			}
		}
	}
	n.eps(s2, ks[0][0])
	after := map[[2]int]int32{} // (copy, count) → after a value, before its comma
	afterValue := func(m, j int) int32 {
		if x, ok := after[[2]int{m, j}]; ok {
			return x
		}
		WU, XU, Y := n.add(), n.add(), n.add()
		b.ws(n, WU, XU)
		n.edge(XU, ',', ',', Y, commaOp)
		next := 0
		if M >= 0 {
			next = j + 1
		}
		b.ws(n, Y, ks[m][next])
		after[[2]int{m, j}] = WU
		return WU
	}
	for m := 0; m < full; m++ {
		for j := 0; j < J; j++ {
			if !live[m][j] {
				continue
			}
			var cs []keyCat
			var cls [][]class
			for ri, rg := range regions {
				var keep []class
				for _, cl := range classes(ri, m) {
					if reaches(m, j, cl.t) {
						keep = append(keep, cl)
					}
				}
				if len(keep) > 0 {
					cs = append(cs, rg.ct)
					cls = append(cls, keep)
				}
			}
			tg := make([]int32, len(cs))
			op := make([]int32, len(cs))
			for i, ct := range cs {
				tg[i], op[i] = n.add(), extraOp
				if ct.decl >= 0 {
					op[i] = b.op(opDef{kind: opKey, arg: int32(ct.decl), obj: oi})
				}
			}
			kd, tags := keyDFA(cs, allowed)
			avail, same := b.keyAvailOps(kd, tags, cs, oi)
			n.strTagged(kd, tags, ks[m][j], tg, op, lim, avail, same)
			for i := range cs {
				A2 := n.add()
				b.ws(n, tg[i], A2)
				V0 := n.add()
				n.lit(A2, ":", V0)
				V := n.add()
				b.ws(n, V0, V)
				for _, cl := range cls[i] {
					if m|cl.t == full {
						b.fragment(n, cl.nd, V, W)
					} else {
						nj := 0
						if M >= 0 {
							nj = j
						}
						b.fragment(n, cl.nd, V, afterValue(m|cl.t, nj))
					}
				}
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
	case len(oc.witness) > maxWitnesses:
		c.unsupported(ptr, "not", "more than %d 'some property fails' on one object is not supported", maxWitnesses)
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
