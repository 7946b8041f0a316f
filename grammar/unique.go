package grammar

import (
	"math/big"
	"math/bits"
	"strconv"
)

// uniqueItems, exactly, where the item domain is finite and small.
//
// An array whose items are drawn from a finite set D of values (an enum, a
// const, booleans, a bounded integer range) is unique exactly when no value
// of D is written twice. That language is regular: its automaton's state
// after the k-th item is the set of values used so far, so the array rule
// has one state per reachable subset of D and an item edge only for the
// values not yet used. Counts are the subset's size, so minItems/maxItems
// live in the same states, and a subset is entered only if the array can
// still be closed from it (no dead end). Over a large or infinite domain
// the set of seen values is not bounded by the automaton, and the schema is
// refused as before.

// Budgets: at most maxUniqueDomain values are enumerated, and the rule may
// have at most maxUniqueEdges item edges (sum over reachable subsets of the
// values still unused), which keeps compile time bounded.
const (
	maxUniqueDomain = 64
	maxUniqueEdges  = 4096
)

// uniqueDomain returns the values of nd, one single-valued node each, or
// why they cannot be enumerated exactly. Two returned nodes never share a
// JSON value (so "distinct node" is "distinct value").
func (b *builder) uniqueDomain(nd *node) ([]*node, string) {
	if len(nd.objs) > 0 || len(nd.arrs) > 0 {
		return nil, "the items may be objects or arrays (not a finite set of values)"
	}
	if len(nd.lits) > 0 {
		// container literals compare as values (key order, 1 vs 1.0): not
		// done here
		return nil, "the items may be object or array constants"
	}
	var dom []*node
	if nd.null {
		dom = append(dom, &node{null: true})
	}
	if nd.tru {
		dom = append(dom, &node{tru: true})
	}
	if nd.fal {
		dom = append(dom, &node{fal: true})
	}
	if nd.str != nil {
		ss, ok := finiteStrings(nd.str.d, nd.str.min, nd.str.max, maxUniqueDomain-len(dom))
		if !ok {
			return nil, "the items may be more than " + strconv.Itoa(maxUniqueDomain) + " different strings"
		}
		for _, s := range ss {
			dom = append(dom, &node{str: &strCons{d: literalsDFA([]string{s}), max: -1}})
		}
	}
	if nd.num != nil {
		ns, ok := finiteStrings(nd.num, 0, -1, maxUniqueDomain-len(dom))
		if !ok {
			return nil, "the items may be more than " + strconv.Itoa(maxUniqueDomain) + " different numbers"
		}
		// distinct texts may be one number (1, 1.0, 1e0): refuse rather
		// than let a duplicate through
		seen := map[string]bool{}
		for _, s := range ns {
			r, ok := new(big.Rat).SetString(s)
			if !ok {
				return nil, "number item " + strconv.Quote(s) + " is not a plain number"
			}
			if seen[r.String()] {
				return nil, "two number items are one value written differently"
			}
			seen[r.String()] = true
			dom = append(dom, &node{num: literalsDFA([]string{s})})
		}
	}
	return dom, ""
}

// finiteStrings lists the strings of d whose length in code points is in
// [minL, maxL] (maxL < 0: unbounded), or false if there are more than
// limit of them or the enumeration would not terminate quickly.
func finiteStrings(d *rdfa, minL, maxL, limit int) ([]string, bool) {
	if d == nil || d.isEmpty() {
		return nil, true
	}
	depthCap := 256
	if maxL >= 0 && maxL < depthCap {
		depthCap = maxL
	}
	var out []string
	steps := 0
	buf := []rune{}
	var walk func(s int32) bool
	walk = func(s int32) bool {
		steps++
		if steps > 1<<16 {
			return false
		}
		st := &d.st[s]
		if st.final && len(buf) >= minL && (maxL < 0 || len(buf) <= maxL) {
			if len(out) >= limit {
				return false
			}
			out = append(out, string(buf))
		}
		if len(st.edges) == 0 {
			return true
		}
		if len(buf) >= depthCap {
			// longer strings are cut by maxL; without maxL the language
			// is (for our purposes) unbounded
			return maxL >= 0 && len(buf) >= maxL
		}
		for _, e := range st.edges {
			if int64(e.hi)-int64(e.lo) >= int64(limit) {
				return false
			}
			for r := e.lo; r <= e.hi; r++ {
				buf = append(buf, r)
				ok := walk(e.to)
				buf = buf[:len(buf)-1]
				if !ok {
					return false
				}
			}
		}
		return true
	}
	if !walk(0) {
		return nil, false
	}
	return out, true
}

