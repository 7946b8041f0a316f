package jsonvalue

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// maxDepth bounds the nesting Parse accepts.
const maxDepth = 1000

// Parse parses one JSON document. Well-formed input (json.Valid, the
// standard library's own check) is read by a small scanner that needs no
// error handling; anything else goes through encoding/json's decoder for
// its error message. Token-by-token decoding was most of the parse time,
// and parsing is on the path of every cold tool-call grammar.
func Parse(data []byte) (*Value, error) {
	if json.Valid(data) {
		sc := scanner{data: data}
		return sc.value(0)
	}
	return parseDecoder(data)
}

// scanner reads a document json.Valid accepted.
type scanner struct {
	data []byte
	pos  int
}

func (sc *scanner) skipSpace() {
	for sc.pos < len(sc.data) {
		switch sc.data[sc.pos] {
		case ' ', '\t', '\n', '\r':
			sc.pos++
		default:
			return
		}
	}
}

func (sc *scanner) value(depth int) (*Value, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("JSON nested too deeply")
	}
	sc.skipSpace()
	switch c := sc.data[sc.pos]; c {
	case 'n':
		sc.pos += 4
		return &Value{Kind: Null}, nil
	case 't':
		sc.pos += 4
		return &Value{Kind: Bool, Bool: true}, nil
	case 'f':
		sc.pos += 5
		return &Value{Kind: Bool}, nil
	case '"':
		s, err := sc.str()
		if err != nil {
			return nil, err
		}
		return &Value{Kind: String, Str: s}, nil
	case '{':
		sc.pos++
		v := &Value{Kind: Object}
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
			if i := v.Index(k); i >= 0 { // duplicate key: last wins
				v.Vals[i] = val
				continue
			}
			v.Keys = append(v.Keys, k)
			v.Vals = append(v.Vals, val)
		}
	case '[':
		sc.pos++
		v := &Value{Kind: Array}
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
			v.Vals = append(v.Vals, val)
		}
	default: // a number
		start := sc.pos
		for sc.pos < len(sc.data) && strings.IndexByte("+-.0123456789eE", sc.data[sc.pos]) >= 0 {
			sc.pos++
		}
		return &Value{Kind: Number, Str: string(sc.data[start:sc.pos])}, nil
	}
}

// str reads a string at the opening quote. Plain ones (no escape, valid
// UTF-8) are taken as they are; the others are decoded by encoding/json,
// so escapes and invalid UTF-8 come out exactly as the decoder gives them.
func (sc *scanner) str() (string, error) {
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

// parseDecoder parses with encoding/json's decoder, token by token: the
// path of malformed input, and the scanner's reference in the tests.
func parseDecoder(data []byte) (*Value, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := decode(dec, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("trailing data after JSON value")
	}
	return v, nil
}

func decode(dec *json.Decoder, depth int) (*Value, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("JSON nested too deeply")
	}
	t, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch x := t.(type) {
	case nil:
		return &Value{Kind: Null}, nil
	case bool:
		return &Value{Kind: Bool, Bool: x}, nil
	case string:
		return &Value{Kind: String, Str: x}, nil
	case json.Number:
		return &Value{Kind: Number, Str: string(x)}, nil
	case json.Delim:
		switch x {
		case '{':
			v := &Value{Kind: Object}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k, _ := kt.(string)
				val, err := decode(dec, depth+1)
				if err != nil {
					return nil, err
				}
				if i := v.Index(k); i >= 0 { // duplicate key: last wins
					v.Vals[i] = val
					continue
				}
				v.Keys = append(v.Keys, k)
				v.Vals = append(v.Vals, val)
			}
			_, err := dec.Token()
			return v, err
		case '[':
			v := &Value{Kind: Array}
			for dec.More() {
				val, err := decode(dec, depth+1)
				if err != nil {
					return nil, err
				}
				v.Vals = append(v.Vals, val)
			}
			_, err := dec.Token()
			return v, err
		}
	}
	return nil, fmt.Errorf("unexpected JSON token %v", t)
}
