package grammar

// The runtime: a set of configurations (rule, state, string counter,
// activation data, call stack), advanced byte by byte. Calls into nested
// containers and returns from finished ones are taken eagerly (closure), so
// every configuration in a set waits on a byte.

type frame struct {
	rule, ret int32
	op        int32 // checked on the return (callEdge.op)
	depth     int32
	data      *actData
	next      *frame
}

type cfg struct {
	rule, state int32
	cnt         int32
	data        *actData
	stack       *frame
}

func dataEq(a, b *actData) bool {
	if a == b {
		return true
	}
	if a == nil || b == nil || a.count != b.count || a.last != b.last || len(a.seen) != len(b.seen) || a.ustart != b.ustart || !a.useen.equal(b.useen) {
		return false
	}
	for i := range a.seen {
		if a.seen[i] != b.seen[i] {
			return false
		}
	}
	return true
}

func stackEq(a, b *frame) bool {
	for a != b {
		if a == nil || b == nil || a.rule != b.rule || a.ret != b.ret || a.op != b.op || !dataEq(a.data, b.data) {
			return false
		}
		a, b = a.next, b.next
	}
	return true
}

func cfgEq(a, b *cfg) bool {
	return a.rule == b.rule && a.state == b.state && a.cnt == b.cnt && dataEq(a.data, b.data) && stackEq(a.stack, b.stack)
}

const maxConfigs = 512

// add puts c and its closure into out. A configuration that cannot reach
// its rule's end within the nesting depth left is dropped (depth.go), so
// the matcher never gets stuck at the depth limit.
// x and b are the output so far and the byte just consumed, for a return
// that is checked (callEdge.op).
func (g *Grammar) add(out []cfg, c cfg, x *runCtx, b byte) []cfg {
	sg, lr := g.seg(c.rule)
	if frameDepth(&c)+sg.depths().need[lr][c.state] > int32(g.opts.MaxDepth) {
		return out
	}
	r := sg.rules[lr]
	if r.final[c.state] && c.stack != nil {
		f := c.stack
		if x != nil && f == x.stop {
			// the frame below is abstracted (shared.go): record where the
			// token leaves it and let the caller continue per real frame
			x.escape()
			if r.popOnly[c.state] {
				return out
			}
			goto keep
		}
		data, ok := f.data, true
		if f.op != 0 {
			csg, _ := g.seg(f.rule)
			data, ok = csg.ops[f.op].apply(f.data, 0, x, b)
		}
		if ok {
			out = g.add(out, cfg{rule: f.rule, state: f.ret, data: data, stack: f.next}, x, b)
		}
		if r.popOnly[c.state] {
			return out
		}
	}
keep:
	for i := range out {
		if cfgEq(&out[i], &c) {
			return out
		}
	}
	if len(out) >= maxConfigs {
		if x != nil {
			x.capped = true
		}
		return out
	}
	out = append(out, c)
	if calls := r.calls[c.state]; len(calls) > 0 {
		var depth int32
		if c.stack != nil {
			depth = c.stack.depth
		}
		if int(depth) < g.opts.MaxDepth {
			segBits := c.rule &^ localMask
			for _, ce := range calls {
				out = g.add(out, cfg{rule: ce.rule | segBits, data: emptyAct, stack: &frame{rule: c.rule, ret: ce.ret, op: ce.op, depth: depth + 1, data: c.data, next: c.stack}}, x, b)
			}
		}
	}
	return out
}

// move applies the counter rule for a transition s→t in r: inside a
// string, a byte leaving a code point boundary starts a code point. A
// transition after which the string cannot be finished within its limit
// (rules.go, sdist) is refused.
func move(r *rule, s, t int32, c *cfg) bool {
	if r.lim[t] < 0 {
		c.cnt = 0
		return true
	}
	if r.lim[s] < 0 {
		c.cnt = 0
		return r.sdist[t] <= r.lim[t]
	}
	if r.rb[s] { // a new code point starts at this byte
		c.cnt++
	}
	return c.cnt+r.sdist[t] <= r.lim[t]
}

