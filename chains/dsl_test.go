package chains

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/airs-dev/airs/pipeline"
)

// The seed's form, as written in the design.
const seedYAML = `pipeline: summarize-papers
description: Summarize the research papers in a folder
inputs: {folder: {type: string, default: documents}}
steps:
  - id: list
    tool: list-files
    params: {space: "{{input.folder}}", pattern: "*.pdf"}
  - id: extract
    tool: pdf-extract
    foreach: "{{steps.list.output.files}}"
    params: {space: "{{input.folder}}", path: "{{item.name}}"}
  - id: summarize
    tool: summarize
    foreach: "{{steps.extract.output}}"
    params: {text: "{{item.text}}", max_words: 80}
output: "{{steps.summarize.output}}"
`

func TestParseSeedForm(t *testing.T) {
	c, err := Parse("seed.yaml", []byte(seedYAML))
	if err != nil {
		t.Fatal(err)
	}
	if c.Name != "summarize-papers" || c.Description == "" || len(c.Steps) != 3 {
		t.Fatalf("chain %+v", c)
	}
	in := c.Inputs["folder"]
	if in == nil || in.Type != "string" || in.Default != "documents" || !in.HasDefault || in.Pos.Line != 3 {
		t.Errorf("input folder = %+v", in)
	}
	ex := c.Steps[1]
	if ex.ID != "extract" || ex.Tool != "pdf-extract" || ex.Pos.String() != "seed.yaml:8" {
		t.Errorf("step 1 = %+v", ex)
	}
	if r := ex.Foreach.Ref(); r == nil || r.String() != "{{steps.list.output.files}}" {
		t.Errorf("foreach = %v", ex.Foreach)
	}
	if src, _ := c.Steps[2].Params.MarshalJSON(); string(src) != `{"max_words":80,"text":"{{item.text}}"}` {
		t.Errorf("summarize params = %s", src)
	}
	g, err := c.structure()
	if err != nil {
		t.Fatal(err)
	}
	if g.depth[0] != 3 || g.depth[1] != 2 || g.depth[2] != 1 {
		t.Errorf("depths %v, want [3 2 1]", g.depth)
	}

	// Run the seed against stand-ins for the builtin tools.
	x := newTestExec()
	x.add(pipeline.Tool{Name: "list-files"}, func(ctx context.Context, p json.RawMessage, _ *pipeline.Call) (json.RawMessage, error) {
		return json.RawMessage(`{"files":[{"name":"a.pdf"},{"name":"b.pdf"}]}`), nil
	})
	x.add(pipeline.Tool{Name: "pdf-extract"}, func(ctx context.Context, p json.RawMessage, _ *pipeline.Call) (json.RawMessage, error) {
		return json.RawMessage(`{"text":` + string(p) + `}`), nil
	})
	x.add(pipeline.Tool{Name: "summarize"}, func(ctx context.Context, p json.RawMessage, _ *pipeline.Call) (json.RawMessage, error) {
		return p, nil
	})
	res, err := Run(context.Background(), c, nil, opts(x))
	if err != nil {
		t.Fatal(err)
	}
	jsonEq(t, res.Output, `[
		{"text": {"space": "documents", "path": "a.pdf"}, "max_words": 80},
		{"text": {"space": "documents", "path": "b.pdf"}, "max_words": 80}]`)
}

