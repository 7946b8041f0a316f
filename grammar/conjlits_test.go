package grammar

import (
	"errors"
	"testing"
)

// Container enum/const members conjoined with sibling constraints (issue
// 20): a member the siblings reject must be dropped, never kept unchecked.
// Every instance is judged by the reference validator, so both invalid
// accepted and valid rejected fail the test.
func TestConjLiterals(t *testing.T) {
	cases := []struct {
		schema    string
		instances []string
	}{
		// arrays
		{`{"type":"array","minItems":3,"enum":[[1],[1,2,3]]}`, []string{`[1]`, `[1,2,3]`, `[]`}},
		{`{"type":"array","maxItems":1,"enum":[[1],[1,2]]}`, []string{`[1]`, `[1,2]`}},
		{`{"type":"array","items":{"type":"string"},"enum":[[1],["a"],[]]}`, []string{`[1]`, `["a"]`, `[]`}},
		{`{"type":"array","prefixItems":[{"type":"integer"}],"items":false,"enum":[[1],[1,2],["x"]]}`, []string{`[1]`, `[1,2]`, `["x"]`}},
		{`{"type":"array","uniqueItems":true,"enum":[["a","a"],["a","b"],[true,false]]}`, []string{`["a","a"]`, `["a","b"]`, `[true,false]`}},
		{`{"type":"array","items":{"type":"integer","minimum":1,"maximum":9},"enum":[[1e0],[1.0],[10],[1.5]]}`, []string{`[1e0]`, `[1.0]`, `[10]`, `[1.5]`}},
		{`{"type":"array","items":{"type":"number","multipleOf":0.5},"enum":[[15e-1],[1.25]]}`, []string{`[15e-1]`, `[1.25]`}},
		{`{"type":"array","items":{"type":"string","maxLength":2},"enum":[["abc"],["ab"]]}`, []string{`["abc"]`, `["ab"]`}},
		{`{"type":"array","items":{"type":"string","pattern":"^a"},"enum":[["ba"],["ab"]]}`, []string{`["ba"]`, `["ab"]`}},
		{`{"allOf":[{"enum":[[1],[1,2,3]]},{"type":"array","minItems":2}]}`, []string{`[1]`, `[1,2,3]`}},
		{`{"anyOf":[{"type":"array","minItems":2},{"type":"array","maxItems":0}],"enum":[[1],[1,2],[]]}`, []string{`[1]`, `[1,2]`, `[]`}},
		{`{"type":"array","items":{"enum":[[1]]},"enum":[[[1]],[[2]]]}`, []string{`[[1]]`, `[[2]]`}},
		// objects
		{`{"type":"object","required":["a"],"enum":[{"b":1},{"a":1}]}`, []string{`{"b":1}`, `{"a":1}`}},
		{`{"type":"object","properties":{"a":{"type":"string"}},"enum":[{"a":1},{"a":"x"}]}`, []string{`{"a":1}`, `{"a":"x"}`}},
		{`{"type":"object","additionalProperties":false,"properties":{"a":{}},"enum":[{"a":1},{"a":1,"b":2}]}`, []string{`{"a":1}`, `{"a":1,"b":2}`}},
		{`{"type":"object","additionalProperties":{"type":"integer"},"enum":[{"a":1},{"a":"x"}]}`, []string{`{"a":1}`, `{"a":"x"}`}},
		{`{"type":"object","maxProperties":1,"enum":[{"a":1},{"a":1,"b":2}]}`, []string{`{"a":1}`, `{"a":1,"b":2}`}},
		{`{"type":"object","patternProperties":{"^x":{"type":"null"}},"enum":[{"xa":1},{"xa":null},{"y":1}]}`, []string{`{"xa":1}`, `{"xa":null}`, `{"y":1}`}},
		{`{"type":"object","dependentRequired":{"a":["b"]},"enum":[{"a":1},{"a":1,"b":1}]}`, []string{`{"a":1}`, `{"a":1,"b":1}`}},
		{`{"type":"object","propertyNames":{"maxLength":1},"enum":[{"ab":1},{"a":1}]}`, []string{`{"ab":1}`, `{"a":1}`}},
		// scalars (handled by the string/number automata)
		{`{"type":"integer","minimum":3,"enum":[1,3,5]}`, []string{`1`, `3`, `5`}},
		{`{"type":"string","pattern":"^a","enum":["ab","ba"]}`, []string{`"ab"`, `"ba"`}},
		{`{"type":"string","maxLength":2,"enum":["abc","ab"]}`, []string{`"abc"`, `"ab"`}},
		// none left: accepts nothing of that kind
		{`{"properties":{"a":{"type":"array","minItems":3,"enum":[[1]]}}}`, []string{`{"a":[1]}`, `{"a":[]}`, `{"a":[1,2,3]}`, `{}`}},
		{`{"type":"array","items":{"type":"number","minimum":2},"enum":[[1.5]]}`, nil},
		{`{"type":"array","minItems":3,"enum":[[1]]}`, nil},
		{`{"type":"array","items":{"type":"integer","minimum":2},"const":[1]}`, nil},
		{`{"type":"object","required":["a"],"const":{"b":1}}`, nil},
	}
	_, emptyErr := Compile([]byte(`{"enum":[]}`), Options{})
	for _, tc := range cases {
		g, err := Compile([]byte(tc.schema), Options{})
		if tc.instances == nil {
			// nothing left: refused as an empty enum is
			if err == nil || emptyErr == nil || err.Error() != emptyErr.Error() {
				t.Errorf("%s: got %v, want %v as for an empty enum", tc.schema, err, emptyErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.schema, err)
			continue
		}
		ref := newValidator(t, []byte(tc.schema))
		for _, in := range tc.instances {
			want := ref.valid([]byte(in))
			if got := g.Match([]byte(in)); got != want {
				t.Errorf("%s: Match(%s) = %v, reference validator says %v", tc.schema, in, got, want)
			}
		}
	}
}

// Where equality is not textual (numbers, objects) uniqueItems over a
// container literal is not decided here: refused with keyword and pointer.
func TestConjLiteralsUndecidedRefused(t *testing.T) {
	for _, tc := range []struct{ s, kw, ptr string }{
		{`{"type":"array","uniqueItems":true,"enum":[[1,1.0]]}`, "uniqueItems", "/uniqueItems"},
		{`{"type":"array","uniqueItems":true,"enum":[[{"a":1,"b":2},{"b":2,"a":1}]]}`, "uniqueItems", "/uniqueItems"},
		{`{"type":"array","items":{"type":"number","minimum":1},"const":[1e-30]}`, "const", "/const"},
		{`{"allOf":[{"type":"array","items":{"type":"number","minimum":1}}],"enum":[[1e-30]]}`, "allOf", "/allOf"},
		// recursive: the items schema is the one being lowered
		{`{"type":"array","items":{"$ref":"#"},"enum":[[[]],[1]]}`, "enum", "/enum"},
		{`{"$defs":{"a":{"type":"array","items":{"$ref":"#/$defs/a"},"const":[[]]}},"$ref":"#/$defs/a"}`, "const", "/$defs/a/const"},
	} {
		s := tc.s
		_, err := Compile([]byte(s), Options{})
		var ce *CompileError
		if !errors.As(err, &ce) {
			t.Errorf("%s: want a CompileError, got %v", s, err)
			continue
		}
		if ce.Keyword != tc.kw || ce.Pointer != tc.ptr {
			t.Errorf("%s: refused with %q at %q, want %q at %q", s, ce.Keyword, ce.Pointer, tc.kw, tc.ptr)
		}
	}
}

// Lenient compilation keeps an undecided member and says so.
func TestConjLiteralsLenient(t *testing.T) {
	g, err := Compile([]byte(`{"type":"array","items":{"$ref":"#"},"enum":[[[]],[1]]}`), Options{Lenient: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Loosened) == 0 || g.Loosened[0].Keyword != "enum" || g.Loosened[0].Pointer != "/enum" {
		t.Fatalf("want a loosening of /enum, got %+v", g.Loosened)
	}
	if !g.Match([]byte(`[[]]`)) {
		t.Error("the undecided member [[]] should be kept")
	}
}
