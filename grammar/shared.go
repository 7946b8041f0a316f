package grammar

// Sharing a mask's simulations across configurations that differ only in
// their stacks (BENCHMARKS.md, "Worst-case mask time", measures what it
// saves).
//
// An ambiguous schema (a oneOf of two object shapes that both allow any
// key, recursive) keeps many configurations that agree on their top — rule,
// state, string counter, bookkeeping, depth — and differ only in the frames
// below: which branch was taken at each enclosing level. Their cached masks
// are the same, and so are their uncertain tokens; simulating each token
// from each configuration (a hundred configurations make tens of thousands
// of simulations per mask) repeats the same work for every stack.
//
// What a token does before it returns out of the top rule does not depend
// on the frames below (only on the depth, which the group shares). So a
// group is simulated once from its top with a stand-in frame in place of
// the stack (runCtx.stop): a path that survives without returning into the
// stand-in accepts the token for every member; a path that returns into it
// is recorded (where, escPoint) and continued per class of members whose
// next frame agrees (same rule, return state, op, bookkeeping and depth),
// again with a stand-in for what lies below — a trie of the stacks, built
// as far as tokens reach. A mask is the union over configurations, so only
// "does some member accept" is asked, and the first yes ends the search.
// If the simulation meets maxConfigs, the group falls back to simulating
// every member as before, so no answer depends on the sharing.

// stackNode is a set of frames at one level of the members' stacks (the
// frames above it agree). classes partitions them by frameTopEq, computed on
// the first return into this level; a class's below holds its members' next
// frames.
type stackNode struct {
	stacks  []*frame // all non-nil, all of one depth
	classes []*stackNode
	split   bool
	below   *stackNode // for a class: the next frames (nil at the root's)
	rets    []retMemo  // returns into this level, by byte and depth left
}

// retMemo is what the classes of a stackNode do just after a return into
// them by byte b with x.left = left, whatever the token: the bytes each
// class's configurations can take next (a byte none can take ends every
// token that returns there and continues with it), and whether some class
// survives the return itself (a token that ends there is accepted). ok is
// false where the closure met the cap, a return below the class's frame
// (into a stand-in) or read the output (uniqueItems): then every token is
// run as before.
//
// A free string's closing quote in an ambiguous object (dozens of object
// rules at the root, a thousand quote-crossing tokens) would make each
// token run from each class; almost all end at the byte after the quote.
type retMemo struct {
	b     byte
	left  int32
	ok    bool
	read  bool // not ok: the output was read
	end   bool
	alive bset256   // union over the classes
	cls   []bset256 // by class (classes order)
}

// retMemoOff turns retMemo off (tests compare the masks with and without).
var retMemoOff bool

type bset256 [4]uint64

func (s *bset256) has(b byte) bool { return s[b>>6]&(1<<(b&63)) != 0 }

// nextBytes adds to s every byte c takes on an edge (plain or checked,
// whatever the check says): stepOne produces nothing on any other byte.
func (g *Grammar) nextBytes(c *cfg, s *bset256) {
	sg, lr := g.seg(c.rule)
	r := sg.rules[lr]
	row := r.next[c.state*r.ncls : (c.state+1)*r.ncls]
	for b := 0; b < 256; b++ {
		if row[r.cls[b]] >= 0 {
			s[b>>6] |= 1 << (b & 63)
		}
	}
	for _, e := range r.spec[c.state] {
		for b := int(e.lo); b <= int(e.hi); b++ {
			s[b>>6] |= 1 << (b & 63)
		}
	}
}

// retMemo returns node's memo for a return by t[e.pos] with e.left,
// computing it on the first such return (nil: not ok).
func (tm *TokenMatcher) retMemo(node *stackNode, t []byte, e escPoint) *retMemo {
	if retMemoOff {
		return nil
	}
	b := t[e.pos]
	for i := range node.rets {
		if m := &node.rets[i]; m.b == b && m.left == e.left {
			if !m.ok {
				return nil
			}
			return m
		}
	}
	classes := node.partition()
	m := retMemo{b: b, left: e.left, ok: true, cls: make([]bset256, len(classes))}
	read := false
	for ki, k := range classes {
		f := k.stacks[0]
		x := &runCtx{base: tm.out, ext: t[:e.pos], left: e.left, rd: &read}
		data, ok := f.data, true
		if f.op != 0 {
			csg, _ := tm.g.seg(f.rule)
			data, ok = csg.ops[f.op].apply(f.data, 0, x, b)
		}
		if !ok {
			continue
		}
		// as the continuation below starts (plainRun, sharedRun)
		next := cfg{rule: f.rule, state: f.ret, data: data}
		if sub := k.below; sub != nil {
			if len(sub.stacks) == 1 {
				next.stack = sub.stacks[0]
			} else {
				next.stack = &frame{depth: sub.stacks[0].depth}
				x.stop = next.stack
			}
		}
		a := tm.g.add(nil, next, x, b)
		if x.capped || len(x.esc) > 0 || read {
			m.ok, m.read = false, read
			break
		}
		m.end = m.end || len(a) > 0
		for i := range a {
			tm.g.nextBytes(&a[i], &m.cls[ki])
		}
		for i, w := range m.cls[ki] {
			m.alive[i] |= w
		}
	}
	if !m.ok {
		m.cls = nil
	}
	node.rets = append(node.rets, m)
	if !m.ok {
		return nil
	}
	return &node.rets[len(node.rets)-1]
}

