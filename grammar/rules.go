package grammar

import (
	"fmt"
	"math/bits"
	"slices"
	"sync"
)

// A rule is one byte-level DFA: the root value, or one object or array
// shape. Plain transitions are a dense table over byte classes; checked
// edges and calls are short lists per state.

const (
	kindValue = iota
	kindObject
	kindArray
)

type strProv struct {
	sd *rdfa
	si int32
}

type rule struct {
	id    int32
	name  string
	kind  uint8
	ncls  int32
	cls   [256]uint8
	next  []int32 // state*ncls + class → state, -1 none
	final []bool
	lim   []int32 // ≥ 0: string content state with that code point limit
	rb    []bool  // code point boundary inside a string
	spec  [][]spEdge
	calls [][]callEdge
	// popOnly: final and nothing else to do here: the runtime returns at once.
	popOnly []bool
	// prov[s]: s is state si of string content DFA sd (nil: not a string
	// content state of a single string)
	prov []strProv
	// other[s]: bytes after which the walk from s cannot decide on plain
	// edges alone: checked edges, plus (mid-token) returns and calls.
	otherStart [][4]uint64
	otherMid   [][4]uint64
	first      [256]bool // bytes the start state can consume
	// sdist[s] (string content states): the fewest code points on a path
	// from s out of its string, so a configuration at s with counter cnt can
	// finish the string only if cnt+sdist[s] ≤ lim[s]; sdmax[s] is the
	// largest finite sdist of the content states reachable from s (masks
	// near the limit). needInf where the string cannot be left. slong[s]
	// is the most code points on a path from s out of its string (needInf
	// where a cycle is reachable): where cnt+slong[s] ≤ lim[s] the limit
	// cannot refuse anything the automaton allows (a pattern such as
	// [A-Z]{3} under maxLength 3), and the mask needs no check near it.
	sdist, sdmax, slong []int32
	obj                 *objInfo
	arr                 *arrInfo
	// maskCache: *TokenizerInfo → *ruleMasks (see tokens.go); shared by
	// the copies of a cached rule (cache.go), whose masks are the same.
	maskCache *sync.Map
}

func (r *rule) nstates() int { return len(r.final) }

func newRule(ds []dstate) *rule {
	r := &rule{maskCache: new(sync.Map)}
	// Byte classes: bytes with identical plain targets in every state. The
	// elementary intervals of all edge boundaries are grouped by a 128-bit
	// signature of (state, target) over the states whose edges cover them:
	// an order-independent sum of per-pair hashes, so the cost is the number
	// of (edge, interval) incidences, not states × intervals.
	n := len(ds)
	var mark [5]uint64
	mark[0] |= 1
	mark[4] |= 1 // 256
	for _, d := range ds {
		for _, e := range d.plain {
			mark[e.lo>>6] |= 1 << (e.lo & 63)
			hi := int(e.hi) + 1
			mark[hi>>6] |= 1 << (hi & 63)
		}
	}
	var ivOf [256]uint8 // byte → its elementary interval
	nIv := 0
	for b := 1; b <= 256; b++ {
		if mark[b>>6]&(1<<(b&63)) != 0 {
			nIv++
		}
		if b < 256 {
			ivOf[b] = uint8(nIv)
		}
	}
	sig := make([]sig128, nIv)
	for i, d := range ds {
		for _, e := range d.plain {
			x := uint64(uint32(i))<<32 | uint64(uint32(e.to))
			h1 := (x + 0x9E3779B97F4A7C15) * 0xBF58476D1CE4E5B9
			h1 ^= h1 >> 31
			h2 := (x ^ 0xD6E8FEB86659FD93) * 0x94D049BB133111EB
			h2 ^= h2 >> 29
			for k := ivOf[e.lo]; k <= ivOf[e.hi]; k++ {
				sig[k].a += h1
				sig[k].b += h2
			}
		}
	}
	ivCls := make([]uint8, nIv)
	byHash := make(map[sig128]uint8, nIv)
	for k, h := range sig {
		c, ok := byHash[h]
		if !ok {
			c = uint8(len(byHash))
			byHash[h] = c
		}
		ivCls[k] = c
	}
	for b := 0; b < 256; b++ {
		r.cls[b] = ivCls[ivOf[b]]
	}
	ncls := len(byHash)
	r.ncls = int32(ncls)
	r.next = make([]int32, n*ncls)
	for i := range r.next {
		r.next[i] = -1
	}
	for i, d := range ds {
		row := r.next[i*ncls : (i+1)*ncls]
		for _, e := range d.plain {
			for k := ivOf[e.lo]; k <= ivOf[e.hi]; k++ {
				row[ivCls[k]] = e.to
			}
		}
	}
	r.final = make([]bool, n)
	r.lim = make([]int32, n)
	r.rb = make([]bool, n)
	r.spec = make([][]spEdge, n)
	r.calls = make([][]callEdge, n)
	r.popOnly = make([]bool, n)
	r.prov = make([]strProv, n)
	r.otherStart = make([][4]uint64, n)
	r.otherMid = make([][4]uint64, n)
	for i, d := range ds {
		r.prov[i] = strProv{d.sd, d.si}
		for _, e := range d.spec {
			for b := int(e.lo); b <= int(e.hi); b++ {
				r.otherStart[i][b>>6] |= 1 << (b & 63)
			}
		}
		r.otherMid[i] = r.otherStart[i]
		if d.final || len(d.calls) > 0 {
			r.otherMid[i] = [4]uint64{^uint64(0), ^uint64(0), ^uint64(0), ^uint64(0)}
		}
		r.final[i] = d.final
		r.lim[i] = d.lim
		r.rb[i] = d.rb
		r.spec[i] = d.spec
		r.calls[i] = d.calls
		r.popOnly[i] = d.final && len(d.plain) == 0 && len(d.spec) == 0 && len(d.calls) == 0
	}
	r.sdist, r.sdmax, r.slong = stringDists(r)
	for _, e := range ds[0].plain {
		for b := int(e.lo); b <= int(e.hi); b++ {
			r.first[b] = true
		}
	}
	for _, e := range ds[0].spec {
		for b := int(e.lo); b <= int(e.hi); b++ {
			r.first[b] = true
		}
	}
	return r
}

