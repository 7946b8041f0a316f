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

// Automaton returns a copy of the grammar's automaton (building every
// part not built yet). A tool-call grammar's tools follow its root rule,
// renumbered into one list.
func (g *Grammar) Automaton() *Automaton {
	a := &Automaton{Root: int(g.root)}
	kinds := map[uint8]string{kindValue: "value", kindObject: "object", kindArray: "array"}
	segs := g.segments()
	base := make([]int, len(segs))
	for i := 1; i < len(segs); i++ {
		base[i] = base[i-1] + len(segs[i-1].rules)
	}
	for si, sg := range segs {
		for _, r := range sg.rules {
			rv := RuleView{Name: r.name, Kind: kinds[r.kind], States: make([]StateView, r.nstates())}
			for s := range rv.States {
				sv := StateView{Final: r.final[s]}
				// plain edges: merge byte runs with the same target
				lo := -1
				var to int32 = -1
				flush := func(hi int) {
					if lo >= 0 && to >= 0 {
						sv.Edges = append(sv.Edges, EdgeView{Lo: byte(lo), Hi: byte(hi), To: int(to)})
					}
				}
				for b := 0; b < 256; b++ {
					t := r.next[int32(s)*r.ncls+int32(r.cls[b])]
					if b > 0 && t == to {
						continue
					}
					flush(b - 1)
					lo, to = b, t
				}
				flush(255)
				for _, e := range r.spec[s] {
					sv.Edges = append(sv.Edges, EdgeView{Lo: e.lo, Hi: e.hi, To: int(e.to), Check: sg.ops[e.op].String()})
				}
				for _, c := range r.calls[s] {
					id := base[si] + int(c.rule)
					if k := c.rule >> segShift; k != 0 {
						id = base[k] + int(c.rule&localMask)
					}
					sv.Calls = append(sv.Calls, CallView{Rule: id, Return: int(c.ret)})
				}
				rv.States[s] = sv
			}
			a.Rules = append(a.Rules, rv)
		}
	}
	return a
}

// segments returns g and its tools' grammars (segment k+1 is subs[k]),
// all built.
func (g *Grammar) segments() []*Grammar {
	segs := []*Grammar{g}
	for _, s := range g.subs {
		s.build()
		segs = append(segs, s)
	}
	return segs
}

// Schema returns the schema source the grammar was compiled from (nil for
// ToolCall grammars).
func (g *Grammar) Schema() []byte { return g.src }
