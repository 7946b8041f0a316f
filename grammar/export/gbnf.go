package export

import (
	"fmt"
	"math/big"
	"strings"

	"github.com/airs-dev/airs/internal/jsonvalue"
)

// GBNFOptions control GBNF output.
type GBNFOptions struct {
	Options
	// Whitespace is the most whitespace bytes allowed at each place JSON
	// allows whitespace; 0 (the default) is compact JSON.
	Whitespace int
}

// GBNF returns a llama.cpp grammar (GBNF) for the JSON documents schema
// accepts, compact, up to the same narrowings and loosenings as
// OllamaFormat (but exact where GBNF can say more: string lengths count
// code points, integer bounds are exact).
func GBNF(schema []byte) (string, []Loosening, error) {
	return GBNFWith(schema, GBNFOptions{})
}

// GBNFWith is GBNF with options.
func GBNFWith(schema []byte, opts GBNFOptions) (string, []Loosening, error) {
	doc, loose, err := normalizeDoc(schema, opts.Options, "", true)
	if err != nil {
		return "", loose, err
	}
	return gbnfOf(doc, opts), loose, nil
}

// ToolCallGBNF returns the GBNF of the tool-call documents of
// ToolCallFormat.
func ToolCallGBNF(tools []Tool, allowNone bool, opts GBNFOptions) (string, []Loosening, error) {
	doc, loose, err := toolCallDoc(tools, allowNone, opts.Options, true)
	if err != nil {
		return "", loose, err
	}
	return gbnfOf(doc, opts), loose, nil
}

type gbnfGen struct {
	rules   []string
	names   map[string]bool
	next    map[string]int
	defs    *jsonvalue.Value
	defRule map[string]string
	ws      string
	opts    GBNFOptions
}

func gbnfOf(doc *jsonvalue.Value, opts GBNFOptions) string {
	g := &gbnfGen{names: map[string]bool{"root": true, "ws": true, "char": true, "kchar": true}, next: map[string]int{}, defRule: map[string]string{}, opts: opts}
	g.defs = doc.Get("$defs")
	if opts.Whitespace > 0 {
		g.ws = " ws"
	}
	root := g.expr(doc, "root-value")
	var b strings.Builder
	fmt.Fprintf(&b, "root ::= %s\n", root)
	for _, r := range g.rules {
		b.WriteString(r)
		b.WriteByte('\n')
	}
	b.WriteString(`char ::= [^"\\\x00-\x1F] | "\\" ["\\bfnrt] | "\\u00" [01] [0-9a-fA-F]` + "\n")
	b.WriteString(`kchar ::= [^"\\\x00-\x1F]` + "\n")
	if opts.Whitespace > 0 {
		fmt.Fprintf(&b, "ws ::= [ \\t\\n]{0,%d}\n", min(opts.Whitespace, maxRepetition))
	}
	return b.String()
}

// rule adds a rule with a fresh name based on hint and returns the name.
func (g *gbnfGen) rule(hint, body string) string {
	name := g.fresh(hint)
	g.rules = append(g.rules, name+" ::= "+body)
	return name
}

func (g *gbnfGen) fresh(hint string) string {
	if len(hint) > 64 { // deep paths: keep the tail
		hint = hint[len(hint)-64:]
	}
	base := strings.Trim(nameRE.ReplaceAllString(hint, "-"), "-")
	if len(base) > 48 {
		base = strings.TrimLeft(base[len(base)-48:], "-0123456789")
	}
	if base == "" {
		base = "r"
	}
	name := base
	for g.names[name] {
		g.next[base]++
		name = fmt.Sprintf("%s-%d", base, g.next[base]+1)
	}
	g.names[name] = true
	return name
}