// stringDists computes sdist, sdmax and slong (see rule): a 0-1 breadth-first
// search backwards from the content states that can leave their string,
// where a byte taken at a code point boundary (rb) costs one code point.
// The runtime counter (move) then never lets a configuration in that has
// too few code points left to finish: a pattern such as [a-z]+@[a-z]+ under
// a 64 code point bound must not fill 64 letters before the '@'.
func stringDists(r *rule) (sdist, sdmax, slong []int32) {
	n := r.nstates()
	sdist = make([]int32, n)
	sdmax = make([]int32, n)
	slong = make([]int32, n)
	var preds [][]int32
	var nsucc []int32 // content successors of s not yet given their slong
	var mark []int32  // mark[t] == s+1: s already a predecessor of t
	var queue []int32
	for s := 0; s < n; s++ {
		sdist[s] = needInf
		if r.lim[s] < 0 {
			continue
		}
		exits := false
		succ := func(t int32) {
			if t < 0 {
				return
			}
			if r.lim[t] < 0 {
				exits = true
				return
			}
			if preds == nil {
				preds, mark, nsucc = make([][]int32, n), make([]int32, n), make([]int32, n)
			}
			if mark[t] != int32(s)+1 {
				mark[t] = int32(s) + 1
				preds[t] = append(preds[t], int32(s))
				nsucc[s]++
			}
		}
		for c := int32(0); c < r.ncls; c++ {
			succ(r.next[int32(s)*r.ncls+c])
		}
		for _, e := range r.spec[s] {
			succ(e.to)
		}
		if exits || r.final[s] {
			sdist[s] = 0
			queue = append(queue, int32(s))
		}
	}
	if len(queue) == 0 {
		for s := range slong {
			slong[s] = needInf
		}
		return sdist, sdmax, slong
	}
	// slong: from the content states with no content successor back, a
	// state once all its successors are known; those on or before a cycle
	// (or only reaching states that cannot leave) stay needInf
	{
		var ready []int32
		for s := 0; s < n; s++ {
			slong[s] = needInf
			if r.lim[s] >= 0 && (nsucc == nil || nsucc[s] == 0) {
				ready = append(ready, int32(s))
			}
		}
		for len(ready) > 0 {
			u := ready[len(ready)-1]
			ready = ready[:len(ready)-1]
			// the most code points to a path end (an exit, or final: 0)
			// through successors already known; needInf when one is
			// unbounded, or when u can neither leave nor go on (dead)
			best, ends := int32(0), sdist[u] == 0
			to := func(t int32) {
				if t < 0 || r.lim[t] < 0 {
					return
				}
				l := slong[t]
				if l < needInf && r.rb[u] {
					l++
				}
				best, ends = max(best, l), true
			}
			for c := int32(0); c < r.ncls; c++ {
				to(r.next[u*r.ncls+c])
			}
			for _, e := range r.spec[u] {
				to(e.to)
			}
			if !ends {
				best = needInf
			}
			slong[u] = best
			if preds == nil {
				continue
			}
			for _, p := range preds[u] {
				if nsucc[p]--; nsucc[p] == 0 {
					ready = append(ready, p)
				}
			}
		}
	}
	// 0-1 BFS: a deque as two stacks of the current and the next distance
	for cur := queue; len(cur) > 0; {
		var nxt []int32
		for len(cur) > 0 {
			u := cur[len(cur)-1]
			cur = cur[:len(cur)-1]
			if preds == nil {
				continue
			}
			for _, p := range preds[u] {
				d := sdist[u]
				if r.rb[p] {
					d++
				}
				if d < sdist[p] {
					sdist[p] = d
					if d == sdist[u] {
						cur = append(cur, p)
					} else {
						nxt = append(nxt, p)
					}
				}
			}
		}
		cur = nxt
	}
	work := make([]int32, 0, n)
	for s := 0; s < n; s++ {
		if r.lim[s] >= 0 && sdist[s] < needInf {
			sdmax[s] = sdist[s]
			work = append(work, int32(s))
		}
	}
	for len(work) > 0 && preds != nil {
		u := work[len(work)-1]
		work = work[:len(work)-1]
		for _, p := range preds[u] {
			if sdist[p] < needInf && sdmax[u] > sdmax[p] {
				sdmax[p] = sdmax[u]
				work = append(work, p)
			}
		}
	}
	return sdist, sdmax, slong
}

