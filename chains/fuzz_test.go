package chains

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airs-dev/airs/pipeline"
)

// anyTool is a catalog with every tool, taking any object.
type anyTool struct{}

func (anyTool) Tool(_, name string) (pipeline.Tool, error) {
	return pipeline.Tool{Name: name, Parameters: json.RawMessage(`{"type":"object"}`)}, nil
}

// checkErr: every error is an *Error (or several joined) positioned in file.
func checkErr(t *testing.T, err error, file string) {
	t.Helper()
	var errs []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	} else {
		errs = []error{err}
	}
	for _, e := range errs {
		var ce *Error
		if !errors.As(e, &ce) {
			t.Fatalf("error %T %v is not a *chains.Error", e, e)
		}
		if !strings.HasPrefix(e.Error(), file) {
			t.Fatalf("error %q does not start with %q", e, file)
		}
	}
}

// checkChain: a parsed chain is structurally valid, its templates print
// back to a form that parses to the same thing, and validation and
// rendering do not panic.
func checkChain(t *testing.T, c *Chain) {
	t.Helper()
	if len(c.Steps) == 0 {
		t.Fatal("parsed a chain with no steps")
	}
	if _, err := c.structure(); err != nil {
		t.Fatalf("parsed chain fails its structure check: %v", err)
	}
	_ = c.Validate(anyTool{}, "fuzz")
	for _, s := range c.Steps {
		for _, tm := range []*Template{s.Params, s.Foreach} {
			if tm == nil {
				continue
			}
			src, err := tm.MarshalJSON()
			if err != nil {
				t.Fatalf("step %s: MarshalJSON: %v", s.ID, err)
			}
			// decoded as NewTemplate takes values (UseNumber: 1.0 stays 1.0)
			var v any
			dec := json.NewDecoder(bytes.NewReader(src))
			dec.UseNumber()
			if err := dec.Decode(&v); err != nil {
				t.Fatalf("step %s: %s: %v", s.ID, src, err)
			}
			back, err := NewTemplate(v)
			if err != nil {
				t.Fatalf("step %s: %s does not parse back: %v", s.ID, src, err)
			}
			if src2, _ := back.MarshalJSON(); string(src2) != string(src) {
				t.Fatalf("step %s: round trip %s -> %s", s.ID, src, src2)
			}
			_, _ = tm.render(&env{input: map[string]any{}, steps: map[string]any{}, hasItem: true})
		}
	}
}

func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("examples/*.yaml")
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(seedYAML))
	f.Add([]byte("steps:\n  - id: a\n    tool: echo\n    params: {x: \"{{steps.b.output[0]}}\"}\n  - {id: b, tool: echo, needs: a}\n"))
	f.Add([]byte("steps:\n  - id: a\n    tool: t\n    params: {x: &x [1, *x]}\n"))
	f.Add([]byte("inputs: {a: int}\nsteps: [{id: a, tool: b, foreach: '{{input.a}}', params: {q: '{{item | join \"-\"}}'}}]\n"))
	f.Add([]byte("steps:\n - id: a\n   tool: t\n   params:\n     k: '\\{{x}} {{input[\"a b\"][*]}}'\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse("fuzz.yaml", data)
		if err != nil {
			checkErr(t, err, "fuzz.yaml")
			return
		}
		checkChain(t, c)
	})
}

func FuzzParsePlan(f *testing.F) {
	f.Add([]byte(comparePlan))
	f.Add([]byte(`{"steps":[{"id":"l","function":"list","arguments":{"n":3}},{"id":"u","function":"upper","foreach":"{{steps.l.output.files}}","arguments":{"text":"{{item.name}}"}}]}`))
	f.Add([]byte(`{"steps":[{"id":"a","function":"f","arguments":{"x":"{{steps.a.output}}"}}]}`))
	f.Add([]byte(`{"steps":[{"id":"a","function":"f","arguments":{"x":["{{input}}",{"y":"{{input.q[2] | join}}"}]}}]}`))
	f.Add([]byte(`{"steps":[{"id":"a","function":"f","arguments":null}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParsePlan(data)
		if err != nil {
			checkErr(t, err, "plan")
			return
		}
		checkChain(t, c)
		// The plan prints back as a plan that parses to the same chain.
		var p struct {
			Steps []map[string]any `json:"steps"`
		}
		for _, s := range c.Steps {
			m := map[string]any{"id": s.ID, "function": s.Tool}
			if s.Params != nil {
				m["arguments"] = s.Params
			}
			if s.Foreach != nil {
				m["foreach"] = s.Foreach
			}
			p.Steps = append(p.Steps, m)
		}
		raw, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		c2, err := ParsePlan(raw)
		if err != nil {
			t.Fatalf("reprinted plan %s: %v", raw, err)
		}
		if len(c2.Steps) != len(c.Steps) {
			t.Fatalf("reprinted plan has %d steps, want %d", len(c2.Steps), len(c.Steps))
		}
	})
}
