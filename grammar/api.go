package grammar

import (
	"fmt"
	"sync"
)

// Grammar is a compiled JSON Schema (or tool-call grammar). It is immutable
// and safe for concurrent use; matchers are not.
type Grammar struct {
	// Loosened lists what Lenient compilation could not enforce.
	Loosened []Loosening

	opts  Options
	src   []byte
	rules []*rule
	ops   []opDef
	root  int32

	masks sync.Map // *TokenizerInfo → *maskCache

	depthOnce sync.Once
	depth     *depthInfo // see depth.go
}

// Compile compiles a JSON Schema (draft 2020-12) to a Grammar.
func Compile(schema []byte, opts Options) (g *Grammar, err error) {
	opts = opts.withDefaults()
	v, err := parseJSON(schema)
	if err != nil {
		return nil, &CompileError{Msg: "schema is not valid JSON: " + err.Error()}
	}
	c := newCompiler(opts)
	b, err := compileRoot(c, v)
	if err != nil {
		return nil, err
	}
	return &Grammar{Loosened: c.loosened, opts: opts, src: append([]byte(nil), schema...), rules: b.rules, ops: b.ops, root: 0}, nil
}

// compileRoot lowers and builds a schema document; rule 0 is its root.
func compileRoot(c *compiler, v *jv) (b *builder, err error) {
	defer func() {
		if r := recover(); r != nil {
			switch e := r.(type) {
			case *CompileError:
				b, err = nil, e
			case *reError:
				b, err = nil, &CompileError{Msg: e.msg}
			default:
				panic(r)
			}
		}
	}()
	c.root = v
	if v.kind == 'o' {
		if id := v.get("$id"); id != nil && id.kind == 's' {
			c.rootBase = id.s
		}
	}
	c.index(v, c.rootBase)
	nd := c.lower(sref{v, ""})
	if nd.isEmpty() {
		return nil, &CompileError{Msg: "schema accepts no value"}
	}
	b = newBuilder(c)
	b.rootRule(nd)
	if err := b.run(); err != nil {
		return nil, &CompileError{Msg: err.Error()}
	}
	return b, nil
}

// Options returns the options the grammar was compiled with (defaults filled).
func (g *Grammar) Options() Options { return g.opts }

// Match reports whether b is a complete sentence of the grammar.
func (g *Grammar) Match(b []byte) bool {
	m := g.NewMatcher()
	if _, ok := m.AdvanceBytes(b); !ok {
		return false
	}
	return m.IsAccepting()
}

// Stats describes a grammar's size.
type Stats struct {
	Rules, States, Ops int
}

// Stats returns the number of rules, DFA states and checked edges.
func (g *Grammar) Stats() Stats {
	s := Stats{Rules: len(g.rules), Ops: len(g.ops) - 1}
	for _, r := range g.rules {
		s.States += r.nstates()
	}
	return s
}

func (s Stats) String() string {
	return fmt.Sprintf("%d rules, %d states, %d checked edges", s.Rules, s.States, s.Ops)
}