// ---- ops: the checked edges ----

const (
	opKey           = iota + 1 // declared property arg: check not seen, mark
	opExtraKey                 // undeclared property: count
	opObjComma                 // another property must be possible
	opObjClose                 // required, minProperties, dependentRequired
	opArrComma                 // another item must be possible
	opArrClose                 // minItems
	opStrMin                   // string has at least arg code points
	opKeyAvail                 // a declared property in mask is still allowed
	opObjCommaExtra            // another property, and an undeclared one is possible
	opObjCommaDecl             // another property, only a declared one is possible
	opUOpen                    // "[" of a unique array: the first item starts after it
	opUComma                   // "," of a unique array: as opArrComma, the next item starts after it
	opUItem                    // the last byte of a unique array's item: not written before (arg: minLength of a string item)
)

type opDef struct {
	kind uint8
	arg  int32
	mask []uint64
	obj  *objInfo
	arr  *arrInfo
}

type objInfo struct {
	names   []string // declared (allowed) property names; bit i of seen
	reqMask []uint64
	nreq    int
	minP    int
	maxP    int // -1 none
	extras  bool
	ordered bool
	depReq  [][2]int // (if i seen) → j seen; j ≥ len(names): j can never be seen
	// valNeed[i]: the nested calls that writing declared property i's
	// value needs at least (depth.go's need of the state after its key and
	// colon); nil until the grammar's depths are computed, and then a
	// property whose value needs more than the depth left is not addable
	// (depthAware in depth.go).
	valNeed []int32
}

type arrInfo struct {
	minI, maxI int
}

// actData is the immutable per-activation state of an object or array.
type actData struct {
	seen  []uint64
	count int32
	last  int32
	// A uniqueItems array over an unbounded domain (unique.go): where the
	// current item's text starts in the bytes consumed, and the items
	// written so far.
	ustart int32
	useen  *itemSet
}

var emptyAct = &actData{last: -1}

func popcountMissing(req, seen []uint64) int {
	n := 0
	for i, w := range req {
		var s uint64
		if i < len(seen) {
			s = seen[i]
		}
		n += bits.OnesCount64(w &^ s)
	}
	return n
}

func hasBit(s []uint64, i int) bool { return i/64 < len(s) && s[i/64]&(1<<(i%64)) != 0 }

// Object bookkeeping and liveness.
//
// A checked edge of an object must not only say whether the property just
// written is allowed, but whether the object can still be completed after
// it: otherwise a random (or merely unlucky) model can walk into a key it
// cannot finish (an undeclared key when maxProperties leaves room only for
// the required ones) or write the last property allowed in declared order
// while minProperties still wants more. So every object check asks
// feasible: is there a set of further properties that satisfies required,
// dependentRequired, min/maxProperties (and, in declared order, the order)?
// Every configuration the matcher keeps is then feasible: the initial one
// (the object is satisfiable at compile time, or its keys are not built)
// and every one a check let through.