// runCtx gives the checked edges the bytes consumed so far: uniqueItems
// over an unbounded domain compares an item's text with the items before
// it (unique.go), which no automaton state can hold. base is what the
// matcher has accepted; ext the bytes of the step being tried before the
// current byte (a token's prefix, forced bytes).
type runCtx struct {
	base, ext []byte
	// left is the nesting depth left to the configuration whose edge is
	// being checked, plus one (0: not known, taken as unbounded); stepOne
	// sets it (an object's key checks, depth.go).
	left int32
	// stop, when set, is a stand-in for the frames below a configuration
	// shared by several (shared.go): a return into it is not taken but
	// recorded in esc (position of the byte, left at that point).
	stop   *frame
	esc    []escPoint
	capped bool // add dropped a configuration at maxConfigs
	// rd, when set, is set to true when a checked edge reads the output
	// (pos, text: uniqueItems): a result computed with it unset holds for
	// any output before (shared.go, retMemo).
	rd *bool
}

// escPoint is where a simulation returned into the stand-in frame: after
// the byte at pos (x.ext's length), with x.left as it was.
type escPoint struct{ pos, left int32 }

func (x *runCtx) escape() {
	p := escPoint{int32(len(x.ext)), x.left}
	for _, e := range x.esc {
		if e == p {
			return
		}
	}
	x.esc = append(x.esc, p)
}

// depthLeft is the nesting left to the checked configuration (needInf
// when not known).
func (x *runCtx) depthLeft() int32 {
	if x == nil || x.left == 0 {
		return needInf
	}
	return x.left - 1
}

// pos is the position of the current byte in the whole output.
func (x *runCtx) pos() int32 {
	if x == nil {
		return -1
	}
	if x.rd != nil {
		*x.rd = true
	}
	return int32(len(x.base) + len(x.ext))
}

// text returns the output from position from to the current byte b
// inclusive.
func (x *runCtx) text(from int32, b byte) []byte {
	if x == nil || from < 0 {
		return nil
	}
	if x.rd != nil {
		*x.rd = true
	}
	var out []byte
	if int(from) < len(x.base) {
		out = append(out, x.base[from:]...)
		out = append(out, x.ext...)
	} else if k := int(from) - len(x.base); k <= len(x.ext) {
		out = append(out, x.ext[k:]...)
	}
	return append(out, b)
}

// stepOne advances one configuration by b, appending results to out.
func (g *Grammar) stepOne(c *cfg, b byte, out []cfg, x *runCtx) []cfg {
	sg, lr := g.seg(c.rule)
	r := sg.rules[lr]
	s := c.state
	if t := r.next[s*r.ncls+int32(r.cls[b])]; t >= 0 {
		nc := *c
		nc.state = t
		if move(r, s, t, &nc) {
			out = g.add(out, nc, x, b)
		}
	}
	if len(r.spec[s]) > 0 && x != nil {
		x.left = int32(g.opts.MaxDepth) - frameDepth(c) + 1
	}
	for i := range r.spec[s] {
		e := &r.spec[s][i]
		if e.lo <= b && b <= e.hi {
			nd, ok := sg.ops[e.op].apply(c.data, c.cnt, x, b)
			if !ok {
				continue
			}
			nc := *c
			nc.state = e.to
			nc.data = nd
			if move(r, s, e.to, &nc) {
				out = g.add(out, nc, x, b)
			}
		}
	}
	if x != nil {
		x.left = 0
	}
	return out
}

func (g *Grammar) step(in []cfg, b byte, out []cfg, x *runCtx) []cfg {
	for i := range in {
		out = g.stepOne(&in[i], b, out, x)
	}
	return out
}

func (g *Grammar) initial() []cfg {
	return g.add(nil, cfg{rule: g.root, data: emptyAct}, nil, 0)
}

func (g *Grammar) accepting(cs []cfg) bool {
	for i := range cs {
		c := &cs[i]
		if c.stack == nil && c.rule == g.root && g.rules[c.rule].final[c.state] {
			return true
		}
	}
	return false
}

// forced returns the bytes forced from cs (at most limit) after the
// output base.
func (g *Grammar) forced(cs []cfg, limit int, base []byte) []byte {
	var out []byte
	var buf []cfg
	for len(out) < limit && !g.accepting(cs) {
		var only int = -1
		var next []cfg
		for b := 0; b < 256; b++ {
			buf = g.step(cs, byte(b), buf[:0], &runCtx{base: base, ext: out})
			if len(buf) > 0 {
				if only >= 0 {
					return out
				}
				only = b
				next = append([]cfg(nil), buf...)
			}
		}
		if only < 0 {
			return out
		}
		out = append(out, byte(only))
		cs = next
	}
	return out
}
