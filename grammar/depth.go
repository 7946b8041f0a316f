package grammar

import (
	"fmt"
	"unicode/utf8"
)

// Nesting depth and liveness.
//
// Containers nest at most Options.MaxDepth deep: a call into a nested rule
// is taken only below that depth (machine.go). That alone can leave the
// matcher in a dead configuration: an object opened at the limit accepts a
// key and a colon, and then its value needs one more call. To stay live,
// every configuration must still be able to finish within the depth it has
// left, so the matcher drops a configuration whose rule state needs more
// nested calls to reach its end than remain (need[rule][state] > MaxDepth -
// depth). need is the fewest nested calls on any path from the state to the
// rule's end, computed once per grammar by a backward worklist: plain and
// checked edges cost nothing (checks are assumed to pass, so need is a lower
// bound and the pruning never drops a configuration that could finish), a
// call costs one more than the callee's entry needs, and the path goes on
// from the call's return state.
//
// Assuming that checks pass is sound because the checks themselves keep the
// matcher live: an object check lets a property through only if the object
// can still be completed after it (objInfo.feasible in rules.go), and a
// string's counter only if the code points left reach the closing quote
// (stringDists). The three together are the liveness invariant: every
// configuration the matcher keeps can reach the end of the output. (Not
// covered: a required property whose value can never be completed, e.g. an
// object whose own required properties exceed its maxProperties — the
// schema is unsatisfiable there, which the compiler does not propagate to
// the parent — or one that needs more nesting than is left.)

const needInf = int32(1 << 29)

type depthInfo struct {
	need    [][]int32 // [rule][state]
	maxNeed []int32   // [rule]: the largest finite need of its states
}

func (g *Grammar) depths() *depthInfo {
	g.depthOnce.Do(func() {
		g.depth = computeDepths(g.rules, g.entryNeed)
		g.valueNeeds()
	})
	return g.depth
}

// valueNeeds sets each object's valNeed: what writing a declared
// property's value needs, read as need at the state its key and colon lead
// to from the object's start. Without it the object's checks only knew
// which keys were used, not how deep their values go, so at the depth
// limit a comma could lead to the one key left whose value cannot be
// opened there (a recursive "headers" property, the last one not written):
// a dead end. A key that cannot be walked (an unusual encoding) keeps 0, a
// lower bound.
func (g *Grammar) valueNeeds() {
	for ri, r := range g.rules {
		oi := r.obj
		if oi == nil || oi.valNeed != nil || len(r.next) == 0 {
			continue
		}
		vn := make([]int32, len(oi.names))
		for i, name := range oi.names {
			if t := r.keyValueState(g.ops, i, name); t >= 0 {
				vn[i] = min(g.depth.need[ri][t], needInf)
			}
		}
		oi.valNeed = vn
	}
}

// keyValueState walks "{", then key i written canonically, then ":" from
// r's start, through plain edges and those checked edges that belong to
// key i; the state reached, or -1.
func (r *rule) keyValueState(ops []opDef, i int, name string) int32 {
	path := append([]byte{'{', '"'}, strRunesKey(name)...)
	s := int32(0)
	for _, b := range path {
		if s = r.walkByte(ops, s, b, i, false); s < 0 {
			return -1
		}
	}
	if s = r.walkByte(ops, s, '"', i, true); s < 0 {
		return -1
	}
	return r.walkByte(ops, s, ':', i, false)
}

// walkByte is the state after b from s: the plain edge, else a checked
// edge on b that is not another key's (at the closing quote, with close,
// key i's own).
func (r *rule) walkByte(ops []opDef, s int32, b byte, i int, close bool) int32 {
	if !close {
		if t := r.next[s*r.ncls+int32(r.cls[b])]; t >= 0 {
			return t
		}
	}
	for _, e := range r.spec[s] {
		if e.lo > b || b > e.hi {
			continue
		}
		o := &ops[e.op]
		if o.kind == opKey && int(o.arg) != i || o.kind == opExtraKey {
			continue
		}
		if close && !(o.kind == opKey && int(o.arg) == i) {
			continue
		}
		return e.to
	}
	if close { // a key without a check of its own
		if t := r.next[s*r.ncls+int32(r.cls[b])]; t >= 0 {
			return t
		}
	}
	return -1
}