// uniqueArr builds the array rule body for a unique array over dom into n
// (s2: after "[" and whitespace; F: after "]"). maxLen < 0: unbounded.
func (b *builder) uniqueArr(n *bnfa, dom []*node, minI, maxLen int, s2, F int32) {
	k := len(dom)
	top := k
	if maxLen >= 0 && maxLen < top {
		top = maxLen
	}
	if minI > top {
		return // no array fits: only "[]" if minI == 0, added by the caller
	}
	// entry[S]: where the next item is written after the values in S
	entry := map[uint64]int32{0: s2}
	closed := map[uint64]int32{} // after an item, the values so far being S
	var todo []uint64
	todo = append(todo, 0)
	for len(todo) > 0 {
		S := todo[0]
		todo = todo[1:]
		e := entry[S]
		for i := 0; i < k; i++ {
			if S&(1<<i) != 0 {
				continue
			}
			T := S | 1<<i
			W, ok := closed[T]
			if !ok {
				W = n.add()
				closed[T] = W
				X := n.add()
				b.ws(n, W, X)
				c := bits.OnesCount64(T)
				if c >= minI {
					n.edge(X, ']', ']', F, 0)
				}
				if c < top {
					Y := n.add()
					n.edge(X, ',', ',', Y, 0)
					E := n.add()
					b.ws(n, Y, E)
					entry[T] = E
					todo = append(todo, T)
				}
			}
			b.fragment(n, dom[i], e, W)
		}
	}
}

// uniqueEdges is the number of item edges uniqueArr would build over k
// values with at most top items: sum over j < top of C(k, j)·(k-j).
func uniqueEdges(k, top int) int {
	total, c := 0, 1 // c = C(k, j)
	for j := 0; j < top && j < k; j++ {
		total += c * (k - j)
		if total > maxUniqueEdges {
			return total
		}
		c = c * (k - j) / (j + 1)
	}
	return total
}

// uniqueItems decides how ac's uniqueItems is enforced: nil when it needs
// nothing (at most one item fits), else the item domain; anything else is
// refused (or, lenient, loosened) at ac.unique.
func (b *builder) uniqueItems(ac *arrCons, it arrItems) []*node {
	maxLen := ac.maxI
	if it.rest == nil && (maxLen < 0 || len(it.pos) < maxLen) {
		maxLen = len(it.pos)
	}
	if maxLen >= 0 && maxLen <= 1 {
		return nil // one item is always unique
	}
	if len(it.pos) > 0 {
		b.c.unsupported(ac.unique, "uniqueItems", "uniqueItems with prefixItems (tuple items) is not supported")
		return nil
	}
	dom, why := b.uniqueDomain(it.rest)
	if why != "" {
		b.c.unsupported(ac.unique, "uniqueItems", "uniqueItems is not supported here: %s", why)
		return nil
	}
	top := len(dom)
	if maxLen >= 0 && maxLen < top {
		top = maxLen
	}
	if e := uniqueEdges(len(dom), top); e > maxUniqueEdges {
		b.c.unsupported(ac.unique, "uniqueItems", "uniqueItems over %d item values needs over %d automaton edges (set maxItems, or fewer values)", len(dom), maxUniqueEdges)
		return nil
	}
	if len(dom) == 0 {
		return nil // only [] (no item value exists)
	}
	return dom
}
