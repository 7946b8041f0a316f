package chains

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	"github.com/airs-dev/airs/pipeline"
)

// planPos is the position every plan error carries.
var planPos = Pos{File: "plan"}

// ParsePlan compiles a plan emitted by a model into a chain:
//
//	{"steps": [
//	  {"id": "a", "function": "pdf-extract", "arguments": {"path": "a.pdf"}},
//	  {"id": "b", "function": "pdf-extract", "arguments": {"path": "b.pdf"}},
//	  {"id": "c", "function": "compare",
//	   "arguments": {"left": "{{steps.a.output.text}}", "right": "{{steps.b.output.text}}"}}
//	]}
//
// An argument string may be or contain references ({{steps.ID.output...}},
// {{input...}}); dependencies come from them alone, so steps that reference
// nothing of each other run in parallel. A step may also carry "foreach"
// (one reference to an array, with {{item}} in its arguments). The chain's
// output is the last step's. Like Parse, ParsePlan checks the structure;
// Validate checks tools and types. Errors read "plan: step ID: ...".
func ParsePlan(data []byte) (*Chain, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var top map[string]json.RawMessage
	if err := dec.Decode(&top); err != nil {
		return nil, &Error{Pos: planPos, Msg: "not a JSON object: " + err.Error()}
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, &Error{Pos: planPos, Msg: "trailing data after the plan"}
	}
	var errs errorList
	for k := range top {
		if k != "steps" {
			errs.add(planPos, "", "unknown key %q (want steps)", k)
		}
	}
	rawSteps, ok := top["steps"]
	if !ok {
		errs.add(planPos, "", "no steps")
		return nil, errs.err()
	}
	var steps []json.RawMessage
	if err := json.Unmarshal(rawSteps, &steps); err != nil || steps == nil {
		errs.add(planPos, "", "steps: want a list of steps")
		return nil, errs.err()
	}
	c := &Chain{Name: "plan", Pos: planPos}
	for i, raw := range steps {
		if s := planStep(i, raw, &errs); s != nil {
			c.Steps = append(c.Steps, s)
		}
	}
	if err := errs.err(); err != nil {
		return nil, err
	}
	if _, err := c.structure(); err != nil {
		return nil, err
	}
	return c, nil
}

