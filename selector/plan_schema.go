package selector

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/airs-dev/airs/chains"
	"github.com/airs-dev/airs/internal/jsonvalue"
	"github.com/airs-dev/airs/pipeline"
)

// OutlineSchema is the JSON Schema of a plan's outline over the named tools:
// {"steps": ["<tool>", ...]}, 1 to MaxSteps steps.
func OutlineSchema(tools []string, lim PlanLimits) (json.RawMessage, Budget, error) {
	lim = lim.withDefaults()
	if len(tools) == 0 {
		return nil, Budget{}, ErrNoTools
	}
	names := make([]string, len(tools))
	var name size
	for i, t := range tools {
		names[i] = t
		name = name.or(stringSize(utf8.RuneCountInString(t)))
	}
	steps := size{bytes: 2, toks: 2}.plus(name.plus(size{1, 1}).times(lim.MaxSteps))
	s := obj("type", "object",
		"properties", obj("steps", obj("type", "array", "minItems", 1, "maxItems", lim.MaxSteps, "items", obj("enum", names))),
		"required", []string{"steps"},
		"additionalProperties", false)
	raw, err := json.Marshal(s)
	return raw, objectSize([]string{"steps"}, []size{steps}).budget(), err
}

// PlanSchema is the JSON Schema of the plan that calls tools[0], tools[1], …
// in that order:
//
//	{"steps": [{"id": "s1", "function": "<tools[0]>", "arguments": {...}}, ...]}
//
// Step sK's arguments follow its tool's schema, narrowed for generation:
// only declared properties; strings, arrays and numbers bounded (see
// PlanLimits); and any top-level argument may instead be a reference to the
// output of s1 … s(K-1) that Chain.Validate accepts there. A required
// argument that can be neither is an error naming the step.
func PlanSchema(tools []pipeline.Tool, lim PlanLimits) (json.RawMessage, Budget, error) {
	lim = lim.withDefaults()
	if len(tools) == 0 {
		return nil, Budget{}, errors.New("selector: a plan needs at least one step")
	}
	if len(tools) > lim.MaxSteps {
		return nil, Budget{}, fmt.Errorf("selector: a plan of %d steps (at most %d)", len(tools), lim.MaxSteps)
	}
	items := make([]*jsonvalue.Value, len(tools))
	arr := size{bytes: 2, toks: 2}
	for k, t := range tools {
		args, asz, err := planArguments(tools[:k], t, lim)
		if err != nil {
			return nil, Budget{}, fmt.Errorf("selector: step %s (%s): %w", StepID(k+1), t.Name, err)
		}
		id, fn := StepID(k+1), t.Name
		items[k] = obj("type", "object",
			"properties", obj("id", obj("const", id), "function", obj("const", fn), "arguments", args),
			"required", []string{"id", "function", "arguments"},
			"additionalProperties", false)
		step := objectSize([]string{"id", "function", "arguments"}, []size{constSize(id), constSize(fn), asz})
		arr = arr.plus(step).plus(size{1, 1})
	}
	s := obj("type", "object",
		"properties", obj("steps", obj("type", "array", "prefixItems", items, "items", false, "minItems", len(tools), "maxItems", len(tools))),
		"required", []string{"steps"},
		"additionalProperties", false)
	raw, err := json.Marshal(s)
	return raw, objectSize([]string{"steps"}, []size{arr}).budget(), err
}

// planArguments is the arguments schema of a step calling t after the
// steps calling prev.
func planArguments(prev []pipeline.Tool, t pipeline.Tool, lim PlanLimits) (*jsonvalue.Value, size, error) {
	var root *jsonvalue.Value
	if len(bytes.TrimSpace(t.Parameters)) > 0 {
		var err error
		if root, err = jsonvalue.Parse(t.Parameters); err != nil {
			return nil, size{}, fmt.Errorf("parameters schema: %v", err)
		}
	}
	ps := objectOrNil(root)
	if ps == nil { // no schema, or a boolean one: no arguments
		return obj("type", "object", "properties", obj(), "additionalProperties", false), objectSize(nil, nil), nil
	}
	lb := &literalBuilder{root: root, lim: lim}
	props := objectOrNil(ps.Get("properties"))
	required := requiredNames(ps)
	out := obj()
	var req []string
	var keys []string
	var sizes []size
	if props != nil {
		for i, name := range props.Keys {
			lit, lsz, litOK := lb.literal(props.Vals[i], 0)
			ref, rsz, refOK, err := refSchema(prev, t, name, lim)
			if err != nil {
				return nil, size{}, err
			}
			var v *jsonvalue.Value
			var sz size
			switch {
			case litOK && refOK:
				v, sz = obj("anyOf", []*jsonvalue.Value{lit, ref}), lsz.or(rsz)
			case litOK:
				v, sz = lit, lsz
			case refOK:
				v, sz = ref, rsz
			default:
				if required[name] {
					return nil, size{}, fmt.Errorf("required argument %q has no bounded literal form and no earlier output fits it", name)
				}
				continue
			}
			out.Set(name, v)
			keys = append(keys, name)
			sizes = append(sizes, sz)
			if required[name] {
				req = append(req, name)
			}
		}
	}
	for name := range required {
		if props == nil || get(props, name) == nil {
			return nil, size{}, fmt.Errorf("required argument %q is not declared in properties", name)
		}
	}
	s := obj("type", "object", "properties", out)
	if len(req) > 0 {
		s.Set("required", jsonvalue.From(req))
	}
	s.Set("additionalProperties", jsonvalue.From(false))
	return s, objectSize(keys, sizes), nil
}

