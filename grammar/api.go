package grammar

// Grammar is a compiled JSON Schema (or tool-call grammar). It is immutable
// and safe for concurrent use; matchers are not.
type Grammar struct {
	// Loosened lists what Lenient compilation could not enforce.
	Loosened []Loosening

	opts Options
	src  []byte
}

// Compile compiles a JSON Schema (draft 2020-12) to a Grammar.
func Compile(schema []byte, opts Options) (*Grammar, error) { panic("todo") }

// Options returns the options the grammar was compiled with (defaults filled).
func (g *Grammar) Options() Options { return g.opts }

// Match reports whether b is a complete sentence of the grammar.
func (g *Grammar) Match(b []byte) bool { panic("todo") }
