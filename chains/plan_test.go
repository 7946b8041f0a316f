package chains

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/airs-dev/airs/pipeline"
)

const comparePlan = `{"steps": [
  {"id": "a", "function": "upper", "arguments": {"text": "price 10", "delay_ms": 100}},
  {"id": "b", "function": "upper", "arguments": {"text": "price 12", "delay_ms": 100}},
  {"id": "c", "function": "echo", "arguments": {
     "left": "{{steps.a.output.text}}", "right": "{{steps.b.output}}", "note": "{{steps.a.output.text}} vs {{steps.b.output.text}}"}}
]}`

func TestParsePlan(t *testing.T) {
	c, err := ParsePlan([]byte(comparePlan))
	if err != nil {
		t.Fatal(err)
	}
	g, err := c.structure()
	if err != nil {
		t.Fatal(err)
	}
	// Dependencies come from references only: a and b are independent.
	if len(g.deps[0]) != 0 || len(g.deps[1]) != 0 || len(g.deps[2]) != 2 {
		t.Errorf("deps %v", g.deps)
	}
	x := stdExec()
	res, err := Run(context.Background(), c, nil, opts(x))
	if err != nil {
		t.Fatal(err)
	}
	// a and b (100ms each) ran at the same time.
	var a, b NodeTrace
	for _, n := range res.Trace {
		switch n.Node {
		case "a":
			a = n
		case "b":
			b = n
		}
	}
	if !a.Start.Before(b.End) || !b.Start.Before(a.End) {
		t.Errorf("a %v–%v and b %v–%v did not overlap", a.Start, a.End, b.Start, b.End)
	}
	// The output is the last step's.
	jsonEq(t, res.Output, `{"left":"PRICE 10","right":{"text":"PRICE 12"},"note":"PRICE 10 vs PRICE 12"}`)
}

