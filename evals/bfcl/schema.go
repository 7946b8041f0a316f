package bfcl

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// BFCL documents parameters in its own dialect of JSON Schema: objects are
// "type": "dict", and type names are Python's (float, tuple, any, …), Java's
// (String, long, ArrayList, HashMap, …) or JavaScript's (Boolean, Bigint).
// Translate maps that dialect onto JSON Schema 2020-12, the form the grammar
// compiles and the pipeline validates against.

// SchemaDialect is the $schema written on every translated root.
const SchemaDialect = "https://json-schema.org/draft/2020-12/schema"

// jsonTypes maps BFCL's type names to JSON Schema types; "" means no type
// constraint. It is BFCL's GORILLA_TO_OPENAPI, except that any/Any add no
// constraint (BFCL maps them to string only because OpenAPI needs a type),
// plus the few aliases (int, double, str, object, list, Set) seen in
// function docs elsewhere.
var jsonTypes = map[string]string{
	"integer": "integer", "int": "integer", "long": "integer", "short": "integer",
	"byte": "integer", "Bigint": "integer", "Integer": "integer", "Long": "integer",
	"float": "number", "double": "number", "number": "number", "Float": "number", "Double": "number",
	"string": "string", "String": "string", "str": "string", "char": "string",
	"boolean": "boolean", "Boolean": "boolean", "bool": "boolean",
	"array": "array", "list": "array", "tuple": "array", "Array": "array", "ArrayList": "array",
	"Queue": "array", "Stack": "array", "Set": "array", "List": "array",
	"dict": "object", "object": "object", "HashMap": "object", "Hashtable": "object", "Map": "object",
	"any": "", "Any": "", "": "",
}

// keywords copied as they are (annotations and validation keywords BFCL
// docs use with their JSON Schema meaning).
var copiedKeywords = []string{
	"description", "title", "default", "examples", "const", "format",
	"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf",
	"minLength", "maxLength", "pattern", "minItems", "maxItems", "uniqueItems",
	"minProperties", "maxProperties",
}

// TranslateOptions tune Translate.
type TranslateOptions struct {
	// Closed adds "additionalProperties": false to the root and to every
	// object that lists properties, matching BFCL's checker, which fails an
	// argument or dict key that the documentation or answer does not name.
	Closed bool
}

// Translate converts BFCL parameters (the "parameters" of a function) to a
// JSON Schema 2020-12 document:
//
//   - "dict", "object", "HashMap" → "object"; "integer", "int", "long" →
//     "integer"; "float", "double", "number" → "number"; "string", "String",
//     "char" → "string"; "boolean", "Boolean" → "boolean"; "array", "list",
//     "tuple", "ArrayList", "Array" → "array"; "any" (and unknown names) → no
//     type constraint.
//   - properties, items and additionalProperties are translated recursively;
//     enum, default, format, bounds and descriptions are kept.
//   - a property whose default is null also accepts null (a Python
//     Optional), e.g. "type": ["string", "null"]; an enum whose values are
//     not of the declared type widens the type to admit them (BFCL docs have
//     "boolean" with ["True", "False", "dontcare"]), so no translated schema
//     is unsatisfiable.
//   - required is kept (deduplicated), minus parameters flagged optional:
//     "optional": true (or "true") on a property, or an "optional": [names]
//     list beside "required".
//
// The root is always an object and carries "$schema".
func Translate(params map[string]any, opt TranslateOptions) (map[string]any, error) {
	if params == nil {
		params = map[string]any{}
	}
	out, err := translateNode(params, opt, true, "#")
	if err != nil {
		return nil, err
	}
	out["type"] = "object"
	if _, ok := out["properties"]; !ok {
		out["properties"] = map[string]any{}
	}
	if opt.Closed {
		out["additionalProperties"] = false
	}
	out["$schema"] = SchemaDialect
	return out, nil
}

func translateNode(n map[string]any, opt TranslateOptions, root bool, path string) (map[string]any, error) {
	out := map[string]any{}
	for _, k := range copiedKeywords {
		if v, ok := n[k]; ok {
			out[k] = v
		}
	}
	if root {
		// A root "default" in BFCL docs names a parameter, not a value.
		delete(out, "default")
	}
	if e, ok := n["enum"].([]any); ok {
		out["enum"] = e
	}
	var jt string
	switch t := n["type"].(type) {
	case string:
		jt = jsonTypes[t] // unknown names: no constraint
	case nil:
		if root {
			jt = "object"
		}
	default:
		return nil, fmt.Errorf("bfcl schema %s: type is %T, want a string", path, t)
	}
	if root {
		jt = "object"
	}
	if jt != "" {
		types := []any{jt}
		// "default": null documents a Python Optional: None is a value.
		if d, ok := n["default"]; ok && d == nil && !root {
			types = append(types, "null")
			if e, ok := out["enum"].([]any); ok && !slices.Contains(e, nil) {
				out["enum"] = append(slices.Clone(e), nil)
			}
		}
		// An enum whose values are not of the declared type ("boolean" with
		// ["True", "False", "dontcare"]) is the more specific statement:
		// admit its values' types rather than make the schema unsatisfiable.
		if e, ok := out["enum"].([]any); ok {
			for _, v := range e {
				if vt := jsonTypeOf(v); vt != "" && !slices.Contains(types, any(vt)) && !(vt == "integer" && slices.Contains(types, any("number"))) {
					types = append(types, vt)
				}
			}
		}
		if len(types) == 1 {
			out["type"] = jt
		} else {
			out["type"] = types
		}
	}
	if props, ok := n["properties"].(map[string]any); ok && (jt == "object" || jt == "") {
		tp := make(map[string]any, len(props))
		var optional []string
		for _, name := range sortedKeys(props) {
			sub, ok := props[name].(map[string]any)
			if !ok {
				return nil, fmt.Errorf("bfcl schema %s/properties/%s: not an object", path, name)
			}
			ts, err := translateNode(sub, opt, false, path+"/properties/"+name)
			if err != nil {
				return nil, err
			}
			tp[name] = ts
			if isTrue(sub["optional"]) {
				optional = append(optional, name)
			}
		}
		if list, ok := n["optional"].([]any); ok {
			for _, o := range list {
				if s, ok := o.(string); ok {
					optional = append(optional, s)
				}
			}
		}
		out["properties"] = tp
		if req, ok := n["required"].([]any); ok {
			var names []any
			seen := map[string]bool{}
			for _, r := range req {
				s, ok := r.(string)
				if !ok || seen[s] || slices.Contains(optional, s) {
					continue
				}
				if _, declared := props[s]; opt.Closed && !declared {
					continue // a closed object cannot require an undeclared name
				}
				seen[s] = true
				names = append(names, s)
			}
			if len(names) > 0 {
				out["required"] = names
			}
		}
		if opt.Closed && len(props) > 0 {
			out["additionalProperties"] = false
		}
	}
	if ap, ok := n["additionalProperties"]; ok {
		switch ap := ap.(type) {
		case bool:
			out["additionalProperties"] = ap
		case map[string]any:
			ts, err := translateNode(ap, opt, false, path+"/additionalProperties")
			if err != nil {
				return nil, err
			}
			out["additionalProperties"] = ts
		}
	}
	if items, ok := n["items"].(map[string]any); ok && (jt == "array" || jt == "") {
		ts, err := translateNode(items, opt, false, path+"/items")
		if err != nil {
			return nil, err
		}
		out["items"] = ts
	}
	return out, nil
}

