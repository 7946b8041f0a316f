package grammar

import (
	"fmt"
	"slices"
	"sync"
	"unicode/utf8"
)

// The build stage: IR nodes become rules. Primitive values are inlined as
// byte paths into the rule of the enclosing container; each object or array
// alternative becomes (once) its own rule, called from where a value starts.

type builder struct {
	c        *compiler
	opts     Options
	rules    []*rule
	ops      []opDef
	objRules map[*objCons]int32
	arrRules map[*arrCons]int32
	pending  []func() error
	nonEmpty map[*rdfa]*rdfa
	anyReady bool // rule 3 (any value) may be called
	shared   bool // building the shared any-value rules (no MaxContainerItems bound)
	// what lowerAll found per container, for the rules built later
	objCats  map[*objCons]objCats
	arrItems map[*arrCons]arrItems
	witOK    map[*objCons]bool // witness.go
}

type objCats struct {
	cats    []keyCat
	allowed []string
}

// arrItems are an array's item values: pos[i] at index i, then rest (nil:
// no more items).
type arrItems struct {
	pos  []*node
	rest *node
	// uniq: the item values of a uniqueItems array enforced exactly
	// (unique.go); nil when uniqueness needs no automaton or was loosened
	uniq []*node
	// ustr: a uniqueItems array of strings the matcher keeps unique
	// (unique.go, uniqueStrings)
	ustr bool
	// con: the items split by a contains (contains.go); nil without one
	con *containsItems
}

// Rules 1 and 2 of every grammar are "any object" and "any array"; they
// depend only on the options, so they are built once and shared.
const (
	anyObjRule = 1
	anyArrRule = 2
	anyValRule = 3
)

var anyRules sync.Map // options key → [3]*rule

func newBuilder(c *compiler) *builder {
	b := newBuilderShared(c)
	if c.opts.MaxContainerItems > 0 {
		// Open values are bounded too: they get rules of their own, with
		// the bound's checked edges (rules 1..3 stay the unbounded shared
		// ones, unused here).
		delete(b.objRules, c.anyObj)
		delete(b.arrRules, c.anyArr)
		b.anyReady = false
	}
	return b
}

func newBuilderShared(c *compiler) *builder {
	b := &builder{c: c, opts: c.opts, ops: []opDef{{}}, objRules: map[*objCons]int32{}, arrRules: map[*arrCons]int32{}, nonEmpty: map[*rdfa]*rdfa{}}
	key := c.opts.key()
	if v, ok := anyRules.Load(key); ok {
		rs := v.([3]*rule)
		b.rules = []*rule{nil, rs[0], rs[1], rs[2]}
		b.objRules[c.anyObj] = anyObjRule
		b.arrRules[c.anyArr] = anyArrRule
		b.anyReady = true
		return b
	}
	// build them in a private builder at the same indices
	pb := &builder{c: c, opts: c.opts, ops: []opDef{{}}, objRules: map[*objCons]int32{}, arrRules: map[*arrCons]int32{}, nonEmpty: map[*rdfa]*rdfa{}, shared: true}
	pb.rules = []*rule{nil}
	pb.objRule(c.anyObj)
	pb.arrRule(c.anyArr)
	pb.anyReady = true
	pb.reserve(kindValue, "any-value", func(id int32) (*bnfa, error) {
		n := newNFA()
		s0 := n.add()
		F := n.add()
		n.st[F].final = true
		pb.anyReady = false
		pb.fragment(n, c.anyNode(), s0, F)
		pb.anyReady = true
		return n, nil
	})
	if err := pb.run(); err != nil {
		panic(fmt.Sprintf("grammar: building the any-value rules: %v", err))
	}
	for _, r := range pb.rules[1:] {
		for _, sp := range r.spec {
			if len(sp) > 0 {
				panic("grammar: the any-value rules must not have checked edges")
			}
		}
	}
	pb.rules[1].name, pb.rules[2].name = "any-object", "any-array"
	rs := [3]*rule{pb.rules[1], pb.rules[2], pb.rules[3]}
	anyRules.Store(key, rs)
	b.rules = []*rule{nil, rs[0], rs[1], rs[2]}
	b.objRules[c.anyObj] = anyObjRule
	b.arrRules[c.anyArr] = anyArrRule
	b.anyReady = true
	return b
}

