package chains

import (
	"context"
	"strings"
	"testing"
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
