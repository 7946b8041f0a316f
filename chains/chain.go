package chains

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"
)

// Pos is where something was written: a file and line for the YAML DSL,
// "plan" for a model-emitted plan, empty for a chain built in Go.
type Pos struct {
	File string
	Line int
}

func (p Pos) String() string {
	switch {
	case p.File != "" && p.Line > 0:
		return fmt.Sprintf("%s:%d", p.File, p.Line)
	case p.File != "":
		return p.File
	case p.Line > 0:
		return fmt.Sprintf("line %d", p.Line)
	}
	return ""
}

// FailurePolicy says what a chain does when a step fails.
type FailurePolicy string

const (
	// StopOnFailure (the default) cancels every in-flight call at the first
	// failure and starts nothing more.
	StopOnFailure FailurePolicy = "stop"
	// ContinueOnFailure keeps running every step that does not depend on a
	// failed one; dependents of a failed step are skipped with a reason.
	ContinueOnFailure FailurePolicy = "continue"
)

// Input declares one named input of a chain.
type Input struct {
	Type        string // JSON Schema type name, "" for any
	Description string
	Default     any // used when the caller gives none; HasDefault tells nil from absent
	HasDefault  bool
	Pos         Pos
}

// Step is one node of the DAG: a call of Tool with Params, once, or once per
// element of the array Foreach resolves to.
type Step struct {
	ID   string
	Tool string
	// Params is the arguments object; references inside it make this step
	// depend on the steps they name. nil means {}.
	Params *Template
	// Foreach, when set, is exactly one reference to an array; the step
	// calls Tool once per element ({{item}} inside Params) and its output is
	// the array of the calls' outputs, in the element order.
	Foreach *Template
	// Needs lists extra dependencies that no reference expresses.
	Needs []string
	// Timeout caps this step's per-call budget (0: its share of the chain's
	// remaining budget, see Run).
	Timeout time.Duration
	Pos     Pos
}

// Chain is a DAG of tool calls. Build one with Parse (the YAML DSL),
// ParsePlan (a model's plan) or directly in Go; check it with Validate and
// execute it with Run.
type Chain struct {
	Name        string
	Description string
	Inputs      map[string]*Input // nil: any input is accepted
	Steps       []*Step
	// Output is the chain's result; nil means the output of the last step.
	Output    *Template
	OnFailure FailurePolicy // "" means StopOnFailure
	// Timeout is the chain's whole budget when Options.Timeout is 0.
	Timeout time.Duration
	Pos     Pos // where the chain starts (file name for the DSL)
}

// Error is a validation or parse error. It prints as
// "file:line: step ID: message", leaving out what is unknown.
type Error struct {
	Pos  Pos
	Step string
	Msg  string
	Err  error // the cause, when there is one (a Catalog's error)
	// Syntax: the text could not be read as YAML within the parser's
	// limits (malformed, a repeated key, aliases that expand too far), as
	// opposed to a readable pipeline that is wrong (a cycle, an unknown
	// step, a missing input).
	Syntax bool
}

// What a chain's definition error is about, for errors.Is: every *Error is
// ErrInvalid (the caller's pipeline or input is wrong, whatever the cause),
// those that are Syntax also ErrSyntax. A server answers them 400/422, not
// 500; errors.As still finds a Catalog's cause (a pipeline error kind).
var (
	ErrInvalid = errors.New("invalid pipeline")
	ErrSyntax  = errors.New("pipeline is not readable YAML")
)

func (e *Error) Unwrap() error { return e.Err }

func (e *Error) Is(target error) bool {
	return target == ErrInvalid || (e.Syntax && target == ErrSyntax)
}

