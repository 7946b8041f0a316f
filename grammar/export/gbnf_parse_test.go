package export

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// A small GBNF parser and matcher following llama.cpp's llama-grammar.cpp:
// names [a-zA-Z0-9-]+, "::=", string literals and [...] classes with the
// escapes \x \u \U \t \r \n \\ \" \[ \], groups, | , * + ? {m} {m,} {m,n}
// (at most 2000), # comments. The matcher is a backtracking one over code
// points, fine for the short documents of the tests.

type gNode struct {
	kind     byte // 'l' literal, 'c' class, 'r' ref, 's' seq, 'a' alt, 'p' repeat
	runes    []rune
	neg      bool
	ranges   []rune
	name     string
	subs     []*gNode
	min, max int
}

type gbnfGrammar struct {
	rules map[string]*gNode
	order []string
}

type gparser struct {
	src string
	pos int
}

func (p *gparser) errf(f string, a ...any) error {
	return fmt.Errorf("at %d (%q): %s", p.pos, p.src[p.pos:min(len(p.src), p.pos+20)], fmt.Sprintf(f, a...))
}

func (p *gparser) space(newlineOK bool) {
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		switch {
		case c == ' ' || c == '\t' || (newlineOK && (c == '\n' || c == '\r')):
			p.pos++
		case c == '#':
			for p.pos < len(p.src) && p.src[p.pos] != '\n' && p.src[p.pos] != '\r' {
				p.pos++
			}
		default:
			return
		}
	}
}

func isWordChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-'
}

func (p *gparser) name() (string, error) {
	s := p.pos
	for p.pos < len(p.src) && isWordChar(p.src[p.pos]) {
		p.pos++
	}
	if s == p.pos {
		return "", p.errf("expecting name")
	}
	return p.src[s:p.pos], nil
}

func (p *gparser) char() (rune, error) {
	if p.pos >= len(p.src) {
		return 0, p.errf("unexpected end")
	}
	if p.src[p.pos] == '\\' {
		if p.pos+1 >= len(p.src) {
			return 0, p.errf("unexpected end")
		}
		e := p.src[p.pos+1]
		hex := map[byte]int{'x': 2, 'u': 4, 'U': 8}
		if n, ok := hex[e]; ok {
			if p.pos+2+n > len(p.src) {
				return 0, p.errf("short hex")
			}
			v, err := strconv.ParseUint(p.src[p.pos+2:p.pos+2+n], 16, 32)
			if err != nil {
				return 0, p.errf("bad hex")
			}
			p.pos += 2 + n
			return rune(v), nil
		}
		p.pos += 2
		switch e {
		case 't':
			return '\t', nil
		case 'r':
			return '\r', nil
		case 'n':
			return '\n', nil
		case '\\', '"', '[', ']':
			return rune(e), nil
		}
		return 0, p.errf("unknown escape")
	}
	r, n := utf8.DecodeRuneInString(p.src[p.pos:])
	p.pos += n
	return r, nil
}

func (p *gparser) alternates(nested bool) (*gNode, error) {
	a := &gNode{kind: 'a'}
	for {
		s, err := p.sequence(nested)
		if err != nil {
			return nil, err
		}
		a.subs = append(a.subs, s)
		if p.pos < len(p.src) && p.src[p.pos] == '|' {
			p.pos++
			p.space(true)
			continue
		}
		return a, nil
	}
}

func (p *gparser) int() (int, error) {
	s := p.pos
	for p.pos < len(p.src) && p.src[p.pos] >= '0' && p.src[p.pos] <= '9' {
		p.pos++
	}
	if s == p.pos {
		return 0, p.errf("expecting integer")
	}
	return strconv.Atoi(p.src[s:p.pos])
}

