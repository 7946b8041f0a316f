package grammar

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// jv is a parsed JSON value that keeps object key order and number lexemes.
type jv struct {
	kind byte // 'n' null, 'b' bool, 's' string, 'd' number, 'o' object, 'a' array
	b    bool
	s    string // string value or number lexeme
	keys []string
	vals []*jv // object values (parallel to keys) or array items
}

func parseJSON(data []byte) (*jv, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := parseJV(dec, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("trailing data after JSON value")
	}
	return v, nil
}

func parseJV(dec *json.Decoder, depth int) (*jv, error) {
	if depth > 1000 {
		return nil, fmt.Errorf("JSON nested too deeply")
	}
	t, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch x := t.(type) {
	case nil:
		return &jv{kind: 'n'}, nil
	case bool:
		return &jv{kind: 'b', b: x}, nil
	case string:
		return &jv{kind: 's', s: x}, nil
	case json.Number:
		return &jv{kind: 'd', s: string(x)}, nil
	case json.Delim:
		switch x {
		case '{':
			v := &jv{kind: 'o'}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k, _ := kt.(string)
				val, err := parseJV(dec, depth+1)
				if err != nil {
					return nil, err
				}
				if i := v.index(k); i >= 0 { // duplicate key: last wins
					v.vals[i] = val
					continue
				}
				v.keys = append(v.keys, k)
				v.vals = append(v.vals, val)
			}
			_, err := dec.Token()
			return v, err
		case '[':
			v := &jv{kind: 'a'}
			for dec.More() {
				val, err := parseJV(dec, depth+1)
				if err != nil {
					return nil, err
				}
				v.vals = append(v.vals, val)
			}
			_, err := dec.Token()
			return v, err
		}
	}
	return nil, fmt.Errorf("unexpected JSON token %v", t)
}

func (v *jv) index(k string) int {
	for i, kk := range v.keys {
		if kk == k {
			return i
		}
	}
	return -1
}

func (v *jv) get(k string) *jv {
	if v == nil || v.kind != 'o' {
		return nil
	}
	if i := v.index(k); i >= 0 {
		return v.vals[i]
	}
	return nil
}

// appendJSONString appends s in the canonical encoding the grammar uses:
// raw UTF-8, short escapes for " \ \b \f \n \r \t, \u00XX for other controls.
func appendJSONString(b []byte, s string) []byte {
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
		case r == utf8.RuneError:
			b = utf8.AppendRune(b, r)
		default:
			b = utf8.AppendRune(b, r)
		}
	}
	return append(b, '"')
}

// appendCompact appends v as compact JSON in key order.
func appendCompact(b []byte, v *jv) []byte {
	switch v.kind {
	case 'n':
		return append(b, "null"...)
	case 'b':
		return strconv.AppendBool(b, v.b)
	case 's':
		return appendJSONString(b, v.s)
	case 'd':
		return append(b, v.s...)
	case 'o':
		b = append(b, '{')
		for i, k := range v.keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, k)
			b = append(b, ':')
			b = appendCompact(b, v.vals[i])
		}
		return append(b, '}')
	case 'a':
		b = append(b, '[')
		for i, x := range v.vals {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendCompact(b, x)
		}
		return append(b, ']')
	}
	return b
}

// escapePointerToken escapes a JSON pointer reference token.
func escapePointerToken(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}
