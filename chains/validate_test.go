package chains

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/airs-dev/airs/pipeline"
)

// validateYAML parses src and validates it for caller; it returns the
// error text ("" when valid).
func validateYAML(t *testing.T, x *testExec, caller, src string) string {
	t.Helper()
	c, err := Parse("test.yaml", []byte(src))
	if err == nil {
		err = c.Validate(x, caller)
	}
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestValidateErrors(t *testing.T) {
	x := stdExec()
	for _, tc := range []struct {
		name, src string
		caller    string
		want      []string // every one must appear in the error
	}{
		{name: "valid", src: `
steps:
  - id: a
    tool: list
    params: {n: 3}
  - id: b
    tool: upper
    foreach: "{{steps.a.output.files}}"
    params: {text: "{{item.name}}"}
  - id: c
    tool: count
    params: {n: "{{steps.a.output.files[0].size}}"}
`},
		{name: "pluck and join", src: `
steps:
  - id: a
    tool: list
    params: {n: 3}
  - id: b
    tool: upper
    params: {text: "{{steps.a.output.files[*].name | join \", \"}}"}
`},
		{name: "pluck without join into a string", src: `
steps:
  - id: a
    tool: list
    params: {n: 3}
  - id: b
    tool: upper
    params: {text: "{{steps.a.output.files[*].name}}"}
`, want: []string{"test.yaml:8: step b: params.text: {{steps.a.output.files[*].name}} is array; the parameter wants string"}},
		{name: "join of a non-array", src: `
steps:
  - id: a
    tool: count
    params: {n: 3}
  - id: b
    tool: upper
    params: {text: "{{steps.a.output.n | join}}"}
`, want: []string{"join wants an array, not integer"}},
		{name: "pluck a missing property", src: `
steps:
  - id: a
    tool: list
    params: {n: 3}
  - id: b
    tool: upper
    params: {text: "{{steps.a.output.files[*].title | join}}"}
`, want: []string{`steps.a.output.files[*] has no property "title" (it has: name, size)`}},
		{name: "cycle", src: `
steps:
  - id: a
    tool: echo
    params: {x: "{{steps.b.output}}"}
  - id: b
    tool: echo
    params: {x: "{{steps.a.output}}"}
`, want: []string{"test.yaml:3: step a: cycle: a → b → a"}},
		{name: "cycle through needs", src: `
steps:
  - id: a
    tool: echo
    needs: [c]
  - id: b
    tool: echo
    params: {x: "{{steps.a.output}}"}
  - id: c
    tool: echo
    params: {x: "{{steps.b.output}}"}
`, want: []string{"step a: cycle: a → c → b → a"}},
		{name: "self reference", src: `
steps:
  - id: a
    tool: echo
    params: {x: "{{steps.a.output}}"}
`, want: []string{"step a: cycle: a → a"}},
		{name: "forward reference", src: `
steps:
  - id: a
    tool: echo
    params:
      x: "{{steps.b.output}}"
  - id: b
    tool: echo
`, want: []string{"test.yaml:6: step a: forward reference to step b (defined later, at test.yaml:7)"}},
		{name: "unknown step", src: `
steps:
  - id: a
    tool: echo
    params: {x: "{{steps.nope.output}}"}
`, want: []string{"test.yaml:5: step a: params: {{steps.nope.output}}: no step \"nope\""}},
		{name: "unknown tool", src: `
steps:
  - id: a
    tool: no-such-tool
`, want: []string{"test.yaml:3: step a: tool no-such-tool: unknown tool"}},
		{name: "denied tool", caller: "alice", src: `
steps:
  - id: a
    tool: secret
`, want: []string{"test.yaml:3: step a: tool secret: caller \"alice\" lacks capability Admin(*)"}},
		{name: "allowed for root", caller: "root", src: `
steps:
  - id: a
    tool: secret
`},
		{name: "literal of the wrong type", src: `
steps:
  - id: a
    tool: count
    params:
      n: "three"
`, want: []string{"test.yaml:6: step a: params: at /n: got string, want integer"}},
		{name: "interpolation into an integer", src: `
steps:
  - id: a
    tool: list
    params: {n: 2}
  - id: b
    tool: count
    params:
      n: "{{steps.a.output.files[0].size}}0"
`, want: []string{"test.yaml:9: step b: params.n: a string with references inside can only fill a string; the parameter wants integer"}},
		{name: "reference of the wrong type", src: `
steps:
  - id: a
    tool: list
    params: {n: 2}
  - id: b
    tool: count
    params:
      n: "{{steps.a.output.files[0].name}}"
`, want: []string{"test.yaml:9: step b: params.n: {{steps.a.output.files[0].name}} is string; the parameter wants integer"}},
		{name: "reference to a missing output property", src: `
steps:
  - id: a
    tool: list
    params: {n: 2}
  - id: b
    tool: upper
    params:
      text: "{{steps.a.output.docs}}"
`, want: []string{`{{steps.a.output.docs}}: steps.a.output has no property "docs" (it has: files)`}},
		{name: "foreach over a non-array", src: `
steps:
  - id: a
    tool: count
    params: {n: 2}
  - id: b
    tool: upper
    foreach: "{{steps.a.output.n}}"
    params: {text: x}
`, want: []string{"step b: foreach: {{steps.a.output.n}} is integer, not an array"}},
		{name: "item of the wrong type", src: `
steps:
  - id: a
    tool: list
    params: {n: 2}
  - id: b
    tool: count
    foreach: "{{steps.a.output.files}}"
    params: {n: "{{item.name}}"}
`, want: []string{"{{item.name}} is string; the parameter wants integer"}},
		{name: "missing required and unknown param", src: `
steps:
  - id: a
    tool: upper
    params: {txt: "{{input.x}}"}
`, want: []string{`step a: params: missing required property "text"`, `step a: params: unknown property "txt" (allowed: delay_ms, text)`}},
		{name: "no params for a tool that needs some", src: `
steps:
  - id: a
    tool: count
`, want: []string{`step a: params: missing property 'n'`}},
		{name: "item outside foreach", src: `
steps:
  - id: a
    tool: echo
    params: {x: "{{item}}"}
`, want: []string{"step a: params: {{item}} is only defined in the params of a foreach step"}},
		{name: "foreach not a single reference", src: `
steps:
  - id: a
    tool: echo
    foreach: "x {{input.list}}"
`, want: []string{"step a: foreach must be exactly one reference"}},
		{name: "undeclared input", src: `
inputs: {folder: {type: string}}
steps:
  - id: a
    tool: echo
    params: {x: "{{input.fodler}}"}
`, want: []string{`{{input.fodler}}: no input named "fodler"`}},
		{name: "declared input of the wrong type", src: `
inputs: {n: {type: string}}
steps:
  - id: a
    tool: count
    params: {n: "{{input.n}}"}
`, want: []string{"{{input.n}} is string; the parameter wants integer"}},
		{name: "several errors at once", src: `
steps:
  - id: a
    tool: nope
  - id: a
    tool: echo
`, want: []string{"test.yaml:5: step a: duplicate step id (first at test.yaml:3)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			caller := tc.caller
			if caller == "" {
				caller = "alice"
			}
			got := validateYAML(t, x, caller, tc.src)
			if len(tc.want) == 0 {
				if got != "" {
					t.Fatalf("unexpected error: %s", got)
				}
				return
			}
			if got == "" {
				t.Fatalf("no error; want %q", tc.want)
			}
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("error\n%s\ndoes not contain\n%s", got, w)
				}
			}
		})
	}
}