// strRunesKey is name as the grammar writes it inside a string: raw UTF-8
// but for '"', '\\' and the controls, escaped.
func strRunesKey(name string) []byte {
	var out []byte
	for _, c := range name {
		switch {
		case c == '"' || c == '\\':
			out = append(out, '\\', byte(c))
		case c < 0x20:
			if l := escLetter[c]; l != 0 {
				out = append(out, '\\', l)
			} else {
				out = fmt.Appendf(out, `\u%04x`, c)
			}
		default:
			out = utf8.AppendRune(out, c)
		}
	}
	return out
}

// entryNeed is the need of the entry of another segment's rule id (a
// tool's arguments, called from a tool-call root): its real need once the
// tool is built, else 0, a lower bound (so never too strict; a tool whose
// arguments need more nesting than is left is then a dead end after its
// name, where a built one would not be offered).
func (g *Grammar) entryNeed(id int32) int32 {
	s := g.subs[id>>segShift-1]
	if !s.built.Load() {
		return 0
	}
	return s.depths().need[id&localMask][0]
}

func computeDepths(rules []*rule, entryNeed func(id int32) int32) *depthInfo {
	type site struct{ r, s int32 }
	R := len(rules)
	need := make([][]int32, R)
	preds := make([][][]int32, R)
	retSites := make([][][]int32, R)
	entrySites := make([][]site, R)
	var work []site
	for ri, r := range rules {
		if r == nil {
			continue
		}
		n := r.nstates()
		need[ri] = make([]int32, n)
		preds[ri] = make([][]int32, n)
		retSites[ri] = make([][]int32, n)
		mark := make([]int32, n)
		for s := 0; s < n; s++ {
			need[ri][s] = needInf
			edge := func(t int32) {
				if t >= 0 && mark[t] != int32(s)+1 {
					mark[t] = int32(s) + 1
					preds[ri][t] = append(preds[ri][t], int32(s))
				}
			}
			for c := int32(0); c < r.ncls; c++ {
				edge(r.next[int32(s)*r.ncls+c])
			}
			for _, e := range r.spec[s] {
				edge(e.to)
			}
			for _, ce := range r.calls[s] {
				if ce.rule>>segShift == 0 { // (another segment's entry is fixed here: entryNeed)
					entrySites[ce.rule] = append(entrySites[ce.rule], site{int32(ri), int32(s)})
				}
				retSites[ri][ce.ret] = append(retSites[ri][ce.ret], int32(s))
			}
		}
		for s := 0; s < n; s++ {
			if r.final[s] {
				need[ri][s] = 0
				work = append(work, site{int32(ri), int32(s)})
			}
		}
	}
	viaCalls := func(ri, s int32) int32 {
		best := needInf
		for _, ce := range rules[ri].calls[s] {
			var entry int32
			if ce.rule>>segShift != 0 {
				entry = entryNeed(ce.rule)
			} else {
				entry = need[ce.rule][0]
			}
			v := max(1+entry, need[ri][ce.ret])
			best = min(best, v)
		}
		return best
	}
	relax := func(ri, s, v int32) {
		if v < need[ri][s] {
			need[ri][s] = v
			work = append(work, site{ri, s})
		}
	}
	for len(work) > 0 {
		x := work[len(work)-1]
		work = work[:len(work)-1]
		v := need[x.r][x.s]
		for _, p := range preds[x.r][x.s] {
			relax(x.r, p, v)
		}
		for _, p := range retSites[x.r][x.s] {
			relax(x.r, p, viaCalls(x.r, p))
		}
		if x.s == 0 {
			for _, st := range entrySites[x.r] {
				relax(st.r, st.s, viaCalls(st.r, st.s))
			}
		}
	}
	di := &depthInfo{need: need, maxNeed: make([]int32, R)}
	for ri := range need {
		for _, v := range need[ri] {
			if v < needInf && v > di.maxNeed[ri] {
				di.maxNeed[ri] = v
			}
		}
	}
	return di
}

// frameDepth is the nesting depth of configuration c (0 at the root).
func frameDepth(c *cfg) int32 {
	if c.stack == nil {
		return 0
	}
	return c.stack.depth
}
