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

// maxContainsPerArray bounds the contains one array conjoins (allOf
// branches, $refs): k of them need 2^k copies of the item chain and 3^k
// item values per position.
const maxContainsPerArray = 3

// containsItems is an array's items split by its k contains: node(i, m, t)
// is the items at position i (P: the rest) that, in the copy where the
// witnesses m were seen, are witnesses of exactly t among the others (t ⊆
// ¬m): S_i ∧ ⋀_{j∈t} C_j ∧ ⋀_{j∉m∪t} ¬C_j, nil when empty.
type containsItems struct {
	k     int
	nodes map[[3]int]*node
}

func (ci *containsItems) node(i, m, t int) *node { return ci.nodes[[3]int{i, m, t}] }

func (b *builder) containsSplit(ac *arrCons, it arrItems) *containsItems {
	c := b.c
	cd := ac.contains[0]
	k := len(ac.contains)
	if k > maxContainsPerArray {
		c.unsupported(cd.pos.ptr, "contains", "more than %d contains on one array is not supported", maxContainsPerArray)
		return nil
	}
	if it.uniq != nil || ac.unique != "" {
		c.unsupported(cd.pos.ptr, "contains", "contains with uniqueItems is not supported")
		return nil
	}
	yes := make([]*node, k)
	no := make([]*node, k)
	for j, d := range ac.contains {
		yes[j], no[j] = c.lower(d.pos), c.lower(d.neg)
	}
	full := 1<<k - 1
	ci := &containsItems{k: k, nodes: map[[3]int]*node{}}
	P := len(it.pos)
	for i := 0; i <= P; i++ {
		base := it.rest
		if i < P {
			base = it.pos[i]
		}
		if base == nil {
			continue
		}
		for m := 0; m < full; m++ {
			free := full &^ m
			for t := free; ; t = (t - 1) & free { // every subset of free
				nd := base
				for j := 0; j < k && nd != nil; j++ {
					var x *node
					switch {
					case t&(1<<j) != 0:
						x = yes[j]
					case free&(1<<j) != 0:
						x = no[j]
					default:
						continue
					}
					if nd = c.conj(nd, x, cd.pos.ptr); nd.isEmpty() {
						nd = nil
					}
				}
				if nd != nil {
					ci.nodes[[3]int{i, m, t}] = nd
				}
				if t == 0 {
					break
				}
			}
		}
	}
	return ci
}

// containsArr builds the array rule body of a contains array into n (from
// s2, after "[" and blanks, to the final F). The plain chain is the copy
// where every witness was seen, the only one that may close; a copy m (the
// witnesses seen so far) has only the positions from which every witness
// is still reachable, so no prefix is a dead end.
func (b *builder) containsArr(n *bnfa, it arrItems, maxLen int, s2, F, closeOp, commaOp int32) {
	ci := it.con
	P := len(it.pos)
	if maxLen >= 0 && maxLen < P {
		P = maxLen
	}
	hasRest := it.rest != nil && (maxLen < 0 || P < maxLen)
	// the seen copy: sb[i] before item i, sx[i] after it; index P is the
	// rest loop
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
	// the other copies: positions 0..Q-1 unrolled (the rest ones too when
	// the length is bounded), then a loop (index Q) when it is not
	Q := P
	loop := hasRest && maxLen < 0
	if hasRest && maxLen >= 0 {
		Q = maxLen
		if Q > maxContainsUnroll {
			b.c.unsupported("", "contains", "contains on an array of up to %d items is not supported (over %d)", maxLen, maxContainsUnroll)
			return
		}
	}
	full := 1<<ci.k - 1
	nodeAt := func(i, m, t int) *node { return ci.node(min(i, len(it.pos)), m, t) }
	subsets := func(m int, f func(t int)) {
		free := full &^ m
		for t := free; ; t = (t - 1) & free {
			f(t)
			if t == 0 {
				return
			}
		}
	}
	live := make([][]bool, full) // live[m][i]: every witness still reachable
	for m := range live {
		live[m] = make([]bool, Q+1)
	}
	for m := full - 1; m >= 0; m-- { // m∪t ≥ m: the larger copies first
		if loop {
			subsets(m, func(t int) {
				if t != 0 && nodeAt(Q, m, t) != nil && (m|t == full || live[m|t][Q]) {
					live[m][Q] = true
				}
			})
		}
		for i := Q - 1; i >= 0; i-- {
			subsets(m, func(t int) {
				if nodeAt(i, m, t) != nil && (m|t == full || live[m|t][i+1]) {
					live[m][i] = true
				}
			})
		}
	}
	ub := make([][]int32, full)
	for m := range ub {
		ub[m] = make([]int32, Q+1)
		for i := range ub[m] {
			if live[m][i] {
				ub[m][i] = n.add()
			}
		}
	}
	if live[0][0] {
		n.eps(s2, ub[0][0])
	}
	for m := 0; m < full; m++ {
		for i := 0; i <= Q; i++ {
			if !live[m][i] || i == Q && !loop {
				continue
			}
			nx := min(i+1, Q) // the loop stays at Q
			subsets(m, func(t int) {
				nd := nodeAt(i, m, t)
				switch {
				case nd == nil:
				case m|t == full:
					item(nd, ub[m][i], sx[min(i, P)])
				case live[m|t][nx]:
					X := n.add()
					item(nd, ub[m][i], X)
					next(X, ub[m|t][nx])
				}
			})
		}
	}
}
