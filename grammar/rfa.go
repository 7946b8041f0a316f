package grammar

import (
	"encoding/binary"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// Rune automata: string contents (decoded code points) and number lexemes
// are regular languages over code points, built as Thompson NFAs (rnfa) and
// turned into trimmed, minimal DFAs (rdfa) on which intersection, union and
// complement are exact. The builder later encodes an rdfa as bytes (UTF-8,
// with JSON escapes inside strings).

// Assertion kinds on epsilon edges (regex anchors).
const (
	epsPlain = iota
	epsBOL
	epsEOL
)

type redge struct {
	set rset
	to  int32
}

type eedge struct {
	kind uint8
	to   int32
}

type rnfa struct {
	eps   [][]eedge
	edges [][]redge
}

func (n *rnfa) add() int32 {
	n.eps = append(n.eps, nil)
	n.edges = append(n.edges, nil)
	return int32(len(n.eps) - 1)
}

func (n *rnfa) epsTo(a, b int32) { n.eps[a] = append(n.eps[a], eedge{epsPlain, b}) }
func (n *rnfa) edge(a int32, s rset, b int32) {
	if len(s) > 0 {
		n.edges[a] = append(n.edges[a], redge{s, b})
	}
}

type rdedge struct {
	lo, hi rune
	to     int32
}

type rdstate struct {
	edges []rdedge // sorted, disjoint
	final bool
}

// rdfa is a deterministic automaton over code points; state 0 is the start.
// A trimmed rdfa has only useful states; the empty language is one
// non-final state without edges.
type rdfa struct {
	st     []rdstate
	shared bool     // long-lived (formats, any string): its encodings are cached
	canon  sync.Map // state → canonical key of its prefix-closed language
	// icand: *TokenizerInfo → *interiorCands, the interiors computed from
	// this automaton's states, for states that agree with one to the cut
	icand     sync.Map
	cheapOnce sync.Once // prefixCheap
	cheap     bool
	cheapDone atomic.Bool // prefixCheap has run
	msig      []sig128    // prefixCheap, where no cycle is reachable: tailSigs
	pcOnce    sync.Once
	pcCls     []int32
	pc        *rdfa
	lrOnce    sync.Once
	lrMin     int
	lrMax     int
	chOnce    sync.Once
	ch        sig128
}

// prefixFrom is the minimal DFA of the prefix-closed language from state si
// (every state final).
func (d *rdfa) prefixFrom(si int32) *rdfa {
	out := &rdfa{st: make([]rdstate, len(d.st))}
	for i, s := range d.st {
		out.st[i].final = true
		out.st[i].edges = s.edges
	}
	out.swapStart(si)
	return out.trim().minimize().trim()
}

// swapStart makes state si the start (state 0) by swapping the two states'
// numbers, copying the edge lists it renumbers (they may be shared with
// the automaton d was built from).
func (d *rdfa) swapStart(si int32) {
	if si == 0 {
		return
	}
	d.st[0], d.st[si] = d.st[si], d.st[0]
	for i := range d.st {
		es := make([]rdedge, len(d.st[i].edges))
		for j, e := range d.st[i].edges {
			switch e.to {
			case 0:
				e.to = si
			case si:
				e.to = 0
			}
			es[j] = e
		}
		d.st[i].edges = es
	}
}

// isUniversal reports whether d accepts every string of code points.
func (d *rdfa) isUniversal() bool {
	if len(d.st) != 1 || !d.st[0].final {
		return false
	}
	var cov rset
	for _, e := range d.st[0].edges {
		cov = append(cov, rrange{e.lo, e.hi})
	}
	return len(anyRune.minus(cov.norm())) == 0
}

// lenRange returns the lengths of d's shortest and longest strings (-1:
// unbounded, or no string). d must be trimmed.
func (d *rdfa) lenRange() (int, int) {
	d.lrOnce.Do(func() {
		n := len(d.st)
		// shortest: BFS
		dist := make([]int, n)
		for i := range dist {
			dist[i] = -1
		}
		dist[0] = 0
		q := []int32{0}
		d.lrMin = -1
		for len(q) > 0 {
			x := q[0]
			q = q[1:]
			if d.st[x].final && d.lrMin < 0 {
				d.lrMin = dist[x]
			}
			for _, e := range d.st[x].edges {
				if dist[e.to] < 0 {
					dist[e.to] = dist[x] + 1
					q = append(q, e.to)
				}
			}
		}
		// longest: DFS on the (trimmed) graph; a cycle means unbounded
		color := make([]uint8, n)
		long := make([]int, n)
		cyclic := false
		var visit func(x int32)
		visit = func(x int32) {
			color[x] = 1
			best := -1
			if d.st[x].final {
				best = 0
			}
			for _, e := range d.st[x].edges {
				switch color[e.to] {
				case 1:
					cyclic = true
				case 0:
					visit(e.to)
				}
				if cyclic {
					return
				}
				if long[e.to] >= 0 {
					best = max(best, long[e.to]+1)
				}
			}
			long[x] = best
			color[x] = 2
		}
		visit(0)
		d.lrMax = -1
		if !cyclic {
			d.lrMax = long[0]
		}
	})
	return d.lrMin, d.lrMax
}

func emptyDFA() *rdfa { return &rdfa{st: []rdstate{{}}} }

func (d *rdfa) isEmpty() bool { return len(d.st) == 1 && !d.st[0].final && len(d.st[0].edges) == 0 }

func (d *rdfa) step(s int32, r rune) int32 {
	es := d.st[s].edges
	i := sort.Search(len(es), func(i int) bool { return es[i].hi >= r })
	if i < len(es) && es[i].lo <= r {
		return es[i].to
	}
	return -1
}

func (d *rdfa) accepts(s string) bool {
	q := int32(0)
	for _, r := range s {
		if q = d.step(q, r); q < 0 {
			return false
		}
	}
	return d.st[q].final
}

// closure of NFA (state, phase) items; phase 0: nothing consumed, 1:
// consumed, 2: after $ (nothing more may be consumed).
func (n *rnfa) closure(items []int32) []int32 {
	seen := map[int32]bool{}
	stack := append([]int32(nil), items...)
	var out []int32
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[it] {
			continue
		}
		seen[it] = true
		out = append(out, it)
		s, ph := it/3, it%3
		for _, e := range n.eps[s] {
			switch e.kind {
			case epsPlain:
				stack = append(stack, e.to*3+ph)
			case epsBOL:
				if ph == 0 {
					stack = append(stack, e.to*3+ph)
				}
			case epsEOL:
				stack = append(stack, e.to*3+2)
			}
		}
	}
	slices.Sort(out)
	return out
}

