package selector

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// prop is the slice of a JSON Schema the no-LLM extractor looks at. It is not
// a validator: the pipeline validates every call against the full schema.
type prop struct {
	Name        string
	Types       []string
	Enum        []any
	Description string
	Format      string
	Default     any
	HasDefault  bool
	Items       *prop
	Props       []*prop // object properties in declared order
	Required    map[string]bool
}

func (p *prop) is(t string) bool {
	for _, x := range p.Types {
		if x == t {
			return true
		}
	}
	return false
}

// parseProp reads the parts of a schema the extractor uses, keeping the
// declared property order (which map decoding would lose).
func parseProp(name string, raw json.RawMessage) (*prop, error) {
	p := &prop{Name: name, Required: map[string]bool{}}
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "true" {
		return p, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("schema %q: %w", name, err)
	}
	if t, ok := m["type"]; ok {
		var one string
		if json.Unmarshal(t, &one) == nil {
			p.Types = []string{one}
		} else {
			_ = json.Unmarshal(t, &p.Types)
		}
	}
	if e, ok := m["enum"]; ok {
		_ = json.Unmarshal(e, &p.Enum)
	}
	if c, ok := m["const"]; ok {
		var v any
		if json.Unmarshal(c, &v) == nil {
			p.Enum = []any{v}
		}
	}
	if f, ok := m["format"]; ok {
		_ = json.Unmarshal(f, &p.Format)
	}
	if d, ok := m["description"]; ok {
		_ = json.Unmarshal(d, &p.Description)
	}
	if d, ok := m["default"]; ok {
		p.HasDefault = json.Unmarshal(d, &p.Default) == nil
	}
	if r, ok := m["required"]; ok {
		var req []string
		_ = json.Unmarshal(r, &req)
		for _, k := range req {
			p.Required[k] = true
		}
	}
	if it, ok := m["items"]; ok {
		ip, err := parseProp(name, it)
		if err == nil {
			p.Items = ip
		}
	}
	if ps, ok := m["properties"]; ok {
		names, raws, err := orderedObject(ps)
		if err != nil {
			return nil, err
		}
		for i, n := range names {
			cp, err := parseProp(n, raws[i])
			if err != nil {
				return nil, err
			}
			p.Props = append(p.Props, cp)
		}
		if len(p.Types) == 0 {
			p.Types = []string{"object"}
		}
	}
	if len(p.Types) == 0 && len(p.Enum) > 0 {
		switch p.Enum[0].(type) {
		case string:
			p.Types = []string{"string"}
		case float64:
			p.Types = []string{"number"}
		case bool:
			p.Types = []string{"boolean"}
		}
	}
	return p, nil
}

// orderedObject splits a JSON object into its keys and raw values, in order.
func orderedObject(raw json.RawMessage) ([]string, []json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.Token()
	if err != nil {
		return nil, nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, nil, fmt.Errorf("properties: want an object")
	}
	var names []string
	var vals []json.RawMessage
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return nil, nil, err
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, nil, err
		}
		names = append(names, k.(string))
		vals = append(vals, v)
	}
	return names, vals, nil
}