// mustAdd counts the properties that must still be added to an object
// with properties seen (plus declared property add, if ≥ 0): the required
// ones and, transitively, the dependencies (dependentRequired) of those
// seen or to be added; minMust is the lowest declared index among them
// (-1: none), must their set when there are dependencies (else nil: the
// required ones not seen). ok is false when a dependency can never be
// written.
func (oi *objInfo) mustAdd(seen []uint64, add int) (need, minMust int, must []uint64, ok bool) {
	minMust = -1
	if len(oi.depReq) == 0 {
		for w, r := range oi.reqMask {
			var sw uint64
			if w < len(seen) {
				sw = seen[w]
			}
			if add >= 0 && add/64 == w {
				sw |= 1 << (add % 64)
			}
			m := r &^ sw
			if m != 0 && minMust < 0 {
				minMust = w*64 + bits.TrailingZeros64(m)
			}
			need += bits.OnesCount64(m)
		}
		return need, minMust, nil, true
	}
	isSeen := func(i int) bool { return i == add || hasBit(seen, i) }
	must = slices.Clone(oi.reqMask)
	for i := range oi.names {
		if isSeen(i) {
			must[i/64] &^= 1 << (i % 64)
		}
	}
	for changed := true; changed; {
		changed = false
		for _, dr := range oi.depReq {
			if !isSeen(dr[0]) && !hasBit(must, dr[0]) {
				continue
			}
			if dr[1] >= len(oi.names) {
				return 0, -1, nil, false
			}
			if !isSeen(dr[1]) && !hasBit(must, dr[1]) {
				must[dr[1]/64] |= 1 << (dr[1] % 64)
				changed = true
			}
		}
	}
	for w, m := range must {
		if m != 0 && minMust < 0 {
			minMust = w*64 + bits.TrailingZeros64(m)
		}
		need += bits.OnesCount64(m)
	}
	return need, minMust, must, true
}

// feasible reports whether an object with properties seen (plus declared
// property add, if ≥ 0), count properties in all and last declared index
// last can still be completed.
func (oi *objInfo) feasible(seen []uint64, add int, count, last, left int32) bool {
	need, minMust, must, ok := oi.mustAdd(seen, add)
	if !ok {
		return false
	}
	if oi.valNeed != nil && left < needInf {
		// every property that must still come has to fit in the depth left
		req := must
		if req == nil {
			req = oi.reqMask
		}
		for i := range oi.names {
			if hasBit(req, i) && i != add && !hasBit(seen, i) && oi.valNeed[i] > left {
				return false
			}
		}
	}
	if oi.ordered && minMust >= 0 && int32(minMust) <= last {
		return false // a property that must come was skipped
	}
	total := int(count) + need
	if oi.maxP >= 0 && total > oi.maxP {
		return false
	}
	if total >= oi.minP {
		return true
	}
	if oi.maxP >= 0 && oi.minP > oi.maxP {
		return false
	}
	if oi.extras {
		return true
	}
	// more declared properties are needed for minProperties
	if must == nil {
		must = oi.reqMask
	}
	free := 0
	for i := range oi.names {
		if i != add && !hasBit(seen, i) && !hasBit(must, i) && (!oi.ordered || int32(i) > last) && !oi.tooDeep(i, left) {
			free++
		}
	}
	return total+free >= oi.minP
}

// keyAddable reports whether declared property i may be written next with
// the object still completable afterwards.
func (oi *objInfo) keyAddable(d *actData, i int, left int32) bool {
	if hasBit(d.seen, i) || oi.ordered && int32(i) <= d.last || oi.tooDeep(i, left) {
		return false
	}
	last := d.last
	if oi.ordered {
		last = int32(i)
	}
	return oi.feasible(d.seen, i, d.count+1, last, left)
}

// tooDeep reports whether property i's value needs more nesting than left.
func (oi *objInfo) tooDeep(i int, left int32) bool {
	return oi.valNeed != nil && oi.valNeed[i] > left
}

// extraAddable reports whether an undeclared property may be written next.
// (An undeclared value's need is taken as 0: a lower bound, never too
// strict.)
func (oi *objInfo) extraAddable(d *actData, left int32) bool {
	return oi.extras && oi.feasible(d.seen, -1, d.count+1, d.last, left)
}

