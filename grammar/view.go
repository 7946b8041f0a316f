package grammar

// Automaton is a read-only copy of a compiled grammar's automaton, for
// exporters (GBNF, diagrams). State ids are per rule.
type Automaton struct {
	Root  int // index in Rules of the top-level rule
	Rules []RuleView
}

// RuleView is one rule: a byte-level DFA whose final states return to the
// caller.
type RuleView struct {
	Name   string // "root", "object#3", "array#5", ...
	Kind   string // "value", "object" or "array"
	Start  int
	States []StateView
}

// StateView is one DFA state.
type StateView struct {
	Final bool
	Edges []EdgeView // byte-range transitions
	Calls []CallView // nested containers that may start here
}

// EdgeView is a transition on bytes Lo..Hi. Check is "" for a plain edge,
// else what the runtime checks when taking it (e.g. "key properties/name",
// "close object: required, minProperties", "item count").
type EdgeView struct {
	Lo, Hi byte
	To     int
	Check  string
}

// CallView: at this state a value of rule Rule may start; after it the rule
// continues at state Return.
type CallView struct {
	Rule   int
	Return int
}

// Automaton returns a copy of the grammar's automaton.
func (g *Grammar) Automaton() *Automaton { panic("todo") }

// Schema returns the schema source the grammar was compiled from (nil for
// ToolCall grammars).
func (g *Grammar) Schema() []byte { return g.src }
