package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	ok := []string{
		`{}`, ` {"a":1} `, "[]", `[1,[2,{"a":[]}],{}]`, `"s"`, `1e999`, `null`,
		`{"a":{"a":{"a":1}},"b":[{"a":1},{"a":2}]}`, // same key in different objects
		`{"":1,"a":2}`,
		`{"Straße":1,"STRASSE":2}`, // encoding/json does not match these either
		`{"a":{"A":1}}`,            // case differs across objects, not within one
	}
	for _, s := range ok {
		if err := Check([]byte(s)); err != nil {
			t.Errorf("%s: %v", s, err)
		}
	}
	bad := []struct{ in, want string }{
		{``, "empty body"},
		{`   `, "empty body"},
		{`{"a":1}{"a":2}`, "trailing data"},
		{`{"a":1} x`, "trailing data"},
		{`1 2`, "trailing data"},
		{`{"a":1,"a":2}`, `duplicate key "a"`},
		{`{"a":1,"\u0061":2}`, `duplicate key "a"`},
		{`{"tool":"a","Tool":"b"}`, `duplicate key "Tool" (the same as "tool" but for case`},
		{`{"x":{"path":1,"PATH":2}}`, `duplicate key "PATH" (the same as "path"`},
		{`{"k":1,"\u212a":2}`, `the same as "k"`},               // the Kelvin sign folds to k
		{`{"a":1,"A":2,`, `duplicate key "A" (the same as "a"`}, // the token path too
		{`{"x":[0,{"k":1,"k":1}]}`, "(in /x/1)"},
		{`{"x":{"a/b":{"k":1,"k":1}}}`, "(in /x/a~1b)"},
		{`{"a":}`, "invalid JSON"},
		{`{"a":1`, "unexpected end"},
		{`[1,2`, "unexpected end"},
		{strings.Repeat("[", MaxDepth+1), "nesting too deep"},
	}
	for _, c := range bad {
		err := Check([]byte(c.in))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%.40q: %v, want %q", c.in, err, c.want)
		}
	}
}

// Whatever Check accepts, encoding/json decodes — as the pipeline decodes
// params, numbers as json.Number, so 1E700 is a number, not an overflow —
// to a value that keeps every key.
func FuzzCheck(f *testing.F) {
	for _, s := range []string{`{"a":1,"a":2}`, `[{"a":[1,{"b":2}]}]`, `{"a":1} {}`, `"x"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		err := Check(b)
		if json.Valid(b) && (checkKeys(b) == nil) != (checkTokens(b) == nil) {
			t.Fatalf("the fast path says %v, the token path %v", checkKeys(b), checkTokens(b))
		}
		var v any
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.UseNumber()
		jerr := dec.Decode(&v)
		if jerr == nil && dec.More() {
			jerr = errors.New("more than one value")
		}
		if jerr == nil {
			if _, terr := dec.Token(); terr != io.EOF {
				jerr = fmt.Errorf("trailing data: %v", terr)
			}
		}
		if err == nil && jerr != nil {
			t.Fatalf("Check accepted what encoding/json refuses: %v", jerr)
		}
		if err == nil && countKeys(b) != countDecoded(v) {
			t.Fatalf("Check accepted a document that loses keys when decoded")
		}
	})
}

// countKeys counts object keys token by token, duplicates included.
func countKeys(b []byte) int {
	dec := json.NewDecoder(strings.NewReader(string(b)))
	n := 0
	var objects []bool // per open container: is it an object
	expectKey := false
	for {
		tok, err := dec.Token()
		if err != nil {
			return n
		}
		if expectKey {
			expectKey = false
			if _, isKey := tok.(string); isKey {
				n++
				continue
			}
		}
		switch tok {
		case json.Delim('{'):
			objects = append(objects, true)
			expectKey = true
			continue
		case json.Delim('['):
			objects = append(objects, false)
			continue
		case json.Delim('}'), json.Delim(']'):
			objects = objects[:len(objects)-1]
		}
		expectKey = len(objects) > 0 && objects[len(objects)-1]
	}
}

func countDecoded(v any) int {
	switch t := v.(type) {
	case map[string]any:
		n := len(t)
		for _, e := range t {
			n += countDecoded(e)
		}
		return n
	case []any:
		n := 0
		for _, e := range t {
			n += countDecoded(e)
		}
		return n
	}
	return 0
}

// The check's cost on a typical /v1/call body and on a 1 MiB string
// argument (what the HTTP server pays per request on top of decoding).
func BenchmarkCheck(b *testing.B) {
	small := []byte(`{"tool":"calculator","arguments":{"expression":"round(100 * 19 / 23, 1)"},"timeout_ms":5000}`)
	big := []byte(`{"tool":"compare","arguments":{"a":"` + strings.Repeat("x", 1<<20) + `","b":"y"}}`)
	for name, in := range map[string][]byte{"call": small, "1MiB": big} {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(in)))
			for b.Loop() {
				if err := Check(in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// FoldKey matches keys exactly as encoding/json matches them with a
// struct's field names.
func TestFoldKeyAgreesWithEncodingJSON(t *testing.T) {
	keys := []string{"tool", "Tool", "TOOL", "k", "K", "\u212a", "s", "S", "\u017f", "straße", "STRASSE", "é", "É", "a_b", "A_B", "ǅ", "ǆ", "Ǆ"}
	for _, field := range keys {
		for _, key := range keys {
			// A struct with one field named field: does key fill it?
			typ := reflectStructWith(field)
			v := reflect.New(typ)
			b, _ := json.Marshal(map[string]int{key: 1})
			_ = json.Unmarshal(b, v.Interface())
			matched := v.Elem().Field(0).Int() == 1
			if folded := FoldKey(field) == FoldKey(key); folded != matched {
				t.Errorf("field %q, key %q: encoding/json matches %v, FoldKey says %v", field, key, matched, folded)
			}
		}
	}
}

func reflectStructWith(name string) reflect.Type {
	return reflect.StructOf([]reflect.StructField{{Name: "F", Type: reflect.TypeOf(0), Tag: reflect.StructTag(`json:"` + name + `"`)}})
}
