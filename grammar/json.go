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

// parseJSON parses a schema document. Well-formed input (json.Valid, the
// standard library's own check) is read by a small scanner that needs no
// error handling; anything else goes through encoding/json's decoder for
// its error message. Token-by-token decoding was most of the parse time,
// and parsing is on the path of every cold tool-call grammar.
func parseJSON(data []byte) (*jv, error) {
	if json.Valid(data) {
		sc := jsonScanner{data: data}
		v, err := sc.value(0)
		if err != nil {
			return nil, err
		}
		return v, nil
	}
	return parseJSONDecoder(data)
}

// jsonScanner reads a document json.Valid accepted.
type jsonScanner struct {
	data []byte
	pos  int
}

func (sc *jsonScanner) skipSpace() {
	for sc.pos < len(sc.data) {
		switch sc.data[sc.pos] {
		case ' ', '\t', '\n', '\r':
			sc.pos++
		default:
			return
		}
	}
}

func (sc *jsonScanner) value(depth int) (*jv, error) {
	if depth > 1000 {
		return nil, fmt.Errorf("JSON nested too deeply")
	}
	sc.skipSpace()
	switch c := sc.data[sc.pos]; c {
	case 'n':
		sc.pos += 4
		return &jv{kind: 'n'}, nil
	case 't':
		sc.pos += 4
		return &jv{kind: 'b', b: true}, nil
	case 'f':
		sc.pos += 5
		return &jv{kind: 'b'}, nil
	case '"':
		s, err := sc.str()
		if err != nil {
			return nil, err
		}
		return &jv{kind: 's', s: s}, nil
	case '{':
		sc.pos++
		v := &jv{kind: 'o'}
		for {
			sc.skipSpace()
			if sc.data[sc.pos] == '}' {
				sc.pos++
				return v, nil
			}
			if sc.data[sc.pos] == ',' {
				sc.pos++
				sc.skipSpace()
			}
			k, err := sc.str()
			if err != nil {
				return nil, err
			}
			sc.skipSpace()
			sc.pos++ // ':'
			val, err := sc.value(depth + 1)
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
	case '[':
		sc.pos++
		v := &jv{kind: 'a'}
		for {
			sc.skipSpace()
			if sc.data[sc.pos] == ']' {
				sc.pos++
				return v, nil
			}
			if sc.data[sc.pos] == ',' {
				sc.pos++
			}
			val, err := sc.value(depth + 1)
			if err != nil {
				return nil, err
			}
			v.vals = append(v.vals, val)
		}
	default: // a number
		start := sc.pos
		for sc.pos < len(sc.data) && strings.IndexByte("+-.0123456789eE", sc.data[sc.pos]) >= 0 {
			sc.pos++
		}
		return &jv{kind: 'd', s: string(sc.data[start:sc.pos])}, nil
	}
}

// str reads a string at the opening quote. Plain ones (no escape, valid
// UTF-8) are taken as they are; the others are decoded by encoding/json,
// so escapes and invalid UTF-8 come out exactly as the decoder gives them.
func (sc *jsonScanner) str() (string, error) {
	start := sc.pos
	sc.pos++
	plain := true
	for {
		c := sc.data[sc.pos]
		if c == '"' {
			break
		}
		if c == '\\' {
			plain = false
			sc.pos++
		} else if c >= 0x80 {
			plain = false
		}
		sc.pos++
	}
	sc.pos++
	raw := sc.data[start:sc.pos]
	if plain {
		return string(raw[1 : len(raw)-1]), nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", err
	}
	return s, nil
}

// parseJSONDecoder parses with encoding/json's decoder, token by token.
func parseJSONDecoder(data []byte) (*jv, error) {
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