// jsonTypeOf names the JSON Schema type of a decoded value ("integer" for
// whole numbers).
func jsonTypeOf(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case json.Number:
		if _, err := x.Int64(); err == nil {
			return "integer"
		}
		return "number"
	case float64:
		if x == float64(int64(x)) {
			return "integer"
		}
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return ""
}

func isTrue(v any) bool {
	switch x := v.(type) {
	case bool:
		return x
	case string:
		return strings.EqualFold(x, "true")
	}
	return false
}

// ToolSchemaJSON is one candidate tool as a predictor sees it: the name, the
// description, and the arguments' JSON Schema 2020-12.
type ToolSchemaJSON struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// PreprocessForLanguage applies BFCL's func_doc_language_specific_pre_processing
// to a copy of fns: in the Java and JavaScript categories every parameter
// becomes a string holding source text, with the original type named in its
// description (the checker converts the text back). Python categories are
// returned unchanged.
func PreprocessForLanguage(fns []Function, lang Language) []Function {
	out := make([]Function, len(fns))
	for i, f := range fns {
		out[i] = Function{Name: f.Name, Description: f.Description, Parameters: deepCopy(f.Parameters).(map[string]any)}
		if lang == Python {
			continue
		}
		langName, hint := "Java", " Note that the provided function is in Java 8 SDK syntax."
		if lang == JavaScript {
			langName, hint = "JavaScript", " Note that the provided function is in JavaScript syntax."
		}
		out[i].Description += hint
		props, _ := out[i].Parameters["properties"].(map[string]any)
		for _, name := range sortedKeys(props) {
			p, ok := props[name].(map[string]any)
			if !ok {
				continue
			}
			t, _ := p["type"].(string)
			desc, _ := p["description"].(string)
			if t == "any" {
				desc += fmt.Sprintf(" This parameter can be of any type of %s object in string representation.", langName)
			} else {
				desc += fmt.Sprintf(" This is %s %s type parameter in string representation.", langName, t)
			}
			listType := (lang == Java && (t == "ArrayList" || t == "Array")) || (lang == JavaScript && t == "array")
			if listType {
				desc += fmt.Sprintf(" The list elements are of type %s; they are not in string representation.", itemsType(p))
				delete(p, "items")
			}
			if lang == JavaScript && t == "dict" {
				if sub, ok := p["properties"]; ok {
					b, _ := json.Marshal(sub)
					desc += " The dictionary entries have the following schema; they are not in string representation. " + string(b)
					delete(p, "properties")
				}
			}
			p["description"] = desc
			p["type"] = "string"
		}
	}
	return out
}

func deepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = deepCopy(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = deepCopy(e)
		}
		return out
	}
	return v
}

// ToolSchemas returns q's candidate functions as a predictor should see them
// in q's category: language-preprocessed as BFCL does, then translated
// (closed objects).
func ToolSchemas(q Question) ([]ToolSchemaJSON, error) {
	fns := PreprocessForLanguage(q.Functions, LanguageOf(q.Category))
	out := make([]ToolSchemaJSON, len(fns))
	for i, f := range fns {
		s, err := Translate(f.Parameters, TranslateOptions{Closed: true})
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", q.ID, f.Name, err)
		}
		b, err := json.Marshal(s)
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", q.ID, f.Name, err)
		}
		out[i] = ToolSchemaJSON{Name: f.Name, Description: f.Description, Parameters: b}
	}
	return out, nil
}

// CompileSchema compiles a translated schema with the project's validator,
// santhosh-tekuri/jsonschema/v6, under draft 2020-12.
func CompileSchema(schema json.RawMessage) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	const url = "mem:///bfcl.json"
	if err := c.AddResource(url, doc); err != nil {
		return nil, err
	}
	return c.Compile(url)
}

// ValidateArgs validates a call's arguments against a compiled schema.
func ValidateArgs(s *jsonschema.Schema, args map[string]any) error {
	b, err := json.Marshal(args)
	if err != nil {
		return err
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return err
	}
	return s.Validate(v)
}
