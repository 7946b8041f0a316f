// Package export turns JSON Schemas into the two forms other engines take:
//
//   - OllamaFormat: a JSON Schema for Ollama's "format" field. Ollama v0.17.4
//     converts it with llama.cpp's common/json-schema-to-grammar.cpp, which
//     handles a subset of JSON Schema and silently mishandles the rest (it
//     ignores allOf beside properties, min/maxProperties, uniqueItems,
//     number bounds, most formats, patterns that are not ^...$-anchored or use
//     \d; treats a missing additionalProperties as false, a schema without
//     "type" as an error, {} as "any object", minimum 1.5 on an integer as 1,
//     and fails the whole request on a repetition above 2000).
//   - GBNF: a llama.cpp grammar for the same documents, compact JSON by
//     default, bounded whitespace on request.
//
// Both are produced from one normalized schema (see normalizer) that uses only
// what the converter handles exactly. Every rewrite is exact or a narrowing
// (fewer documents accepted: declared property order with required ones
// first, fixed-length tuples, anchored patterns, bounded strings and arrays,
// format subsets, length bounds folded into a pattern of fixed parts around
// one repeated class — the converter ignores minLength/maxLength beside a
// pattern); a keyword that could only be carried by widening is
// dropped and reported as a Loosening with its JSON pointer, so the caller
// knows to validate the output against the original schema afterwards.
//
// Known limits of the converter that no rewrite avoids (documented, not
// reported per schema): its string length counts JSON characters, so a
// surrogate pair written as two \u escapes counts 2 toward minLength; its
// number grammar allows a leading "-0". Ollama also truncates a converted
// grammar longer than max(32 KiB, min(1 MiB, 4×schema bytes)).
package export

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/airs-dev/airs/internal/jsonptr"

	"github.com/airs-dev/airs/internal/jsonvalue"
)

// Tool is a tool for ToolCallFormat: a name and the JSON Schema of its
// arguments (nil or empty: any object).
type Tool struct {
	Name       string
	Parameters json.RawMessage
}

// NoneTool is the function name of the "no tool fits" choice, as in
// grammar.ToolCall: {"function":"none","arguments":{}}.
const NoneTool = "none"

// OllamaFormat returns a JSON Schema for Ollama's format field that
// llama.cpp's converter turns into a grammar no wider than schema, except
// where loosened says.
func OllamaFormat(schema []byte) (out []byte, loosened []Loosening, err error) {
	return OllamaFormatWith(schema, Options{})
}

// OllamaFormatWith is OllamaFormat with explicit bounds.
func OllamaFormatWith(schema []byte, opts Options) ([]byte, []Loosening, error) {
	doc, loose, err := normalizeDoc(schema, opts, "", false)
	if err != nil {
		return nil, loose, err
	}
	var b bytes.Buffer
	b.Write(doc.AppendCompact(nil))
	return b.Bytes(), loose, nil
}

// normalizeDoc normalizes one schema document into a root object that
// carries its $defs.
func normalizeDoc(schema []byte, opts Options, prefix string, forGBNF bool) (*jsonvalue.Value, []Loosening, error) {
	root, err := jsonvalue.Parse(schema)
	if err != nil {
		return nil, nil, fmt.Errorf("export: schema is not JSON: %v", err)
	}
	n := newNormalizer(root, opts, prefix)
	n.forGBNF = forGBNF
	out := n.norm(root, "")
	if out == nil {
		return nil, n.loosenings(), fmt.Errorf("export: the schema accepts no value")
	}
	return n.withDefs(out), n.loosenings(), nil
}

func newNormalizer(root *jsonvalue.Value, opts Options, prefix string) *normalizer {
	return &normalizer{root: root, opts: opts.withDefaults(), prefix: prefix,
		defFor: map[string]string{}, used: map[string]bool{}, inline: map[string]int{}, path: map[string]int{}}
}

func (n *normalizer) loosenings() []Loosening {
	seen := map[Loosening]bool{}
	var out []Loosening
	for _, l := range n.loose {
		if !seen[l] {
			seen[l] = true
			out = append(out, l)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Pointer < out[j].Pointer })
	return out
}

