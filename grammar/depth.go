package grammar

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
	g.depthOnce.Do(func() { g.depth = computeDepths(g.rules, g.entryNeed) })
	return g.depth
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