func TestParsePlanForeach(t *testing.T) {
	c, err := ParsePlan([]byte(`{"steps":[
		{"id":"l","function":"list","arguments":{"n":3}},
		{"id":"u","function":"upper","foreach":"{{steps.l.output.files}}","arguments":{"text":"{{item.name}}"}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), c, nil, opts(stdExec()))
	if err != nil {
		t.Fatal(err)
	}
	jsonEq(t, res.Output, `[{"text":"F0"},{"text":"F1"},{"text":"F2"}]`)
}

func TestParsePlanErrors(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{``, "plan: not a JSON object"},
		{`[]`, "plan: not a JSON object"},
		{`{"steps": []} x`, "plan: trailing data"},
		{`{}`, "plan: no steps"},
		{`{"steps": []}`, "plan: chain has no steps"},
		{`{"steps": {}}`, "plan: steps: want a list"},
		{`{"steps": [], "extra": 1}`, `plan: unknown key "extra"`},
		{`{"steps": [1]}`, "plan: step #1: want an object"},
		{`{"steps": [{"function": "echo"}]}`, "plan: step #1: id: want a non-empty string"},
		{`{"steps": [{"id": "a"}]}`, "plan: step a: function: want a tool name"},
		{`{"steps": [{"id": "a", "function": "echo", "arguments": [1]}]}`, "plan: step a: arguments: want an object"},
		{`{"steps": [{"id": "a", "function": "echo", "args": {}}]}`, `plan: step a: unknown keys args`},
		{`{"steps": [{"id": "a", "function": "echo", "arguments": {"x": "{{steps.b.outptu}}"}}]}`, "plan: step a: arguments.x: bad reference"},
		{`{"steps": [{"id": "a", "function": "echo", "arguments": {"x": "{{steps.b.output}}"}}, {"id": "b", "function": "echo"}]}`, "plan: step a: forward reference to step b"},
		{`{"steps": [{"id": "a", "function": "echo", "arguments": {"x": "{{steps.z.output}}"}}]}`, `plan: step a: params: {{steps.z.output}}: no step "z"`},
		{`{"steps": [{"id": "a", "function": "echo"}, {"id": "a", "function": "echo"}]}`, "plan: step a: duplicate step id"},
		{`{"steps": [{"id": "a", "function": "echo", "foreach": 3}]}`, "plan: step a: foreach: want a reference string"},
	} {
		_, err := ParsePlan([]byte(tc.src))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParsePlan(%s):\n  err = %v\n want %q", tc.src, err, tc.want)
		}
	}
	// Validation names plan steps too.
	c, err := ParsePlan([]byte(`{"steps": [{"id": "a", "function": "count", "arguments": {"n": "x"}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(stdExec(), "alice"); err == nil || err.Error() != "plan: step a: params: at /n: got string, want integer" {
		t.Errorf("Validate: %v", err)
	}
}

// TestOutputPaths: the paths a planner may offer into a tool's output are
// the ones Validate resolves — declared keys, any index of an array, any key
// of an object that declares none, local $refs followed; nothing below a
// string; everything below what the schema leaves unknown (Open) — each with
// the type Validate checks; and a reference along each path validates
// against a parameter of that type (and not of another).
func TestOutputPaths(t *testing.T) {
	from := pipeline.Tool{Name: "src", ReturnSchema: json.RawMessage(`{
		"$defs": {"file": {"type": "object", "properties": {"path": {"type": "string"}, "size": {"type": "integer"}}, "additionalProperties": false}},
		"type": "object",
		"properties": {
			"files": {"type": "array", "items": {"$ref": "#/$defs/file"}},
			"text": {"type": "string"},
			"meta": {"type": "object", "additionalProperties": {"type": "number"}},
			"any": {},
			"pair": {"type": "array", "prefixItems": [{"type": "string"}, {"type": "boolean"}]},
			"bad key": {"type": "string"}
		},
		"additionalProperties": false}`)}
	paths, err := OutputPaths(from, 3, 100)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range paths {
		s := p.String() + " " + strings.Join(p.Types, "|")
		if p.Open {
			s += " open"
		}
		got = append(got, strings.Join(strings.Fields(s), " "))
	}
	want := []string{
		"object", ".any open", ".files array", ".meta object", ".pair array", ".text string",
		".files[N] object", ".meta.KEY number", ".pair[0] string", ".pair[1] boolean",
		".files[N].path string", ".files[N].size integer",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("OutputPaths:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if p, _ := OutputPaths(from, 1, 3); len(p) != 3 {
		t.Errorf("maxPaths 3: %d paths", len(p))
	}
	if p, _ := OutputPaths(pipeline.Tool{Name: "x"}, 4, 10); len(p) != 1 || !p[0].Open || p[0].Types != nil {
		t.Errorf("no return schema: %+v, want one open path", p)
	}

	// What Validate says of a reference along each path, into a string
	// parameter and an integer one.
	to := pipeline.Tool{Name: "dst", Parameters: json.RawMessage(`{"type": "object",
		"properties": {"s": {"type": "string"}, "n": {"type": "integer"}}}`)}
	cat := toolMap{"src": from, "dst": to}
	for _, p := range paths {
		ref := p.String()
		ref = strings.ReplaceAll(strings.ReplaceAll(ref, "[N]", "[3]"), ".KEY", ".k")
		for _, param := range []string{"s", "n"} {
			want, err := ParamTypes(to, param)
			if err != nil {
				t.Fatal(err)
			}
			plan := fmt.Sprintf(`{"steps": [{"id": "a", "function": "src"}, {"id": "b", "function": "dst", "arguments": {%q: "{{steps.a.output%s}}"}}]}`, param, ref)
			c, err := ParsePlan([]byte(plan))
			if err != nil {
				t.Fatalf("%s: %v", plan, err)
			}
			verr := c.Validate(cat, "u")
			if fits := TypesCompatible(p.Types, want); fits != (verr == nil) {
				t.Errorf("%s into %s (%v): TypesCompatible %v, Validate: %v", ref, param, want, fits, verr)
			}
		}
	}
	if _, err := ParamTypes(pipeline.Tool{Name: "c", Parameters: json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`)}, "x"); err == nil {
		t.Error("ParamTypes of an undeclared parameter of a closed schema: no error")
	}
}

// toolMap is a Catalog over fixed tools.
type toolMap map[string]pipeline.Tool

func (m toolMap) Tool(caller, name string) (pipeline.Tool, error) {
	t, ok := m[name]
	if !ok {
		return pipeline.Tool{}, fmt.Errorf("no tool %q", name)
	}
	return t, nil
}
