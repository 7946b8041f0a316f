package export

import (
	"math/big"

	"github.com/airs-dev/airs/internal/jsonvalue"
)

// member is one output $defs entry, in creation order (its value is nil
// while the definition is being normalized).
type member struct {
	key string
	val *jsonvalue.Value
}

// jsonString is s as a JSON string literal in the canonical form the grammar
// emits: raw UTF-8, short escapes, \u00XX for other controls.
func jsonString(s string) string { return string(jsonvalue.AppendString(nil, s)) }

// rat parses a number lexeme exactly.
func rat(v *jsonvalue.Value) (*big.Rat, bool) {
	if !v.Is(jsonvalue.Number) {
		return nil, false
	}
	r, ok := new(big.Rat).SetString(v.Str)
	return r, ok
}

// equalJSON is JSON Schema equality (numbers by value, objects unordered).
func equalJSON(a, b *jsonvalue.Value) bool {
	if a.Kind != b.Kind {
		return false
	}
	switch a.Kind {
	case jsonvalue.Number:
		x, ok1 := rat(a)
		y, ok2 := rat(b)
		return ok1 && ok2 && x.Cmp(y) == 0
	case jsonvalue.String:
		return a.Str == b.Str
	case jsonvalue.Bool:
		return a.Bool == b.Bool
	case jsonvalue.Null:
		return true
	case jsonvalue.Array:
		if len(a.Vals) != len(b.Vals) {
			return false
		}
		for i := range a.Vals {
			if !equalJSON(a.Vals[i], b.Vals[i]) {
				return false
			}
		}
		return true
	}
	if len(a.Keys) != len(b.Keys) {
		return false
	}
	for k, v := range a.Members() {
		o := b.Get(k)
		if o == nil || !equalJSON(v, o) {
			return false
		}
	}
	return true
}

// jsonType is the JSON Schema type name of an instance ("integer" for
// integral numbers).
func jsonType(v *jsonvalue.Value) string {
	switch v.Kind {
	case jsonvalue.Object:
		return "object"
	case jsonvalue.Array:
		return "array"
	case jsonvalue.String:
		return "string"
	case jsonvalue.Bool:
		return "boolean"
	case jsonvalue.Null:
		return "null"
	}
	if r, ok := rat(v); ok && r.IsInt() {
		return "integer"
	}
	return "number"
}