func (p *gparser) sequence(nested bool) (*gNode, error) {
	seq := &gNode{kind: 's'}
	last := func() (*gNode, error) {
		if len(seq.subs) == 0 {
			return nil, p.errf("expecting preceding item to */+/?/{")
		}
		return seq.subs[len(seq.subs)-1], nil
	}
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		switch {
		case c == '"':
			p.pos++
			lit := &gNode{kind: 'l'}
			for {
				if p.pos >= len(p.src) {
					return nil, p.errf("unterminated literal")
				}
				if p.src[p.pos] == '"' {
					break
				}
				r, err := p.char()
				if err != nil {
					return nil, err
				}
				lit.runes = append(lit.runes, r)
			}
			p.pos++
			p.space(nested)
			seq.subs = append(seq.subs, lit)
		case c == '[':
			p.pos++
			cl := &gNode{kind: 'c'}
			if p.pos < len(p.src) && p.src[p.pos] == '^' {
				cl.neg = true
				p.pos++
			}
			for {
				if p.pos >= len(p.src) {
					return nil, p.errf("unterminated class")
				}
				if p.src[p.pos] == ']' {
					break
				}
				lo, err := p.char()
				if err != nil {
					return nil, err
				}
				hi := lo
				if p.pos+1 < len(p.src) && p.src[p.pos] == '-' && p.src[p.pos+1] != ']' {
					p.pos++
					if hi, err = p.char(); err != nil {
						return nil, err
					}
				}
				cl.ranges = append(cl.ranges, lo, hi)
			}
			p.pos++
			p.space(nested)
			seq.subs = append(seq.subs, cl)
		case isWordChar(c):
			n, _ := p.name()
			p.space(nested)
			seq.subs = append(seq.subs, &gNode{kind: 'r', name: n})
		case c == '(':
			p.pos++
			p.space(true)
			a, err := p.alternates(true)
			if err != nil {
				return nil, err
			}
			if p.pos >= len(p.src) || p.src[p.pos] != ')' {
				return nil, p.errf("expecting )")
			}
			p.pos++
			p.space(nested)
			seq.subs = append(seq.subs, a)
		case c == '*' || c == '+' || c == '?' || c == '{':
			x, err := last()
			if err != nil {
				return nil, err
			}
			lo, hi := 0, -1
			p.pos++
			switch c {
			case '+':
				lo = 1
			case '?':
				hi = 1
			case '{':
				p.space(nested)
				if lo, err = p.int(); err != nil {
					return nil, err
				}
				p.space(nested)
				hi = lo
				if p.pos < len(p.src) && p.src[p.pos] == ',' {
					p.pos++
					p.space(nested)
					hi = -1
					if p.pos < len(p.src) && p.src[p.pos] >= '0' && p.src[p.pos] <= '9' {
						if hi, err = p.int(); err != nil {
							return nil, err
						}
						p.space(nested)
					}
				}
				if p.pos >= len(p.src) || p.src[p.pos] != '}' {
					return nil, p.errf("expecting }")
				}
				p.pos++
				if lo > 2000 || hi > 2000 {
					return nil, p.errf("repetition over 2000")
				}
			}
			p.space(nested)
			seq.subs[len(seq.subs)-1] = &gNode{kind: 'p', subs: []*gNode{x}, min: lo, max: hi}
		default:
			return seq, nil
		}
	}
	return seq, nil
}

func parseGBNF(src string) (*gbnfGrammar, error) {
	g := &gbnfGrammar{rules: map[string]*gNode{}}
	p := &gparser{src: src}
	p.space(true)
	for p.pos < len(p.src) {
		n, err := p.name()
		if err != nil {
			return nil, err
		}
		p.space(false)
		if !strings.HasPrefix(p.src[p.pos:], "::=") {
			return nil, p.errf("expecting ::=")
		}
		p.pos += 3
		p.space(true)
		a, err := p.alternates(false)
		if err != nil {
			return nil, err
		}
		if _, dup := g.rules[n]; dup {
			return nil, fmt.Errorf("rule %s defined twice", n)
		}
		g.rules[n] = a
		g.order = append(g.order, n)
		if p.pos < len(p.src) {
			if p.src[p.pos] == '\r' {
				p.pos++
			}
			if p.pos < len(p.src) && p.src[p.pos] == '\n' {
				p.pos++
			} else if p.pos < len(p.src) {
				return nil, p.errf("expecting newline or end")
			}
		}
		p.space(true)
	}
	var check func(*gNode) error
	check = func(x *gNode) error {
		if x.kind == 'r' && g.rules[x.name] == nil {
			return fmt.Errorf("undefined rule %q", x.name)
		}
		for _, s := range x.subs {
			if err := check(s); err != nil {
				return err
			}
		}
		return nil
	}
	for _, n := range g.order {
		if err := check(g.rules[n]); err != nil {
			return nil, err
		}
	}
	if g.rules["root"] == nil {
		return nil, fmt.Errorf("no root rule")
	}
	if err := g.leftRecursion(); err != nil {
		return nil, err
	}
	return g, nil
}

