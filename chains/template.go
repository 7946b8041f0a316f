package chains

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/big"
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

// parseString parses a string value. A string that is exactly one
// reference becomes a tRef; a string with references and other text an
// interpolation; a string with none a literal. `\{{` writes a literal "{{".
func parseString(s string) (*Template, error) {
	var parts []part
	var lit strings.Builder
	escaped := false
	for i := 0; i < len(s); {
		if strings.HasPrefix(s[i:], `\{{`) {
			lit.WriteString("{{")
			i += 3
			escaped = true
			continue
		}
		if !strings.HasPrefix(s[i:], "{{") {
			lit.WriteByte(s[i])
			i++
			continue
		}
		end := strings.Index(s[i+2:], "}}")
		if end < 0 {
			return nil, fmt.Errorf("unclosed {{ in %q", s)
		}
		ref, err := parseRef(s[i+2 : i+2+end])
		if err != nil {
			return nil, err
		}
		if lit.Len() > 0 {
			parts = append(parts, part{lit: lit.String()})
			lit.Reset()
		}
		parts = append(parts, part{ref: ref})
		i += 2 + end + 2
	}
	if lit.Len() > 0 {
		parts = append(parts, part{lit: lit.String()})
	}
	switch {
	case len(parts) == 0:
		return &Template{kind: tLiteral, lit: ""}, nil
	case len(parts) == 1 && parts[0].ref != nil && !escaped:
		return &Template{kind: tRef, ref: parts[0].ref}, nil
	case len(parts) == 1 && parts[0].ref == nil:
		return &Template{kind: tLiteral, lit: parts[0].lit}, nil
	}
	return &Template{kind: tInterp, parts: parts}, nil
}

// parseRef parses the text between {{ and }}:
//
//	ref   = ( "input" | "item" | "steps." id ".output" ) path
//	path  = { "." key | "[" digits "]" | "[" json-string "]" }
//
// Spaces around the reference are allowed.
func parseRef(text string) (*Ref, error) {
	s := strings.TrimSpace(text)
	bad := func(msg string) error { return fmt.Errorf("bad reference {{%s}}: %s", text, msg) }
	head, rest := splitHead(s)
	r := &Ref{}
	switch head {
	case "input":
		r.Root = RootInput
	case "item":
		r.Root = RootItem
	case "steps":
		if !strings.HasPrefix(rest, ".") {
			return nil, bad("want steps.ID.output")
		}
		id, after := splitHead(rest[1:])
		if !validID(id) {
			return nil, bad(fmt.Sprintf("bad step id %q", id))
		}
		if !strings.HasPrefix(after, ".output") {
			return nil, bad("want steps." + id + ".output")
		}
		r.Root = RootStep
		r.Step = id
		rest = after[len(".output"):]
		if rest != "" && rest[0] != '.' && rest[0] != '[' {
			return nil, bad("want steps." + id + ".output")
		}
	case "":
		return nil, bad("empty reference")
	default:
		return nil, bad(fmt.Sprintf("unknown root %q (want input, steps or item)", head))
	}
	path, rest, err := parsePath(rest)
	if err != nil {
		return nil, bad(err.Error())
	}
	r.Path = path
	if rest = strings.TrimSpace(rest); rest != "" {
		f, ok := strings.CutPrefix(rest, "|")
		if !ok {
			return nil, bad(fmt.Sprintf("unexpected %q", rest))
		}
		f = strings.TrimSpace(f)
		name, arg, _ := strings.Cut(f, " ")
		if name != "join" {
			return nil, bad(fmt.Sprintf("unknown filter %q (there is join)", name))
		}
		r.Join, r.Sep = true, "\n"
		if arg = strings.TrimSpace(arg); arg != "" {
			if err := json.Unmarshal([]byte(arg), &r.Sep); err != nil {
				return nil, bad("join: the separator is a JSON string, like \", \"")
			}
		}
	}
	return r, nil
}

// splitHead splits s at the first '.', '[', '|' or space.
func splitHead(s string) (head, rest string) {
	i := strings.IndexAny(s, ".[| \t")
	if i < 0 {
		return s, ""
	}
	return s[:i], s[i:]
}

// parsePath parses path elements up to a space or '|' and returns the rest.
func parsePath(s string) ([]PathElem, string, error) {
	var path []PathElem
	for s != "" {
		switch s[0] {
		case ' ', '\t', '|':
			return path, s, nil
		case '.':
			key, rest := splitHead(s[1:])
			if !isPlainKey(key) {
				return nil, "", fmt.Errorf("bad key %q", key)
			}
			path = append(path, PathElem{Key: key})
			s = rest
		case '[':
			if len(s) > 1 && s[1] == '"' {
				// A JSON string key: find its end honouring escapes.
				dec := json.NewDecoder(strings.NewReader(s[1:]))
				var key string
				if err := dec.Decode(&key); err != nil {
					return nil, "", fmt.Errorf("bad quoted key: %v", err)
				}
				n := 1 + int(dec.InputOffset())
				if n >= len(s) || s[n] != ']' {
					return nil, "", fmt.Errorf("missing ] after quoted key")
				}
				path = append(path, PathElem{Key: key})
				s = s[n+1:]
				continue
			}
			end := strings.IndexByte(s, ']')
			if end < 0 {
				return nil, "", fmt.Errorf("missing ]")
			}
			digits := s[1:end]
			if digits == "*" {
				path = append(path, PathElem{All: true})
				s = s[end+1:]
				continue
			}
			n, err := strconv.Atoi(digits)
			if err != nil || n < 0 || digits == "" || (len(digits) > 1 && digits[0] == '0') || strings.ContainsAny(digits, "+-") {
				return nil, "", fmt.Errorf("bad index [%s]", digits)
			}
			path = append(path, PathElem{Index: n, IsIndex: true})
			s = s[end+1:]
		default:
			return nil, "", fmt.Errorf("unexpected %q", s)
		}
	}
	return path, "", nil
}