// isAny reports whether nd accepts every JSON value.
func (b *builder) isAny(nd *node) bool {
	c := b.c
	if nd == c.anyMemo {
		return true
	}
	return nd.null && nd.tru && nd.fal && nd.str != nil && nd.str.d == c.anyStr && nd.str.min == 0 && nd.str.max < 0 &&
		nd.num == c.freeNum && len(nd.objs) == 1 && nd.objs[0] == c.anyObj && len(nd.arrs) == 1 && nd.arrs[0] == c.anyArr && len(nd.lits) == 0
}

func (b *builder) op(o opDef) int32 {
	b.ops = append(b.ops, o)
	return int32(len(b.ops) - 1)
}

func (b *builder) ws(n *bnfa, x, y int32) {
	n.eps(x, y)
	if b.opts.Whitespace != WhitespaceFlexible {
		return
	}
	cur := x
	for i := 0; i < b.opts.MaxWhitespace; i++ {
		nx := n.add()
		for _, c := range []byte(" \t\n\r") {
			n.edge(cur, c, c, nx, 0)
		}
		n.eps(nx, y)
		cur = nx
	}
}

func (b *builder) strLim(sc *strCons) int32 {
	if sc.max >= 0 {
		return int32(min(sc.max, 1<<30))
	}
	if b.opts.MaxStringBytes < 0 {
		return 1 << 30
	}
	// the default bound never makes the string unsatisfiable (minLength, or
	// a pattern or format whose shortest string is longer)
	lo, _ := sc.d.lenRange()
	return int32(min(max(b.opts.MaxStringBytes, sc.min, lo), 1<<30))
}

// atLeastOne is sc's language, without the empty string when sc.min is 1
// (a length the automaton carries; a longer minimum is checked at the
// closing quote), built once per language.
func (b *builder) atLeastOne(sc *strCons) *rdfa {
	if sc.min != 1 {
		return sc.d
	}
	ne, ok := b.nonEmpty[sc.d]
	if !ok {
		ne = intersectDFA(sc.d, lengthDFA(1, -1))
		b.nonEmpty[sc.d] = ne
	}
	return ne
}

func (b *builder) strFrag(n *bnfa, sc *strCons, x, y int32) {
	d := b.atLeastOne(sc)
	var closeOp int32
	if sc.min > 1 {
		closeOp = b.op(opDef{kind: opStrMin, arg: int32(sc.min)})
	}
	if d.isEmpty() {
		return
	}
	n.str(d, x, y, b.strLim(sc), closeOp)
}

// fragKey is the shape of a value whose fragment has no container
// alternatives but one object or array: two values with the same key have
// the same fragment (the same byte paths, the same calls, ops alike).
type fragKey struct {
	null, tru, fal bool
	sd             *rdfa
	smin, smax     int
	num            *rdfa
	obj            *objCons
	arr            *arrCons
}

func fragKeyOf(nd *node) (fragKey, bool) {
	if len(nd.lits) > 0 || len(nd.objs)+len(nd.arrs) > 1 {
		return fragKey{}, false
	}
	k := fragKey{null: nd.null, tru: nd.tru, fal: nd.fal, num: nd.num, smin: -1, smax: -1}
	if nd.str != nil {
		k.sd, k.smin, k.smax = nd.str.d, nd.str.min, nd.str.max
	}
	if len(nd.objs) > 0 {
		k.obj = nd.objs[0]
	}
	if len(nd.arrs) > 0 {
		k.arr = nd.arrs[0]
	}
	return k, true
}