func itemsKey(items []int32) string {
	var b strings.Builder
	for _, x := range items {
		b.WriteString(strconv.Itoa(int(x)))
		b.WriteByte(',')
	}
	return b.String()
}

// boundaries returns the elementary intervals of a list of ranges.
func elementary(rs []rrange) []rrange {
	var pts []rune
	for _, r := range rs {
		pts = append(pts, r.lo, r.hi+1)
	}
	slices.Sort(pts)
	pts = slices.Compact(pts)
	var out []rrange
	for i := 0; i+1 < len(pts); i++ {
		out = append(out, rrange{pts[i], pts[i+1] - 1})
	}
	return out
}

// determinize builds the DFA of n from start to accept (subset
// construction), then trims and minimizes it.
func (n *rnfa) determinize(start, accept int32) *rdfa {
	d := &rdfa{}
	index := map[string]int32{}
	var sets [][]int32
	addSet := func(items []int32) int32 {
		k := itemsKey(items)
		if id, ok := index[k]; ok {
			return id
		}
		id := int32(len(sets))
		index[k] = id
		sets = append(sets, items)
		d.st = append(d.st, rdstate{})
		return id
	}
	addSet(n.closure([]int32{start * 3}))
	for i := 0; i < len(sets); i++ {
		if len(sets) > maxDFAStates {
			panic(&reError{fmt.Sprintf("pattern or string constraint too large: over %d automaton states", maxDFAStates)})
		}
		items := sets[i]
		var rs []rrange
		for _, it := range items {
			if it/3 == accept {
				d.st[i].final = true
			}
			if it%3 == 2 {
				continue
			}
			for _, e := range n.edges[it/3] {
				rs = append(rs, e.set...)
			}
		}
		if len(rs) == 0 {
			continue
		}
		var edges []rdedge
		for _, iv := range elementary(rs) {
			var tgt []int32
			for _, it := range items {
				if it%3 == 2 {
					continue
				}
				for _, e := range n.edges[it/3] {
					if e.set.has(iv.lo) {
						tgt = append(tgt, e.to*3+1)
					}
				}
			}
			if len(tgt) == 0 {
				continue
			}
			slices.Sort(tgt)
			tgt = slices.Compact(tgt)
			to := addSet(n.closure(tgt))
			if k := len(edges); k > 0 && edges[k-1].to == to && edges[k-1].hi+1 == iv.lo {
				edges[k-1].hi = iv.hi
			} else {
				edges = append(edges, rdedge{iv.lo, iv.hi, to})
			}
		}
		d.st[i].edges = edges
	}
	return d.trim().minimize()
}

// trim removes states that are unreachable or cannot reach a final state.
func (d *rdfa) trim() *rdfa {
	n := len(d.st)
	rev := make([][]int32, n)
	for i, s := range d.st {
		for _, e := range s.edges {
			rev[e.to] = append(rev[e.to], int32(i))
		}
	}
	live := make([]bool, n)
	var stack []int32
	for i, s := range d.st {
		if s.final {
			live[i] = true
			stack = append(stack, int32(i))
		}
	}
	for len(stack) > 0 {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, p := range rev[x] {
			if !live[p] {
				live[p] = true
				stack = append(stack, p)
			}
		}
	}
	if !live[0] {
		return emptyDFA()
	}
	idx := make([]int32, n)
	for i := range idx {
		idx[i] = -1
	}
	order := []int32{0}
	idx[0] = 0
	for i := 0; i < len(order); i++ {
		for _, e := range d.st[order[i]].edges {
			if live[e.to] && idx[e.to] < 0 {
				idx[e.to] = int32(len(order))
				order = append(order, e.to)
			}
		}
	}
	out := &rdfa{st: make([]rdstate, len(order))}
	for ni, oi := range order {
		s := d.st[oi]
		out.st[ni].final = s.final
		for _, e := range s.edges {
			if idx[e.to] >= 0 {
				ne := rdedge{e.lo, e.hi, idx[e.to]}
				if k := len(out.st[ni].edges); k > 0 && out.st[ni].edges[k-1].to == ne.to && out.st[ni].edges[k-1].hi+1 == ne.lo {
					out.st[ni].edges[k-1].hi = ne.hi
				} else {
					out.st[ni].edges = append(out.st[ni].edges, ne)
				}
			}
		}
	}
	return out
}