func (e *Error) Error() string {
	var b strings.Builder
	if s := e.Pos.String(); s != "" {
		b.WriteString(s)
		b.WriteString(": ")
	}
	if e.Step != "" {
		b.WriteString("step ")
		b.WriteString(e.Step)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// errorList collects errors and joins them in source order.
type errorList []*Error

func (l *errorList) add(pos Pos, step, format string, args ...any) {
	*l = append(*l, &Error{Pos: pos, Step: step, Msg: fmt.Sprintf(format, args...)})
}

// addErr adds an error with a cause.
func (l *errorList) addErr(pos Pos, step string, cause error, format string, args ...any) {
	*l = append(*l, &Error{Pos: pos, Step: step, Msg: fmt.Sprintf(format, args...), Err: cause})
}

func (l errorList) err() error {
	if len(l) == 0 {
		return nil
	}
	sort.SliceStable(l, func(i, j int) bool {
		if l[i].Pos.File != l[j].Pos.File {
			return l[i].Pos.File < l[j].Pos.File
		}
		return l[i].Pos.Line < l[j].Pos.Line
	})
	errs := make([]error, len(l))
	for i, e := range l {
		errs[i] = e
	}
	return errors.Join(errs...)
}

// graph is a chain's structure after the structural checks.
type graph struct {
	c      *Chain
	index  map[string]int
	deps   [][]int // deps[i]: steps i waits for (sorted, unique)
	users  [][]int // users[i]: steps that wait for i
	depth  []int   // depth[i]: nodes on the longest path from i to a sink, i included
	output int     // step whose output is the chain's when c.Output is nil
}

// stepPos is where to report an error about step s (its param's line when
// known).
func stepPos(s *Step, line int) Pos {
	p := s.Pos
	if line > 0 {
		p.Line = line
	}
	return p
}

// structure runs the checks that need no catalog: ids, references, the
// placement of {{item}}, cycles and forward references. It returns the
// dependency graph.
func (c *Chain) structure() (*graph, error) {
	var errs errorList
	if len(c.Steps) == 0 {
		errs.add(c.Pos, "", "chain has no steps")
		return nil, errs.err()
	}
	g := &graph{c: c, index: make(map[string]int, len(c.Steps))}
	for i, s := range c.Steps {
		if s == nil {
			errs.add(c.Pos, "", "step %d is nil", i)
			return nil, errs.err()
		}
		switch prev, dup := g.index[s.ID]; {
		case !validID(s.ID):
			errs.add(s.Pos, s.ID, "bad id %q: use letters, digits, '_' and '-', starting with a letter", s.ID)
		case dup:
			errs.add(s.Pos, s.ID, "duplicate step id (first at %s)", c.Steps[prev].Pos)
		default:
			g.index[s.ID] = i
		}
		if s.Tool == "" {
			errs.add(s.Pos, s.ID, "no tool")
		}
		if s.Timeout < 0 {
			errs.add(s.Pos, s.ID, "negative timeout")
		}
	}
	if len(errs) > 0 {
		return nil, errs.err()
	}

	g.deps = make([][]int, len(c.Steps))
	g.users = make([][]int, len(c.Steps))
	forward := map[[2]int]int{} // (step, later step) -> line of the reference
	for i, s := range c.Steps {
		seen := map[int]bool{}
		dep := func(j int) {
			if !seen[j] {
				seen[j] = true
				g.deps[i] = append(g.deps[i], j)
			}
		}
		checkRefs := func(t *Template, where string, itemOK bool) {
			t.walkRefs(func(r *Ref, line int) {
				switch r.Root {
				case RootItem:
					if !itemOK {
						errs.add(stepPos(s, line), s.ID, "%s: %s is only defined in the params of a foreach step", where, r)
					}
				case RootInput:
					if c.Inputs != nil && len(r.Path) > 0 && r.Path[0].IsKey() {
						if _, ok := c.Inputs[r.Path[0].Key]; !ok {
							errs.add(stepPos(s, line), s.ID, "%s: %s: no input named %q", where, r, r.Path[0].Key)
						}
					}
				case RootStep:
					j, ok := g.index[r.Step]
					switch {
					case !ok:
						errs.add(stepPos(s, line), s.ID, "%s: %s: no step %q", where, r, r.Step)
					default:
						if j > i {
							forward[[2]int{i, j}] = line
						}
						dep(j)
					}
				}
			})
		}
		if s.Foreach != nil {
			if s.Foreach.Ref() == nil {
				errs.add(stepPos(s, s.Foreach.Line), s.ID, "foreach must be exactly one reference to an array, like \"{{steps.list.output.files}}\"")
			}
			checkRefs(s.Foreach, "foreach", false)
		}
		checkRefs(s.Params, "params", s.Foreach != nil)
		for _, n := range s.Needs {
			j, ok := g.index[n]
			if !ok {
				errs.add(s.Pos, s.ID, "needs: no step %q", n)
				continue
			}
			dep(j)
		}
		sort.Ints(g.deps[i])
	}
	if c.Output != nil {
		c.Output.walkRefs(func(r *Ref, line int) {
			p := c.Pos
			if line > 0 {
				p.Line = line
			}
			switch r.Root {
			case RootItem:
				errs.add(p, "", "output: %s is only defined in the params of a foreach step", r)
			case RootStep:
				if _, ok := g.index[r.Step]; !ok {
					errs.add(p, "", "output: %s: no step %q", r, r.Step)
				}
			case RootInput:
				if c.Inputs != nil && len(r.Path) > 0 && r.Path[0].IsKey() {
					if _, ok := c.Inputs[r.Path[0].Key]; !ok {
						errs.add(p, "", "output: %s: no input named %q", r, r.Path[0].Key)
					}
				}
			}
		})
	}
	if len(errs) > 0 {
		return nil, errs.err()
	}

	// Cycles (through references and needs), found by depth-first search.
	if cyc := g.cycles(); len(cyc) > 0 {
		for _, cy := range cyc {
			ids := make([]string, len(cy))
			for k, j := range cy {
				ids[k] = c.Steps[j].ID
			}
			s := c.Steps[cy[0]]
			errs.add(s.Pos, s.ID, "cycle: %s", strings.Join(ids, " → "))
		}
		return nil, errs.err()
	}
	// A reference must name a step listed earlier (needs may point anywhere).
	fwd := make([][2]int, 0, len(forward))
	for k := range forward {
		fwd = append(fwd, k)
	}
	sort.Slice(fwd, func(a, b int) bool {
		return fwd[a][0] < fwd[b][0] || fwd[a][0] == fwd[b][0] && fwd[a][1] < fwd[b][1]
	})
	for _, k := range fwd {
		line := forward[k]
		s, later := c.Steps[k[0]], c.Steps[k[1]]
		at := ""
		if p := later.Pos.String(); p != "" {
			at = ", at " + p
		}
		errs.add(stepPos(s, line), s.ID, "forward reference to step %s (defined later%s); a step may only reference steps listed before it", later.ID, at)
	}
	if len(errs) > 0 {
		return nil, errs.err()
	}

	for i, ds := range g.deps {
		for _, d := range ds {
			g.users[d] = append(g.users[d], i)
		}
	}
	g.depth = make([]int, len(c.Steps))
	for _, i := range g.topo() {
		d := 1
		for _, u := range g.users[i] {
			d = max(d, 1+g.depth[u])
		}
		g.depth[i] = d
	}
	g.output = len(c.Steps) - 1
	return g, nil
}

// cycles returns one cycle per strongly connected trouble spot, each as the
// list of steps along it, first step repeated at the end.
func (g *graph) cycles() [][]int {
	const (
		white = iota
		grey
		black
	)
	color := make([]int, len(g.deps))
	var stack []int
	var out [][]int
	var visit func(i int)
	visit = func(i int) {
		color[i] = grey
		stack = append(stack, i)
		for _, d := range g.deps[i] {
			switch color[d] {
			case white:
				visit(d)
			case grey:
				// The stack from d to i follows "depends on" edges, and i
				// depends on d: d → … → i → d is a cycle.
				k := len(stack) - 1
				for stack[k] != d {
					k--
				}
				cy := append([]int(nil), stack[k:]...)
				cy = append(cy, d)
				out = append(out, cy)
			}
		}
		stack = stack[:len(stack)-1]
		color[i] = black
	}
	for i := range g.deps {
		if color[i] == white {
			visit(i)
		}
	}
	return out
}

// topo returns the steps with every step after all its users (reverse
// topological order), so depth can be computed in one pass.
func (g *graph) topo() []int {
	n := len(g.deps)
	pending := make([]int, n) // users not yet placed
	for i := range g.users {
		pending[i] = len(g.users[i])
	}
	var order, queue []int
	for i := n - 1; i >= 0; i-- {
		if pending[i] == 0 {
			queue = append(queue, i)
		}
	}
	for len(queue) > 0 {
		i := queue[0]
		queue = queue[1:]
		order = append(order, i)
		for _, d := range g.deps[i] {
			pending[d]--
			if pending[d] == 0 {
				queue = append(queue, d)
			}
		}
	}
	return order
}
