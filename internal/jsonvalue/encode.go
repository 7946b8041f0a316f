package jsonvalue

import (
	"fmt"
	"strconv"
	"unicode/utf8"
)

// AppendString appends s as a JSON string in the canonical encoding the
// grammar uses: raw UTF-8 (invalid bytes as U+FFFD), short escapes for
// " \ \b \f \n \r \t, \u00XX for the other control characters.
func AppendString(b []byte, s string) []byte {
	b = append(b, '"')
	for _, r := range s {
		switch {
		case r == '"':
			b = append(b, '\\', '"')
		case r == '\\':
			b = append(b, '\\', '\\')
		case r == '\n':
			b = append(b, '\\', 'n')
		case r == '\r':
			b = append(b, '\\', 'r')
		case r == '\t':
			b = append(b, '\\', 't')
		case r == '\b':
			b = append(b, '\\', 'b')
		case r == '\f':
			b = append(b, '\\', 'f')
		case r < 0x20:
			b = append(b, fmt.Sprintf(`\u%04x`, r)...)
		default:
			b = utf8.AppendRune(b, r)
		}
	}
	return append(b, '"')
}

// AppendCompact appends v as compact JSON, objects in key order, strings
// as AppendString writes them, numbers as their lexemes.
func (v *Value) AppendCompact(b []byte) []byte {
	switch v.Kind {
	case Null:
		return append(b, "null"...)
	case Bool:
		return strconv.AppendBool(b, v.Bool)
	case String:
		return AppendString(b, v.Str)
	case Number:
		return append(b, v.Str...)
	case Object:
		b = append(b, '{')
		for i, k := range v.Keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = AppendString(b, k)
			b = append(b, ':')
			b = v.Vals[i].AppendCompact(b)
		}
		return append(b, '}')
	case Array:
		b = append(b, '[')
		for i, x := range v.Vals {
			if i > 0 {
				b = append(b, ',')
			}
			b = x.AppendCompact(b)
		}
		return append(b, ']')
	}
	return b
}

// String is v as compact JSON (AppendCompact).
func (v *Value) String() string { return string(v.AppendCompact(nil)) }

// MarshalJSON is AppendCompact, so a Value inside what encoding/json
// marshals keeps its key order (encoding/json then escapes <, > and & as
// it does in strings of its own).
func (v *Value) MarshalJSON() ([]byte, error) { return v.AppendCompact(nil), nil }
