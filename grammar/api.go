package grammar

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/airs-dev/airs/internal/jsonvalue"
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

	// A tool-call grammar's arguments live in segments: subs[k] is tool k's
	// grammar, its rules addressed as segment k+1 (seg), so that a
	// tool's automata are shared with every other tool-call grammar over it
	// without renumbering, and are built only when a matcher first reaches
	// them (after the tool's name).
	subs     []*Grammar
	subNames []string

	// For a grammar built on first use (a tool's arguments): what lowering
	// left, the build's result, and the once that guards it.
	lazy      *lazyBuild
	built     atomic.Bool
	buildOnce sync.Once
	buildErr  error

	depthOnce sync.Once
	depth     *depthInfo // see depth.go
}

// lazyBuild is a lowered schema waiting for its automata.
type lazyBuild struct {
	b  *builder
	nd *node
}

// Rule ids of a tool-call grammar carry their segment in the high bits: 0
// is the grammar's own rules (the call's root), k+1 is subs[k]'s. Inside a
// segment, calls name local rules, so a callee's id is its local id with
// the caller's segment bits.
const (
	segShift  = 20
	localMask = 1<<segShift - 1
	maxTools  = 1<<(31-segShift) - 2
)

// seg returns the grammar that holds rule id and the rule's local index,
// building the segment on first use.
func (g *Grammar) seg(id int32) (*Grammar, int32) {
	k := id >> segShift
	if k == 0 {
		return g, id
	}
	s := g.subs[k-1]
	if !s.built.Load() {
		s.build()
	}
	return s, id & localMask
}

// Compile compiles a JSON Schema (draft 2020-12) to a Grammar.
func Compile(schema []byte, opts Options) (*Grammar, error) {
	g, err := lower(schema, opts.withDefaults())
	if err != nil {
		return nil, err
	}
	if err := g.build(); err != nil {
		return nil, err
	}
	// Strict narrows the schema for generation, and can narrow it to
	// nothing in ways the lowering does not see (an object whose needed
	// properties are undeclared, a not that only an undeclared property
	// satisfies): the automata then admit no first byte and a generator is
	// dead before its first token. Without Strict an unsatisfiable schema
	// stays a grammar that matches nothing, which is right for checking.
	if opts.Strict && !g.NewMatcher().CanContinue() {
		return nil, &CompileError{Msg: "schema accepts no value under Strict (its valid instances need properties or items it does not declare): compile without Strict"}
	}
	return g, nil
}

// lower parses and lowers a schema without building its automata: every
// compile error that depends on the schema's keywords (and every
// loosening) is found here, so a grammar built later can only fail on a
// size budget.
func lower(schema []byte, opts Options) (g *Grammar, err error) {
	v, err := jsonvalue.Parse(schema)
	if err != nil {
		return nil, &CompileError{Msg: "schema is not valid JSON: " + err.Error()}
	}
	defer func() {
		if r := recover(); r != nil {
			g, err = nil, recoveredError(r)
		}
	}()
	c := newCompiler(opts)
	c.root = v
	if v.Kind == jsonvalue.Object {
		if id := v.Get("$id"); id != nil && id.Kind == jsonvalue.String {
			c.rootBase = id.Str
		}
		if d := v.Get("$schema"); d != nil && d.Kind == jsonvalue.String {
			c.noIf = strings.Contains(d.Str, "draft-03") || strings.Contains(d.Str, "draft-04") || strings.Contains(d.Str, "draft-06")
		}
	}
	c.index(v, c.rootBase)
	nd := c.lower(sref{v, ""})
	if nd.isEmpty() {
		return nil, &CompileError{Msg: "schema accepts no value"}
	}
	b := newBuilder(c)
	b.lowerAll(nd)
	return &Grammar{Loosened: c.loosened, opts: opts, src: append([]byte(nil), schema...), lazy: &lazyBuild{b: b, nd: nd}}, nil
}

func recoveredError(r any) error {
	switch e := r.(type) {
	case *CompileError:
		return e
	case *reError:
		return &CompileError{Msg: e.msg}
	default:
		panic(r)
	}
}

// build makes the automata of a lowered grammar (once). On failure the
// grammar is a single dead rule, so a matcher that reaches it (a tool-call
// grammar's tool) stops there; the error is kept for Build.
func (g *Grammar) build() error {
	g.buildOnce.Do(func() {
		if g.lazy != nil {
			b := g.lazy.b
			err := func() (err error) {
				defer func() {
					if r := recover(); r != nil {
						err = recoveredError(r)
					}
				}()
				b.rootRule(g.lazy.nd)
				if err := b.run(); err != nil {
					return &CompileError{Msg: err.Error()}
				}
				return nil
			}()
			if err != nil {
				g.buildErr = err
				g.rules, g.ops = []*rule{deadRule()}, []opDef{{}}
			} else {
				g.rules, g.ops = b.rules, b.ops
			}
			g.lazy = nil
		}
		g.built.Store(true)
	})
	return g.buildErr
}

// Build builds every part of the grammar not built yet (a tool-call
// grammar builds a tool's automata when its name is first matched) and
// returns the first error: a tool whose automaton exceeds a size budget.
// Such a tool's name leads to a dead end in a matcher.
func (g *Grammar) Build() error {
	if err := g.build(); err != nil {
		return err
	}
	for i, s := range g.subs {
		if err := s.build(); err != nil {
			ce := *err.(*CompileError)
			ce.Msg = fmt.Sprintf("tool %q: %s", g.subNames[i], ce.Msg)
			return &ce
		}
	}
	return nil
}
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

// Stats returns the number of rules, DFA states and checked edges
// (building every part not built yet).
func (g *Grammar) Stats() Stats {
	var s Stats
	for _, sg := range g.segments() {
		s.Rules += len(sg.rules)
		s.Ops += len(sg.ops) - 1
		for _, r := range sg.rules {
			s.States += r.nstates()
		}
	}
	return s
}

func (s Stats) String() string {
	return fmt.Sprintf("%d rules, %d states, %d checked edges", s.Rules, s.States, s.Ops)
}