// frameTopEq: a and b lead to the same configuration when returned into
// (rule, return state, op, bookkeeping) with the same depth below.
func frameTopEq(a, b *frame) bool {
	return a.rule == b.rule && a.ret == b.ret && a.op == b.op && a.depth == b.depth &&
		(a.next == nil) == (b.next == nil) && dataEq(a.data, b.data)
}

func (n *stackNode) partition() []*stackNode {
	if n.split {
		return n.classes
	}
	n.split = true
	for _, f := range n.stacks {
		placed := false
		for _, k := range n.classes {
			if frameTopEq(k.stacks[0], f) {
				k.stacks = append(k.stacks, f)
				placed = true
				break
			}
		}
		if !placed {
			n.classes = append(n.classes, &stackNode{stacks: []*frame{f}})
		}
	}
	for _, k := range n.classes {
		if k.stacks[0].next != nil {
			k.below = &stackNode{}
			for _, f := range k.stacks {
				k.below.stacks = append(k.below.stacks, f.next)
			}
		}
	}
	return n.classes
}

// cfgGroup is the configurations of a mask that agree on their top.
type cfgGroup struct {
	rep  cfg        // one member (its own stack)
	node *stackNode // the members' stacks; nil while rep is alone
}

// topEq: a and b have the same top (and so the same cached mask and the
// same behaviour until a return below it).
func topEq(a, b *cfg) bool {
	return a.rule == b.rule && a.state == b.state && a.cnt == b.cnt && frameDepth(a) == frameDepth(b) &&
		(a.stack == nil) == (b.stack == nil) &&
		(a.stack == nil || a.stack.op == b.stack.op) && dataEq(a.data, b.data)
}

// groupCfgs partitions cs by top. Members with a nil stack are alone (two
// would be equal configurations, which add never keeps). Nothing is
// allocated for a configuration alone (the common case: one).
func groupCfgs(cs []cfg, out []cfgGroup) []cfgGroup {
	out = out[:0]
outer:
	for i := range cs {
		c := &cs[i]
		if c.stack != nil {
			for j := range out {
				g := &out[j]
				if g.rep.stack != nil && topEq(&g.rep, c) {
					if g.node == nil {
						g.node = &stackNode{stacks: []*frame{g.rep.stack}}
					}
					g.node.stacks = append(g.node.stacks, c.stack)
					continue outer
				}
			}
		}
		out = append(out, cfgGroup{rep: *c})
	}
	return out
}

// anyAccepts reports whether token bytes t are accepted from some member
// of group gr.
func (tm *TokenMatcher) anyAccepts(gr *cfgGroup, t []byte) bool {
	if gr.node == nil {
		return tm.ps.accepts(tm, &gr.rep, t)
	}
	ok, capped := tm.sharedRun(gr.rep, gr.node, t, -1, 0)
	if !capped {
		return ok
	}
	for _, f := range gr.node.stacks { // the old way, exactly
		c := gr.rep
		c.stack = f
		if tm.simulate(&c, t) {
			return true
		}
	}
	return false
}

// sharedRun simulates t from top (whose stack is replaced by a stand-in for
// node's stacks). from < 0: top is a configuration of the current set and
// the run starts at byte 0; else top was just returned into after byte
// t[from] (left as x.left was then) and is closed first. It reports whether
// some member accepts t, or capped when a run met maxConfigs.
func (tm *TokenMatcher) sharedRun(top cfg, node *stackNode, t []byte, from int, left int32) (ok, capped bool) {
	sc := tm.scratch()
	defer tm.release()
	sc.stop = frame{depth: node.stacks[0].depth}
	top.stack = &sc.stop
	x := &sc.x
	*x = runCtx{base: tm.out, stop: &sc.stop, esc: x.esc[:0]}
	a, b := sc.a[:0], sc.b[:0]
	i := 0
	if from < 0 {
		a = append(a, top)
	} else {
		x.ext, x.left = t[:from], left
		a = tm.g.add(a, top, x, t[from])
		x.left = 0
		i = from + 1
	}
	for ; i < len(t) && len(a) > 0; i++ {
		x.ext = t[:i]
		b = tm.g.step(a, t[i], b[:0], x)
		a, b = b, a
	}
	sc.a, sc.b = a, b
	if x.capped {
		return false, true
	}
	if len(a) > 0 {
		return true, false
	}
	esc := x.esc
	for _, e := range esc {
		b := t[e.pos]
		var c byte
		m := tm.retMemo(node, t, e)
		if m != nil {
			if int(e.pos)+1 == len(t) {
				if m.end {
					return true, false
				}
				continue
			}
			if c = t[e.pos+1]; !m.alive.has(c) {
				continue
			}
		}
		px := &runCtx{base: tm.out, ext: t[:e.pos], left: e.left}
		for ki, k := range node.partition() {
			if m != nil && !m.cls[ki].has(c) {
				continue
			}
			f := k.stacks[0]
			data, ok := f.data, true
			if f.op != 0 {
				csg, _ := tm.g.seg(f.rule)
				data, ok = csg.ops[f.op].apply(f.data, 0, px, b)
			}
			if !ok {
				continue
			}
			next := cfg{rule: f.rule, state: f.ret, data: data}
			sub := k.below
			var got, cp bool
			if sub == nil || len(sub.stacks) == 1 {
				if sub != nil {
					next.stack = sub.stacks[0]
				}
				got, cp = tm.plainRun(next, t, int(e.pos), e.left)
			} else {
				got, cp = tm.sharedRun(next, sub, t, int(e.pos), e.left)
			}
			if cp {
				return false, true
			}
			if got {
				return true, false
			}
		}
	}
	return false, false
}