func TestParseExamples(t *testing.T) {
	files, _ := filepath.Glob("examples/*.yaml")
	if len(files) < 2 {
		t.Fatalf("examples: %v", files)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		c, err := Parse(f, data)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		if c.Name+".yaml" != filepath.Base(f) {
			t.Errorf("%s: pipeline name %q does not match the file", f, c.Name)
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ name, src, want string }{
		{"empty", "", "x.yaml: empty pipeline"},
		{"only a comment", "# nothing\n", "x.yaml: empty pipeline"},
		{"not a mapping", "- a\n- b\n", "x.yaml:1: a pipeline is a mapping"},
		{"yaml syntax", "steps:\n  - id: a\n   tool: x\n", "x.yaml:1: did not find expected '-' indicator"},
		{"two documents", "steps: []\n---\nsteps: []\n", "x.yaml:2: more than one YAML document"},
		{"no steps", "pipeline: p\n", "x.yaml:1: no steps:"},
		{"empty steps", "steps: []\n", "x.yaml:1: chain has no steps"},
		{"steps not a list", "steps: {a: b}\n", "x.yaml:1: steps: want a list of steps"},
		{"unknown top key", "pipeline: p\nstep: []\n", `x.yaml:2: unknown key "step"`},
		{"duplicate top key", "steps: []\nsteps: []\n", `x.yaml:2: duplicate key "steps" (first at line 1)`},
		{"step not a mapping", "steps:\n  - hello\n", "x.yaml:2: a step is a mapping"},
		{"step without id", "steps:\n  - tool: echo\n", "x.yaml:2: step at line 2: no id"},
		{"step without tool", "steps:\n  - id: a\n", "x.yaml:2: step a: no tool"},
		{"unknown step key", "steps:\n  - id: a\n    tool: echo\n    parms: {}\n", `x.yaml:4: step a: unknown key "parms"`},
		{"params not a mapping", "steps:\n  - id: a\n    tool: echo\n    params: [1]\n", "x.yaml:4: step a: params: want a mapping"},
		{"bad reference", "steps:\n  - id: a\n    tool: echo\n    params:\n      q: \"{{inptu.x}}\"\n", `x.yaml:5: step a: params: bad reference {{inptu.x}}: unknown root "inptu"`},
		{"unclosed reference", "steps:\n  - id: a\n    tool: echo\n    params:\n      q: \"{{input.x\"\n", "x.yaml:5: step a: params: unclosed {{"},
		{"bad id", "steps:\n  - id: a.b\n    tool: echo\n", `x.yaml:2: step a.b: bad id "a.b"`},
		{"bad timeout", "steps:\n  - id: a\n    tool: echo\n    timeout: soon\n", `x.yaml:4: step a: timeout: want a positive duration`},
		{"bad policy", "on_failure: retry\nsteps:\n  - id: a\n    tool: echo\n", `x.yaml:1: on_failure: want stop or continue, not "retry"`},
		{"bad needs", "steps:\n  - id: a\n    tool: echo\n    needs: {x: 1}\n", "x.yaml:4: step a: needs: want a step id"},
		{"unknown needs", "steps:\n  - id: a\n    tool: echo\n    needs: [b]\n", `x.yaml:2: step a: needs: no step "b"`},
		{"merge key", "base: &b {tool: echo}\nsteps:\n  - id: a\n    <<: *b\n", `x.yaml:1: unknown key "base"`},
		{"merge key in step", "steps:\n  - id: a\n    tool: echo\n    <<: {timeout: 1s}\n", "x.yaml:4: step a: merge keys (<<) are not supported"},
		{"nan", "steps:\n  - id: a\n    tool: echo\n    params: {x: .nan}\n", "x.yaml:4: step a: params: NaN is not a JSON number"},
		{"item in output", "steps:\n  - id: a\n    tool: echo\noutput: \"{{item}}\"\n", "x.yaml:4: output: {{item}} is only defined"},
		{"unknown input key", "inputs: {a: {type: string, dflt: x}}\nsteps:\n  - id: a\n    tool: echo\n", `x.yaml:1: input a: unknown key "dflt"`},
		{"reference in a default", "inputs: {a: {default: \"{{input.b}}\"}}\nsteps:\n  - id: a\n    tool: echo\n", "x.yaml:1: input a: default cannot hold references"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("x.yaml", []byte(tc.src))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v\nwant %q", err, tc.want)
			}
		})
	}
}

func TestParseValues(t *testing.T) {
	c, err := Parse("v.yaml", []byte(`
timeout: 90s
on_failure: continue
inputs:
  shorthand: integer
  untyped:
steps:
  - id: a
    tool: echo
    timeout: 1.5s
    needs: b
    params:
      int: 42
      big: 12345678901234567890
      hex: 0x1F
      float: 2.5
      exp: 1e3
      bool: yes-not-a-bool
      yes: true
      null: ~
      date: 2024-01-02
      quoted: "42"
      list: [1, two, {three: 3}]
      alias: &x {k: v}
      again: *x
      escaped: '\{{not a ref}}'
  - id: b
    tool: echo
`))
	if err != nil {
		t.Fatal(err)
	}
	if c.Timeout != 90*time.Second || c.OnFailure != ContinueOnFailure || c.Name != "v" {
		t.Errorf("chain %+v", c)
	}
	if c.Inputs["shorthand"].Type != "integer" || c.Inputs["untyped"] == nil {
		t.Errorf("inputs %+v", c.Inputs)
	}
	a := c.Steps[0]
	if a.Timeout != 1500*time.Millisecond || len(a.Needs) != 1 || a.Needs[0] != "b" {
		t.Errorf("step a %+v", a)
	}
	src, _ := a.Params.MarshalJSON()
	jsonEq(t, src, `{"int":42,"big":12345678901234567890,"hex":31,"float":2.5,"exp":1000,
		"bool":"yes-not-a-bool","yes":true,"null":null,"date":"2024-01-02","quoted":"42",
		"list":[1,"two",{"three":3}],"alias":{"k":"v"},"again":{"k":"v"},"escaped":"\\{{not a ref}}"}`)
	v, err := a.Params.render(&env{})
	if err != nil || v.(map[string]any)["escaped"] != "{{not a ref}}" {
		t.Errorf("escaped renders as %v (%v)", v.(map[string]any)["escaped"], err)
	}
}

// Aliases cannot blow a small document up.
func TestParseAliasBomb(t *testing.T) {
	// Seven levels of ten aliases each: 10^7 values once expanded.
	lines := []string{"a: &a [x, x, x, x, x, x, x, x, x, x]"}
	names := []string{"a", "b", "c", "d", "e", "f", "g"}
	for i := 1; i < len(names); i++ {
		lines = append(lines, names[i]+": &"+names[i]+" ["+strings.Repeat("*"+names[i-1]+", ", 9)+"*"+names[i-1]+"]")
	}
	doc := "steps:\n  - id: s\n    tool: echo\n    params:\n"
	for _, l := range lines {
		doc += "      " + l + "\n"
	}
	start := time.Now()
	_, err := Parse("bomb.yaml", []byte(doc))
	if err == nil || !strings.Contains(err.Error(), "document too large") {
		t.Errorf("err = %v", err)
	}
	if el := time.Since(start); el > 2*time.Second {
		t.Errorf("took %v", el)
	}
}