// leftRecursion fails if some rule can reach itself without consuming input.
func (g *gbnfGrammar) leftRecursion() error {
	empty := map[string]bool{}
	var nullable func(*gNode) bool
	nullable = func(x *gNode) bool {
		switch x.kind {
		case 'l':
			return len(x.runes) == 0
		case 'c':
			return false
		case 'r':
			return empty[x.name]
		case 's':
			for _, s := range x.subs {
				if !nullable(s) {
					return false
				}
			}
			return true
		case 'a':
			for _, s := range x.subs {
				if nullable(s) {
					return true
				}
			}
			return false
		}
		return x.min == 0 || nullable(x.subs[0])
	}
	for changed := true; changed; {
		changed = false
		for n, r := range g.rules {
			if !empty[n] && nullable(r) {
				empty[n], changed = true, true
			}
		}
	}
	var firsts func(*gNode, map[string]bool)
	firsts = func(x *gNode, out map[string]bool) {
		switch x.kind {
		case 'r':
			out[x.name] = true
		case 's':
			for _, s := range x.subs {
				firsts(s, out)
				if !nullable(s) {
					return
				}
			}
		case 'a', 'p':
			for _, s := range x.subs {
				firsts(s, out)
			}
		}
	}
	for n := range g.rules {
		seen := map[string]bool{}
		stack := []string{n}
		for len(stack) > 0 {
			cur := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			fs := map[string]bool{}
			firsts(g.rules[cur], fs)
			for f := range fs {
				if f == n {
					return fmt.Errorf("left recursion through rule %s", n)
				}
				if !seen[f] {
					seen[f] = true
					stack = append(stack, f)
				}
			}
		}
	}
	return nil
}

// match reports whether the whole of s is derived from root.
func (g *gbnfGrammar) match(s string) bool {
	in := []rune(s)
	steps := 0
	var m func(x *gNode, i int, k func(int) bool) bool
	m = func(x *gNode, i int, k func(int) bool) bool {
		steps++
		if steps > 5_000_000 {
			panic("gbnf match: too many steps")
		}
		switch x.kind {
		case 'l':
			if i+len(x.runes) > len(in) {
				return false
			}
			for j, r := range x.runes {
				if in[i+j] != r {
					return false
				}
			}
			return k(i + len(x.runes))
		case 'c':
			if i >= len(in) {
				return false
			}
			hit := false
			for j := 0; j+1 < len(x.ranges); j += 2 {
				if in[i] >= x.ranges[j] && in[i] <= x.ranges[j+1] {
					hit = true
				}
			}
			if hit == x.neg {
				return false
			}
			return k(i + 1)
		case 'r':
			return m(g.rules[x.name], i, k)
		case 'a':
			for _, s := range x.subs {
				if m(s, i, k) {
					return true
				}
			}
			return false
		case 's':
			var at func(j, i int) bool
			at = func(j, i int) bool {
				if j == len(x.subs) {
					return k(i)
				}
				return m(x.subs[j], i, func(i2 int) bool { return at(j+1, i2) })
			}
			return at(0, i)
		}
		var rep func(n, i int) bool
		rep = func(n, i int) bool {
			if n >= x.min && k(i) {
				return true
			}
			if x.max >= 0 && n >= x.max {
				return false
			}
			return m(x.subs[0], i, func(i2 int) bool { return i2 > i && rep(n+1, i2) })
		}
		return rep(0, i)
	}
	return m(g.rules["root"], 0, func(i int) bool { return i == len(in) })
}