// minimize merges equivalent states (Moore's partition refinement, with
// 128-bit signatures of (class, final, edges by class) per round).
func (d *rdfa) minimize() *rdfa {
	if order, ok := d.postOrder(); ok {
		return d.minimizeAcyclic(order)
	}
	return d.minimizeMoore()
}

// minimizeMoore is minimize by Moore's partition refinement (any DFA).
func (d *rdfa) minimizeMoore() *rdfa {
	n := len(d.st)
	cls := make([]int32, n)
	for i, s := range d.st {
		if s.final {
			cls[i] = 1
		}
	}
	cls, ncls := mooreRefine(d, cls)
	return d.quotient(cls, ncls)
}

// quotient merges d's states by class (ncls classes), numbering them by
// first state, the start's class first.
func (d *rdfa) quotient(cls []int32, ncls int) *rdfa {
	// renumber so that the start is 0
	ren := make([]int32, ncls)
	for i := range ren {
		ren[i] = -1
	}
	ren[cls[0]] = 0
	cnt := int32(1)
	for i := range d.st {
		if ren[cls[i]] < 0 {
			ren[cls[i]] = cnt
			cnt++
		}
	}
	out := &rdfa{st: make([]rdstate, ncls)}
	done := make([]bool, ncls)
	for i, s := range d.st {
		c := ren[cls[i]]
		if done[c] {
			continue
		}
		done[c] = true
		out.st[c].final = s.final
		for _, e := range s.edges {
			ne := rdedge{e.lo, e.hi, ren[cls[e.to]]}
			if k := len(out.st[c].edges); k > 0 && out.st[c].edges[k-1].to == ne.to && out.st[c].edges[k-1].hi+1 == ne.lo {
				out.st[c].edges[k-1].hi = ne.hi
			} else {
				out.st[c].edges = append(out.st[c].edges, ne)
			}
		}
	}
	return out
}

// mooreRefine refines the initial partition cls of d's states until stable;
// it returns the classes (numbered in order of first state) and their count.
func mooreRefine(d *rdfa, cls []int32) ([]int32, int) {
	cls, n, _ := mooreRefineCap(d, cls, -1)
	return cls, n
}

// mooreRefineCap is mooreRefine stopping after maxRounds rounds (< 0: no
// bound); ok is false if the partition was not stable by then.
func mooreRefineCap(d *rdfa, cls []int32, maxRounds int) ([]int32, int, bool) {
	n := len(d.st)
	type sig struct{ a, b uint64 }
	const p1, p2 = 0x100000001b3, 0x9E3779B97F4A7C15
	index := make(map[sig]int32, n)
	next := make([]int32, n)
	ncls := -1
	for {
		clear(index)
		for i := range d.st {
			s := &d.st[i]
			h1, h2 := uint64(14695981039346656037), uint64(0x84222325cbf29ce4)
			mix := func(x uint64) {
				h1 = (h1 ^ x) * p1
				h2 = (h2 ^ (x + 0x9E37)) * p2
				h2 ^= h2 >> 29
			}
			mix(uint64(uint32(cls[i])))
			mergedEdges(s, cls, func(lo, hi rune, to int32) {
				mix(uint64(uint32(lo)) | uint64(uint32(hi))<<32)
				mix(uint64(uint32(to)))
			})
			k := sig{h1, h2}
			id, ok := index[k]
			if !ok {
				id = int32(len(index))
				index[k] = id
			}
			next[i] = id
		}
		cls, next = next, cls
		if len(index) == ncls {
			return cls, ncls, true
		}
		ncls = len(index)
		if maxRounds--; maxRounds == 0 {
			return cls, ncls, false
		}
	}
}

// product builds the intersection (and) or union (!and) of a and b.
func product(a, b *rdfa, and bool) *rdfa {
	type pair struct{ x, y int32 }
	index := map[pair]int32{}
	var pairs []pair
	d := &rdfa{}
	add := func(p pair) int32 {
		if id, ok := index[p]; ok {
			return id
		}
		id := int32(len(pairs))
		index[p] = id
		pairs = append(pairs, p)
		d.st = append(d.st, rdstate{})
		return id
	}
	add(pair{0, 0})
	for i := 0; i < len(pairs); i++ {
		if len(pairs) > maxDFAStates {
			panic(&reError{fmt.Sprintf("string or number constraint too large: combining patterns, formats, enums and length bounds needs over %d automaton states", maxDFAStates)})
		}
		p := pairs[i]
		var ea, eb []rdedge
		fa, fb := false, false
		if p.x >= 0 {
			ea, fa = a.st[p.x].edges, a.st[p.x].final
		}
		if p.y >= 0 {
			eb, fb = b.st[p.y].edges, b.st[p.y].final
		}
		if and {
			d.st[i].final = fa && fb
		} else {
			d.st[i].final = fa || fb
		}
		var rs []rrange
		for _, e := range ea {
			rs = append(rs, rrange{e.lo, e.hi})
		}
		for _, e := range eb {
			rs = append(rs, rrange{e.lo, e.hi})
		}
		var edges []rdedge
		for _, iv := range elementary(rs) {
			tx, ty := int32(-1), int32(-1)
			if p.x >= 0 {
				tx = a.step(p.x, iv.lo)
			}
			if p.y >= 0 {
				ty = b.step(p.y, iv.lo)
			}
			if and && (tx < 0 || ty < 0) || tx < 0 && ty < 0 {
				continue
			}
			to := add(pair{tx, ty})
			if k := len(edges); k > 0 && edges[k-1].to == to && edges[k-1].hi+1 == iv.lo {
				edges[k-1].hi = iv.hi
			} else {
				edges = append(edges, rdedge{iv.lo, iv.hi, to})
			}
		}
		d.st[i].edges = edges
	}
	return d.trim().minimize()
}