// expr returns a GBNF expression (often a rule name) for normalized schema s.
func (g *gbnfGen) expr(s *jsonvalue.Value, hint string) string {
	if len(hint) > 64 {
		hint = hint[len(hint)-64:]
	}
	if r := s.Get("$ref"); r != nil {
		name := strings.TrimPrefix(r.Str, "#/$defs/")
		if rn, ok := g.defRule[name]; ok {
			return rn
		}
		rn := g.fresh("def-" + name)
		g.defRule[name] = rn
		k := len(g.rules)
		g.rules = append(g.rules, "")
		g.rules[k] = rn + " ::= " + g.expr(g.defs.Get(name), rn)
		return rn
	}
	if a := s.Get("anyOf"); a != nil {
		var alts []string
		for i, e := range a.Vals {
			alts = append(alts, g.expr(e, fmt.Sprintf("%s-%d", hint, i)))
		}
		return g.rule(hint, strings.Join(alts, " | "))
	}
	if c := s.Get("const"); c != nil {
		return gbnfLit(c.String())
	}
	if e := s.Get("enum"); e != nil {
		var alts []string
		for _, v := range e.Vals {
			alts = append(alts, gbnfLit(v.String()))
		}
		return "(" + strings.Join(alts, " | ") + ")"
	}
	t := s.Get("type")
	if t == nil {
		return g.expr(jsonvalue.NewObject("anyOf", []*jsonvalue.Value{}), hint)
	}
	switch t.Str {
	case "object":
		return g.object(s, hint)
	case "array":
		return g.array(s, hint)
	case "string":
		if p := s.Get("pattern"); p != nil {
			r, err := parsePattern(p.Str)
			if err == nil && r != nil {
				return g.rule(hint, `"\"" `+gbnfRx(r)+` "\""`)
			}
		}
		lo, _ := intKW(s, "minLength")
		hi, ok := intKW(s, "maxLength")
		if !ok {
			hi = -1
		}
		return `"\"" ` + repeat("char", lo, hi) + ` "\""`
	case "integer":
		var lo, hi *big.Int
		if r, ok := rat(s.Get("minimum")); ok {
			lo = r.Num()
		}
		if r, ok := rat(s.Get("maximum")); ok {
			hi = r.Num()
		}
		return g.rule(hint, intRange(lo, hi))
	case "number":
		return `("-"? ("0" | [1-9] [0-9]{0,15}) ("." [0-9]{1,16})? ([eE] [-+]? [0-9]{1,3})?)`
	case "boolean":
		return `("true" | "false")`
	}
	return `"null"`
}

func repeat(x string, lo, hi int) string {
	switch {
	case hi == 0:
		return `""`
	case lo == 0 && hi < 0:
		return x + "*"
	case lo == 1 && hi < 0:
		return x + "+"
	case lo == 0 && hi == 1:
		return x + "?"
	case lo == hi:
		return fmt.Sprintf("%s{%d}", x, lo)
	case hi < 0:
		return fmt.Sprintf("%s{%d,}", x, lo)
	}
	return fmt.Sprintf("%s{%d,%d}", x, lo, hi)
}

// object: declared properties in order, required ones mandatory, optional
// ones skippable, undeclared ones (when allowed) after them. F(i) is "the
// rest from property i, nothing written yet", R(i) "the rest from i after
// something was written" (each item then starts with a comma).
func (g *gbnfGen) object(s *jsonvalue.Value, hint string) string {
	props := s.Get("properties")
	req := map[string]bool{}
	if r := s.Get("required"); r != nil {
		for _, e := range r.Vals {
			req[e.Str] = true
		}
	}
	type kv struct {
		rule string
		req  bool
	}
	var kvs []kv
	var names []string
	if props != nil {
		for key, sub := range props.Members() {
			v := g.expr(sub, hint+"-"+key)
			kvs = append(kvs, kv{g.rule(hint+"-"+key+"-kv", gbnfLit(jsonString(key))+g.ws+` ":"`+g.ws+" "+v), req[key]})
			names = append(names, key)
		}
	}
	extra := ""
	if ap := s.Get("additionalProperties"); ap != nil && !(ap.Kind == jsonvalue.Bool && !ap.Bool) {
		var val string
		if ap.Kind == jsonvalue.Bool {
			val = g.anyValue()
		} else {
			val = g.expr(ap, hint+"-additional")
		}
		key := g.rule(hint+"-xk", `"\"" `+notStrings(names)+` "\""`)
		extra = g.rule(hint+"-xkv", key+g.ws+` ":"`+g.ws+" "+val)
	}
	n := len(kvs)
	R := make([]string, n+1) // "" = matches only the empty string
	if extra != "" {
		R[n] = g.rule(hint+"-rx", `( ","`+g.ws+" "+extra+" )*")
	}
	for i := n - 1; i >= 0; i-- {
		item := `","` + g.ws + " " + kvs[i].rule
		var body string
		if kvs[i].req {
			body = item
		} else {
			body = "( " + item + " )?"
		}
		if R[i+1] != "" {
			body += " " + R[i+1]
		}
		R[i] = g.rule(fmt.Sprintf("%s-r%d", hint, i), body)
	}
	// F(i): nonempty alternatives; an all-optional tail may also be empty,
	// which the caller makes optional.
	F := make([]string, n+1)
	if extra != "" {
		F[n] = extra + " " + R[n]
	}
	for i := n - 1; i >= 0; i-- {
		first := kvs[i].rule
		if R[i+1] != "" {
			first += " " + R[i+1]
		}
		if kvs[i].req || F[i+1] == "" {
			if kvs[i].req {
				F[i] = first
			} else {
				F[i] = g.rule(fmt.Sprintf("%s-f%d", hint, i), first)
			}
			continue
		}
		F[i] = g.rule(fmt.Sprintf("%s-f%d", hint, i), first+" | "+F[i+1])
	}
	anyReq := false
	for _, k := range kvs {
		anyReq = anyReq || k.req
	}
	body := `"{"` + g.ws
	switch {
	case F[0] == "":
	case anyReq:
		body += " " + F[0]
	default:
		body += " ( " + F[0] + " )?"
	}
	return g.rule(hint, body+g.ws+` "}"`)
}