// refSchema is the schema of the whole-value references to earlier steps'
// outputs that Chain.Validate accepts for parameter name of tool t: one
// anchored pattern, {{steps.sJ.output<path>}} for each earlier step sJ and
// each path of its tool's output whose type fits the parameter.
func refSchema(prev []pipeline.Tool, t pipeline.Tool, name string, lim PlanLimits) (*jsonvalue.Value, size, bool, error) {
	if len(prev) == 0 {
		return nil, size{}, false, nil
	}
	want, err := chains.ParamTypes(t, name)
	if err != nil {
		return nil, size{}, false, err
	}
	var stepAlts []string
	longest := 0
	for j, from := range prev {
		paths, err := chains.OutputPaths(from, lim.MaxRefPath, maxOutputPaths)
		if err != nil {
			return nil, size{}, false, fmt.Errorf("output of %s (%s): %w", StepID(j+1), from.Name, err)
		}
		var alts []string
		whole := false
		for _, p := range paths {
			if !chains.TypesCompatible(p.Types, want) {
				continue
			}
			re, n := pathPattern(p.Elems)
			if p.Open {
				if r := lim.MaxRefPath - len(p.Elems); r > 0 {
					re += "(" + anyKeyRE + "|" + anyIndexRE + "){0," + strconv.Itoa(r) + "}"
					n += r * anyKeyLen
				}
			}
			if re == "" {
				whole = true
			} else {
				alts = append(alts, re)
			}
			longest = max(longest, len(StepID(j+1))+n)
		}
		if len(alts) == 0 && !whole {
			continue
		}
		// s1\.output(\.text|\.path)? — the group optional when the whole
		// output fits too.
		a := regexp.QuoteMeta(StepID(j+1)) + `\.output`
		if len(alts) > 0 {
			a += "(" + strings.Join(alts, "|") + ")"
			if whole {
				a += "?"
			}
		}
		stepAlts = append(stepAlts, a)
	}
	if len(stepAlts) == 0 {
		return nil, size{}, false, nil
	}
	pat := `^\{\{steps\.(` + strings.Join(stepAlts, "|") + `)\}\}$`
	chars := len("{{steps.") + longest + len(".output") + len("}}")
	return obj("type", "string", "pattern", pat), stringSize(chars), true, nil
}

// maxOutputPaths bounds how many paths of one tool's output a reference
// grammar lists (breadth first: the shallow ones are kept).
const maxOutputPaths = 64

const (
	// anyKeyRE is a key a reference writes plainly (chains' isPlainKey),
	// at most 32 characters; anyIndexRE an index, without leading zeros.
	anyKeyRE   = `\.[A-Za-z0-9_$-]{1,32}`
	anyIndexRE = `\[(0|[1-9][0-9]{0,3})\]`
	anyKeyLen  = 33 // the longer of the two
)

// pathPattern is the pattern of a path's elements, and its longest match.
func pathPattern(elems []chains.PathElem) (string, int) {
	var b strings.Builder
	n := 0
	for _, e := range elems {
		switch {
		case e.IsIndex && e.Index == chains.AnyIndex:
			b.WriteString(anyIndexRE)
			n += 6
		case e.IsIndex:
			s := "[" + strconv.Itoa(e.Index) + "]"
			b.WriteString(regexp.QuoteMeta(s))
			n += len(s)
		case e.Key == "":
			b.WriteString(anyKeyRE)
			n += anyKeyLen
		default:
			b.WriteString(`\.` + regexp.QuoteMeta(e.Key))
			n += 1 + len(e.Key)
		}
	}
	return b.String(), n
}

// obj builds an object from key, value pairs (jsonvalue.NewObject).
func obj(kv ...any) *jsonvalue.Value { return jsonvalue.NewObject(kv...) }

// get is key k of schema s, nil when it is missing or null (the parameters
// schema's null is no keyword).
func get(s *jsonvalue.Value, k string) *jsonvalue.Value {
	if v := s.Get(k); !v.Is(jsonvalue.Null) {
		return v
	}
	return nil
}

// objectOrNil is v when it is an object.
func objectOrNil(v *jsonvalue.Value) *jsonvalue.Value {
	if v.Is(jsonvalue.Object) {
		return v
	}
	return nil
}

// requiredNames is the set of names schema s's "required" lists.
func requiredNames(s *jsonvalue.Value) map[string]bool {
	required := map[string]bool{}
	if req := s.Get("required"); req.Is(jsonvalue.Array) {
		for _, r := range req.Vals {
			if k, ok := r.AsString(); ok {
				required[k] = true
			}
		}
	}
	return required
}