// maxDFAStates bounds every code point automaton the compiler builds.
const maxDFAStates = 200000

func intersectDFA(a, b *rdfa) *rdfa { return product(a, b, true) }
func unionDFA(a, b *rdfa) *rdfa     { return product(a, b, false) }

// complementDFA is the complement of a within all strings over universe u.
func complementDFA(a *rdfa, u rset) *rdfa {
	d := &rdfa{st: make([]rdstate, len(a.st)+1)}
	sink := int32(len(a.st))
	for i, s := range a.st {
		d.st[i].final = !s.final
		var covered rset
		for _, e := range s.edges {
			lo, hi := e.lo, e.hi
			r := rset{{lo, hi}}.intersect(u)
			for _, x := range r {
				d.st[i].edges = append(d.st[i].edges, rdedge{x.lo, x.hi, e.to})
			}
			covered = append(covered, rrange{lo, hi})
		}
		for _, x := range u.minus(covered.norm()) {
			d.st[i].edges = append(d.st[i].edges, rdedge{x.lo, x.hi, sink})
		}
		slices.SortFunc(d.st[i].edges, func(p, q rdedge) int { return int(p.lo) - int(q.lo) })
	}
	d.st[sink].final = true
	for _, x := range u {
		d.st[sink].edges = append(d.st[sink].edges, rdedge{x.lo, x.hi, sink})
	}
	return d.trim().minimize()
}

// literalsDFA accepts exactly the given strings. It is built directly as a
// trie (deterministic by construction; object keys make this hot: one call
// per declared property) and minimized only when suffixes can be shared.
func literalsDFA(ss []string) *rdfa {
	if len(ss) == 1 { // a chain (minimal), its edges in one array
		rs := []rune(ss[0])
		d := &rdfa{st: make([]rdstate, len(rs)+1)}
		edges := make([]rdedge, len(rs))
		for i, r := range rs {
			edges[i] = rdedge{r, r, int32(i + 1)}
			d.st[i].edges = edges[i : i+1 : i+1]
		}
		d.st[len(rs)].final = true
		return d
	}
	d := &rdfa{st: make([]rdstate, 1, 1+len(ss)*8)}
	for _, s := range ss {
		d.st[d.trieInsert(s)].final = true
	}
	if len(ss) <= 1 {
		return d // a chain is minimal
	}
	return d.minimize() // (acyclic: one pass)
}

// postOrder returns d's states with every state after all the states its
// edges lead to, and false when d has a cycle.
func (d *rdfa) postOrder() ([]int32, bool) {
	n := len(d.st)
	const (
		unseen = iota
		open
		done
	)
	mark := make([]uint8, n)
	order := make([]int32, 0, n)
	type frame struct{ s, e int32 }
	var stack []frame
	for root := range n {
		if mark[root] != unseen {
			continue
		}
		stack = append(stack[:0], frame{int32(root), 0})
		mark[root] = open
		for len(stack) > 0 {
			f := &stack[len(stack)-1]
			es := d.st[f.s].edges
			if int(f.e) == len(es) {
				mark[f.s] = done
				order = append(order, f.s)
				stack = stack[:len(stack)-1]
				continue
			}
			t := es[f.e].to
			f.e++
			switch mark[t] {
			case open:
				return nil, false
			case unseen:
				mark[t] = open
				stack = append(stack, frame{t, 0})
			}
		}
	}
	return order, true
}

// mergedEdges calls f with s's edges by class of their targets, adjacent
// ranges to one class merged: a state's signature for minimization.
func mergedEdges(s *rdstate, cls []int32, f func(lo, hi rune, to int32)) {
	plo, phi, pto := rune(-1), rune(-1), int32(-1)
	for _, e := range s.edges {
		t := cls[e.to]
		if plo >= 0 && pto == t && phi+1 == e.lo {
			phi = e.hi
			continue
		}
		if plo >= 0 {
			f(plo, phi, pto)
		}
		plo, phi, pto = e.lo, e.hi, t
	}
	if plo >= 0 {
		f(plo, phi, pto)
	}
}

// minimizeAcyclic minimizes an acyclic DFA in one pass over order
// (postOrder): a state's class is given by its finality and its edges
// (adjacent ranges to one class merged, as Moore's signature does) to
// classes already known — instead of one refinement round per state on
// the longest path (number ranges, enums, formats of fixed shape).
func (d *rdfa) minimizeAcyclic(order []int32) *rdfa {
	cls := make([]int32, len(d.st))
	index := make(map[string]int32, len(d.st))
	var key []byte
	for _, i := range order {
		s := &d.st[i]
		key = key[:0]
		if s.final {
			key = append(key, 1)
		} else {
			key = append(key, 0)
		}
		mergedEdges(s, cls, func(lo, hi rune, to int32) {
			key = binary.LittleEndian.AppendUint32(key, uint32(lo))
			key = binary.LittleEndian.AppendUint32(key, uint32(hi))
			key = binary.LittleEndian.AppendUint32(key, uint32(to))
		})
		c, ok := index[string(key)]
		if !ok {
			c = int32(len(index))
			index[string(key)] = c
		}
		cls[i] = c
	}
	return d.quotient(cls, len(index))
}

