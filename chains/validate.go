package chains

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/airs-dev/airs/pipeline"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/airs-dev/airs/internal/jsonptr"
)

var printer = message.NewPrinter(language.English)

// Catalog looks tools up for a caller. It returns an error when the tool
// does not exist or when the caller may not call it (a missing capability,
// a sunset deprecation); the error text is shown to the chain's author.
type Catalog interface {
	Tool(caller, name string) (pipeline.Tool, error)
}

// Validate checks the chain before anything runs, and reports every
// problem it finds, each naming its step (and file:line when the chain came
// from YAML):
//
//   - step ids are unique and well formed, every step names a tool;
//   - every reference resolves: {{steps.X.output...}} names a step listed
//     before the one that uses it, {{input.NAME}} a declared input (when the
//     chain declares inputs), {{item}} appears only in a foreach step's
//     params; foreach is one whole reference;
//   - the dependency graph (edges from references and needs) is acyclic;
//   - every tool exists and caller may call it (Catalog);
//   - every argument template can produce a value of its parameter's type,
//     where that is knowable: a literal must validate against the
//     parameter's schema, a reference to a step whose tool has a
//     return_schema has the type found at the reference's path in it, an
//     interpolated string can only fill a string, an object must have every
//     required property and no property the schema forbids.
//
// Run calls Validate; call it directly to check a chain without running it.
func (c *Chain) Validate(cat Catalog, caller string) error {
	_, err := c.compile(cat, caller)
	return err
}

// compiled is a validated chain with its tools resolved.
type compiled struct {
	*graph
	tools []pipeline.Tool
}

func (c *Chain) compile(cat Catalog, caller string) (*compiled, error) {
	if cat == nil {
		return nil, errors.New("chains: no catalog")
	}
	g, err := c.structure()
	if err != nil {
		return nil, err
	}
	var errs errorList
	tc := &typeChecker{c: c, g: g, tools: make([]*toolSchemas, len(c.Steps)), errs: &errs}
	cp := &compiled{graph: g, tools: make([]pipeline.Tool, len(c.Steps))}
	for i, s := range c.Steps {
		t, err := cat.Tool(caller, s.Tool)
		if err != nil {
			errs.addErr(s.Pos, s.ID, err, "tool %s: %v", s.Tool, err)
			continue
		}
		cp.tools[i] = t
		ts, err := toolSchemasFor(t)
		if err != nil {
			errs.add(s.Pos, s.ID, "tool %s: %v", s.Tool, err)
			continue
		}
		tc.tools[i] = ts
	}
	for name, in := range c.Inputs {
		if in.Type != "" && !knownType(in.Type) {
			errs.add(in.Pos, "", "input %s: unknown type %q", name, in.Type)
		} else if in.HasDefault && in.Type != "" && !hasType(in.Default, in.Type) {
			errs.add(in.Pos, "", "input %s: default is %s, not %s", name, jsonTypeOf(in.Default), in.Type)
		}
	}
	for i := range c.Steps {
		if tc.tools[i] != nil {
			tc.checkStep(i)
		}
	}
	if err := errs.err(); err != nil {
		return nil, err
	}
	return cp, nil
}

func knownType(t string) bool {
	switch t {
	case "string", "integer", "number", "boolean", "object", "array", "null":
		return true
	}
	return false
}

// toolSchemas holds a tool's decoded parameter and return schemas and
// compiles sub-schemas of the parameters on demand to validate literals.
// They are shared between validations (see toolSchemasFor); the decoded
// documents are never modified.
type toolSchemas struct {
	tool     pipeline.Tool
	params   any // decoded parameters schema; nil when the tool has none
	returns  any // decoded return schema; nil when unknown
	url      string
	mu       sync.Mutex
	compiler *jsonschema.Compiler
	cache    map[string]*jsonschema.Schema
}

// schemaCache keeps the compiled schemas of the tools chains were validated
// against, keyed by the schemas' content: compiling a JSON Schema (which
// validates it against the meta-schema first) costs far more than the rest
// of validating a chain. It is dropped whole when it grows past
// schemaCacheMax entries.
var schemaCache struct {
	sync.Mutex
	m map[[sha256.Size]byte]*toolSchemas
}

const schemaCacheMax = 4096