// plainRun is sharedRun for a configuration returned into whose stack is
// one real stack (or none, the root's): no stand-in needed.
func (tm *TokenMatcher) plainRun(top cfg, t []byte, from int, left int32) (ok, capped bool) {
	sc := tm.scratch()
	defer tm.release()
	x := &sc.x
	*x = runCtx{base: tm.out, ext: t[:from], left: left, esc: x.esc[:0]}
	a := tm.g.add(sc.a[:0], top, x, t[from])
	x.left = 0
	b := sc.b[:0]
	for i := from + 1; i < len(t) && len(a) > 0; i++ {
		x.ext = t[:i]
		b = tm.g.step(a, t[i], b[:0], x)
		a, b = b, a
	}
	sc.a, sc.b = a, b
	return len(a) > 0, x.capped
}

// runScratch is one nesting level of sharedRun/plainRun's buffers, kept
// on the TokenMatcher: the runs of a mask allocate only the frames of the
// containers tokens open.
type runScratch struct {
	a, b []cfg
	x    runCtx
	stop frame
}

func (tm *TokenMatcher) scratch() *runScratch {
	if tm.nscr == len(tm.scr) {
		tm.scr = append(tm.scr, &runScratch{})
	}
	tm.nscr++
	return tm.scr[tm.nscr-1]
}

func (tm *TokenMatcher) release() { tm.nscr-- }

// prefixSim simulates the tokens of one configuration in turn, keeping the
// configuration set after each byte of the last token: the next token
// starts from the set after the bytes it shares with the last (the
// uncertain tokens come in trie order), and a prefix that left no
// configuration refuses every token that extends it. Where a byte opens a
// container of many alternatives, each alternative's frame was allocated
// again for every token behind it: after the comma of JsonSchemaStore
// golangci-lint's rule array, 521 tokens, 33,000 frames (1 MB) per mask.
// The sets are exactly simulate's: each is the step of the one before by
// the same byte with the same output (runCtx).
type prefixSim struct {
	c    cfg     // the configuration the sets start from
	ok   bool    // c is set (reset: a new configuration or mask)
	prev []byte  // the last token simulated
	sets [][]cfg // sets[i]: after prev[:i]; valid for i < n
	n    int
}

func (p *prefixSim) reset() { p.ok = false }

// accepts is simulate(c, t) with the sets of the last token reused.
func (p *prefixSim) accepts(tm *TokenMatcher, c *cfg, t []byte) bool {
	if !p.ok || !cfgEq(&p.c, c) || p.c.stack != c.stack || p.c.data != c.data {
		p.c, p.ok = *c, true
		p.prev, p.n = p.prev[:0], 0
	}
	if p.n == 0 {
		if len(p.sets) == 0 {
			p.sets = append(p.sets, nil)
		}
		p.sets[0] = append(p.sets[0][:0], *c)
		p.n = 1
	}
	k := 0 // sets[k] is after t[:k]
	for k < len(t) && k+1 < p.n && k < len(p.prev) && p.prev[k] == t[k] {
		k++
		if len(p.sets[k]) == 0 {
			return false // a refused prefix
		}
	}
	p.prev = append(p.prev[:k], t[k:]...)
	p.n = k + 1
	for i := k; i < len(t); i++ {
		if len(p.sets) == i+1 {
			p.sets = append(p.sets, nil)
		}
		p.sets[i+1] = tm.g.step(p.sets[i], t[i], p.sets[i+1][:0], &runCtx{base: tm.out, ext: t[:i]})
		p.n = i + 2
		if len(p.sets[i+1]) == 0 {
			return false
		}
	}
	return true
}