// A chain built in Go, without YAML, validates the same way; errors name
// the step without a position.
func TestValidateGoChain(t *testing.T) {
	x := stdExec()
	c := &Chain{Name: "g", Steps: []*Step{
		{ID: "a", Tool: "count", Params: MustTemplate(map[string]any{"n": 1})},
		{ID: "b", Tool: "upper", Params: MustTemplate(map[string]any{"text": "{{steps.a.output.n}}"})},
	}}
	err := c.Validate(x, "alice")
	if err == nil || err.Error() != "step b: params.text: {{steps.a.output.n}} is integer; the parameter wants string" {
		t.Fatalf("err = %v", err)
	}
	c.Steps[1].Params = MustTemplate(map[string]any{"text": "n is {{steps.a.output.n}}"})
	if err := c.Validate(x, "alice"); err != nil {
		t.Fatalf("interpolation into a string: %v", err)
	}
}

// A reference into a step whose tool declares no return schema is unknown
// statically: accepted, and checked by the executor at call time.
func TestValidateUnknownTypesAccepted(t *testing.T) {
	x := stdExec()
	x.add(pipeline.Tool{Name: "opaque"}, nil)
	err := validateYAML(t, x, "alice", `
steps:
  - id: a
    tool: opaque
  - id: b
    tool: count
    params: {n: "{{steps.a.output.whatever[3].deep}}"}
`)
	if err != "" {
		t.Fatal(err)
	}
	_ = json.RawMessage(nil)
}