// withDefs attaches the collected $defs to the root (wrapping a root that
// is not a plain object schema).
func (n *normalizer) withDefs(out *jsonvalue.Value) *jsonvalue.Value {
	if len(n.defs) == 0 {
		return out
	}
	if out.Has("$defs") || out.Has("$ref") && len(out.Keys) > 1 {
		out = jsonvalue.NewObject("anyOf", []*jsonvalue.Value{out})
	}
	out = out.Clone()
	d := jsonvalue.NewObject()
	for _, m := range n.defs {
		d.Set(m.key, m.val)
	}
	out.Set("$defs", d)
	return out
}

// ToolCallFormat returns the JSON Schema of
// {"function":"<name>","arguments":<that tool's parameters>} over tools
// (anyOf, one branch per tool with "function" a const), plus the "none"
// branch when allowNone.
func ToolCallFormat(tools []Tool, allowNone bool) ([]byte, []Loosening, error) {
	return ToolCallFormatWith(tools, allowNone, Options{})
}

// ToolCallFormatWith is ToolCallFormat with explicit bounds.
func ToolCallFormatWith(tools []Tool, allowNone bool, opts Options) ([]byte, []Loosening, error) {
	doc, loose, err := toolCallDoc(tools, allowNone, opts, false)
	if err != nil {
		return nil, loose, err
	}
	var b bytes.Buffer
	b.Write(doc.AppendCompact(nil))
	return b.Bytes(), loose, nil
}

func toolCallDoc(tools []Tool, allowNone bool, opts Options, forGBNF bool) (*jsonvalue.Value, []Loosening, error) {
	if len(tools) == 0 && !allowNone {
		return nil, nil, fmt.Errorf("export: no tools")
	}
	var alts []*jsonvalue.Value
	var loose []Loosening
	defs := jsonvalue.NewObject()
	seen := map[string]bool{}
	for i, t := range tools {
		if t.Name == "" || seen[t.Name] || (allowNone && t.Name == NoneTool) {
			return nil, nil, fmt.Errorf("export: tool %d: empty, duplicate or reserved name %q", i, t.Name)
		}
		seen[t.Name] = true
		var args *jsonvalue.Value
		params := bytes.TrimSpace(t.Parameters)
		if len(params) == 0 || string(params) == "null" || string(params) == "{}" {
			args = jsonvalue.NewObject("type", "object", "properties", jsonvalue.NewObject(), "additionalProperties", jsonvalue.From(true))
		} else {
			root, err := jsonvalue.Parse(params)
			if err != nil {
				return nil, nil, fmt.Errorf("export: tool %q: parameters are not JSON: %v", t.Name, err)
			}
			n := newNormalizer(root, opts, fmt.Sprintf("t%d-", i))
			n.forGBNF = forGBNF
			args = n.norm(root, "")
			for _, l := range n.loosenings() {
				l.Pointer = "/" + jsonptr.Escape(t.Name) + l.Pointer
				loose = append(loose, l)
			}
			if args == nil {
				return nil, loose, fmt.Errorf("export: tool %q: its parameters schema accepts no value", t.Name)
			}
			for _, m := range n.defs {
				defs.Set(m.key, m.val)
			}
		}
		alts = append(alts, callObject(t.Name, args))
	}
	if allowNone {
		alts = append(alts, callObject(NoneTool, jsonvalue.NewObject("type", "object", "properties", jsonvalue.NewObject(), "additionalProperties", jsonvalue.From(false))))
	}
	doc := alts[0]
	if len(alts) > 1 {
		doc = jsonvalue.NewObject("anyOf", alts)
	}
	if len(defs.Keys) > 0 {
		doc = doc.Clone()
		doc.Set("$defs", defs)
	}
	return doc, loose, nil
}

func callObject(name string, args *jsonvalue.Value) *jsonvalue.Value {
	return jsonvalue.NewObject("type", "object",
		"properties", jsonvalue.NewObject("function", jsonvalue.NewObject("const", name), "arguments", args),
		"required", jsonvalue.From([]string{"function", "arguments"}),
		"additionalProperties", jsonvalue.From(false))
}

// describe is a one-line summary of loosenings for messages.
func describe(ls []Loosening) string {
	var parts []string
	for _, l := range ls {
		parts = append(parts, fmt.Sprintf("%s at %q", l.Keyword, l.Pointer))
	}
	return strings.Join(parts, ", ")
}