// declAddable reports whether some declared property in mask (nil: any)
// may be written next.
func (oi *objInfo) declAddable(d *actData, mask []uint64, left int32) bool {
	for w := 0; w*64 < len(oi.names); w++ {
		m := ^uint64(0)
		if mask != nil {
			m = mask[w]
		}
		if w < len(d.seen) {
			m &^= d.seen[w]
		}
		if k := len(oi.names) - w*64; k < 64 {
			m &= 1<<k - 1
		}
		for ; m != 0; m &= m - 1 {
			if i := w*64 + bits.TrailingZeros64(m); oi.keyAddable(d, i, left) {
				return true
			}
		}
	}
	return false
}

// apply evaluates op on data; ok false rejects the edge.
func (o *opDef) apply(d *actData, cnt int32, x *runCtx, b byte) (*actData, bool) {
	switch o.kind {
	case opUOpen:
		return &actData{count: d.count, last: -1, ustart: x.pos() + 1}, true
	case opUComma:
		if o.arr.maxI >= 0 && int(d.count)+1 >= o.arr.maxI {
			return nil, false
		}
		return &actData{count: d.count + 1, last: -1, ustart: x.pos() + 1, useen: d.useen}, true
	case opUItem:
		if cnt < o.arg {
			return nil, false
		}
		return uniqueItemEnd(d, x, b)
	case opKey:
		oi := o.obj
		i := int(o.arg)
		if !oi.keyAddable(d, i, x.depthLeft()) {
			return nil, false
		}
		nd := &actData{seen: make([]uint64, (len(oi.names)+63)/64), count: d.count + 1, last: d.last}
		copy(nd.seen, d.seen)
		nd.seen[i/64] |= 1 << (i % 64)
		if oi.ordered {
			nd.last = int32(i)
		}
		return nd, true
	case opExtraKey:
		if !o.obj.extraAddable(d, x.depthLeft()) {
			return nil, false
		}
		return &actData{seen: d.seen, count: d.count + 1, last: d.last}, true
	case opObjComma:
		oi := o.obj
		l := x.depthLeft()
		return d, oi.extraAddable(d, l) || oi.declAddable(d, nil, l)
	case opObjCommaExtra:
		return d, o.obj.extraAddable(d, x.depthLeft())
	case opObjCommaDecl:
		oi := o.obj
		l := x.depthLeft()
		return d, !oi.extraAddable(d, l) && oi.declAddable(d, nil, l)
	case opObjClose:
		oi := o.obj
		if popcountMissing(oi.reqMask, d.seen) > 0 || int(d.count) < oi.minP {
			return nil, false
		}
		for _, dr := range oi.depReq {
			if hasBit(d.seen, dr[0]) && !hasBit(d.seen, dr[1]) {
				return nil, false
			}
		}
		return d, true
	case opArrComma:
		if o.arr.maxI >= 0 && int(d.count)+1 >= o.arr.maxI {
			return nil, false
		}
		return &actData{count: d.count + 1, last: -1}, true
	case opArrClose:
		if int(d.count)+1 < o.arr.minI {
			return nil, false
		}
		return d, true
	case opStrMin:
		return d, cnt >= o.arg
	case opKeyAvail:
		return d, o.obj.declAddable(d, o.mask, x.depthLeft())
	}
	return nil, false
}

func (o *opDef) String() string {
	switch o.kind {
	case opKey:
		return "key " + o.obj.names[o.arg]
	case opExtraKey:
		return "undeclared key: maxProperties"
	case opObjComma:
		return "another property possible"
	case opObjCommaExtra:
		return "another property possible, an undeclared one too"
	case opObjCommaDecl:
		return "another property possible, only a declared one"
	case opObjClose:
		return "close object: required, minProperties, dependentRequired"
	case opArrComma:
		return "item count: maxItems"
	case opArrClose:
		return "close array: minItems"
	case opStrMin:
		return fmt.Sprintf("minLength %d", o.arg)
	case opKeyAvail:
		return "key prefix of an unused property"
	}
	return "?"
}

// deadRule is a rule with one state and no way out: what a grammar that
// failed to build is, so that a matcher reaching it stops (depth.go drops
// a configuration that cannot finish).
func deadRule() *rule {
	r := newRule([]dstate{{lim: -1}})
	r.name = "failed"
	return r
}