// starDFA accepts every string over set s.
func starDFA(s rset) *rdfa {
	d := &rdfa{st: []rdstate{{final: true}}}
	for _, r := range s {
		d.st[0].edges = append(d.st[0].edges, rdedge{r.lo, r.hi, 0})
	}
	return d
}

// lengthDFA accepts strings over any rune with min..max code points (max <
// 0: unbounded).
func lengthDFA(minL, maxL int) *rdfa {
	top := minL
	if maxL >= 0 {
		top = maxL
	}
	d := &rdfa{st: make([]rdstate, top+1)}
	for i := 0; i <= top; i++ {
		d.st[i].final = i >= minL
		to := int32(i + 1)
		if i == top {
			if maxL >= 0 {
				continue
			}
			to = int32(i)
		}
		for _, r := range anyRune {
			d.st[i].edges = append(d.st[i].edges, rdedge{r.lo, r.hi, to})
		}
	}
	return d
}

// shortest returns a shortest accepted string and whether there is one.
func (d *rdfa) shortest() (string, bool) {
	type item struct {
		s    int32
		path []rune
	}
	seen := make([]bool, len(d.st))
	q := []item{{0, nil}}
	seen[0] = true
	for len(q) > 0 {
		it := q[0]
		q = q[1:]
		if d.st[it.s].final {
			return string(it.path), true
		}
		for _, e := range d.st[it.s].edges {
			if !seen[e.to] {
				seen[e.to] = true
				q = append(q, item{e.to, append(append([]rune(nil), it.path...), e.lo)})
			}
		}
	}
	return "", false
}

// toNFA copies d into n; returns start and the single accept state.
func (d *rdfa) toNFA(n *rnfa) (int32, int32) {
	base := int32(len(n.eps))
	for range d.st {
		n.add()
	}
	acc := n.add()
	for i, s := range d.st {
		for _, e := range s.edges {
			n.edge(base+int32(i), rset{{e.lo, e.hi}}, base+e.to)
		}
		if s.final {
			n.epsTo(base+int32(i), acc)
		}
	}
	return base, acc
}

// prefixClasses computes, once, the Moore classes of d with every state
// final (the prefix-closed languages) and the quotient automaton.
func (d *rdfa) prefixClasses() ([]int32, *rdfa) {
	d.pcOnce.Do(func() {
		all := d.allFinal()
		cls, ncls, _ := prefixPartition(all, -1)
		d.pcCls, d.pc = prefixQuotient(all, cls, ncls)
	})
	return d.pcCls, d.pc
}

// allFinal is d with every state final (its prefix-closed languages).
func (d *rdfa) allFinal() *rdfa {
	all := &rdfa{st: make([]rdstate, len(d.st))}
	for i, s := range d.st {
		all.st[i] = rdstate{edges: s.edges, final: true}
	}
	return all
}

// prefixQuotient is the quotient of all by its classes cls (ncls of them).
func prefixQuotient(all *rdfa, cls []int32, ncls int) ([]int32, *rdfa) {
	q := &rdfa{st: make([]rdstate, ncls)}
	done := make([]bool, ncls)
	for i, s := range all.st {
		c := cls[i]
		if done[c] {
			continue
		}
		done[c] = true
		q.st[c].final = true
		for _, e := range s.edges {
			ne := rdedge{e.lo, e.hi, cls[e.to]}
			if k := len(q.st[c].edges); k > 0 && q.st[c].edges[k-1].to == ne.to && q.st[c].edges[k-1].hi+1 == ne.lo {
				q.st[c].edges[k-1].hi = ne.hi
			} else {
				q.st[c].edges = append(q.st[c].edges, ne)
			}
		}
	}
	return cls, q
}

// tailClasses is a starting partition for Moore's refinement of d, every
// state final (prefixClasses): the states from which no cycle is reachable
// (finite languages) get their exact classes, 1, 2, ..., in one pass from
// the sinks back (as minimizeAcyclic); the others (infinite languages, so
// never equivalent to one of those) class 0, for Moore to split. Moore
// needs one round per state of the longest distinguishing path, and a
// counter such as [\p{L}…]{1,200} is a 200-state path: 200 rounds over
// every edge, a tenth of a second on a mask's first visit, where one pass
// does.
func tailClasses(d *rdfa) []int32 {
	cls, _ := tailClassesExact(d)
	return cls
}

