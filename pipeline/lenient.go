package pipeline

// Lenient mode applies exactly the seed's coercion table and nothing more:
//
//	integer where number is expected  → allowed (JSON Schema already allows it:
//	                                    every integer is a number)
//	numeric string ("42") for a
//	number or integer property        → rejected, as in strict mode: a string
//	                                    that looks like a number is most often
//	                                    a model quoting what should be a value,
//	                                    and guessing hides the bug
//	null for a property that declares
//	a "default"                       → replaced by the default before validation,
//	                                    and the handler sees the default
//
// Only the first two rows need no code. The third walks "properties" (nested
// objects included); it does not follow $ref, allOf/anyOf/oneOf or items —
// defaults declared there are not substituted, and the null is then validated
// as is.

// defaultsNode mirrors the "properties" tree of a schema, keeping the
// defaults and the sub-objects that have defaults below them.
type defaultsNode struct {
	defaults map[string]any           // property → default value (decoded)
	children map[string]*defaultsNode // property → nested object schema
}

func collectDefaults(schema any) *defaultsNode {
	obj, ok := schema.(map[string]any)
	if !ok {
		return nil
	}
	props, ok := obj["properties"].(map[string]any)
	if !ok {
		return nil
	}
	var n defaultsNode
	for name, sub := range props {
		so, ok := sub.(map[string]any)
		if !ok {
			continue
		}
		if d, ok := so["default"]; ok {
			if n.defaults == nil {
				n.defaults = map[string]any{}
			}
			n.defaults[name] = d
		}
		if c := collectDefaults(so); c != nil {
			if n.children == nil {
				n.children = map[string]*defaultsNode{}
			}
			n.children[name] = c
		}
	}
	if n.defaults == nil && n.children == nil {
		return nil
	}
	return &n
}

// applyDefaults replaces null properties of v by their defaults, in place,
// and reports whether it changed anything.
func (n *defaultsNode) applyDefaults(v any) bool {
	obj, ok := v.(map[string]any)
	if n == nil || !ok {
		return false
	}
	changed := false
	for name, val := range obj {
		if val == nil {
			if d, ok := n.defaults[name]; ok {
				obj[name] = deepCopy(d)
				changed = true
				continue
			}
		}
		if c := n.children[name]; c != nil && c.applyDefaults(val) {
			changed = true
		}
	}
	return changed
}

// deepCopy keeps a default shared by many calls from being mutated by one.
func deepCopy(v any) any {
	switch t := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(t))
		for k, e := range t {
			m[k] = deepCopy(e)
		}
		return m
	case []any:
		s := make([]any, len(t))
		for i, e := range t {
			s[i] = deepCopy(e)
		}
		return s
	}
	return v
}
