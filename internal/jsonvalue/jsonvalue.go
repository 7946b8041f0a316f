// Package jsonvalue is the one ordered JSON value of AIRS: a parsed
// document that keeps its objects' key order and its numbers' lexemes, with
// the few edits schema rewriting needs (get, set, delete, shallow clone)
// and a compact encoding in key order. grammar compiles schemas from it,
// grammar/export rewrites them in it, and selector builds plan schemas out
// of it. It imports nothing of AIRS.
package jsonvalue

import (
	"fmt"
	"iter"
	"math/big"
	"strconv"
)

// Kind is the JSON type of a Value.
type Kind byte

const (
	Null   Kind = 'n'
	Bool   Kind = 'b'
	String Kind = 's'
	Number Kind = 'd'
	Object Kind = 'o'
	Array  Kind = 'a'
)

// Value is a JSON value. An object's keys are unique (a parsed duplicate
// key keeps the first one's place and the last one's value, as
// encoding/json does).
type Value struct {
	Kind Kind
	Bool bool     // a boolean's value
	Str  string   // a string's value or a number's lexeme
	Keys []string // an object's keys, in order
	Vals []*Value // an object's values (parallel to Keys) or an array's items
}

// Is reports whether v is not nil and of kind k.
func (v *Value) Is(k Kind) bool { return v != nil && v.Kind == k }

// AsString is v's value when v is a string.
func (v *Value) AsString() (string, bool) {
	if v.Is(String) {
		return v.Str, true
	}
	return "", false
}

// Index is the position of key k in object v, or -1.
func (v *Value) Index(k string) int {
	for i, kk := range v.Keys {
		if kk == k {
			return i
		}
	}
	return -1
}

// Get is the value of key k when v is an object that has it, else nil.
func (v *Value) Get(k string) *Value {
	if v == nil || v.Kind != Object {
		return nil
	}
	if i := v.Index(k); i >= 0 {
		return v.Vals[i]
	}
	return nil
}

// Child is one step of a JSON Pointer walk: an object's member tok, or an
// array's item at index tok (a decimal in [0, len), read by strconv.Atoi as
// jsonptr.Index reads it); false where there is none.
func (v *Value) Child(tok string) (*Value, bool) {
	switch {
	case v.Is(Object):
		c := v.Get(tok)
		return c, c != nil
	case v.Is(Array):
		if i, err := strconv.Atoi(tok); err == nil && i >= 0 && i < len(v.Vals) {
			return v.Vals[i], true
		}
	}
	return nil, false
}

// Has reports whether v is an object with key k.
func (v *Value) Has(k string) bool { return v.Get(k) != nil }

// Members yields object v's keys and values in order (over the slices v
// has when the loop starts).
func (v *Value) Members() iter.Seq2[string, *Value] {
	keys, vals := v.Keys, v.Vals
	return func(yield func(string, *Value) bool) {
		for i, k := range keys {
			if !yield(k, vals[i]) {
				return
			}
		}
	}
}

// Set replaces the value of key k of object v, or appends k.
func (v *Value) Set(k string, e *Value) {
	if i := v.Index(k); i >= 0 {
		v.Vals[i] = e
		return
	}
	v.Keys = append(v.Keys, k)
	v.Vals = append(v.Vals, e)
}

// Delete removes key k from object v. The key and value slices are copied,
// not edited in place, so a Clone made before is untouched.
func (v *Value) Delete(k string) {
	if i := v.Index(k); i >= 0 {
		v.Keys = append(v.Keys[:i:i], v.Keys[i+1:]...)
		v.Vals = append(v.Vals[:i:i], v.Vals[i+1:]...)
	}
}

// Clone is a shallow copy of v: its own key and value slices, the same
// member values.
func (v *Value) Clone() *Value {
	c := *v
	c.Keys = append([]string(nil), v.Keys...)
	c.Vals = append([]*Value(nil), v.Vals...)
	return &c
}

// NewObject builds an object from key, value pairs; each value goes
// through From.
func NewObject(kv ...any) *Value {
	v := &Value{Kind: Object, Keys: []string{}, Vals: []*Value{}}
	for i := 0; i+1 < len(kv); i += 2 {
		v.Set(kv[i].(string), From(kv[i+1]))
	}
	return v
}

// From is the Value of a Go value: a *Value itself, nil (null), a string,
// bool, int, *big.Int, []*Value or []string. Any other type is a
// programming error and panics.
func From(x any) *Value {
	switch t := x.(type) {
	case *Value:
		if t == nil {
			return &Value{Kind: Null}
		}
		return t
	case nil:
		return &Value{Kind: Null}
	case string:
		return &Value{Kind: String, Str: t}
	case bool:
		return &Value{Kind: Bool, Bool: t}
	case int:
		return &Value{Kind: Number, Str: strconv.Itoa(t)}
	case *big.Int:
		return &Value{Kind: Number, Str: t.String()}
	case []*Value:
		if t == nil {
			t = []*Value{}
		}
		return &Value{Kind: Array, Vals: t}
	case []string:
		a := &Value{Kind: Array, Vals: make([]*Value, len(t))}
		for i, s := range t {
			a.Vals[i] = &Value{Kind: String, Str: s}
		}
		return a
	}
	panic(fmt.Sprintf("jsonvalue.From(%T)", x))
}