// tailSigs computes, from the sinks back, a 128-bit signature of the
// prefix-closed language of every state that reaches no cycle: a hash of
// its edges merged by target language (adjacent ranges to equal languages
// joined, as mergedEdges joins them) with each target's own signature, so
// two states of any automata with the same finite prefix-closed language
// have the same signature (by induction on the length of their longest
// string). done counts the states signed; done == len(d.st) when no cycle
// is reachable anywhere (an enum's trie, a counter of fixed bounds).
func tailSigs(d *rdfa) (sigs []sig128, done int) {
	n := len(d.st)
	sigs = make([]sig128, n)
	out := make([]int32, n) // edges to states not yet signed
	start := make([]int32, n+1)
	for i, s := range d.st {
		out[i] = int32(len(s.edges))
		for _, e := range s.edges {
			start[e.to+1]++
		}
	}
	for i := range n {
		start[i+1] += start[i]
	}
	pred := make([]int32, start[n])
	fill := slices.Clone(start[:n])
	for i, s := range d.st {
		for _, e := range s.edges {
			pred[fill[e.to]] = int32(i)
			fill[e.to]++
		}
	}
	var queue []int32
	for i := range n {
		if out[i] == 0 {
			queue = append(queue, int32(i))
		}
	}
	for len(queue) > 0 {
		x := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		h := newHasher()
		h.mix(0x7461696c) // a domain of its own (canonKey's BFS hash is another)
		plo, phi, pto := rune(-1), rune(-1), sig128{}
		for _, e := range d.st[x].edges { // mergedEdges, by signature
			t := sigs[e.to]
			if plo >= 0 && pto == t && phi+1 == e.lo {
				phi = e.hi
				continue
			}
			if plo >= 0 {
				h.mix(uint64(uint32(plo)) | uint64(uint32(phi))<<32)
				h.mix(pto.a)
				h.mix(pto.b)
			}
			plo, phi, pto = e.lo, e.hi, t
		}
		if plo >= 0 {
			h.mix(uint64(uint32(plo)) | uint64(uint32(phi))<<32)
			h.mix(pto.a)
			h.mix(pto.b)
		}
		sigs[x] = h.sum()
		done++
		for _, p := range pred[start[x]:start[x+1]] {
			if out[p]--; out[p] == 0 {
				queue = append(queue, p)
			}
		}
	}
	return sigs, done
}

// tailClassesExact is tailClasses, and whether every state got its exact
// class (no cycle reachable anywhere), in which case the partition is
// already the prefix-closed one and Moore has nothing to do. Classes are
// numbered by tailSigs' signatures: a serialized key per state would be a
// map of strings the size of the automaton (a large enum's automaton has
// tens of thousands of states), paid on a mask's first visit.
func tailClassesExact(d *rdfa) ([]int32, bool) {
	sigs, done := tailSigs(d)
	cls := make([]int32, len(d.st))
	index := make(map[sig128]int32)
	var zero sig128
	for i, sg := range sigs {
		if sg == zero {
			continue // reaches a cycle: class 0
		}
		c, ok := index[sg]
		if !ok {
			c = int32(len(index) + 1)
			index[sg] = c
		}
		cls[i] = c
	}
	return cls, done == len(d.st)
}

// prefixPartition is the prefix-closed partition of all (every state
// final): tailClassesExact, then Moore's refinement (at most maxRounds
// rounds, < 0: no bound) unless the tail classes are exact already.
func prefixPartition(all *rdfa, maxRounds int) ([]int32, int, bool) {
	cls, exact := tailClassesExact(all)
	if !exact {
		return mooreRefineCap(all, cls, maxRounds)
	}
	ncls := 0
	for i := range cls {
		cls[i]--
		ncls = max(ncls, int(cls[i])+1)
	}
	return cls, ncls, true
}

// canonKey identifies the prefix-closed language from state si: a 128-bit
// hash of the quotient automaton renumbered breadth-first from si's class
// (a canonical form). It was that serialization itself, but for a large
// class under a counter it is a megabyte per state, kept in the interior
// cache; the rule cache trusts the same kind of hash.
func (d *rdfa) canonKey(si int32) sig128 {
	if d.prefixCheap() && d.msig != nil {
		return d.msig[si]
	}
	if k, ok := d.canon.Load(si); ok {
		return k.(sig128)
	}
	cls, q := d.prefixClasses()
	num := make([]int32, len(q.st))
	for i := range num {
		num[i] = -1
	}
	num[cls[si]] = 0
	order := []int32{cls[si]}
	h := newHasher()
	for i := 0; i < len(order); i++ {
		es := q.st[order[i]].edges
		h.mix(uint64(len(es)))
		for _, e := range es {
			id := num[e.to]
			if id < 0 {
				id = int32(len(order))
				num[e.to] = id
				order = append(order, e.to)
			}
			h.mix(uint64(uint32(e.lo)) | uint64(uint32(e.hi))<<32)
			h.mix(uint64(uint32(id)))
		}
	}
	k := h.sum()
	d.canon.Store(si, k)
	return k
}

// prefixFrom is the automaton of the prefix-closed language from si.
func (d *rdfa) prefixFromQ(si int32) *rdfa {
	cls, q := d.prefixClasses()
	start := cls[si]
	out := &rdfa{st: make([]rdstate, len(q.st))}
	for i, s := range q.st {
		out.st[i] = rdstate{edges: s.edges, final: true}
	}
	out.swapStart(start)
	return out.trim()
}