func (g *gbnfGen) anyValue() string {
	if rn, ok := g.defRule["\x00any"]; ok {
		return rn
	}
	rn := g.fresh("any-value")
	g.defRule["\x00any"] = rn
	obj := fmt.Sprintf(`"{"%s ( %s%s ":"%s %s ( ","%s %s%s ":"%s %s )* )?%s "}"`, g.ws, `"\"" char{0,100} "\""`, g.ws, g.ws, rn, g.ws, `"\"" char{0,100} "\""`, g.ws, g.ws, rn, g.ws)
	arr := fmt.Sprintf(`"["%s ( %s ( ","%s %s ){0,99} )?%s "]"`, g.ws, rn, g.ws, rn, g.ws)
	g.rules = append(g.rules, rn+" ::= "+obj+" | "+arr+` | "\"" char{0,1000} "\"" | `+
		`("-"? ("0" | [1-9] [0-9]{0,15}) ("." [0-9]{1,16})? ([eE] [-+]? [0-9]{1,3})?) | "true" | "false" | "null"`)
	return rn
}

func (g *gbnfGen) array(s *jsonvalue.Value, hint string) string {
	open, close := `"["`+g.ws, g.ws+` "]"`
	if p := s.Get("prefixItems"); p != nil {
		var parts []string
		for i, e := range p.Vals {
			parts = append(parts, g.expr(e, fmt.Sprintf("%s-%d", hint, i)))
		}
		if len(parts) == 0 {
			return g.rule(hint, open+close)
		}
		return g.rule(hint, open+" "+strings.Join(parts, ` ","`+g.ws+" ")+close)
	}
	lo, _ := intKW(s, "minItems")
	hi, ok := intKW(s, "maxItems")
	if !ok {
		hi = -1
	}
	if hi == 0 {
		return g.rule(hint, open+close)
	}
	item := g.expr(s.Get("items"), hint+"-item")
	restLo, restHi := max(lo-1, 0), hi-1
	if hi < 0 {
		restHi = -1
	}
	body := item
	if restHi != 0 {
		body += " " + repeat(`( ","`+g.ws+" "+item+" )", restLo, restHi)
	}
	if lo == 0 {
		body = "( " + body + " )?"
	}
	return g.rule(hint, open+" "+body+close)
}

// notStrings is the content of a key that is none of names (keys of raw
// characters only: a narrowing that keeps escapes out of the trie).
func notStrings(names []string) string {
	type node struct {
		kids map[rune]*node
		keys []rune
		end  bool
	}
	root := &node{kids: map[rune]*node{}}
	for _, s := range names {
		cur := root
		for _, r := range s {
			nx := cur.kids[r]
			if nx == nil {
				nx = &node{kids: map[rune]*node{}}
				cur.kids[r] = nx
				cur.keys = append(cur.keys, r)
			}
			cur = nx
		}
		cur.end = true
	}
	var gen func(*node) string
	gen = func(nd *node) string {
		var alts []string
		other := `[^"\\\x00-\x1F`
		for _, r := range nd.keys {
			alts = append(alts, gbnfLit(string(r))+" "+gen(nd.kids[r]))
			other += classRune(r)
		}
		alts = append(alts, other+"] kchar*")
		e := "( " + strings.Join(alts, " | ") + " )"
		if !nd.end {
			e += "?"
		}
		return e
	}
	return gen(root)
}

