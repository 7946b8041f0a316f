package chains

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/big"
	"strings"
)

// env is what references resolve against at run time.
type env struct {
	input   any
	steps   map[string]any // decoded outputs of finished steps
	item    any
	hasItem bool
}

func (e *env) lookup(r *Ref) (any, error) {
	var v any
	switch r.Root {
	case RootInput:
		v = e.input
	case RootItem:
		if !e.hasItem {
			return nil, fmt.Errorf("%s: no foreach item here", r)
		}
		v = e.item
	case RootStep:
		out, ok := e.steps[r.Step]
		if !ok {
			return nil, fmt.Errorf("%s: step %s has no output", r, r.Step)
		}
		v = out
	}
	v, err := walkPath(r, v, 0)
	if err != nil || !r.Join {
		return v, err
	}
	arr, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("%s: join wants an array, not %s", r, jsonTypeOf(v))
	}
	var b strings.Builder
	for i, el := range arr {
		if i > 0 {
			b.WriteString(r.Sep)
		}
		if err := writeInterp(&b, el); err != nil {
			return nil, err
		}
	}
	return b.String(), nil
}

// walkPath follows r.Path[from:] into v.
func walkPath(r *Ref, v any, from int) (any, error) {
	for i := from; i < len(r.Path); i++ {
		p := r.Path[i]
		switch cur := v.(type) {
		case map[string]any:
			if !p.IsKey() {
				return nil, fmt.Errorf("%s: %s is an object, not an array", r, prefix(r, i))
			}
			next, ok := cur[p.Key]
			if !ok {
				return nil, fmt.Errorf("%s: %s has no key %q", r, prefix(r, i), p.Key)
			}
			v = next
		case []any:
			if p.IsKey() {
				return nil, fmt.Errorf("%s: %s is an array, not an object", r, prefix(r, i))
			}
			if p.All {
				out := make([]any, len(cur))
				for k, el := range cur {
					x, err := walkPath(r, el, i+1)
					if err != nil {
						return nil, err
					}
					out[k] = x
				}
				return out, nil
			}
			if p.Index >= len(cur) {
				return nil, fmt.Errorf("%s: index %d out of range (%s has %d elements)", r, p.Index, prefix(r, i), len(cur))
			}
			v = cur[p.Index]
		default:
			return nil, fmt.Errorf("%s: %s is %s, cannot take %s", r, prefix(r, i), jsonTypeOf(cur), p)
		}
	}
	return v, nil
}

// writeInterp writes a value into an interpolated string: a string as it
// is, anything else as JSON.
func writeInterp(b *strings.Builder, v any) error {
	if s, ok := v.(string); ok {
		b.WriteString(s)
		return nil
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	b.Write(raw)
	return nil
}

// prefix renders the first n path elements of r, for error messages.
func prefix(r *Ref, n int) string {
	c := *r
	c.Path = r.Path[:n]
	c.Join = false
	s := c.String()
	return s[2 : len(s)-2]
}

// render evaluates the template into a JSON value.
func (t *Template) render(e *env) (any, error) {
	if t == nil {
		return map[string]any{}, nil
	}
	switch t.kind {
	case tLiteral:
		return t.lit, nil
	case tRef:
		return e.lookup(t.ref)
	case tInterp:
		var b strings.Builder
		for _, p := range t.parts {
			if p.ref == nil {
				b.WriteString(p.lit)
				continue
			}
			v, err := e.lookup(p.ref)
			if err != nil {
				return nil, err
			}
			if err := writeInterp(&b, v); err != nil {
				return nil, err
			}
		}
		return b.String(), nil
	case tObject:
		m := make(map[string]any, len(t.keys))
		for i, k := range t.keys {
			v, err := t.fields[i].render(e)
			if err != nil {
				return nil, err
			}
			m[k] = v
		}
		return m, nil
	case tArray:
		a := make([]any, len(t.elems))
		for i, el := range t.elems {
			v, err := el.render(e)
			if err != nil {
				return nil, err
			}
			a[i] = v
		}
		return a, nil
	}
	return nil, fmt.Errorf("bad template")
}

func jsonTypeOf(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case json.Number:
		// JSON Schema: an integer is a number with no fractional part, so
		// 1.0 and 1e3 are integers.
		if _, err := v.Int64(); err == nil {
			return "integer"
		}
		if f, ok := new(big.Float).SetString(string(v)); ok && f.IsInt() {
			return "integer"
		}
		return "number"
	case float64:
		if v == math.Trunc(v) && !math.IsInf(v, 0) {
			return "integer"
		}
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

// decodeJSON decodes one JSON value with numbers as json.Number and rejects
// trailing data.
func decodeJSON(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("trailing data after JSON value")
	}
	return v, nil
}