// taggedUnion is the DFA of the union of disjoint languages; tag[s] is the
// language a final state s accepts (-1 for non-final states). Product states
// are sparse tuples of (language, state) for the languages still alive
// (after a few code points, usually one), interned by hash.
func taggedUnion(langs []*rdfa) (*rdfa, []int32) {
	type item struct{ li, x int32 }
	var tuples [][]item
	byHash := map[uint64][]int32{}
	d := &rdfa{}
	var tags []int32
	add := func(t []item) int32 {
		h := uint64(14695981039346656037)
		for _, it := range t {
			h = (h ^ uint64(uint32(it.li))) * 0x100000001b3
			h = (h ^ uint64(uint32(it.x))) * 0x100000001b3
		}
		for _, id := range byHash[h] {
			if slices.Equal(tuples[id], t) {
				return id
			}
		}
		id := int32(len(tuples))
		byHash[h] = append(byHash[h], id)
		tuples = append(tuples, slices.Clone(t))
		d.st = append(d.st, rdstate{})
		tags = append(tags, -1)
		return id
	}
	start := make([]item, 0, len(langs))
	for li := range langs {
		start = append(start, item{int32(li), 0})
	}
	add(start)
	var rs []rrange
	var nt []item
	for i := 0; i < len(tuples); i++ {
		t := tuples[i]
		rs = rs[:0]
		for _, it := range t {
			st := &langs[it.li].st[it.x]
			if st.final {
				d.st[i].final = true
				tags[i] = it.li
			}
			for _, e := range st.edges {
				rs = append(rs, rrange{e.lo, e.hi})
			}
		}
		var edges []rdedge
		for _, iv := range elementary(rs) {
			nt = nt[:0]
			for _, it := range t {
				if y := langs[it.li].step(it.x, iv.lo); y >= 0 {
					nt = append(nt, item{it.li, y})
				}
			}
			if len(nt) == 0 {
				continue
			}
			to := add(nt)
			if k := len(edges); k > 0 && edges[k-1].to == to && edges[k-1].hi+1 == iv.lo {
				edges[k-1].hi = iv.hi
			} else {
				edges = append(edges, rdedge{iv.lo, iv.hi, to})
			}
		}
		d.st[i].edges = edges
		if len(tuples) > 200000 {
			panic(&reError{"key automaton too large"})
		}
	}
	return d, tags
}

// trieInsert adds s to the trie d (edges one code point each, sorted) and
// returns the state s ends in.
func (d *rdfa) trieInsert(s string) int32 {
	cur := int32(0)
	for _, r := range s {
		edges := d.st[cur].edges
		k, found := slices.BinarySearchFunc(edges, r, func(e rdedge, r rune) int { return int(e.lo) - int(r) })
		if found {
			cur = edges[k].to
			continue
		}
		nx := int32(len(d.st))
		d.st = append(d.st, rdstate{})
		d.st[cur].edges = slices.Insert(edges, k, rdedge{r, r, nx})
		cur = nx
	}
	return cur
}

// keyTrie is taggedUnion's result, built directly, for the common key
// categories: literal names (names[i] tagged tags[i], -1 for a name no
// category takes) and, with other ≥ 0, every other string tagged other
// (the complement of all the names). It is the names' trie, where every
// state that ends no name is an "other" key, and every code point no child
// takes leads to one state that accepts the rest: minimal already (every
// name leads to its own tag), and no product over one automaton per name.
func keyTrie(names []string, tags []int32, other int32) (*rdfa, []int32) {
	d := &rdfa{st: make([]rdstate, 1, 2+len(names)*8)}
	end := []int32{-2} // per state: the tag of the name ending there (-2: none)
	for i, s := range names {
		cur := d.trieInsert(s)
		for len(end) < len(d.st) {
			end = append(end, -2)
		}
		end[cur] = tags[i]
	}
	out := make([]int32, len(d.st), len(d.st)+1)
	for i := range out {
		switch {
		case end[i] != -2:
			out[i] = end[i]
		default:
			out[i] = other
		}
		d.st[i].final = out[i] >= 0
	}
	if other < 0 {
		return d, out
	}
	x := int32(len(d.st))
	rest := rdstate{final: true}
	for _, r := range anyRune {
		rest.edges = append(rest.edges, rdedge{r.lo, r.hi, x})
	}
	for i := range d.st {
		children := d.st[i].edges
		var edges []rdedge
		lo := rune(0)
		gap := func(hi rune) { // lo..hi goes to x, within anyRune
			for _, r := range anyRune {
				a, b := max(lo, r.lo), min(hi, r.hi)
				if a <= b {
					edges = append(edges, rdedge{a, b, x})
				}
			}
		}
		for _, c := range children {
			if c.lo > lo {
				gap(c.lo - 1)
			}
			edges = append(edges, c)
			lo = c.hi + 1
		}
		gap(maxRune)
		d.st[i].edges = edges
	}
	d.st = append(d.st, rest)
	out = append(out, other)
	return d, out
}

// sameCut reports whether the prefix-closed languages from states a and b
// agree on every string of at most n code points (within budget pairs of
// states; false when the budget is spent). A lockstep walk over pairs of
// quotient states, each pair met first at its smallest depth (breadth
// first): agreeing there to the cut means agreeing at any later depth.
func (d *rdfa) sameCut(a, b int32, n, budget int) bool {
	return sameCutDepth(d, a, d, b, n, budget) >= n
}

