package chains

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// RefRoot says what a reference starts from.
type RefRoot uint8

const (
	RootInput RefRoot = iota // {{input.NAME...}}: the chain's input
	RootStep                 // {{steps.ID.output...}}: an earlier step's output
	RootItem                 // {{item...}}: the current element of a foreach
)

// PathElem is one step of a JSON path: an object key (.key or ["key"]), an
// array index ([n]), or every element of an array ([*]: the rest of the path
// is taken from each element, giving an array).
type PathElem struct {
	Key     string
	Index   int
	IsIndex bool
	All     bool
}

// IsKey reports whether p is an object key.
func (p PathElem) IsKey() bool { return !p.IsIndex && !p.All }

func (p PathElem) String() string {
	if p.All {
		return "[*]"
	}
	if p.IsIndex {
		return "[" + strconv.Itoa(p.Index) + "]"
	}
	if isPlainKey(p.Key) {
		return "." + p.Key
	}
	return "[" + strconv.Quote(p.Key) + "]"
}

// Ref is a parsed reference such as {{steps.search.output.documents[0].id}}.
// For RootInput the first path element is the input's name (absent for the
// whole input object); for RootStep, Path starts after ".output".
//
// A reference may end with a filter; the one there is, join, turns an array
// into a string: {{steps.s.output[*].summary | join "\n\n"}} (elements that
// are strings as they are, others as JSON; the separator, a JSON string, is
// "\n" when left out).
type Ref struct {
	Root RefRoot
	Step string // RootStep only
	Path []PathElem
	// Join is set for the join filter; Sep is its separator.
	Join bool
	Sep  string
}

func (r *Ref) String() string {
	var b strings.Builder
	b.WriteString("{{")
	switch r.Root {
	case RootInput:
		b.WriteString("input")
	case RootStep:
		b.WriteString("steps.")
		b.WriteString(r.Step)
		b.WriteString(".output")
	case RootItem:
		b.WriteString("item")
	}
	for _, p := range r.Path {
		b.WriteString(p.String())
	}
	if r.Join {
		b.WriteString(" | join ")
		sep, _ := json.Marshal(r.Sep)
		b.Write(sep)
	}
	b.WriteString("}}")
	return b.String()
}

type tkind uint8

const (
	tLiteral tkind = iota // a JSON value with no reference inside
	tRef                  // a string that is exactly one reference: keeps the JSON type
	tInterp               // a string with references inside: always a string
	tObject               // an object with at least one reference below it
	tArray                // an array with at least one reference below it
)

// Template is an argument value that may contain references. Literal
// subtrees are collapsed into one literal node, so a Template with no
// reference anywhere is a single literal.
//
// Values are JSON values as encoding/json decodes them with UseNumber:
// nil, bool, json.Number, string, []any, map[string]any.
type Template struct {
	kind   tkind
	lit    any
	ref    *Ref
	parts  []part      // tInterp
	keys   []string    // tObject, sorted
	fields []*Template // tObject, parallel to keys
	elems  []*Template // tArray
	// Line is the source line of the value (0 when not from YAML).
	Line int
}

type part struct {
	lit string
	ref *Ref // nil for a literal part
}

// NewTemplate builds a template from a Go value that encodes to JSON (for
// example the result of json.Unmarshal, or a map[string]any literal in Go).
// Strings containing {{...}} become references.
func NewTemplate(v any) (*Template, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	norm, err := decodeJSON(raw)
	if err != nil {
		return nil, err
	}
	return templateFromJSON(norm)
}

// MustTemplate is NewTemplate that panics on error; for tests and literals.
func MustTemplate(v any) *Template {
	t, err := NewTemplate(v)
	if err != nil {
		panic(err)
	}
	return t
}

