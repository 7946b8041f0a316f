package grammar

import (
	"slices"

	"github.com/airs-dev/airs/internal/jsonvalue"
)

// contains, exactly. "Some item satisfies C" over items that must each
// satisfy S is the regular language
//
//	(S ∧ ¬C)* (S ∧ C) S*
//
// (per position for a tuple), so the array rule runs two copies of its
// item chain: "no witness yet", whose items are S∧¬C or, moving to the
// other copy, S∧C; and "witness seen", the plain chain, the only one that
// may close. It needs ¬C exactly (tryNegate), else contains is refused.
// Supported: one contains per array with minContains absent or 1 (0: no
// constraint), no maxContains (counting witnesses up to a bound is
// regular too, but the copies multiply; refused), no uniqueItems.

// containsDef is one contains: the schema and its exact complement.
type containsDef struct {
	pos, neg sref
}

// maxContainsUnroll bounds the "no witness yet" positions unrolled when the
// array's length is bounded (maxItems, or the generation bound): past it
// the schema is refused.
const maxContainsUnroll = 256

// lowerContains reads v's contains (at s) and its min/maxContains; false
// when it constrains nothing or is refused (lenient: loosened).
func (c *compiler) lowerContains(v *jsonvalue.Value, s sref) (containsDef, bool) {
	if mx := v.Get("maxContains"); mx != nil {
		c.unsupported(s.ptr, "contains", "maxContains is not supported")
		return containsDef{}, false
	}
	if mn := v.Get("minContains"); mn != nil {
		switch n := nonNegInt(mn, s.ptr, "minContains"); {
		case n == 0:
			return containsDef{}, false // contains holds of every array
		case n > 1:
			c.unsupported(s.ptr, "contains", "minContains above 1 is not supported")
			return containsDef{}, false
		}
	}
	if s.v.Kind == jsonvalue.Bool && !s.v.Bool {
		// no item satisfies false: no array does (the chain below builds
		// no witness edge and so no way to close)
		return containsDef{pos: s, neg: sref{trueSchema, s.ptr}}, true
	}
	if _, why := c.tryNegate(s); why != "" {
		c.unsupported(s.ptr, "contains", "contains needs the exact complement of its schema (%s)", why)
		return containsDef{}, false
	}
	c.lower(s) // its own compile errors, at its pointer
	return containsDef{pos: s, neg: c.negWrap(s)}, true
}

// mergeContains is the contains of a conjunction (each must hold).
func mergeContains(x, y []containsDef) []containsDef {
	if len(y) == 0 {
		return x
	}
	out := slices.Clone(x)
	for _, d := range y {
		if !slices.ContainsFunc(out, func(e containsDef) bool { return e.pos.v == d.pos.v }) {
			out = append(out, d)
		}
	}
	return out
}

// containsItems is an array's items split by its contains: yes[i] the
// items at tuple position i that are witnesses, no[i] those that are not
// (nil: none).
type containsItems struct {
	yes, no         []*node
	restYes, restNo *node
}

func (b *builder) containsSplit(ac *arrCons, it arrItems) *containsItems {
	c := b.c
	cd := ac.contains[0]
	if len(ac.contains) > 1 {
		c.unsupported(cd.pos.ptr, "contains", "more than one contains on one array is not supported")
		return nil
	}
	if it.uniq != nil || ac.unique != "" {
		c.unsupported(cd.pos.ptr, "contains", "contains with uniqueItems is not supported")
		return nil
	}
	yes, no := c.lower(cd.pos), c.lower(cd.neg)
	and := func(nd, m *node) *node {
		if nd == nil {
			return nil
		}
		if x := c.conj(nd, m, cd.pos.ptr); !x.isEmpty() {
			return x
		}
		return nil
	}
	ci := &containsItems{restYes: and(it.rest, yes), restNo: and(it.rest, no)}
	for _, p := range it.pos {
		ci.yes = append(ci.yes, and(p, yes))
		ci.no = append(ci.no, and(p, no))
	}
	return ci
}

// containsArr builds the array rule body of a contains array into n (from
// s2, after "[" and blanks, to the final F): the plain chain is the
// "witness seen" copy; the "no witness yet" copy has only the positions
// from which a witness is still reachable, so no prefix is a dead end.
func (b *builder) containsArr(n *bnfa, it arrItems, maxLen int, s2, F, closeOp, commaOp int32) {
	ci := it.con
	P := len(it.pos)
	if maxLen >= 0 && maxLen < P {
		P = maxLen
	}
	hasRest := it.rest != nil && (maxLen < 0 || P < maxLen)
	// seen copy: sb[i] before item i, sx[i] after it; index P is the rest loop
	sb := make([]int32, P+1)
	sx := make([]int32, P+1)
	for i := range sb {
		sb[i], sx[i] = n.add(), n.add()
	}
	next := func(x, to int32) {
		Y := n.add()
		n.edge(x, ',', ',', Y, commaOp)
		b.ws(n, Y, to)
	}
	item := func(nd *node, from, to int32) {
		W := n.add()
		b.fragment(n, nd, from, W)
		b.ws(n, W, to)
	}
	for i := 0; i < P; i++ {
		item(it.pos[i], sb[i], sx[i])
		n.edge(sx[i], ']', ']', F, closeOp)
		if i+1 < P || hasRest {
			next(sx[i], sb[i+1])
		}
	}
	if hasRest {
		item(it.rest, sb[P], sx[P])
		n.edge(sx[P], ']', ']', F, closeOp)
		next(sx[P], sb[P])
	}
	// unseen copy: positions 0..Q-1 unrolled (the rest ones too when the
	// length is bounded), then a loop when it is not
	Q := P
	loop := hasRest && maxLen < 0
	if hasRest && maxLen >= 0 {
		Q = maxLen
		if Q > maxContainsUnroll {
			b.c.unsupported("", "contains", "contains on an array of up to %d items is not supported (over %d)", maxLen, maxContainsUnroll)
			return
		}
	}
	yesAt := func(i int) *node {
		if i < P {
			return ci.yes[i]
		}
		return ci.restYes
	}
	noAt := func(i int) *node {
		if i < P {
			return ci.no[i]
		}
		return ci.restNo
	}
	seenAfter := func(i int) int32 { return sx[min(i, P)] }
	live := make([]bool, Q+1)
	live[Q] = loop && ci.restYes != nil
	for i := Q - 1; i >= 0; i-- {
		live[i] = yesAt(i) != nil || noAt(i) != nil && live[i+1]
	}
	ub := make([]int32, Q+1)
	for i := range ub {
		if live[i] {
			ub[i] = n.add()
		}
	}
	if live[0] {
		n.eps(s2, ub[0])
	}
	for i := 0; i < Q; i++ {
		if !live[i] {
			continue
		}
		if y := yesAt(i); y != nil {
			item(y, ub[i], seenAfter(i))
		}
		if no := noAt(i); no != nil && live[i+1] {
			X := n.add()
			item(no, ub[i], X)
			next(X, ub[i+1])
		}
	}
	if live[Q] && loop {
		item(ci.restYes, ub[Q], sx[P])
		if ci.restNo != nil {
			X := n.add()
			item(ci.restNo, ub[Q], X)
			next(X, ub[Q])
		}
	}
}
