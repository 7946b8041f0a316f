package chains

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Parse compiles a pipeline written in the YAML DSL into a chain:
//
//	pipeline: summarize-papers          # name (default: the file name)
//	description: ...
//	inputs:                             # optional; when present, only these
//	  folder: {type: string, default: documents}
//	on_failure: stop                    # or continue
//	timeout: 2m                         # the whole chain's budget
//	steps:
//	  - id: list
//	    tool: list-files
//	    params: {space: "{{input.folder}}", pattern: "*.pdf"}
//	  - id: extract
//	    tool: pdf-extract
//	    foreach: "{{steps.list.output.files}}"
//	    params: {space: "{{input.folder}}", path: "{{item.name}}"}
//	    timeout: 30s                    # optional cap per call
//	    needs: [other]                  # optional extra dependencies
//	output: "{{steps.extract.output}}"   # default: the last step's output
//
// A param whose whole value is one reference keeps the referenced value's
// JSON type; a reference inside a longer string is interpolated (strings as
// they are, other values as JSON); `\{{` writes a literal "{{".
//
// Parse checks the structure (see Validate) and reports every error found
// as "file:line: step ID: message". Tools are checked by Validate.
func Parse(filename string, data []byte) (*Chain, error) {
	p := &dslParser{file: filename, budget: maxNodes}
	c, err := p.parse(data)
	if err != nil {
		return nil, err
	}
	if _, err := c.structure(); err != nil {
		return nil, err
	}
	return c, nil
}

// maxNodes bounds the YAML nodes a document may expand to (aliases make
// small documents large).
const maxNodes = 100000

type dslParser struct {
	file   string
	errs   errorList
	budget int
}

func (p *dslParser) pos(n *yaml.Node) Pos {
	if n == nil {
		return Pos{File: p.file}
	}
	return Pos{File: p.file, Line: n.Line}
}

func (p *dslParser) errorf(n *yaml.Node, step, format string, args ...any) {
	p.errs.add(p.pos(n), step, format, args...)
}

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

func (p *dslParser) parse(data []byte) (*Chain, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &Error{Pos: Pos{File: p.file}, Msg: "empty pipeline"}
		}
		msg := err.Error()
		if m := yamlLine.FindStringSubmatch(msg); m != nil {
			line, _ := strconv.Atoi(m[1])
			return nil, &Error{Pos: Pos{File: p.file, Line: line}, Msg: m[2], Syntax: true}
		}
		return nil, &Error{Pos: Pos{File: p.file}, Msg: strings.TrimPrefix(msg, "yaml: "), Syntax: true}
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, &Error{Pos: p.pos(&extra), Msg: "more than one YAML document", Syntax: true}
	} else if !errors.Is(err, io.EOF) {
		return nil, &Error{Pos: Pos{File: p.file}, Msg: strings.TrimPrefix(err.Error(), "yaml: "), Syntax: true}
	}
	root := &doc
	if root.Kind == yaml.DocumentNode {
		if len(root.Content) != 1 {
			return nil, &Error{Pos: p.pos(root), Msg: "empty pipeline"}
		}
		root = root.Content[0]
	}
	root = p.deref(root)
	if root == nil || root.Kind != yaml.MappingNode {
		return nil, &Error{Pos: p.pos(root), Msg: "a pipeline is a mapping with pipeline:, steps: …"}
	}
	c := &Chain{Pos: Pos{File: p.file, Line: root.Line}}
	var stepsNode *yaml.Node
	p.mapping(root, "", func(key string, k, v *yaml.Node) {
		switch key {
		case "pipeline", "name":
			c.Name = p.str(v, "", key)
		case "description":
			c.Description = p.str(v, "", key)
		case "inputs":
			c.Inputs = p.inputs(v)
		case "steps":
			stepsNode = v
		case "output":
			c.Output = p.template(v, "", "output")
		case "on_failure":
			switch f := FailurePolicy(p.str(v, "", key)); f {
			case StopOnFailure, ContinueOnFailure:
				c.OnFailure = f
			default:
				p.errorf(v, "", "on_failure: want stop or continue, not %q", f)
			}
		case "timeout":
			c.Timeout = p.duration(v, "")
		default:
			p.errorf(k, "", "unknown key %q (want pipeline, description, inputs, steps, output, on_failure, timeout)", key)
		}
	})
	if c.Name == "" {
		c.Name = strings.TrimSuffix(strings.TrimSuffix(baseName(p.file), ".yaml"), ".yml")
	}
	switch {
	case stepsNode == nil:
		p.errorf(root, "", "no steps:")
	case p.deref(stepsNode).Kind != yaml.SequenceNode:
		p.errorf(stepsNode, "", "steps: want a list of steps")
	default:
		for _, sn := range p.deref(stepsNode).Content {
			if st := p.step(sn); st != nil {
				c.Steps = append(c.Steps, st)
			}
		}
	}
	if err := p.errs.err(); err != nil {
		return nil, err
	}
	return c, nil
}

