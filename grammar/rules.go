package grammar

import (
	"fmt"
	"math/bits"
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
	obj        *objInfo
	arr        *arrInfo
	// maskCache: *TokenizerInfo → *ruleMasks (see tokens.go); shared by
	// relocated copies of the rule (ToolCall), whose masks are the same.
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

// ---- ops: the checked edges ----

const (
	opKey      = iota + 1 // declared property arg: check not seen, mark
	opExtraKey            // undeclared property: count
	opObjComma            // another property must be possible
	opObjClose            // required, minProperties, dependentRequired
	opArrComma            // another item must be possible
	opArrClose            // minItems
	opStrMin              // string has at least arg code points
	opKeyAvail            // a declared property in mask is still allowed
)

type opDef struct {
	kind uint8
	arg  int32
	mask []uint64
	obj  *objInfo
	arr  *arrInfo
}

type objInfo struct {
	names    []string // declared (allowed) property names; bit i of seen
	reqMask  []uint64
	nreq     int
	minP     int
	maxP     int // -1 none
	extras   bool
	ordered  bool
	depReq   [][2]int // (if i seen) → j seen
	allMask  []uint64
	prevReq  [][]uint64 // ordered: required names declared before i
	reqAfter []int      // unused
}

type arrInfo struct {
	minI, maxI int
}

// actData is the immutable per-activation state of an object or array.
type actData struct {
	seen  []uint64
	count int32
	last  int32
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

// apply evaluates op on data; ok false rejects the edge.
func (o *opDef) apply(d *actData, cnt int32) (*actData, bool) {
	switch o.kind {
	case opKey:
		oi := o.obj
		i := int(o.arg)
		if hasBit(d.seen, i) {
			return nil, false
		}
		if oi.ordered {
			if int32(i) <= d.last {
				return nil, false
			}
			if popcountMissing(oi.prevReq[i], d.seen) > 0 {
				return nil, false
			}
		}
		nd := &actData{seen: make([]uint64, (len(oi.names)+63)/64), count: d.count + 1, last: d.last}
		copy(nd.seen, d.seen)
		nd.seen[i/64] |= 1 << (i % 64)
		if oi.ordered {
			nd.last = int32(i)
		}
		if oi.maxP >= 0 && int(nd.count)+popcountMissing(oi.reqMask, nd.seen) > oi.maxP {
			return nil, false
		}
		return nd, true
	case opExtraKey:
		oi := o.obj
		nd := &actData{seen: d.seen, count: d.count + 1, last: d.last}
		if oi.maxP >= 0 && int(nd.count)+popcountMissing(oi.reqMask, nd.seen) > oi.maxP {
			return nil, false
		}
		return nd, true
	case opObjComma:
		oi := o.obj
		if oi.maxP >= 0 && int(d.count) >= oi.maxP {
			return nil, false
		}
		if !oi.extras {
			// some declared name must remain (and be allowed by order)
			ok := false
			for i := range oi.names {
				if !hasBit(d.seen, i) && (!oi.ordered || int32(i) > d.last) {
					ok = true
					break
				}
			}
			if !ok {
				return nil, false
			}
		}
		return d, true
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
		for w, m := range o.mask {
			var s uint64
			if w < len(d.seen) {
				s = d.seen[w]
			}
			m &^= s
			if o.obj.ordered {
				for m != 0 {
					i := w*64 + bits.TrailingZeros64(m)
					if int32(i) > d.last {
						return d, true
					}
					m &= m - 1
				}
			} else if m != 0 {
				return d, true
			}
		}
		return nil, false
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