// sameCutDepth is how far (in code points, at most n) the prefix-closed
// languages from state a of da and state b of db agree, as sameCut
// checks it: for two states of one automaton, or a language and one walked
// before elsewhere. When the budget is spent it is the depth checked so
// far.
func sameCutDepth(da *rdfa, a int32, db *rdfa, b int32, n, budget int) int {
	qa, qb := da, db
	if da.prefixCheap() && db.prefixCheap() && da.msig != nil && db.msig != nil && da.msig[a] == db.msig[b] {
		return n // the same finite language
	}
	if da.prefixCheap() && da.msig == nil {
		cls, pc := da.prefixClasses()
		qa, a = pc, cls[a]
	}
	if db.prefixCheap() && db.msig == nil {
		cls, pc := db.prefixClasses()
		qb, b = pc, cls[b]
	}
	return cutWalk(qa, a, qb, b, n, budget)
}

// sameCutRaw is sameCutDepth on db itself, without its quotient: for a
// state of an automaton whose quotient is not built, compared with states
// walked before (interior). A trimmed automaton's prefix-closed language
// from a state is its set of paths, so the walk is the same on db as on
// its quotient, only over more pairs.
func sameCutRaw(da *rdfa, a int32, db *rdfa, b int32, n, budget int) int {
	qa := da
	if da.prefixCheap() && da.msig == nil {
		cls, pc := da.prefixClasses()
		qa, a = pc, cls[a]
	}
	return cutWalk(qa, a, db, b, n, budget)
}

// cutWalk is the lockstep walk of sameCutDepth over qa and qb. Its
// buffers are pooled: a mask's first visits compare many states, and each
// comparison's map was fresh memory.
func cutWalk(qa *rdfa, a int32, qb *rdfa, b int32, n, budget int) int {
	one := qa == qb // one automaton: a pair of equal states agrees
	if one && a == b {
		return n
	}
	w := cutWalkPool.Get().(*cutWalkBuf)
	defer cutWalkPool.Put(w)
	clear(w.seen)
	start := cutPair{a, b}
	w.seen[start] = struct{}{}
	cur, next := append(w.cur[:0], start), w.next[:0]
	defer func() { w.cur, w.next = cur[:0], next[:0] }()
	for depth := 0; depth < n && len(cur) > 0; depth++ {
		next = next[:0]
		for _, pr := range cur {
			ea, eb := qa.st[pr.p].edges, qb.st[pr.q].edges
			if len(ea) == 0 || len(eb) == 0 {
				if len(ea) != len(eb) {
					return depth
				}
				continue
			}
			// walk both edge lists as one sequence of segments; la, lb
			// are where the current edge of each side resumes
			i, j := 0, 0
			la, lb := ea[0].lo, eb[0].lo
			for i < len(ea) && j < len(eb) {
				if la != lb {
					return depth // one has code points the other has not
				}
				hi := min(ea[i].hi, eb[j].hi)
				if x, y := ea[i].to, eb[j].to; (!one || x != y) && depth+1 < n {
					np := cutPair{x, y}
					if _, ok := w.seen[np]; !ok {
						if len(w.seen) >= budget {
							return depth
						}
						w.seen[np] = struct{}{}
						next = append(next, np)
					}
				}
				if ea[i].hi == hi {
					if i++; i < len(ea) {
						la = ea[i].lo
					}
				} else {
					la = hi + 1
				}
				if eb[j].hi == hi {
					if j++; j < len(eb) {
						lb = eb[j].lo
					}
				} else {
					lb = hi + 1
				}
			}
			if i < len(ea) || j < len(eb) {
				return depth
			}
		}
		cur, next = next, cur
	}
	return n
}

type cutPair struct{ p, q int32 }

type cutWalkBuf struct {
	seen      map[cutPair]struct{}
	cur, next []cutPair
}

var cutWalkPool = sync.Pool{New: func() any { return &cutWalkBuf{seen: map[cutPair]struct{}{}} }}

// prefixCheap reports whether prefixClasses is cheap enough for a mask's
// first visit, and if so computes it. Moore's refinement needs one round
// per state on the longest distinguishing path (after tailClasses), each
// round over every edge: a word counter of 200 words is 400 rounds, too
// many for a mask. So the refinement runs at most maxPrefixRounds rounds; if it
// is not stable by then, interiors are walked on d itself (every state
// taken as final: the same language) and kept on d (cached by pattern, so
// a schema seen again still finds them). A bound on the rounds, not on the
// size: 500-state automata whose prefix closure is every string (one
// class, found in two rounds) must keep the shared interior of that class.
func (d *rdfa) prefixCheap() bool {
	d.cheapOnce.Do(func() {
		defer d.cheapDone.Store(true)
		if sigs, done := tailSigs(d); done == len(d.st) {
			// no cycle: every state's signature is a canonical key of its
			// prefix-closed language already, and the walk runs on d (the
			// same language): no quotient to build, no Moore, which on a
			// large enum's automaton would be most of its first visit.
			d.msig = sigs
			d.cheap = true
			return
		}
		if d.shared {
			// long-lived (formats, any string): paid once per process,
			// and their interiors are the most shared across schemas
			d.cheap = true
			return
		}
		all := d.allFinal()
		cls, ncls, ok := prefixPartition(all, maxPrefixRounds)
		if !ok {
			return
		}
		d.cheap = true
		d.pcOnce.Do(func() { d.pcCls, d.pc = prefixQuotient(all, cls, ncls) })
	})
	return d.cheap
}

// maxPrefixRounds bounds Moore's rounds on a mask's first visit.
const maxPrefixRounds = 48
