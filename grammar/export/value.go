package export

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"strings"
)

// value is a JSON value that keeps object key order and number lexemes.
type value struct {
	kind byte // 'o' object, 'a' array, 's' string, 'n' number, 'b' bool, 'z' null
	obj  []member
	arr  []*value
	str  string // string value or number lexeme
	b    bool
}

type member struct {
	key string
	val *value
}

func parseValue(src []byte) (*value, error) {
	dec := json.NewDecoder(bytes.NewReader(src))
	dec.UseNumber()
	v, err := decodeValue(dec, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("trailing data after the JSON value")
	}
	return v, nil
}

func decodeValue(dec *json.Decoder, depth int) (*value, error) {
	if depth > 512 {
		return nil, fmt.Errorf("JSON nested too deep")
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		if t == '{' {
			v := &value{kind: 'o', obj: []member{}}
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return nil, err
				}
				e, err := decodeValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				v.obj = append(v.obj, member{k.(string), e})
			}
			_, err := dec.Token()
			return v, err
		}
		v := &value{kind: 'a', arr: []*value{}}
		for dec.More() {
			e, err := decodeValue(dec, depth+1)
			if err != nil {
				return nil, err
			}
			v.arr = append(v.arr, e)
		}
		_, err := dec.Token()
		return v, err
	case string:
		return &value{kind: 's', str: t}, nil
	case json.Number:
		return &value{kind: 'n', str: string(t)}, nil
	case bool:
		return &value{kind: 'b', b: t}, nil
	default:
		return &value{kind: 'z'}, nil
	}
}

func (v *value) get(k string) *value {
	if v == nil || v.kind != 'o' {
		return nil
	}
	for _, m := range v.obj {
		if m.key == k {
			return m.val
		}
	}
	return nil
}

func (v *value) has(k string) bool { return v.get(k) != nil }

// set replaces or appends key k.
func (v *value) set(k string, e *value) {
	for i, m := range v.obj {
		if m.key == k {
			v.obj[i].val = e
			return
		}
	}
	v.obj = append(v.obj, member{k, e})
}

func (v *value) del(k string) {
	for i, m := range v.obj {
		if m.key == k {
			v.obj = append(v.obj[:i:i], v.obj[i+1:]...)
			return
		}
	}
}

// shallow copy of an object.
func (v *value) clone() *value {
	c := *v
	c.obj = append([]member(nil), v.obj...)
	c.arr = append([]*value(nil), v.arr...)
	return &c
}

func newObj(kv ...any) *value {
	v := &value{kind: 'o', obj: []member{}}
	for i := 0; i+1 < len(kv); i += 2 {
		v.obj = append(v.obj, member{kv[i].(string), toValue(kv[i+1])})
	}
	return v
}

func toValue(x any) *value {
	switch t := x.(type) {
	case *value:
		return t
	case string:
		return &value{kind: 's', str: t}
	case int:
		return &value{kind: 'n', str: fmt.Sprint(t)}
	case *big.Int:
		return &value{kind: 'n', str: t.String()}
	case bool:
		return &value{kind: 'b', b: t}
	case []*value:
		return &value{kind: 'a', arr: t}
	case []string:
		a := &value{kind: 'a', arr: []*value{}}
		for _, s := range t {
			a.arr = append(a.arr, &value{kind: 's', str: s})
		}
		return a
	}
	panic(fmt.Sprintf("toValue %T", x))
}

// encode writes v as compact JSON (strings escaped only where JSON requires).
func (v *value) encode(w *bytes.Buffer) {
	switch v.kind {
	case 'o':
		w.WriteByte('{')
		for i, m := range v.obj {
			if i > 0 {
				w.WriteByte(',')
			}
			writeJSONString(w, m.key)
			w.WriteByte(':')
			m.val.encode(w)
		}
		w.WriteByte('}')
	case 'a':
		w.WriteByte('[')
		for i, e := range v.arr {
			if i > 0 {
				w.WriteByte(',')
			}
			e.encode(w)
		}
		w.WriteByte(']')
	case 's':
		writeJSONString(w, v.str)
	case 'n':
		w.WriteString(v.str)
	case 'b':
		if v.b {
			w.WriteString("true")
		} else {
			w.WriteString("false")
		}
	default:
		w.WriteString("null")
	}
}

func (v *value) String() string {
	var b bytes.Buffer
	v.encode(&b)
	return b.String()
}

func writeJSONString(w *bytes.Buffer, s string) { w.WriteString(jsonString(s)) }

// jsonString is s as a JSON string literal in the canonical form the grammar
// emits: raw UTF-8, short escapes, \u00XX for other controls.
func jsonString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		default:
			if r < 0x20 {
				fmt.Fprintf(&b, `\u%04x`, r)
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}

// rat parses a number lexeme exactly.
func (v *value) rat() (*big.Rat, bool) {
	if v == nil || v.kind != 'n' {
		return nil, false
	}
	r, ok := new(big.Rat).SetString(v.str)
	return r, ok
}

// equalJSON is JSON Schema equality (numbers by value, objects unordered).
func equalJSON(a, b *value) bool {
	if a.kind != b.kind {
		return false
	}
	switch a.kind {
	case 'n':
		x, ok1 := a.rat()
		y, ok2 := b.rat()
		return ok1 && ok2 && x.Cmp(y) == 0
	case 's':
		return a.str == b.str
	case 'b':
		return a.b == b.b
	case 'z':
		return true
	case 'a':
		if len(a.arr) != len(b.arr) {
			return false
		}
		for i := range a.arr {
			if !equalJSON(a.arr[i], b.arr[i]) {
				return false
			}
		}
		return true
	}
	if len(a.obj) != len(b.obj) {
		return false
	}
	for _, m := range a.obj {
		o := b.get(m.key)
		if o == nil || !equalJSON(m.val, o) {
			return false
		}
	}
	return true
}

// jsonType is the JSON Schema type name of an instance ("integer" for
// integral numbers).
func jsonType(v *value) string {
	switch v.kind {
	case 'o':
		return "object"
	case 'a':
		return "array"
	case 's':
		return "string"
	case 'b':
		return "boolean"
	case 'z':
		return "null"
	}
	if r, ok := v.rat(); ok && r.IsInt() {
		return "integer"
	}
	return "number"
}