func planStep(i int, raw json.RawMessage, errs *errorList) *Step {
	v, err := decodeJSON(raw)
	m, ok := v.(map[string]any)
	if err != nil || !ok {
		errs.add(planPos, fmt.Sprintf("#%d", i+1), "want an object with id, function, arguments")
		return nil
	}
	s := &Step{Pos: planPos}
	name := fmt.Sprintf("#%d", i+1)
	if id, ok := m["id"].(string); ok && id != "" {
		s.ID, name = id, id
	} else {
		errs.add(planPos, name, "id: want a non-empty string")
	}
	if fn, ok := m["function"].(string); ok && fn != "" {
		s.Tool = fn
	} else {
		errs.add(planPos, name, "function: want a tool name")
	}
	var unknown []string
	for k, val := range m {
		switch k {
		case "id", "function":
		case "arguments":
			if val == nil {
				continue
			}
			if _, ok := val.(map[string]any); !ok {
				errs.add(planPos, name, "arguments: want an object")
				continue
			}
			t, err := templateFromJSON(val)
			if err != nil {
				errs.add(planPos, name, "arguments.%s", err)
				continue
			}
			s.Params = t
		case "foreach":
			str, ok := val.(string)
			if !ok {
				errs.add(planPos, name, "foreach: want a reference string")
				continue
			}
			t, err := parseString(str)
			if err != nil {
				errs.add(planPos, name, "foreach: %v", err)
				continue
			}
			s.Foreach = t
		default:
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		errs.add(planPos, name, "unknown keys %s (want id, function, arguments, foreach)", strings.Join(unknown, ", "))
	}
	return s
}

// OutputPath is a path into a step's output that a whole-value reference,
// {{steps.ID.output<path>}}, may take, with what Validate knows of the value
// found there. A planner builds its reference grammar from these, so that
// every reference it lets a model write resolves and has the right type.
type OutputPath struct {
	// Elems are the path's keys and indexes. An index element with Index
	// AnyIndex stands for every index; a key element with Key "" for every
	// key (an object that declares no properties but allows others).
	Elems []PathElem
	// Types are the JSON types of the value there; nil when unknown.
	Types []string
	// Open means nothing is known below: every longer path resolves as
	// well, to a value of unknown type (so it fits any parameter).
	Open bool
}

// AnyIndex is the Index of a path element that stands for every index.
const AnyIndex = -1

// String writes the path as a reference does, with [N] for any index and
// .KEY for any key: "" (the whole output), ".text", ".files[N].path".
func (p OutputPath) String() string {
	var b strings.Builder
	for _, e := range p.Elems {
		switch {
		case e.IsIndex && e.Index == AnyIndex:
			b.WriteString("[N]")
		case !e.IsIndex && !e.All && e.Key == "":
			b.WriteString(".KEY")
		default:
			b.WriteString(e.String())
		}
	}
	return b.String()
}

// OutputPaths lists the paths into the output of a step calling t, up to
// maxDepth keys and indexes deep and at most maxPaths of them (shallow paths
// first), as Validate resolves them against t's return schema: a tool with
// no return schema has one open path, the whole output. Keys that a
// reference cannot write plainly (.key) are left out.
func OutputPaths(t pipeline.Tool, maxDepth, maxPaths int) ([]OutputPath, error) {
	ts, err := toolSchemasFor(t)
	if err != nil {
		return nil, err
	}
	if ts.returns == nil {
		return []OutputPath{{Open: true}}, nil
	}
	var out []OutputPath
	// Breadth first, so a cut at maxPaths keeps the shallow paths.
	type item struct {
		n    snode
		path []PathElem
	}
	queue := []item{{n: snode{root: ts.returns, s: ts.returns}}}
	for len(queue) > 0 && len(out) < maxPaths {
		it := queue[0]
		queue = queue[1:]
		n := it.n
		open := isOpen(n)
		out = append(out, OutputPath{Elems: it.path, Types: n.types(), Open: open})
		if open || len(it.path) >= maxDepth {
			continue
		}
		child := func(n snode, e PathElem) {
			p := append(slices.Clip(it.path), e)
			queue = append(queue, item{n: n, path: p})
		}
		// The same steps as walkType: a key needs a value that may be an
		// object, an index one that may be an array.
		tt := n.types()
		if tt == nil || slices.Contains(tt, "object") {
			props, _ := n.obj()["properties"].(map[string]any)
			keys := make([]string, 0, len(props))
			for k := range props {
				if isPlainKey(k) {
					keys = append(keys, k)
				}
			}
			slices.Sort(keys)
			for _, k := range keys {
				sub, _ := n.prop(k)
				child(sub, PathElem{Key: k})
			}
			// Any key, only where no key is declared: a key pattern would
			// otherwise also write declared keys, whose types differ.
			if len(props) == 0 {
				if sub, closed := n.prop(""); !closed {
					child(sub, PathElem{})
				}
			}
		}
		if tt == nil || slices.Contains(tt, "array") {
			if pi, ok := n.obj()["prefixItems"].([]any); ok {
				for i := range pi {
					child(n.item(i), PathElem{Index: i, IsIndex: true})
				}
			} else {
				child(n.item(0), PathElem{Index: AnyIndex, IsIndex: true})
			}
		}
	}
	return out, nil
}

// isOpen reports whether every path below n resolves, to a value of
// unknown type: n is unknown, or a schema that says nothing of keys or
// indexes (such as {}).
func isOpen(n snode) bool {
	if !n.known() {
		return true
	}
	if n.types() != nil {
		return false
	}
	m := n.obj()
	if props, _ := m["properties"].(map[string]any); len(props) > 0 {
		return false
	}
	if _, ok := m["prefixItems"]; ok {
		return false
	}
	sub, closed := n.prop("")
	return !closed && !sub.known() && !n.item(0).known()
}

// ParamTypes is the JSON types Validate expects of top-level parameter name
// of tool t (nil: unknown, anything fits).
func ParamTypes(t pipeline.Tool, name string) ([]string, error) {
	ts, err := toolSchemasFor(t)
	if err != nil {
		return nil, err
	}
	if ts.params == nil {
		return nil, nil
	}
	sub, closed := snode{root: ts.params, s: ts.params}.prop(name)
	if closed {
		return nil, fmt.Errorf("tool %s has no parameter %q", t.Name, name)
	}
	return sub.types(), nil
}

// TypesCompatible reports whether Validate lets a reference whose value has
// one of the types src fill a parameter of one of the types dst (nil:
// unknown, compatible with everything; an integer is a number and a number
// may be an integer).
func TypesCompatible(src, dst []string) bool { return compatible(src, dst) }