func (b *builder) fragment(n *bnfa, nd *node, x, y int32) {
	if b.anyReady && b.isAny(nd) {
		n.st[x].calls = append(n.st[x].calls, bcall{anyValRule, y, 0})
		return
	}
	if nd.null {
		n.lit(x, "null", y)
	}
	if nd.tru {
		n.lit(x, "true", y)
	}
	if nd.fal {
		n.lit(x, "false", y)
	}
	if nd.str != nil {
		b.strFrag(n, nd.str, x, y)
	}
	if nd.num != nil {
		n.ascii(nd.num, x, y)
	}
	for _, o := range nd.objs {
		n.st[x].calls = append(n.st[x].calls, bcall{b.objRule(o), y, 0})
	}
	for _, a := range nd.arrs {
		n.st[x].calls = append(n.st[x].calls, bcall{b.arrRule(a), y, 0})
	}
	for _, l := range nd.lits {
		n.lit(x, l, y)
	}
}

func (b *builder) reserve(kind uint8, name string, body func(id int32) (*bnfa, error)) int32 {
	b.rules = append(b.rules, nil)
	return b.reserveAt(int32(len(b.rules)-1), kind, name, body)
}

func (b *builder) reserveAt(id int32, kind uint8, name string, body func(id int32) (*bnfa, error)) int32 {
	b.pending = append(b.pending, func() error {
		n, err := body(id)
		if err != nil {
			return err
		}
		key := n.hash()
		tmpl := ruleCacheGet(key)
		if tmpl == nil {
			rs := ruleScratchPool.Get().(*ruleScratch)
			ds, err := determinizeWith(n, 0, &rs.det)
			n.release()
			if err != nil {
				rs.release()
				label := name
				if label == "" {
					label = [...]string{"value", "object", "array"}[kind]
				}
				return fmt.Errorf("%s rule %d: %w", label, id, err)
			}
			ms := minimizeWith(ds, &rs.min)
			tmpl = newRule(ms)
			rs.release()
			ruleCachePut(key, tmpl)
		} else {
			n.release()
		}
		r := new(rule)
		*r = *tmpl // shares the tables and the mask cache
		r.id, r.kind, r.name = id, kind, name
		if old := b.rules[id]; old != nil {
			r.obj, r.arr = old.obj, old.arr
		}
		b.rules[id] = r
		return nil
	})
	return id
}

// ruleScratch is the memory of one rule's subset construction and
// minimization, reused by the next build (a rule keeps only what newRule
// makes and minimization's checked edges and calls).
type ruleScratch struct {
	det detScratch
	min minScratch
}

var ruleScratchPool = sync.Pool{New: func() any { return new(ruleScratch) }}

// release returns rs to the pool unless it grew very large.
func (rs *ruleScratch) release() {
	if cap(rs.det.ds) <= 1<<15 && cap(rs.min.out) <= 1<<15 {
		ruleScratchPool.Put(rs)
	}
}

type keyCat struct {
	lang *rdfa // a pattern category's keys (nil when declared: the name)
	decl int   // index in objInfo.names, -1 undeclared
	nd   *node
	// other (lang nil): the category of every string but these names (no
	// automaton: see keyTrie); otherMin is its shortest key's length
	other    []string
	otherMin int
}

// categories returns oc's key categories (computed once: lowerAll, then
// the rule).
func (b *builder) categories(oc *objCons) ([]keyCat, []string) {
	if x, ok := b.objCats[oc]; ok {
		return x.cats, x.allowed
	}
	cats, allowed := b.objCategories(oc)
	if b.objCats == nil {
		b.objCats = map[*objCons]objCats{}
	}
	b.objCats[oc] = objCats{cats, allowed}
	return cats, allowed
}