// gbnfLit is s as a GBNF string literal.
func gbnfLit(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7F:
			fmt.Fprintf(&b, `\x%02X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

func classRune(r rune) string {
	switch {
	case r < 0x80 && isAlnum(byte(r)) && r != '_':
		return string(r)
	case r < 0x100:
		return fmt.Sprintf(`\x%02X`, r)
	case r < 0x10000:
		return fmt.Sprintf(`\u%04X`, r)
	}
	return fmt.Sprintf(`\U%08X`, r)
}

// gbnfRx is the GBNF of the JSON string content whose decoded value r
// matches: characters JSON must escape are written as their escapes.
func gbnfRx(r *rx) string {
	switch r.op {
	case rxEmpty:
		return `""`
	case rxClass:
		var alts []string
		safe := subtractRanges(r.cls, jsonUnsafe)
		if len(safe) > 0 {
			var b strings.Builder
			b.WriteByte('[')
			for i := 0; i+1 < len(safe); i += 2 {
				b.WriteString(classRune(safe[i]))
				if safe[i+1] != safe[i] {
					b.WriteByte('-')
					b.WriteString(classRune(safe[i+1]))
				}
			}
			b.WriteByte(']')
			alts = append(alts, b.String())
		}
		un := intersectRanges(r.cls, []rune{0, 0x1F, '"', '"', '\\', '\\'})
		for i := 0; i+1 < len(un); i += 2 {
			for c := un[i]; c <= un[i+1]; c++ {
				q := jsonString(string(c))
				alts = append(alts, gbnfLit(q[1:len(q)-1]))
			}
		}
		if len(alts) == 1 {
			return alts[0]
		}
		return "(" + strings.Join(alts, " | ") + ")"
	case rxConcat:
		var parts []string
		for _, s := range r.subs {
			parts = append(parts, gbnfRx(s))
		}
		if len(parts) == 0 {
			return `""`
		}
		return "(" + strings.Join(parts, " ") + ")"
	case rxAlt:
		var parts []string
		for _, s := range r.subs {
			parts = append(parts, gbnfRx(s))
		}
		return "(" + strings.Join(parts, " | ") + ")"
	}
	return repeat("("+gbnfRx(r.subs[0])+")", r.min, r.max)
}

// intRange is the GBNF of the integers in [lo, hi] (nil: unbounded), with
// at most 16 digits, written without leading zeros or "-0".
func intRange(lo, hi *big.Int) string {
	const digits = 16
	maxAbs := new(big.Int).Sub(new(big.Int).Exp(big.NewInt(10), big.NewInt(digits), nil), big.NewInt(1))
	minAbs := new(big.Int).Neg(maxAbs)
	if lo == nil || lo.Cmp(minAbs) < 0 {
		lo = minAbs
	}
	if hi == nil || hi.Cmp(maxAbs) > 0 {
		hi = maxAbs
	}
	if lo.Cmp(hi) > 0 {
		return `"0" "0"` // unreachable for a normalized schema (it would be nil)
	}
	var alts []string
	zero := big.NewInt(0)
	if lo.Sign() < 0 {
		nhi := new(big.Int).Neg(lo)
		nlo := big.NewInt(1)
		if hi.Sign() < 0 {
			nlo = new(big.Int).Neg(hi)
		}
		alts = append(alts, `"-" (`+posRange(nlo.String(), nhi.String())+`)`)
	}
	if hi.Sign() >= 0 {
		plo := lo
		if plo.Sign() < 0 {
			plo = zero
		}
		alts = append(alts, posRange(plo.String(), hi.String()))
	}
	return strings.Join(alts, " | ")
}

// posRange covers [a, b] (decimal strings, 0 <= a <= b) by digit patterns.
func posRange(a, b string) string {
	var alts []string
	for l := len(a); l <= len(b); l++ {
		lo, hi := a, b
		if l > len(a) {
			lo = "1" + strings.Repeat("0", l-1)
		}
		if l < len(b) {
			hi = strings.Repeat("9", l)
		}
		alts = append(alts, sameLen(lo, hi))
	}
	return strings.Join(alts, " | ")
}

// sameLen covers [lo, hi] for equal-length digit strings.
func sameLen(lo, hi string) string {
	i := 0
	for i < len(lo) && lo[i] == hi[i] {
		i++
	}
	prefix := ""
	if i > 0 {
		prefix = `"` + lo[:i] + `" `
	}
	if i == len(lo) {
		return strings.TrimSpace(prefix)
	}
	rest := len(lo) - i - 1
	tail := func(k int) string {
		if k == 0 {
			return ""
		}
		return fmt.Sprintf(" [0-9]{%d}", k)
	}
	dr := func(x, y byte) string {
		if x == y {
			return `"` + string(x) + `"`
		}
		return "[" + string(x) + "-" + string(y) + "]"
	}
	if strings.Trim(lo[i+1:], "0") == "" && strings.Trim(hi[i+1:], "9") == "" {
		return prefix + dr(lo[i], hi[i]) + tail(rest)
	}
	var alts []string
	alts = append(alts, `"`+string(lo[i])+`" (`+sameLen(lo[i+1:], strings.Repeat("9", rest))+`)`)
	if lo[i]+1 <= hi[i]-1 {
		alts = append(alts, dr(lo[i]+1, hi[i]-1)+tail(rest))
	}
	alts = append(alts, `"`+string(hi[i])+`" (`+sameLen(strings.Repeat("0", rest), hi[i+1:])+`)`)
	return prefix + "(" + strings.Join(alts, " | ") + ")"
}
