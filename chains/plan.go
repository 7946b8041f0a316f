package chains

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
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