// isPlainKey: a key that may follow a dot.
func isPlainKey(k string) bool {
	if k == "" {
		return false
	}
	for _, c := range k {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_', c == '-', c == '$':
		default:
			return false
		}
	}
	return true
}

// validID: step ids are letters, digits, '_' and '-', starting with a letter
// or '_'.
func validID(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	for i, c := range id {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '_':
		case (c >= '0' && c <= '9') || c == '-':
			if i == 0 {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// env is what references resolve against at run time.
type env struct {
	input   any
	steps   map[string]any // decoded outputs of finished steps
	item    any
	hasItem bool
}

func (e *env) lookup(r *Ref) (any, error) {
	var v any
	switch r.Root {
	case RootInput:
		v = e.input
	case RootItem:
		if !e.hasItem {
			return nil, fmt.Errorf("%s: no foreach item here", r)
		}
		v = e.item
	case RootStep:
		out, ok := e.steps[r.Step]
		if !ok {
			return nil, fmt.Errorf("%s: step %s has no output", r, r.Step)
		}
		v = out
	}
	v, err := walkPath(r, v, 0)
	if err != nil || !r.Join {
		return v, err
	}
	arr, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("%s: join wants an array, not %s", r, jsonTypeOf(v))
	}
	var b strings.Builder
	for i, el := range arr {
		if i > 0 {
			b.WriteString(r.Sep)
		}
		if err := writeInterp(&b, el); err != nil {
			return nil, err
		}
	}
	return b.String(), nil
}

// walkPath follows r.Path[from:] into v.
func walkPath(r *Ref, v any, from int) (any, error) {
	for i := from; i < len(r.Path); i++ {
		p := r.Path[i]
		switch cur := v.(type) {
		case map[string]any:
			if !p.IsKey() {
				return nil, fmt.Errorf("%s: %s is an object, not an array", r, prefix(r, i))
			}
			next, ok := cur[p.Key]
			if !ok {
				return nil, fmt.Errorf("%s: %s has no key %q", r, prefix(r, i), p.Key)
			}
			v = next
		case []any:
			if p.IsKey() {
				return nil, fmt.Errorf("%s: %s is an array, not an object", r, prefix(r, i))
			}
			if p.All {
				out := make([]any, len(cur))
				for k, el := range cur {
					x, err := walkPath(r, el, i+1)
					if err != nil {
						return nil, err
					}
					out[k] = x
				}
				return out, nil
			}
			if p.Index >= len(cur) {
				return nil, fmt.Errorf("%s: index %d out of range (%s has %d elements)", r, p.Index, prefix(r, i), len(cur))
			}
			v = cur[p.Index]
		default:
			return nil, fmt.Errorf("%s: %s is %s, cannot take %s", r, prefix(r, i), jsonTypeOf(cur), p)
		}
	}
	return v, nil
}

// writeInterp writes a value into an interpolated string: a string as it
// is, anything else as JSON.
func writeInterp(b *strings.Builder, v any) error {
	if s, ok := v.(string); ok {
		b.WriteString(s)
		return nil
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	b.Write(raw)
	return nil
}

// prefix renders the first n path elements of r, for error messages.
func prefix(r *Ref, n int) string {
	c := *r
	c.Path = r.Path[:n]
	c.Join = false
	s := c.String()
	return s[2 : len(s)-2]
}

// render evaluates the template into a JSON value.
func (t *Template) render(e *env) (any, error) {
	if t == nil {
		return map[string]any{}, nil
	}
	switch t.kind {
	case tLiteral:
		return t.lit, nil
	case tRef:
		return e.lookup(t.ref)
	case tInterp:
		var b strings.Builder
		for _, p := range t.parts {
			if p.ref == nil {
				b.WriteString(p.lit)
				continue
			}
			v, err := e.lookup(p.ref)
			if err != nil {
				return nil, err
			}
			if err := writeInterp(&b, v); err != nil {
				return nil, err
			}
		}
		return b.String(), nil
	case tObject:
		m := make(map[string]any, len(t.keys))
		for i, k := range t.keys {
			v, err := t.fields[i].render(e)
			if err != nil {
				return nil, err
			}
			m[k] = v
		}
		return m, nil
	case tArray:
		a := make([]any, len(t.elems))
		for i, el := range t.elems {
			v, err := el.render(e)
			if err != nil {
				return nil, err
			}
			a[i] = v
		}
		return a, nil
	}
	return nil, fmt.Errorf("bad template")
}

func jsonTypeOf(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case json.Number:
		// JSON Schema: an integer is a number with no fractional part, so
		// 1.0 and 1e3 are integers.
		if _, err := v.Int64(); err == nil {
			return "integer"
		}
		if f, ok := new(big.Float).SetString(string(v)); ok && f.IsInt() {
			return "integer"
		}
		return "number"
	case float64:
		if v == math.Trunc(v) && !math.IsInf(v, 0) {
			return "integer"
		}
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

// decodeJSON decodes one JSON value with numbers as json.Number and rejects
// trailing data.
func decodeJSON(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("trailing data after JSON value")
	}
	return v, nil
}