func (b *builder) objCategories(oc *objCons) ([]keyCat, []string) {
	c := b.c
	var names []string
	addName := func(n string) {
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	for _, p := range oc.parts {
		for _, pd := range p.props {
			addName(pd.name)
		}
	}
	for _, r := range oc.required {
		addName(r)
	}
	for k, deps := range oc.depReq {
		addName(k)
		for _, d := range deps {
			addName(d)
		}
	}
	var cats []keyCat
	var allowed []string
	for _, name := range names {
		refs, ok := c.propRefs(oc, name)
		if !ok {
			continue
		}
		nd := c.conjRefs(refs)
		if nd.isEmpty() {
			continue
		}
		cats = append(cats, keyCat{decl: len(allowed), nd: nd}) // lang: the name (keyDFA)
		allowed = append(allowed, name)
	}
	if b.opts.Strict {
		return cats, allowed
	}
	// plain: the undeclared keys are every string but the names (no
	// propertyNames, no patternProperties); their category needs no
	// automaton of its own (keyTrie builds the keys directly)
	plain := true
	for _, p := range oc.parts {
		if p.names != nil || len(p.patterns) > 0 {
			plain = false
		}
	}
	var u *rdfa
	if !plain {
		u = c.anyStr
		if len(names) > 0 {
			u = complementDFA(literalsDFA(names), anyRune)
		}
	}
	var pats []patDef
	var patPart []int
	for pi, p := range oc.parts {
		if p.names != nil {
			u = intersectDFA(u, p.names)
		}
		for _, pt := range p.patterns {
			pats = append(pats, pt)
			patPart = append(patPart, pi)
		}
	}
	if !plain && u.isEmpty() {
		return cats, allowed
	}
	if len(pats) > 6 {
		c.unsupported("", "patternProperties", "more than 6 patterns on one object")
		pats = pats[:6]
	}
	for mask := 0; mask < 1<<len(pats); mask++ {
		lang := u
		if plain { // (one category, mask 0)
			var refs []sref
			forbidden := false
			for _, p := range oc.parts {
				if p.addlFalse {
					forbidden = true
				} else if p.addl != nil {
					refs = append(refs, *p.addl)
				}
			}
			if nd := c.conjRefs(refs); !forbidden && !nd.isEmpty() {
				minLen := 0
				if slices.Contains(names, "") {
					minLen = 1
				}
				cats = append(cats, keyCat{decl: -1, nd: nd, other: names, otherMin: minLen})
			}
			break
		}
		for i, pt := range pats {
			if mask&(1<<i) != 0 {
				lang = intersectDFA(lang, pt.d)
			} else {
				lang = intersectDFA(lang, complementDFA(pt.d, anyRune))
			}
			if lang.isEmpty() {
				break
			}
		}
		if lang.isEmpty() {
			continue
		}
		var refs []sref
		forbidden := false
		for pi, p := range oc.parts {
			matched := false
			for i, pt := range pats {
				if patPart[i] == pi && mask&(1<<i) != 0 {
					refs = append(refs, pt.s)
					matched = true
				}
			}
			if !matched {
				if p.addlFalse {
					forbidden = true
				} else if p.addl != nil {
					refs = append(refs, *p.addl)
				}
			}
		}
		if forbidden {
			continue
		}
		nd := c.conjRefs(refs)
		if nd.isEmpty() {
			continue
		}
		cats = append(cats, keyCat{lang: lang, decl: -1, nd: nd})
	}
	return cats, allowed
}

// keyDFA is the tagged key automaton of cats (taggedUnion of their
// languages): built directly as a trie when the categories are declared
// names and at most the "every other string" one, the common case.
func keyDFA(cats []keyCat, allowed []string) (*rdfa, []int32) {
	other := int32(-1)
	for j, ct := range cats {
		if ct.decl < 0 && ct.lang == nil {
			other = int32(j)
		}
	}
	if other < 0 {
		for _, ct := range cats {
			if ct.decl < 0 { // pattern categories
				langs := make([]*rdfa, len(cats))
				for j, ct := range cats {
					langs[j] = ct.lang
					if ct.decl >= 0 {
						langs[j] = literalsDFA([]string{allowed[ct.decl]})
					}
				}
				return taggedUnion(langs)
			}
		}
	}
	var names []string
	var tags []int32
	if other >= 0 {
		names = cats[other].other // every name the other keys exclude...
		tags = make([]int32, len(names))
		for i := range tags {
			tags[i] = -1 // ...not a key unless a category below takes it
		}
	}
	for j, ct := range cats {
		if ct.decl < 0 {
			continue
		}
		name := allowed[ct.decl]
		if k := slices.Index(names, name); k >= 0 {
			tags[k] = int32(j)
		} else {
			names = append(names, name)
			tags = append(tags, int32(j))
		}
	}
	return keyTrie(names, tags, other)
}

func (b *builder) objRule(oc *objCons) int32 {
	if id, ok := b.objRules[oc]; ok {
		return id
	}
	id := b.reserve(kindObject, "", func(id int32) (*bnfa, error) {
		cats, allowed := b.categories(oc)
		oi := &objInfo{names: allowed, minP: oc.minP, maxP: oc.maxP, ordered: b.opts.PropertyOrder == DeclaredOrder}
		words := (len(allowed) + 63) / 64
		oi.reqMask = make([]uint64, words)
		unsat := false
		for _, r := range oc.required {
			i := slices.Index(allowed, r)
			if i < 0 {
				unsat = true // a required property that no value satisfies
				continue
			}
			oi.reqMask[i/64] |= 1 << (i % 64)
		}
		for k, deps := range oc.depReq {
			i := slices.Index(allowed, k)
			if i < 0 {
				continue
			}
			for _, d := range deps {
				j := slices.Index(allowed, d)
				if j < 0 {
					j = len(allowed) + 1 // impossible: never seen
					oi.depReq = append(oi.depReq, [2]int{i, j})
					continue
				}
				oi.depReq = append(oi.depReq, [2]int{i, j})
			}
		}
		for _, ct := range cats {
			if ct.decl < 0 {
				oi.extras = true
			}
		}
		if m := b.opts.MaxContainerItems; m > 0 && oi.maxP < 0 && !b.shared {
			// the generation bound, applied here and not to the schema's
			// constraints (where conjunctions would take the smaller one);
			// it leaves room for what is required
			need, _, _, _ := oi.mustAdd(nil, -1)
			oi.maxP = max(m, oi.minP, need)
		}
		b.rules[id] = &rule{obj: oi}
		n := newNFA()
		s0 := n.add()
		s1 := n.add()
		n.lit(s0, "{", s1)
		s2 := n.add()
		b.ws(n, s1, s2)
		F := n.add()
		n.st[F].final = true
		if unsat || !oi.feasible(nil, -1, 0, -1, needInf) {
			return n, nil // no way to complete: the matcher drops "{" (depth.go)
		}
		var closeOp int32
		if oi.nreq = popcountMissing(oi.reqMask, nil); oi.nreq > 0 || oi.minP > 0 || len(oi.depReq) > 0 {
			closeOp = b.op(opDef{kind: opObjClose, obj: oi})
		}
		witness := b.witnessOK(oc) // (witness.go: the entry is the other copy's)
		if oi.nreq == 0 && oi.minP == 0 && !witness {
			n.edge(s2, '}', '}', F, closeOp)
		}
		// Keys. Where maxProperties can leave room for the required
		// properties only, whether an undeclared key may still come is
		// decided at the comma: KS starts a key of any category, KD (split)
		// one of a declared property only, so that no key is entered that
		// cannot be finished (see feasible in rules.go). The first key's
		// start is known at compile time.
		var declIdx []int
		for i, ct := range cats {
			if ct.decl >= 0 {
				declIdx = append(declIdx, i)
			}
		}
		split := oi.extras && oi.maxP >= 0 && len(declIdx) > 0
		KS := n.add()
		KD := int32(-1)
		if split {
			KD = n.add()
		}
		switch {
		case witness:
		case oi.extraAddable(emptyAct, needInf):
			n.eps(s2, KS)
		case oi.declAddable(emptyAct, nil, needInf):
			if split {
				n.eps(s2, KD)
			} else {
				n.eps(s2, KS)
			}
		}
		W := n.add()
		X := n.add()
		b.ws(n, W, X)
		lim := int32(b.opts.MaxStringBytes)
		if lim < 0 {
			lim = 1 << 30
		}
		for _, ct := range cats { // every key category stays writable
			lo := ct.otherMin
			if ct.decl >= 0 {
				lo = utf8.RuneCountInString(allowed[ct.decl])
			} else if ct.lang != nil {
				lo, _ = ct.lang.lenRange()
			}
			lim = max(lim, int32(min(lo, 1<<30)))
		}
		var extraOp int32
		if oi.maxP >= 0 || oi.minP > 0 {
			extraOp = b.op(opDef{kind: opExtraKey, obj: oi})
		}
		targets := make([]int32, len(cats))
		ops := make([]int32, len(cats))
		for i, ct := range cats {
			targets[i] = n.add()
			ops[i] = extraOp
			if ct.decl >= 0 {
				ops[i] = b.op(opDef{kind: opKey, arg: int32(ct.decl), obj: oi})
			}
		}
		keys := func(start int32, idx []int) {
			sub := make([]keyCat, len(idx))
			tg := make([]int32, len(idx))
			op := make([]int32, len(idx))
			for j, i := range idx {
				sub[j], tg[j], op[j] = cats[i], targets[i], ops[i]
			}
			kd, tags := keyDFA(sub, allowed)
			avail, same := b.keyAvailOps(kd, tags, sub, oi)
			n.strTagged(kd, tags, start, tg, op, lim, avail, same)
		}
		if len(cats) > 0 {
			all := make([]int, len(cats))
			for i := range all {
				all[i] = i
			}
			keys(KS, all)
			if split {
				keys(KD, declIdx)
			}
		}
		vals := map[fragKey]int32{}
		for i, ct := range cats {
			A := targets[i]
			A2 := n.add()
			b.ws(n, A, A2)
			V0 := n.add()
			n.lit(A2, ":", V0)
			V := n.add()
			b.ws(n, V0, V)
			// values of the same shape share one fragment: most
			// properties are plain strings or numbers, and a copy each was
			// most of an object rule's automaton before minimization
			if k, ok := fragKeyOf(ct.nd); ok {
				if e, ok := vals[k]; ok {
					n.eps(V, e)
					continue
				}
				vals[k] = V
			}
			b.fragment(n, ct.nd, V, W)
		}
		if split {
			Y := n.add()
			n.edge(X, ',', ',', Y, b.op(opDef{kind: opObjCommaExtra, obj: oi}))
			b.ws(n, Y, KS)
			YD := n.add()
			n.edge(X, ',', ',', YD, b.op(opDef{kind: opObjCommaDecl, obj: oi}))
			b.ws(n, YD, KD)
		}
		var commaOp int32
		if !split {
			if oi.maxP >= 0 || !oi.extras {
				commaOp = b.op(opDef{kind: opObjComma, obj: oi})
			}
			Y := n.add()
			n.edge(X, ',', ',', Y, commaOp)
			b.ws(n, Y, KS)
		}
		n.edge(X, '}', '}', F, closeOp)
		if witness {
			b.witnessCopy(n, oc, cats, allowed, oi, s2, W, lim, extraOp, commaOp)
		}
		return n, nil
	})
	b.objRules[oc] = id
	b.rules[id] = &rule{}
	return id
}

func (b *builder) arrRule(ac *arrCons) int32 {
	if id, ok := b.arrRules[ac]; ok {
		return id
	}
	id := b.reserve(kindArray, "", func(id int32) (*bnfa, error) {
		ai := &arrInfo{minI: ac.minI, maxI: ac.maxI}
		if m := b.opts.MaxContainerItems; m > 0 && ai.maxI < 0 && !b.shared {
			ai.maxI = max(m, ai.minI) // the generation bound (see objRule)
		}
		b.rules[id] = &rule{arr: ai}
		it := b.items(ac)
		pos, rest := it.pos, it.rest
		maxLen := -1 // unbounded
		if rest == nil {
			maxLen = len(pos)
		}
		if ai.maxI >= 0 && (maxLen < 0 || ai.maxI < maxLen) {
			maxLen = ai.maxI
		}
		n := newNFA()
		s0 := n.add()
		s1 := n.add()
		var openOp int32
		if it.ustr {
			openOp = b.op(opDef{kind: opUOpen})
		}
		n.edge(s0, '[', '[', s1, openOp)
		s2 := n.add()
		b.ws(n, s1, s2)
		F := n.add()
		n.st[F].final = true
		if ai.minI == 0 && it.con == nil { // contains needs an item
			n.edge(s2, ']', ']', F, 0)
		}
		if maxLen == 0 || maxLen >= 0 && maxLen < ai.minI {
			return n, nil
		}
		var closeOp, commaOp int32
		if ai.minI > 1 {
			closeOp = b.op(opDef{kind: opArrClose, arr: ai})
		}
		if it.ustr {
			commaOp = b.op(opDef{kind: opUComma, arr: ai})
		} else if ai.maxI >= 0 || ai.minI > 1 {
			commaOp = b.op(opDef{kind: opArrComma, arr: ai})
		}
		if it.uniq != nil {
			b.uniqueArr(n, it.uniq, ai.minI, maxLen, s2, F)
			return n, nil
		}
		if it.con != nil {
			b.containsArr(n, it, maxLen, s2, F, closeOp, commaOp)
			return n, nil
		}
		cur := s2
		for i, nd := range pos {
			if maxLen >= 0 && i >= maxLen {
				break
			}
			W := n.add()
			b.fragment(n, nd, cur, W)
			X := n.add()
			b.ws(n, W, X)
			n.edge(X, ']', ']', F, closeOp)
			if i+1 < len(pos) || rest != nil {
				Y := n.add()
				n.edge(X, ',', ',', Y, commaOp)
				cur = n.add()
				b.ws(n, Y, cur)
			} else {
				cur = -1
			}
		}
		if rest != nil && cur >= 0 {
			R := n.add()
			n.eps(cur, R)
			W := n.add()
			if it.ustr {
				b.uniqueFrag(n, rest, R, W)
			} else {
				b.fragment(n, rest, R, W)
			}
			X := n.add()
			b.ws(n, W, X)
			n.edge(X, ']', ']', F, closeOp)
			Y := n.add()
			n.edge(X, ',', ',', Y, commaOp)
			b.ws(n, Y, R)
		}
		return n, nil
	})
	b.arrRules[ac] = id
	b.rules[id] = &rule{}
	return id
}

// items returns ac's item values (computed once).
func (b *builder) items(ac *arrCons) arrItems {
	if x, ok := b.arrItems[ac]; ok {
		return x
	}
	c := b.c
	P := 0
	for _, p := range ac.parts {
		P = max(P, len(p.prefix))
	}
	itemRefs := func(i int) ([]sref, bool) {
		var refs []sref
		for _, p := range ac.parts {
			switch {
			case i < len(p.prefix):
				refs = append(refs, p.prefix[i])
			case p.itemsFalse:
				return nil, false
			case b.opts.Strict && p.items == nil && len(p.prefix) > 0:
				return nil, false
			case p.items != nil:
				refs = append(refs, *p.items)
			}
		}
		return refs, true
	}
	var it arrItems
	for i := 0; i < P; i++ {
		refs, ok := itemRefs(i)
		if !ok {
			break
		}
		nd := c.conjRefs(refs)
		if nd.isEmpty() {
			break
		}
		it.pos = append(it.pos, nd)
	}
	if len(it.pos) == P {
		if refs, ok := itemRefs(P); ok {
			if nd := c.conjRefs(refs); !nd.isEmpty() {
				it.rest = nd
			}
		}
	}
	if ac.unique != "" {
		it.uniq, it.ustr = b.uniqueItems(ac, it)
	}
	if len(ac.contains) > 0 {
		it.con = b.containsSplit(ac, it)
	}
	if b.arrItems == nil {
		b.arrItems = map[*arrCons]arrItems{}
	}
	b.arrItems[ac] = it
	return it
}

// lowerAll lowers every value the rules of nd will reach (property values,
// items), without building automata: the schema's compile errors and
// loosenings come from here, and the rules built later reuse the result.
// It visits what fragment would: containers, not any-value calls.
func (b *builder) lowerAll(nd *node) {
	seenObj := map[*objCons]bool{}
	seenArr := map[*arrCons]bool{}
	var visit func(nd *node)
	visit = func(nd *node) {
		if b.anyReady && b.isAny(nd) {
			return
		}
		for _, o := range nd.objs {
			if _, ok := b.objRules[o]; ok || seenObj[o] {
				continue
			}
			seenObj[o] = true
			cats, _ := b.categories(o)
			for _, ct := range cats {
				visit(ct.nd)
			}
			b.witnessOK(o)
		}
		for _, a := range nd.arrs {
			if _, ok := b.arrRules[a]; ok || seenArr[a] {
				continue
			}
			seenArr[a] = true
			it := b.items(a)
			for _, p := range it.pos {
				visit(p)
			}
			if it.rest != nil {
				visit(it.rest)
			}
			if it.con != nil {
				for _, p := range it.con.nodes {
					visit(p)
				}
			}
		}
	}
	visit(nd)
}

func (b *builder) rootRule(nd *node) int32 {
	return b.reserveAt(0, kindValue, "root", func(id int32) (*bnfa, error) {
		n := newNFA()
		s0 := n.add()
		F := n.add()
		n.st[F].final = true
		b.fragment(n, nd, s0, F)
		return n, nil
	})
}

func (b *builder) run() error {
	for len(b.pending) > 0 {
		f := b.pending[0]
		b.pending = b.pending[1:]
		if err := f(); err != nil {
			return err
		}
	}
	for i, r := range b.rules {
		if r != nil && r.name == "" {
			switch r.kind {
			case kindObject:
				r.name = fmt.Sprintf("object#%d", i)
			case kindArray:
				r.name = fmt.Sprintf("array#%d", i)
			}
		}
	}
	return nil
}

// keyAvailOps gives, per state of the key DFA, a check that some declared
// property reachable from that state may still be written (see
// objInfo.keyAddable): a key prefix that only leads to names already used,
// or not allowed any more by maxProperties or the declared order, is a dead
// end, so it must not be entered. A state from which an undeclared key is
// reachable needs no check (where that key start is used, an undeclared key
// may still come). The check sits only on the bytes where the set of
// reachable properties shrinks (same); avail is nil when no state needs one
// and undeclared keys are possible, so that the key keeps its shared string
// interiors (masks.md §3).
func (b *builder) keyAvailOps(kd *rdfa, tags []int32, cats []keyCat, oi *objInfo) ([]int32, func(x, y int32) bool) {
	words := (len(oi.names) + 63) / 64
	reach := make([][]uint64, len(kd.st))
	extra := make([]bool, len(kd.st))
	flat := make([]uint64, words*len(kd.st))
	for i := range reach {
		reach[i] = flat[i*words : (i+1)*words : (i+1)*words]
		if t := tags[i]; t >= 0 {
			if cats[t].decl >= 0 {
				reach[i][cats[t].decl/64] |= 1 << (cats[t].decl % 64)
			} else {
				extra[i] = true
			}
		}
	}
	// backwards: a trie's edges lead to later states, so one pass settles
	// it and the next confirms (forwards took a pass per key character)
	for changed := true; changed; {
		changed = false
		for i := len(kd.st) - 1; i >= 0; i-- {
			for _, e := range kd.st[i].edges {
				if extra[e.to] && !extra[i] {
					extra[i] = true
					changed = true
				}
				for w := range reach[i] {
					if x := reach[i][w] | reach[e.to][w]; x != reach[i][w] {
						reach[i][w] = x
						changed = true
					}
				}
			}
		}
	}
	same := func(x, y int32) bool { return extra[y] || !extra[x] && slices.Equal(reach[x], reach[y]) }
	needed := false
	for i, st := range kd.st {
		for _, e := range st.edges {
			if !same(int32(i), e.to) {
				needed = true
			}
		}
	}
	if !needed && extra[0] {
		return nil, same
	}
	// (declared names only: the narrow key states use the plain walk even
	// without checks, cheaper than a shared interior per name suffix)
	ops := make([]int32, len(kd.st))
	for i := range kd.st {
		if !extra[i] {
			ops[i] = b.op(opDef{kind: opKeyAvail, obj: oi, mask: reach[i]})
		}
	}
	return ops, same
}