func templateFromJSON(v any) (*Template, error) {
	switch v := v.(type) {
	case string:
		return parseString(v)
	case []any:
		t := &Template{kind: tArray}
		for i, e := range v {
			et, err := templateFromJSON(e)
			if err != nil {
				return nil, fmt.Errorf("[%d]: %w", i, err)
			}
			t.elems = append(t.elems, et)
		}
		return t.collapse(), nil
	case map[string]any:
		t := &Template{kind: tObject}
		for k := range v {
			t.keys = append(t.keys, k)
		}
		sort.Strings(t.keys)
		for _, k := range t.keys {
			ft, err := templateFromJSON(v[k])
			if err != nil {
				return nil, fmt.Errorf("%s: %w", k, err)
			}
			t.fields = append(t.fields, ft)
		}
		return t.collapse(), nil
	default:
		return &Template{kind: tLiteral, lit: v}, nil
	}
}

// collapse turns an object or array whose children are all literals into
// one literal node.
func (t *Template) collapse() *Template {
	switch t.kind {
	case tObject:
		m := make(map[string]any, len(t.keys))
		for i, f := range t.fields {
			if f.kind != tLiteral {
				return t
			}
			m[t.keys[i]] = f.lit
		}
		return &Template{kind: tLiteral, lit: m, Line: t.Line}
	case tArray:
		a := make([]any, len(t.elems))
		for i, e := range t.elems {
			if e.kind != tLiteral {
				return t
			}
			a[i] = e.lit
		}
		return &Template{kind: tLiteral, lit: a, Line: t.Line}
	}
	return t
}

// IsLiteral reports whether the template contains no reference.
func (t *Template) IsLiteral() bool { return t == nil || t.kind == tLiteral }

// Ref returns the reference when the whole template is exactly one
// reference, or nil.
func (t *Template) Ref() *Ref {
	if t == nil || t.kind != tRef {
		return nil
	}
	return t.ref
}

// Refs returns every reference in the template, in a stable order.
func (t *Template) Refs() []*Ref {
	var out []*Ref
	t.walkRefs(func(r *Ref, _ int) { out = append(out, r) })
	return out
}

func (t *Template) walkRefs(f func(r *Ref, line int)) {
	if t == nil {
		return
	}
	switch t.kind {
	case tRef:
		f(t.ref, t.Line)
	case tInterp:
		for _, p := range t.parts {
			if p.ref != nil {
				f(p.ref, t.Line)
			}
		}
	case tObject:
		for _, c := range t.fields {
			c.walkRefs(f)
		}
	case tArray:
		for _, c := range t.elems {
			c.walkRefs(f)
		}
	}
}

// MarshalJSON writes the template back in its source form (references as
// "{{...}}" strings).
func (t *Template) MarshalJSON() ([]byte, error) { return json.Marshal(t.source()) }

func (t *Template) source() any {
	if t == nil {
		return nil
	}
	switch t.kind {
	case tRef:
		return t.ref.String()
	case tInterp:
		var b strings.Builder
		for _, p := range t.parts {
			if p.ref != nil {
				b.WriteString(p.ref.String())
			} else {
				b.WriteString(strings.ReplaceAll(p.lit, "{{", `\{{`))
			}
		}
		return b.String()
	case tObject:
		m := make(map[string]any, len(t.keys))
		for i, k := range t.keys {
			m[k] = t.fields[i].source()
		}
		return m
	case tArray:
		a := make([]any, len(t.elems))
		for i, e := range t.elems {
			a[i] = e.source()
		}
		return a
	}
	return escapeLiteral(t.lit)
}

// escapeLiteral re-escapes "{{" in literal strings so that source() parses
// back to the same template.
func escapeLiteral(v any) any {
	switch v := v.(type) {
	case string:
		return strings.ReplaceAll(v, "{{", `\{{`)
	case []any:
		a := make([]any, len(v))
		for i, e := range v {
			a[i] = escapeLiteral(e)
		}
		return a
	case map[string]any:
		m := make(map[string]any, len(v))
		for k, e := range v {
			m[k] = escapeLiteral(e)
		}
		return m
	}
	return v
}
