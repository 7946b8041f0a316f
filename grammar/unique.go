package grammar

import (
	"bytes"
	"encoding/json"
	"math/big"
	"math/bits"
	"sort"
	"strconv"
	"strings"

	"github.com/airs-dev/airs/internal/jsonvalue"
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
// nothing (at most one item fits), else the item domain, or checked when
// the matcher keeps the items unique (uniqueStrings); anything else is
// refused (or, lenient, loosened) at ac.unique.
func (b *builder) uniqueItems(ac *arrCons, it arrItems) (dom []*node, checked bool) {
	maxLen := ac.maxI
	if it.rest == nil && (maxLen < 0 || len(it.pos) < maxLen) {
		maxLen = len(it.pos)
	}
	if maxLen >= 0 && maxLen <= 1 {
		return nil, false // one item is always unique
	}
	if len(it.pos) > 0 {
		b.c.unsupported(ac.unique, "uniqueItems", "uniqueItems with prefixItems (tuple items) is not supported")
		return nil, false
	}
	dom, why := b.uniqueDomain(it.rest)
	if why != "" {
		sw := b.uniqueChecked(it.rest)
		if sw == "" {
			return nil, true
		}
		why += "; " + sw
		b.c.unsupported(ac.unique, "uniqueItems", "uniqueItems is not supported here: %s", why)
		return nil, false
	}
	top := len(dom)
	if maxLen >= 0 && maxLen < top {
		top = maxLen
	}
	if e := uniqueEdges(len(dom), top); e > maxUniqueEdges {
		b.c.unsupported(ac.unique, "uniqueItems", "uniqueItems over %d item values needs over %d automaton edges (set maxItems, or fewer values)", len(dom), maxUniqueEdges)
		return nil, false
	}
	if len(dom) == 0 {
		return nil, false // only [] (no item value exists)
	}
	return dom, false
}

// uniqueItems over an unbounded domain of strings, checked by the matcher.
//
// The set of strings written is unbounded state, so no automaton holds it;
// the matcher does (runCtx, actData.useen). The array's "[" and "," mark
// where an item starts (opUOpen, opUComma) and the closing quote of a
// string item (opUItem) is taken only if the item's value was not written
// before in this array: values are compared decoded, so "a" and "\u0061"
// are one value. Masks stay exact: a token is allowed only if the matcher
// takes its bytes, and tokens through a checked edge are simulated.
//
// The mask must also never lead into a dead end: a string that can only be
// finished as a value already written. That cannot happen when every state
// of the item's string automaton has infinitely many completions — whatever
// was written, a completion not written before exists — so only those item
// languages are taken (no maxLength, no fixed-length format, no branch that
// ends in a literal); the others are refused as before. The one exception
// is the generation bound on strings without maxLength
// (Options.MaxStringBytes, 8,192 code points by default): an item that
// reaches it equal to an earlier item cannot be finished.

// itemSet is an immutable list of the items written (their texts), shared
// between activations. Comparing canonical values costs a parse per item,
// and the mask simulates every token that could end an item, so the check
// is staged: an equal text is a duplicate; a different fingerprint (an
// order-free hash of the item's scalars and brackets, by value) is not;
// only items with equal fingerprints are compared canonically. Both the
// fingerprint and the key of a stored item are computed once, on first use.
type itemSet struct {
	raw         []byte
	fp          uint64
	key         []byte
	fpOK, keyOK bool
	next        *itemSet
	n           int
}

func (s *itemSet) len() int {
	if s == nil {
		return 0
	}
	return s.n
}

func (s *itemSet) fingerprint() uint64 {
	if !s.fpOK {
		s.fp, s.fpOK = itemFingerprint(s.raw), true
	}
	return s.fp
}

func (s *itemSet) canon() []byte {
	if !s.keyOK {
		s.key, _ = itemKey(s.raw)
		s.keyOK = true
	}
	return s.key
}

// has reports whether item text t (trimmed, a complete value) equals one
// in s as a JSON value. ok is false when t does not parse.
func (s *itemSet) has(t []byte) (dup, ok bool) {
	if s == nil {
		return false, true
	}
	fp := itemFingerprint(t)
	var key []byte
	for e := s; e != nil; e = e.next {
		if bytes.Equal(e.raw, t) {
			return true, true
		}
		if e.fingerprint() != fp {
			continue
		}
		if key == nil {
			if key, ok = itemKey(t); !ok {
				return false, false
			}
		}
		if bytes.Equal(e.canon(), key) {
			return true, true
		}
	}
	return false, true
}

func (s *itemSet) with(t []byte) *itemSet {
	return &itemSet{raw: t, next: s, n: s.len() + 1}
}

// equal: the same items in the same order (a different order is another
// configuration, which costs a duplicate configuration, never a wrong
// answer).
func (s *itemSet) equal(t *itemSet) bool {
	for s != t {
		if s == nil || t == nil || s.n != t.n || !bytes.Equal(s.raw, t.raw) {
			return false
		}
		s, t = s.next, t.next
	}
	return true
}

// uniqueItemEnd is opUItem: the item that ends with byte b (a string's
// closing quote, a container's closing bracket) must not have been written
// before in d's array.
func uniqueItemEnd(d *actData, x *runCtx, b byte) (*actData, bool) {
	t := x.text(d.ustart, b) // a fresh copy: kept in the set
	for len(t) > 0 && isJSONSpace(t[0]) {
		t = t[1:]
	}
	if len(t) < 2 {
		return nil, false // no text: refuse rather than let a duplicate through
	}
	dup, ok := d.useen.has(t)
	if dup || !ok {
		return nil, false
	}
	return &actData{count: d.count, last: d.last, ustart: d.ustart, useen: d.useen.with(t)}, true
}

// itemFingerprint hashes a JSON text by value and without order: a sum
// over its strings (decoded, as itemKey decodes them), numbers (by
// canonNumber), literals and opening brackets. Equal values have equal
// fingerprints.
func itemFingerprint(t []byte) uint64 {
	var sum uint64
	for i := 0; i < len(t); {
		c := t[i]
		switch {
		case c == '"':
			j, esc := i+1, false
			for j < len(t) && t[j] != '"' {
				if t[j] == '\\' {
					esc = true
					j++
				}
				j++
			}
			j = min(j+1, len(t)) // past the closing quote
			v := t[i+1 : max(i+1, j-1)]
			if esc {
				var s string
				if json.Unmarshal(t[i:j], &s) == nil {
					v = []byte(s)
				}
			}
			sum += mix64(fnv64(v) ^ 0x5354)
			i = j
		case c == '-' || c >= '0' && c <= '9':
			j := i + 1
			for j < len(t) && (t[j] >= '0' && t[j] <= '9' || t[j] == '.' || t[j] == 'e' || t[j] == 'E' || t[j] == '+' || t[j] == '-') {
				j++
			}
			n, _ := canonNumber(string(t[i:j]))
			sum += mix64(fnv64([]byte(n)) ^ 0x4e55)
			i = j
		case c == '{' || c == '[':
			sum += mix64(uint64(c) * 0x9e3779b97f4a7c15)
			i++
		case c >= 'a' && c <= 'z':
			sum += mix64(uint64(c) * 0x9e3779b97f4a7c15)
			for i < len(t) && t[i] >= 'a' && t[i] <= 'z' {
				i++
			}
		default:
			i++
		}
	}
	return sum
}

func fnv64(b []byte) uint64 {
	h := uint64(14695981039346656037)
	for _, c := range b {
		h ^= uint64(c)
		h *= 1099511628211
	}
	return h
}

func mix64(h uint64) uint64 {
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	return h ^ h>>33
}

// uniqueChecked reports whether the items nd are values the matcher can
// keep unique (see above), or why not: strings whose every automaton state
// has infinitely many completions, objects that can always take one more
// property and arrays that can always take one more item (so every prefix
// of an item has infinitely many completions: another property or item
// before the closing bracket). Scalars with finitely many completions from
// some prefix (null, booleans, numbers under the digit bound, constants)
// are refused.
func (b *builder) uniqueChecked(nd *node) string {
	if nd.null || nd.tru || nd.fal || nd.num != nil || len(nd.lits) > 0 {
		return "the items may be null, booleans, numbers or constants, which have finitely many completions: a value already written may be the only way to finish one"
	}
	if nd.str == nil && len(nd.objs) == 0 && len(nd.arrs) == 0 {
		return "no item value"
	}
	if nd.str != nil {
		if w := uniqueStrings(nd); w != "" {
			return w
		}
	}
	for _, o := range nd.objs {
		if !openObject(o) {
			return "the items may be objects that cannot always take another property (additionalProperties false, propertyNames, maxProperties): a value already written may be the only way to finish one"
		}
	}
	for _, a := range nd.arrs {
		if !b.openArray(a) {
			return "the items may be arrays that cannot always take another item (items false, maxItems, contains): a value already written may be the only way to finish one"
		}
	}
	return ""
}

// openObject: o can always take another property with a new name.
func openObject(o *objCons) bool {
	if o.maxP >= 0 || len(o.witness) > 0 {
		return false
	}
	for _, p := range o.parts {
		if p.addlFalse || p.names != nil || len(p.patterns) > 0 {
			return false
		}
		if p.addl != nil && isFalseSchema(p.addl.v) {
			return false
		}
	}
	return true
}

// openArray: a can always take another item.
func (b *builder) openArray(a *arrCons) bool {
	if a.maxI >= 0 || len(a.contains) > 0 {
		return false
	}
	it := b.items(a)
	return it.rest != nil && !it.rest.isEmpty()
}

func isFalseSchema(v *jsonvalue.Value) bool { return v != nil && v.Kind == jsonvalue.Bool && !v.Bool }

// uniqueStrings reports whether the string items of nd can be kept unique
// by the matcher, or why not.
func uniqueStrings(nd *node) string {
	if nd.str.max >= 0 {
		return "maxLength bounds the item strings: a value already written may be the only way to finish one"
	}
	if !infiniteFromEvery(nd.str.d.trim()) {
		return "a state of the item strings' automaton has finitely many completions: a value already written may be the only way to finish one"
	}
	return ""
}

// infiniteFromEvery reports whether every state of the trimmed automaton d
// has infinitely many completions: it reaches a cycle.
func infiniteFromEvery(d *rdfa) bool {
	n := len(d.st)
	if d.isEmpty() {
		return false
	}
	// Tarjan's strongly connected components; a state is on a cycle when
	// its component has several states or a self-loop.
	index := make([]int32, n)
	low := make([]int32, n)
	on := make([]bool, n)
	for i := range index {
		index[i] = -1
	}
	cyc := make([]bool, n)
	var stack []int32
	var next int32
	var visit func(v int32)
	visit = func(v int32) {
		index[v], low[v] = next, next
		next++
		stack = append(stack, v)
		on[v] = true
		for _, e := range d.st[v].edges {
			w := e.to
			if w == v {
				cyc[v] = true
			}
			if index[w] < 0 {
				visit(w)
				low[v] = min(low[v], low[w])
			} else if on[w] {
				low[v] = min(low[v], index[w])
			}
		}
		if low[v] == index[v] {
			k := len(stack) - 1
			for stack[k] != v {
				k--
			}
			comp := stack[k:]
			if len(comp) > 1 {
				for _, w := range comp {
					cyc[w] = true
				}
			}
			for _, w := range comp {
				on[w] = false
			}
			stack = stack[:k]
		}
	}
	for i := 0; i < n; i++ {
		if index[i] < 0 {
			visit(int32(i))
		}
	}
	// reaches a cycle: fixpoint over the edges (the automaton is small)
	for changed := true; changed; {
		changed = false
		for v := 0; v < n; v++ {
			if cyc[v] {
				continue
			}
			for _, e := range d.st[v].edges {
				if cyc[e.to] {
					cyc[v] = true
					changed = true
					break
				}
			}
		}
	}
	for v := 0; v < n; v++ {
		if !cyc[v] {
			return false
		}
	}
	return true
}

// itemKey is the value of the item text t as a set key: a string's
// decoded value after 's', else 'j' and a canonical JSON text (object keys
// sorted, numbers by value), so that items equal as JSON values have one
// key.
func itemKey(t []byte) ([]byte, bool) {
	if t[0] == '"' {
		v := t[1 : len(t)-1]
		if bytes.IndexByte(v, '\\') >= 0 {
			var s string
			if json.Unmarshal(t, &s) != nil {
				return nil, false
			}
			v = []byte(s)
		}
		return append([]byte{'s'}, v...), true
	}
	dec := json.NewDecoder(bytes.NewReader(t))
	dec.UseNumber()
	var x any
	if dec.Decode(&x) != nil {
		return nil, false
	}
	out, ok := canonJSON([]byte{'j'}, x)
	return out, ok
}

func canonJSON(out []byte, x any) ([]byte, bool) {
	switch v := x.(type) {
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		out = append(out, '{')
		for i, k := range keys {
			if i > 0 {
				out = append(out, ',')
			}
			out = strconv.AppendQuote(out, k)
			out = append(out, ':')
			var ok bool
			if out, ok = canonJSON(out, v[k]); !ok {
				return nil, false
			}
		}
		return append(out, '}'), true
	case []any:
		out = append(out, '[')
		for i, e := range v {
			if i > 0 {
				out = append(out, ',')
			}
			var ok bool
			if out, ok = canonJSON(out, e); !ok {
				return nil, false
			}
		}
		return append(out, ']'), true
	case string:
		return strconv.AppendQuote(out, v), true
	case json.Number:
		n, ok := canonNumber(string(v))
		return append(out, n...), ok
	case bool:
		return strconv.AppendBool(out, v), true
	case nil:
		return append(out, "null"...), true
	}
	return nil, false
}

// canonNumber writes a JSON number lexeme by value: sign, digits without
// leading or trailing zeros, and a decimal exponent ("1.50", "15e-1" and
// "0.15E1" are one number), without big arithmetic on the exponent.
func canonNumber(s string) (string, bool) {
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	exp := int64(0)
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		e, err := strconv.ParseInt(strings.TrimPrefix(s[i+1:], "+"), 10, 64)
		if err != nil || e > 1<<40 || e < -(1<<40) {
			return "", false
		}
		exp, s = e, s[:i]
	}
	intPart, frac, _ := strings.Cut(s, ".")
	digits := strings.TrimLeft(intPart+frac, "0")
	exp -= int64(len(frac))
	n := len(digits)
	digits = strings.TrimRight(digits, "0")
	exp += int64(n - len(digits))
	if digits == "" {
		return "0", true
	}
	sign := ""
	if neg {
		sign = "-"
	}
	return sign + digits + "e" + strconv.FormatInt(exp, 10), true
}

// uniqueFrag is fragment for an item of a matcher-checked unique array: a
// string's closing quote and an object's or array's return are checked
// (opUItem).
func (b *builder) uniqueFrag(n *bnfa, nd *node, x, y int32) {
	if nd.str != nil {
		b.uniqueStrFrag(n, nd.str, x, y)
	}
	if len(nd.objs)+len(nd.arrs) == 0 {
		return
	}
	op := b.op(opDef{kind: opUItem})
	for _, o := range nd.objs {
		n.st[x].calls = append(n.st[x].calls, bcall{b.objRule(o), y, op})
	}
	for _, a := range nd.arrs {
		n.st[x].calls = append(n.st[x].calls, bcall{b.arrRule(a), y, op})
	}
}

// uniqueStrFrag is strFrag for an item of a matcher-checked unique array:
// the closing quote is opUItem (which also checks minLength).
func (b *builder) uniqueStrFrag(n *bnfa, sc *strCons, x, y int32) {
	d := b.atLeastOne(sc)
	var minL int32
	if sc.min > 1 {
		minL = int32(sc.min)
	}
	if d.isEmpty() {
		return
	}
	n.str(d, x, y, b.strLim(sc), b.op(opDef{kind: opUItem, arg: minL}))
}
