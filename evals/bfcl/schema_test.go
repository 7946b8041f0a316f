package bfcl

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

func decodeUseNumber(t *testing.T, s string) map[string]any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader([]byte(s)))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestTranslateTypes(t *testing.T) {
	cases := map[string]any{ // BFCL type → JSON Schema "type" (nil: none)
		"dict": "object", "object": "object", "HashMap": "object", "Hashtable": "object",
		"integer": "integer", "int": "integer", "long": "integer", "short": "integer", "byte": "integer", "Bigint": "integer",
		"float": "number", "double": "number", "number": "number",
		"string": "string", "String": "string", "char": "string", "str": "string",
		"boolean": "boolean", "Boolean": "boolean", "bool": "boolean",
		"array": "array", "list": "array", "tuple": "array", "ArrayList": "array", "Array": "array",
		"any": nil, "Any": nil, "": nil, "SomethingUnknown": nil,
	}
	for bfclType, want := range cases {
		s, err := Translate(map[string]any{"type": "dict", "properties": map[string]any{"p": map[string]any{"type": bfclType}}}, TranslateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		p := s["properties"].(map[string]any)["p"].(map[string]any)
		if got := p["type"]; !reflect.DeepEqual(got, want) {
			t.Errorf("%q → %v, want %v", bfclType, got, want)
		}
	}
}

func TestTranslateStructure(t *testing.T) {
	in := decodeUseNumber(t, `{"type":"dict","required":["a","b","b","c","ghost"],"optional":["c"],"default":"a",
	 "properties":{
	  "a":{"type":"integer","description":"A","enum":[1,2],"maximum":400},
	  "b":{"type":"array","items":{"type":"dict","properties":{"x":{"type":"float","default":1.5}},"required":["x"]},"minItems":1},
	  "c":{"type":"string","format":"date"},
	  "d":{"type":"tuple","items":{"type":"String"},"optional":"true"},
	  "e":{"type":"dict","description":"free-form"},
	  "f":{"type":"string","default":null,"enum":["x","y"]},
	  "g":{"type":"any","description":"anything"}}}`)
	got, err := Translate(in, TranslateOptions{Closed: true})
	if err != nil {
		t.Fatal(err)
	}
	want := decodeUseNumber(t, `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","additionalProperties":false,
	 "required":["a","b"],
	 "properties":{
	  "a":{"type":"integer","description":"A","enum":[1,2],"maximum":400},
	  "b":{"type":"array","minItems":1,"items":{"type":"object","additionalProperties":false,"required":["x"],
	       "properties":{"x":{"type":"number","default":1.5}}}},
	  "c":{"type":"string","format":"date"},
	  "d":{"type":"array","items":{"type":"string"}},
	  "e":{"type":"object","description":"free-form"},
	  "f":{"type":["string","null"],"default":null,"enum":["x","y",null]},
	  "g":{"description":"anything"}}}`)
	if !reflect.DeepEqual(got, want) {
		g, _ := json.MarshalIndent(got, "", " ")
		w, _ := json.MarshalIndent(want, "", " ")
		t.Errorf("got\n%s\nwant\n%s", g, w)
	}
	if _, err := CompileSchema(mustJSON(t, got)); err != nil {
		t.Fatalf("translated schema does not compile: %v", err)
	}
}

func mustJSON(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestTranslatedSchemaValidates(t *testing.T) {
	q := mustQ(t, qSimple, "simple_python")
	tools, err := ToolSchemas(q)
	if err != nil {
		t.Fatal(err)
	}
	s, err := CompileSchema(tools[0].Parameters)
	if err != nil {
		t.Fatal(err)
	}
	good := call("calc.area", `{"base":10,"height":5.5,"shape":[1,2],"opts":{"mode":"x"}}`).Args
	if err := ValidateArgs(s, good); err != nil {
		t.Errorf("valid args rejected: %v", err)
	}
	for _, bad := range []string{
		`{"height":5}`,                         // missing required
		`{"base":1.5,"height":5}`,              // float for integer
		`{"base":1,"height":"5"}`,              // string for number
		`{"base":1,"height":5,"nope":1}`,       // closed object
		`{"base":1,"height":5,"opts":{"z":1}}`, // closed nested object
		`{"base":1,"height":5,"tags":[1]}`,     // item type
	} {
		if ValidateArgs(s, call("calc.area", bad).Args) == nil {
			t.Errorf("invalid args accepted: %s", bad)
		}
	}
}

func TestPreprocessForLanguage(t *testing.T) {
	q := mustQ(t, qJava, "simple_java")
	fns := PreprocessForLanguage(q.Functions, Java)
	props := fns[0].Parameters["properties"].(map[string]any)
	for name, p := range props {
		if typ := p.(map[string]any)["type"]; typ != "string" {
			t.Errorf("java %s: type %v, want string", name, typ)
		}
	}
	ids := props["ids"].(map[string]any)
	if _, ok := ids["items"]; ok {
		t.Error("ArrayList items should be folded into the description")
	}
	if d := ids["description"].(string); !bytes.Contains([]byte(d), []byte("This is Java ArrayList type parameter in string representation. The list elements are of type integer")) {
		t.Errorf("description %q", d)
	}
	// The original is untouched.
	if q.Functions[0].Parameters["properties"].(map[string]any)["id"].(map[string]any)["type"] != "long" {
		t.Error("PreprocessForLanguage modified its input")
	}
	js := mustQ(t, qJS, "simple_javascript")
	jfns := PreprocessForLanguage(js.Functions, JavaScript)
	if typ := jfns[0].Parameters["properties"].(map[string]any)["done"].(map[string]any)["type"]; typ != "string" {
		t.Errorf("js Boolean → %v", typ)
	}
	py := PreprocessForLanguage(mustQ(t, qSimple, "simple_python").Functions, Python)
	if py[0].Parameters["properties"].(map[string]any)["base"].(map[string]any)["type"] != "integer" {
		t.Error("python functions should be unchanged")
	}
}

// TestAllDataSchemasCompile translates every function of every BFCL file
// (as ToolSchemas presents it and in the plain translation) and compiles it
// with santhosh-tekuri/jsonschema/v6.
func TestAllDataSchemasCompile(t *testing.T) {
	dir := dataDir(t)
	cats, err := AvailableCategories(dir)
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, c := range cats {
		p, _ := FindCategoryFile(dir, c)
		qs, err := LoadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range qs {
			tools, err := ToolSchemas(q)
			if err != nil {
				t.Fatal(err)
			}
			for i, tl := range tools {
				total++
				if _, err := CompileSchema(tl.Parameters); err != nil {
					t.Errorf("%s %s: %v", q.ID, tl.Name, err)
				}
				plain, err := Translate(q.Functions[i].Parameters, TranslateOptions{})
				if err != nil {
					t.Fatalf("%s %s: %v", q.ID, tl.Name, err)
				}
				if _, err := CompileSchema(mustJSON(t, plain)); err != nil {
					t.Errorf("%s %s (open): %v", q.ID, tl.Name, err)
				}
			}
		}
	}
	t.Logf("%d function schemas compiled", total)
	if total < 5000 {
		t.Errorf("only %d schemas: data incomplete?", total)
	}
}

func TestTranslateEnumTypeConflict(t *testing.T) {
	in := decodeUseNumber(t, `{"type":"dict","properties":{
	  "u":{"type":"boolean","enum":["True","False","dontcare"]},
	  "n":{"type":"integer","enum":["1","2"]},
	  "x":{"type":"float","enum":[1,2.5]}}}`)
	got, err := Translate(in, TranslateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	props := got["properties"].(map[string]any)
	if typ := props["u"].(map[string]any)["type"]; !reflect.DeepEqual(typ, []any{"boolean", "string"}) {
		t.Errorf("u: %v", typ)
	}
	if typ := props["n"].(map[string]any)["type"]; !reflect.DeepEqual(typ, []any{"integer", "string"}) {
		t.Errorf("n: %v", typ)
	}
	if typ := props["x"].(map[string]any)["type"]; typ != "number" {
		t.Errorf("x: %v (integers are numbers)", typ)
	}
	s, err := CompileSchema(mustJSON(t, got))
	if err != nil {
		t.Fatal(err)
	}
	if err := ValidateArgs(s, map[string]any{"u": "dontcare", "n": "2", "x": 2.5}); err != nil {
		t.Error(err)
	}
}