func baseName(f string) string {
	if i := strings.LastIndexAny(f, `/\`); i >= 0 {
		return f[i+1:]
	}
	return f
}

// deref follows aliases (value charges the expansion budget).
func (p *dslParser) deref(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode; i++ {
		if i > 100 {
			return nil
		}
		n = n.Alias
	}
	return n
}

// mapping calls f for each key of a mapping node, reporting duplicate and
// non-string keys.
func (p *dslParser) mapping(n *yaml.Node, step string, f func(key string, k, v *yaml.Node)) {
	n = p.deref(n)
	if n == nil || n.Kind != yaml.MappingNode {
		p.errorf(n, step, "want a mapping")
		return
	}
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := p.deref(n.Content[i]), n.Content[i+1]
		if k == nil || k.Kind != yaml.ScalarNode {
			p.errorf(n.Content[i], step, "keys must be strings")
			continue
		}
		if k.Tag == "!!merge" {
			p.errorf(k, step, "merge keys (<<) are not supported")
			continue
		}
		if line, dup := seen[k.Value]; dup {
			p.errs = append(p.errs, &Error{Pos: p.pos(k), Step: step, Syntax: true,
				Msg: fmt.Sprintf("duplicate key %q (first at line %d)", k.Value, line)})
			continue
		}
		seen[k.Value] = k.Line
		f(k.Value, k, v)
	}
}

func (p *dslParser) str(n *yaml.Node, step, what string) string {
	n = p.deref(n)
	if n == nil || n.Kind != yaml.ScalarNode || n.ShortTag() == "!!null" {
		p.errorf(n, step, "%s: want a string", what)
		return ""
	}
	return n.Value
}

func (p *dslParser) duration(n *yaml.Node, step string) time.Duration {
	s := p.str(n, step, "timeout")
	if s == "" {
		return 0
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		p.errorf(n, step, "timeout: want a positive duration like 30s or 2m, not %q", s)
		return 0
	}
	return d
}

func (p *dslParser) inputs(n *yaml.Node) map[string]*Input {
	ins := map[string]*Input{}
	p.mapping(n, "", func(name string, k, v *yaml.Node) {
		in := &Input{Pos: p.pos(k)}
		ins[name] = in
		if vv := p.deref(v); vv != nil && vv.Kind == yaml.ScalarNode && vv.ShortTag() != "!!null" {
			in.Type = vv.Value // shorthand: `topic: string`
			return
		} else if vv != nil && vv.ShortTag() == "!!null" {
			return
		}
		p.mapping(v, "", func(key string, kk, vv *yaml.Node) {
			switch key {
			case "type":
				in.Type = p.str(vv, "", "input "+name+": type")
			case "description":
				in.Description = p.str(vv, "", "input "+name+": description")
			case "default":
				t := p.template(vv, "", "input "+name+": default")
				if t != nil && !t.IsLiteral() {
					p.errorf(vv, "", "input %s: default cannot hold references", name)
				} else if t != nil {
					in.Default, in.HasDefault = t.lit, true
				}
			default:
				p.errorf(kk, "", "input %s: unknown key %q (want type, description, default)", name, key)
			}
		})
	})
	return ins
}

func (p *dslParser) step(n *yaml.Node) *Step {
	n = p.deref(n)
	if n == nil || n.Kind != yaml.MappingNode {
		p.errorf(n, "", "a step is a mapping with id:, tool:, params:")
		return nil
	}
	s := &Step{Pos: p.pos(n)}
	// The id first, so that every other error can name the step.
	for i := 0; i+1 < len(n.Content); i += 2 {
		if k := p.deref(n.Content[i]); k != nil && k.Value == "id" {
			if v := p.deref(n.Content[i+1]); v != nil && v.Kind == yaml.ScalarNode {
				s.ID = v.Value
			}
		}
	}
	name := s.ID
	if name == "" {
		name = fmt.Sprintf("at line %d", n.Line)
	}
	p.mapping(n, name, func(key string, k, v *yaml.Node) {
		switch key {
		case "id":
			s.ID = p.str(v, name, "id")
		case "tool":
			s.Tool = p.str(v, name, "tool")
		case "description":
			p.str(v, name, "description")
		case "params":
			if vv := p.deref(v); vv == nil || vv.Kind != yaml.MappingNode {
				if vv == nil || vv.ShortTag() != "!!null" {
					p.errorf(v, name, "params: want a mapping of parameter names to values")
				}
				return
			}
			s.Params = p.template(v, name, "params")
		case "foreach":
			s.Foreach = p.template(v, name, "foreach")
		case "needs":
			vv := p.deref(v)
			switch {
			case vv != nil && vv.Kind == yaml.ScalarNode:
				s.Needs = []string{vv.Value}
			case vv != nil && vv.Kind == yaml.SequenceNode:
				for _, e := range vv.Content {
					if x := p.str(e, name, "needs"); x != "" {
						s.Needs = append(s.Needs, x)
					}
				}
			default:
				p.errorf(v, name, "needs: want a step id or a list of them")
			}
		case "timeout":
			s.Timeout = p.duration(v, name)
		default:
			p.errorf(k, name, "unknown key %q (want id, tool, params, foreach, needs, timeout, description)", key)
		}
	})
	if s.ID == "" {
		p.errorf(n, name, "no id")
	}
	if s.Tool == "" {
		p.errorf(n, name, "no tool")
	}
	return s
}

// template converts a YAML value into a Template, keeping each value's line.
func (p *dslParser) template(n *yaml.Node, step, where string) *Template {
	t, err := p.value(n, 0)
	if err != nil {
		var e *Error
		if errors.As(err, &e) {
			e.Step = step
			if e.Msg != "" && where != "" {
				e.Msg = where + ": " + e.Msg
			}
			p.errs = append(p.errs, e)
		} else {
			p.errorf(n, step, "%s: %v", where, err)
		}
		return nil
	}
	return t
}

func (p *dslParser) value(n *yaml.Node, depth int) (*Template, error) {
	p.budget--
	if p.budget < 0 {
		return nil, &Error{Pos: p.pos(n), Msg: "document too large (aliases expand beyond " + strconv.Itoa(maxNodes) + " values)", Syntax: true}
	}
	if depth > 200 {
		return nil, &Error{Pos: p.pos(n), Msg: "values nested too deeply", Syntax: true}
	}
	line := n.Line
	n = p.deref(n)
	if n == nil {
		return nil, &Error{Pos: Pos{File: p.file, Line: line}, Msg: "alias loop", Syntax: true}
	}
	var t *Template
	switch n.Kind {
	case yaml.ScalarNode:
		lit, isStr, err := scalar(n)
		if err != nil {
			return nil, &Error{Pos: p.pos(n), Msg: err.Error()}
		}
		if isStr {
			t, err = parseString(lit.(string))
			if err != nil {
				return nil, &Error{Pos: p.pos(n), Msg: err.Error()}
			}
		} else {
			t = &Template{kind: tLiteral, lit: lit}
		}
	case yaml.SequenceNode:
		t = &Template{kind: tArray}
		for _, e := range n.Content {
			et, err := p.value(e, depth+1)
			if err != nil {
				return nil, err
			}
			t.elems = append(t.elems, et)
		}
	case yaml.MappingNode:
		t = &Template{kind: tObject}
		fields := map[string]*Template{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := p.deref(n.Content[i])
			if k == nil || k.Kind != yaml.ScalarNode || k.Tag == "!!merge" {
				return nil, &Error{Pos: p.pos(n.Content[i]), Msg: "keys must be strings (merge keys are not supported)"}
			}
			if _, dup := fields[k.Value]; dup {
				return nil, &Error{Pos: p.pos(k), Msg: fmt.Sprintf("duplicate key %q", k.Value), Syntax: true}
			}
			ft, err := p.value(n.Content[i+1], depth+1)
			if err != nil {
				return nil, err
			}
			fields[k.Value] = ft
		}
		for k := range fields {
			t.keys = append(t.keys, k)
		}
		sort.Strings(t.keys)
		for _, k := range t.keys {
			t.fields = append(t.fields, fields[k])
		}
	default:
		return nil, &Error{Pos: p.pos(n), Msg: "unsupported YAML value"}
	}
	t.Line = line
	t = t.collapse()
	t.Line = line
	return t, nil
}

// scalar decodes a YAML scalar as a JSON value (numbers as json.Number).
// isStr reports a string, which may hold references.
func scalar(n *yaml.Node) (v any, isStr bool, err error) {
	switch n.ShortTag() {
	case "!!null":
		return nil, false, nil
	case "!!bool":
		var b bool
		if err := n.Decode(&b); err != nil {
			return nil, false, err
		}
		return b, false, nil
	case "!!int":
		var x any
		if err := n.Decode(&x); err != nil {
			return nil, false, err
		}
		switch x := x.(type) {
		case int:
			return json.Number(strconv.FormatInt(int64(x), 10)), false, nil
		case int64:
			return json.Number(strconv.FormatInt(x, 10)), false, nil
		case uint64:
			return json.Number(strconv.FormatUint(x, 10)), false, nil
		case float64:
			return floatNumber(x)
		}
		return nil, false, fmt.Errorf("integer %q out of range", n.Value)
	case "!!float":
		var f float64
		if err := n.Decode(&f); err != nil {
			return nil, false, err
		}
		return floatNumber(f)
	}
	// !!str, !!timestamp, !!binary and custom tags: the text as written.
	return n.Value, true, nil
}

func floatNumber(f float64) (any, bool, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, false, fmt.Errorf("%v is not a JSON number", f)
	}
	return json.Number(strconv.FormatFloat(f, 'g', -1, 64)), false, nil
}