func toolSchemasFor(t pipeline.Tool) (*toolSchemas, error) {
	h := sha256.New()
	for _, part := range [][]byte{[]byte(t.Name), t.Parameters, t.ReturnSchema} {
		var n [8]byte
		binary.LittleEndian.PutUint64(n[:], uint64(len(part)))
		h.Write(n[:])
		h.Write(part)
	}
	var key [sha256.Size]byte
	h.Sum(key[:0])
	schemaCache.Lock()
	ts, ok := schemaCache.m[key]
	schemaCache.Unlock()
	if ok {
		return ts, nil
	}
	ts, err := newToolSchemas(t)
	if err != nil {
		return nil, err
	}
	schemaCache.Lock()
	if schemaCache.m == nil || len(schemaCache.m) >= schemaCacheMax {
		schemaCache.m = map[[sha256.Size]byte]*toolSchemas{}
	}
	schemaCache.m[key] = ts
	schemaCache.Unlock()
	return ts, nil
}

func newToolSchemas(t pipeline.Tool) (*toolSchemas, error) {
	ts := &toolSchemas{tool: t, url: "airs-tool:///" + t.Name + "/parameters.json", cache: map[string]*jsonschema.Schema{}}
	if len(bytes.TrimSpace(t.Parameters)) > 0 {
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(t.Parameters))
		if err != nil {
			return nil, fmt.Errorf("parameters schema: %v", err)
		}
		ts.params = doc
		ts.compiler = jsonschema.NewCompiler()
		if err := ts.compiler.AddResource(ts.url, doc); err != nil {
			return nil, fmt.Errorf("parameters schema: %v", err)
		}
		if _, err := ts.schemaAt(""); err != nil {
			return nil, fmt.Errorf("parameters schema: %v", err)
		}
	}
	if len(bytes.TrimSpace(t.ReturnSchema)) > 0 {
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(t.ReturnSchema))
		if err != nil {
			return nil, fmt.Errorf("return schema: %v", err)
		}
		ts.returns = doc
	}
	return ts, nil
}

func (ts *toolSchemas) schemaAt(ptr string) (*jsonschema.Schema, error) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if s, ok := ts.cache[ptr]; ok {
		return s, nil
	}
	s, err := ts.compiler.Compile(ts.url + "#" + ptr)
	if err != nil {
		return nil, err
	}
	ts.cache[ptr] = s
	return s, nil
}

// snode is a place in a schema document: the sub-schema s (nil: unknown,
// anything goes) found at JSON pointer ptr of root.
type snode struct {
	root any
	s    any
	ptr  string
}

func (n snode) known() bool { return n.s != nil }

// resolve follows local "$ref"s ("#/$defs/x") when the node has nothing
// else to go by.
func (n snode) resolve() snode {
	for range 32 {
		m, ok := n.s.(map[string]any)
		if !ok {
			return n
		}
		ref, ok := m["$ref"].(string)
		if !ok || m["type"] != nil || m["properties"] != nil || !strings.HasPrefix(ref, "#") {
			return n
		}
		ptr := ref[1:]
		target, ok := pointerGet(n.root, ptr)
		if !ok {
			return snode{root: n.root}
		}
		n = snode{root: n.root, s: target, ptr: ptr}
	}
	return snode{root: n.root}
}

func pointerGet(doc any, ptr string) (any, bool) {
	return jsonptr.Resolve(doc, ptr, func(n any, tok string) (any, bool) {
		switch c := n.(type) {
		case map[string]any:
			v, ok := c[tok]
			return v, ok
		case []any:
			if i, ok := jsonptr.Index(tok, len(c)); ok {
				return c[i], true
			}
		}
		return nil, false
	})
}

func (n snode) obj() map[string]any {
	m, _ := n.resolve().s.(map[string]any)
	return m
}

// types is the set of JSON types the schema allows, or nil when unknown.
func (n snode) types() []string {
	m := n.obj()
	if m == nil {
		return nil
	}
	switch t := m["type"].(type) {
	case string:
		return []string{t}
	case []any:
		var out []string
		for _, e := range t {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	if c, ok := m["const"]; ok {
		return []string{jsonTypeOf(c)}
	}
	if e, ok := m["enum"].([]any); ok && len(e) > 0 {
		var out []string
		for _, v := range e {
			if t := jsonTypeOf(v); !slices.Contains(out, t) {
				out = append(out, t)
			}
		}
		return out
	}
	return nil
}

// prop is the schema of property key; closed reports that the schema
// forbids the key (additionalProperties: false and no pattern).
func (n snode) prop(key string) (sub snode, closed bool) {
	r := n.resolve()
	m, _ := r.s.(map[string]any)
	if m == nil {
		return snode{root: n.root}, false
	}
	if props, ok := m["properties"].(map[string]any); ok {
		if p, ok := props[key]; ok {
			return snode{root: n.root, s: p, ptr: r.ptr + "/properties/" + jsonptr.Escape(key)}, false
		}
	}
	if _, ok := m["patternProperties"]; ok {
		return snode{root: n.root}, false
	}
	switch ap := m["additionalProperties"].(type) {
	case bool:
		return snode{root: n.root}, !ap
	case map[string]any:
		return snode{root: n.root, s: ap, ptr: r.ptr + "/additionalProperties"}, false
	}
	return snode{root: n.root}, false
}

// item is the schema of element idx (-1: any element).
func (n snode) item(idx int) snode {
	r := n.resolve()
	m, _ := r.s.(map[string]any)
	if m == nil {
		return snode{root: n.root}
	}
	if pi, ok := m["prefixItems"].([]any); ok {
		if idx >= 0 && idx < len(pi) {
			return snode{root: n.root, s: pi[idx], ptr: r.ptr + "/prefixItems/" + strconv.Itoa(idx)}
		}
		if idx < 0 {
			return snode{root: n.root}
		}
	}
	if it, ok := m["items"].(map[string]any); ok {
		return snode{root: n.root, s: it, ptr: r.ptr + "/items"}
	}
	return snode{root: n.root}
}

// compatible: may a value of one of the types in src be a value of one of
// the types in dst? Unknown (nil) is compatible with everything; an integer
// is a number, and a number may happen to be an integer.
func compatible(src, dst []string) bool {
	if src == nil || dst == nil {
		return true
	}
	for _, s := range src {
		for _, d := range dst {
			if s == d || s == "integer" && d == "number" || s == "number" && d == "integer" {
				return true
			}
		}
	}
	return false
}

func typeList(ts []string) string {
	if len(ts) == 1 {
		return ts[0]
	}
	return strings.Join(ts, " or ")
}

type typeChecker struct {
	c     *Chain
	g     *graph
	tools []*toolSchemas
	errs  *errorList
}

func (tc *typeChecker) checkStep(i int) {
	s := tc.c.Steps[i]
	ts := tc.tools[i]
	if s.Foreach != nil {
		if src, ok := tc.refType(s, s.Foreach.Ref(), s.Foreach.Line); ok && src.known() {
			if tt := src.types(); tt != nil && !slices.Contains(tt, "array") {
				tc.errs.add(stepPos(s, s.Foreach.Line), s.ID, "foreach: %s is %s, not an array", s.Foreach.Ref(), typeList(tt))
			}
		}
	}
	root := snode{root: ts.params, s: ts.params}
	p := s.Params
	if p == nil {
		p = &Template{kind: tLiteral, lit: map[string]any{}}
	}
	switch p.kind {
	case tLiteral:
		if _, ok := p.lit.(map[string]any); !ok {
			tc.errs.add(stepPos(s, p.Line), s.ID, "params must be an object, not %s", jsonTypeOf(p.lit))
			return
		}
	case tInterp, tArray:
		tc.errs.add(stepPos(s, p.Line), s.ID, "params must be an object")
		return
	}
	tc.check(s, p, root, "params")
}

// check reports when template t cannot produce a value valid for target.
func (tc *typeChecker) check(s *Step, t *Template, target snode, where string) {
	ts := tc.tools[tc.g.index[s.ID]]
	pos := stepPos(s, t.Line)
	switch t.kind {
	case tLiteral:
		if ts.params == nil || !target.known() {
			return
		}
		sch, err := ts.schemaAt(target.resolve().ptr)
		if err != nil {
			return // a sub-schema we cannot compile alone: the pipeline checks at call time
		}
		if err := sch.Validate(t.lit); err != nil {
			tc.errs.add(pos, s.ID, "%s: %s", where, validationMessage(err))
		}
	case tRef:
		src, ok := tc.refType(s, t.ref, t.Line)
		if !ok {
			return
		}
		if st, dt := src.types(), target.types(); !compatible(st, dt) {
			tc.errs.add(pos, s.ID, "%s: %s is %s; the parameter wants %s", where, t.ref, typeList(st), typeList(dt))
		}
	case tInterp:
		if dt := target.types(); !compatible([]string{"string"}, dt) {
			tc.errs.add(pos, s.ID, "%s: a string with references inside can only fill a string; the parameter wants %s (write the reference alone, as \"%s\", to keep its type)", where, typeList(dt), firstRef(t))
		}
	case tObject:
		if dt := target.types(); !compatible([]string{"object"}, dt) {
			tc.errs.add(pos, s.ID, "%s: an object; the parameter wants %s", where, typeList(dt))
			return
		}
		if m := target.obj(); m != nil {
			if req, ok := m["required"].([]any); ok {
				for _, r := range req {
					if k, ok := r.(string); ok && !slices.Contains(t.keys, k) {
						tc.errs.add(pos, s.ID, "%s: missing required property %q", where, k)
					}
				}
			}
		}
		for i, k := range t.keys {
			sub, closed := target.prop(k)
			if closed {
				tc.errs.add(stepPos(s, t.fields[i].Line), s.ID, "%s: unknown property %q (allowed: %s)", where, k, strings.Join(propNames(target), ", "))
				continue
			}
			tc.check(s, t.fields[i], sub, where+"."+k)
		}
	case tArray:
		if dt := target.types(); !compatible([]string{"array"}, dt) {
			tc.errs.add(pos, s.ID, "%s: an array; the parameter wants %s", where, typeList(dt))
			return
		}
		for i, e := range t.elems {
			tc.check(s, e, target.item(i), fmt.Sprintf("%s[%d]", where, i))
		}
	}
}

func firstRef(t *Template) string {
	if rs := t.Refs(); len(rs) > 0 {
		return rs[0].String()
	}
	return ""
}

func propNames(n snode) []string {
	m := n.obj()
	props, _ := m["properties"].(map[string]any)
	var out []string
	for k := range props {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// refType is the static schema of what r resolves to inside step s. ok is
// false when the reference is known not to resolve (already reported).
func (tc *typeChecker) refType(s *Step, r *Ref, line int) (snode, bool) {
	var n snode
	path := r.Path
	switch r.Root {
	case RootInput:
		if len(path) == 0 {
			n = snode{s: map[string]any{"type": "object"}}
			break
		}
		if in := tc.c.Inputs[path[0].Key]; in != nil && in.Type != "" && path[0].IsKey() {
			n = snode{s: map[string]any{"type": in.Type}}
		}
		path = path[1:]
	case RootItem:
		src, ok := tc.refType(s, s.Foreach.Ref(), s.Foreach.Line)
		if !ok {
			return snode{}, false
		}
		n = src.item(-1)
	case RootStep:
		j := tc.g.index[r.Step]
		ts := tc.tools[j]
		if ts == nil || ts.returns == nil {
			return snode{}, true
		}
		n = snode{root: ts.returns, s: ts.returns}
		if tc.c.Steps[j].Foreach != nil {
			n = snode{root: ts.returns, s: map[string]any{"type": "array", "items": ts.returns}}
		}
	}
	n, ok := tc.walkType(s, r, n, path, line)
	if !ok || !r.Join {
		return n, ok
	}
	if tt := n.types(); n.known() && tt != nil && !slices.Contains(tt, "array") {
		tc.errs.add(stepPos(s, line), s.ID, "%s: join wants an array, not %s", r, typeList(tt))
		return snode{}, false
	}
	return snode{s: map[string]any{"type": "string"}}, true
}

// walkType follows path through the schema n.
func (tc *typeChecker) walkType(s *Step, r *Ref, n snode, path []PathElem, line int) (snode, bool) {
	for k, p := range path {
		if !n.known() {
			return n, true
		}
		tt := n.types()
		want := "object"
		if !p.IsKey() {
			want = "array"
		}
		if tt != nil && !slices.Contains(tt, want) {
			tc.errs.add(stepPos(s, line), s.ID, "%s: %s is %s, cannot take %s", r, prefixFrom(r, path, k), typeList(tt), p)
			return snode{}, false
		}
		switch {
		case p.All:
			el, ok := tc.walkType(s, r, n.item(-1), path[k+1:], line)
			if !ok {
				return snode{}, false
			}
			var items any
			if el.known() {
				items = el.resolve().s
			}
			return snode{root: el.root, s: map[string]any{"type": "array", "items": items}}, true
		case p.IsIndex:
			n = n.item(p.Index)
		default:
			sub, closed := n.prop(p.Key)
			if closed {
				tc.errs.add(stepPos(s, line), s.ID, "%s: %s has no property %q (it has: %s)", r, prefixFrom(r, path, k), p.Key, strings.Join(propNames(n), ", "))
				return snode{}, false
			}
			n = sub
		}
	}
	return n, true
}

// prefixFrom names the part of r before path[k], for messages.
func prefixFrom(r *Ref, path []PathElem, k int) string {
	return prefix(r, len(r.Path)-len(path)+k)
}

// validationMessage flattens a jsonschema error into one line.
func validationMessage(err error) string {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return err.Error()
	}
	var msgs []string
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			loc := "/" + strings.Join(e.InstanceLocation, "/")
			msg := e.ErrorKind.LocalizedString(printer)
			if loc != "/" {
				msg = "at " + loc + ": " + msg
			}
			msgs = append(msgs, msg)
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	return strings.Join(msgs, "; ")
}
