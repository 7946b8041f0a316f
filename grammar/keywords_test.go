package grammar

import (
	"strings"
	"testing"
)

// Keyword-by-keyword: every instance is checked against the reference
// validator first (so the expectations themselves are right), then the
// grammar must agree (valid ⇒ accepted, invalid ⇒ rejected).
var keywordCases = []struct {
	name, schema string
	instances    []string
}{
	{"type", `{"type":"integer"}`, []string{`1`, `-20`, `0`, `1.5`, `"1"`, `null`, `true`}},
	{"type-array", `{"type":["string","null"]}`, []string{`"a"`, `null`, `1`, `[]`}},
	{"type-number", `{"type":"number"}`, []string{`1`, `-0.5`, `1e-7`, `1.5E+3`, `"x"`, `01`, `1.`, `.5`}},
	{"type-boolean", `{"type":"boolean"}`, []string{`true`, `false`, `null`, `"true"`}},
	{"enum", `{"enum":["a","b",1,null,{"k":[1]}]}`, []string{`"a"`, `"b"`, `1`, `null`, `{"k":[1]}`, `"c"`, `2`, `{"k":[2]}`}},
	{"const", `{"const":"x\ny"}`, []string{`"x\ny"`, `"x"`, `"xy"`}},
	{"properties", `{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"boolean"}}}`, []string{`{}`, `{"a":"x"}`, `{"b":true,"a":""}`, `{"a":1}`, `{"c":[1,{"d":null}]}`, `[]`}},
	{"required", `{"type":"object","properties":{"a":{},"b":{}},"required":["a","b"]}`, []string{`{"a":1,"b":2}`, `{"b":2,"a":1}`, `{"a":1}`, `{}`}},
	{"additionalProperties-false", `{"properties":{"a":{"type":"integer"}},"additionalProperties":false}`, []string{`{"a":1}`, `{}`, `{"b":1}`, `{"a":1,"b":1}`}},
	{"additionalProperties-schema", `{"properties":{"a":{}},"additionalProperties":{"type":"integer"}}`, []string{`{"a":"x","b":1}`, `{"b":"x"}`, `{"c":2}`}},
	{"patternProperties", `{"patternProperties":{"^x-":{"type":"string"},"^[0-9]+$":{"type":"integer"}},"additionalProperties":false}`, []string{`{"x-a":"s"}`, `{"12":3}`, `{"x-a":1}`, `{"12":"s"}`, `{"y":1}`}},
	{"min-maxProperties", `{"type":"object","minProperties":1,"maxProperties":2}`, []string{`{"a":1}`, `{"a":1,"b":2}`, `{}`, `{"a":1,"b":2,"c":3}`}},
	{"propertyNames", `{"type":"object","propertyNames":{"pattern":"^[a-z]+$","maxLength":3}}`, []string{`{"ab":1}`, `{"abcd":1}`, `{"A":1}`}},
	{"dependentRequired", `{"type":"object","dependentRequired":{"a":["b"]}}`, []string{`{"a":1,"b":2}`, `{"b":2}`, `{"a":1}`}},
	{"items", `{"type":"array","items":{"type":"integer"}}`, []string{`[]`, `[1,2]`, `[1,"a"]`}},
	{"prefixItems", `{"type":"array","prefixItems":[{"type":"string"},{"type":"integer"}],"items":false}`, []string{`["a",1]`, `["a"]`, `[]`, `[1,"a"]`, `["a",1,2]`}},
	{"prefixItems-rest", `{"type":"array","prefixItems":[{"type":"string"}],"items":{"type":"boolean"}}`, []string{`["a",true,false]`, `["a",1]`}},
	{"min-maxItems", `{"type":"array","minItems":2,"maxItems":3}`, []string{`[1,2]`, `[1,2,3]`, `[1]`, `[1,2,3,4]`, `[]`}},
	{"minLength", `{"type":"string","minLength":2}`, []string{`"ab"`, `"é€"`, `"a"`, `""`, `"\n\t"`}},
	{"maxLength", `{"type":"string","maxLength":2}`, []string{`"ab"`, `"😀😀"`, `"abc"`, `"\n\n\n"`}},
	{"pattern", `{"type":"string","pattern":"^[A-Z][a-z]+\\d{2}$"}`, []string{`"Abc12"`, `"abc12"`, `"Abc1"`, `"Ab12x"`}},
	{"pattern-unanchored", `{"type":"string","pattern":"ab+c"}`, []string{`"xxabbcyy"`, `"ac"`, `"abc"`}},
	{"format-date-time", `{"type":"string","format":"date-time"}`, []string{`"2024-02-29T12:00:00Z"`, `"2023-02-29T12:00:00Z"`, `"2024-01-01T25:00:00Z"`, `"2024-01-01 12:00:00Z"`, `"2024-01-01T12:00:00.123+02:00"`}},
	{"format-date", `{"type":"string","format":"date"}`, []string{`"2000-02-29"`, `"1900-02-29"`, `"2021-04-31"`, `"2021-12-31"`}},
	{"format-time", `{"type":"string","format":"time"}`, []string{`"12:30:00Z"`, `"12:30:00"`, `"24:00:00Z"`}},
	{"format-duration", `{"type":"string","format":"duration"}`, []string{`"P1D"`, `"PT1H30M"`, `"P1W"`, `"P"`, `"PT"`, `"1D"`}},
	{"format-email", `{"type":"string","format":"email"}`, []string{`"a.b@example.com"`, `"a..b@example.com"`, `"a@-x.com"`, `"a@b"`}},
	{"format-hostname", `{"type":"string","format":"hostname"}`, []string{`"example.com"`, `"-a.com"`, `"a_b.com"`}},
	{"format-ipv4", `{"type":"string","format":"ipv4"}`, []string{`"192.168.0.1"`, `"256.1.1.1"`, `"01.1.1.1"`}},
	{"format-ipv6", `{"type":"string","format":"ipv6"}`, []string{`"::1"`, `"2001:db8::8a2e:370:7334"`, `"1:2:3"`, `"12345::"`}},
	{"format-uuid", `{"type":"string","format":"uuid"}`, []string{`"123e4567-e89b-12d3-a456-426614174000"`, `"123e4567e89b12d3a456426614174000"`}},
	{"format-uri", `{"type":"string","format":"uri"}`, []string{`"https://example.com/a?b=c#d"`, `"mailto:a@b.c"`, `"/relative"`, `"http://a b"`}},
	{"minimum", `{"type":"integer","minimum":3}`, []string{`3`, `10`, `2`, `-5`}},
	{"exclusiveMaximum", `{"type":"number","exclusiveMaximum":2.5}`, []string{`2.4`, `2.49`, `2.5`, `3`, `-100`}},
	{"min-max-number", `{"type":"number","minimum":-1.5,"maximum":1.5}`, []string{`-1.5`, `0`, `1.5`, `1.51`, `-1.6`, `-0`}},
	{"multipleOf", `{"type":"integer","multipleOf":3}`, []string{`0`, `9`, `-6`, `10`}},
	{"multipleOf-decimal", `{"type":"number","multipleOf":0.01}`, []string{`1.23`, `1.234`, `5`, `0.1`}},
	{"anyOf", `{"anyOf":[{"type":"string","maxLength":2},{"type":"integer","minimum":5}]}`, []string{`"ab"`, `7`, `"abc"`, `4`}},
	{"oneOf-disjoint", `{"oneOf":[{"type":"object","properties":{"kind":{"const":"a"},"x":{"type":"integer"}},"required":["kind"]},{"type":"object","properties":{"kind":{"const":"b"}},"required":["kind"]}]}`, []string{`{"kind":"a","x":1}`, `{"kind":"b"}`, `{"kind":"c"}`, `{"kind":"a","x":"s"}`}},
	{"allOf", `{"allOf":[{"type":"object","properties":{"a":{"type":"integer"}},"required":["a"]},{"properties":{"b":{"type":"string"}},"required":["b"]}]}`, []string{`{"a":1,"b":"x"}`, `{"a":1}`, `{"a":"1","b":"x"}`}},
	{"ref-recursive", `{"$defs":{"node":{"type":"object","properties":{"v":{"type":"integer"},"next":{"$ref":"#/$defs/node"}},"required":["v"],"additionalProperties":false}},"$ref":"#/$defs/node"}`, []string{`{"v":1}`, `{"v":1,"next":{"v":2,"next":{"v":3}}}`, `{"v":1,"next":{}}`}},
	{"nullable", `{"type":["integer","null"],"minimum":0}`, []string{`null`, `0`, `-1`}},
	{"annotations", `{"title":"t","description":"d","default":1,"examples":[1],"$comment":"c","x-unknown":true,"type":"integer"}`, []string{`1`, `"a"`}},
	{"not-type", `{"not":{"type":"string"}}`, []string{`1`, `"a"`, `null`}},
	{"not-empty", `{"anyOf":[{"type":"integer"},{"not":{}}]}`, []string{`1`, `"a"`, `null`, `{}`}},
	{"forbidden-property", `{"properties":{"foo":{"not":{"description":"any"}}}}`, []string{`{"foo":1,"bar":2}`, `{"bar":1,"baz":2}`, `{}`}},
	// exact complements (negate.go)
	{"not-integer", `{"not":{"type":"integer"}}`, []string{`1`, `1.5`, `-0.25`, `"a"`, `null`, `[]`}},
	{"not-not", `{"not":{"not":{"type":"string","minLength":2}}}`, []string{`"ab"`, `"a"`, `1`, `null`}},
	{"not-enum-mixed", `{"not":{"enum":["a",1,null,true]}}`, []string{`"a"`, `"b"`, `1`, `2`, `1.5`, `null`, `true`, `false`, `{}`}},
	{"not-required", `{"type":"object","not":{"required":["a","b"]}}`, []string{`{}`, `{"a":1}`, `{"b":1}`, `{"a":1,"b":2}`, `{"c":1}`}},
	{"not-minimum", `{"not":{"minimum":2.5}}`, []string{`2.4`, `2.5`, `3`, `-100`, `"x"`}},
	{"not-exclusive-max", `{"type":"number","not":{"exclusiveMaximum":3}}`, []string{`3`, `2.99`, `4`}},
	{"not-min-max", `{"type":"integer","not":{"minimum":1,"maximum":5}}`, []string{`0`, `1`, `5`, `6`, `-3`}},
	{"not-multipleOf", `{"type":"number","not":{"multipleOf":0.5}}`, []string{`1`, `1.5`, `1.25`, `0.3`, `0`}},
	{"not-pattern", `{"type":"string","not":{"pattern":"^a+$"}}`, []string{`"a"`, `"aa"`, `"ab"`, `""`, `"b"`}},
	{"not-length", `{"not":{"type":"string","minLength":2,"maxLength":3}}`, []string{`"a"`, `"ab"`, `"abc"`, `"abcd"`, `1`}},
	{"not-properties", `{"type":"object","not":{"properties":{"a":{"type":"string"}}}}`, []string{`{}`, `{"a":"x"}`, `{"a":1}`, `{"b":1}`}},
	{"not-properties-required", `{"not":{"type":"object","properties":{"k":{"const":"x"}},"required":["k"]}}`, []string{`{"k":"x"}`, `{"k":"y"}`, `{}`, `1`}},
	{"not-min-maxProperties", `{"type":"object","not":{"minProperties":1,"maxProperties":2}}`, []string{`{}`, `{"a":1}`, `{"a":1,"b":2}`, `{"a":1,"b":2,"c":3}`}},
	{"not-items-bounds", `{"type":"array","not":{"minItems":1,"maxItems":2}}`, []string{`[]`, `[1]`, `[1,2]`, `[1,2,3]`}},
	{"not-contains", `{"type":"array","not":{"contains":{"type":"string"}}}`, []string{`[]`, `[1,2]`, `[1,"a"]`, `["a"]`}},
	{"not-propertyNames", `{"type":"object","not":{"propertyNames":{"maxLength":1}}}`, []string{`{}`, `{"a":1}`, `{"ab":1}`, `{"a":1,"bc":2}`}},
	{"not-patternProperties", `{"not":{"patternProperties":{"^x":{"type":"string"}}}}`, []string{`{}`, `{"x":"s"}`, `{"x":1}`, `{"y":1,"xa":null}`, `1`}},
	{"not-additionalProperties", `{"not":{"properties":{"a":{}},"additionalProperties":false}}`, []string{`{}`, `{"a":1}`, `{"b":1}`, `"s"`}},
	{"not-items", `{"type":"array","not":{"items":{"type":"integer","minimum":2}}}`, []string{`[]`, `[2,3]`, `[1]`, `[2,"a"]`, `[5,1,7]`}},
	{"not-items-false", `{"not":{"items":false}}`, []string{`[]`, `[1]`, `1`}},
	{"not-prefixItems", `{"type":"array","not":{"prefixItems":[{"type":"string"},{"type":"integer"}],"items":false}}`, []string{`["a",1]`, `["a"]`, `[]`, `[1]`, `["a","b"]`, `["a",1,2]`}},
	{"not-anyOf", `{"not":{"anyOf":[{"type":"string"},{"type":"integer","minimum":0}]}}`, []string{`"a"`, `1`, `-1`, `1.5`, `null`}},
	{"not-allOf", `{"not":{"allOf":[{"type":"string"},{"maxLength":2}]}}`, []string{`"ab"`, `"abc"`, `1`}},
	{"not-oneOf", `{"not":{"oneOf":[{"type":"integer"},{"minimum":0}]}}`, []string{`1`, `-1`, `0.5`, `-0.5`, `"a"`}},
	{"not-dependentRequired", `{"type":"object","not":{"dependentRequired":{"a":["b"]}}}`, []string{`{"a":1}`, `{"a":1,"b":2}`, `{"b":2}`, `{}`}},
	{"not-ref-recursive", `{"$defs":{"n":{"type":"object","properties":{"next":{"$ref":"#/$defs/n"}},"required":["v"]}},"not":{"$ref":"#/$defs/n"}}`, []string{`{"v":1}`, `{}`, `{"v":1,"next":{}}`, `{"v":1,"next":{"v":2}}`, `1`}},
	{"not-if", `{"not":{"if":{"type":"integer"},"then":{"minimum":0},"else":{"type":"string"}}}`, []string{`1`, `-1`, `"a"`, `null`}},
	{"oneOf-overlap", `{"oneOf":[{"required":["a"]},{"required":["b"]}]}`, []string{`{"a":1}`, `{"b":1}`, `{"a":1,"b":2}`, `{}`, `1`}},
	{"oneOf-overlap-3", `{"type":"object","oneOf":[{"required":["a"]},{"required":["b"]},{"required":["c"]}]}`, []string{`{"a":1}`, `{"b":1,"c":1}`, `{"c":1}`, `{"a":1,"b":1,"c":1}`, `{}`}},
	{"oneOf-overlap-number", `{"oneOf":[{"type":"number","multipleOf":3},{"type":"number","multipleOf":5}]}`, []string{`3`, `5`, `15`, `7`, `9`, `10`}},
	{"oneOf-overlap-string", `{"oneOf":[{"type":"string"},{"type":"string","minLength":1}]}`, []string{`""`, `"a"`, `1`}},
	{"if-then-else", `{"if":{"properties":{"k":{"const":"a"}},"required":["k"]},"then":{"required":["x"]},"else":{"required":["y"]}}`, []string{`{"k":"a","x":1}`, `{"k":"a","y":1}`, `{"k":"b","y":1}`, `{"k":"b","x":1}`, `{"y":1}`, `1`}},
	{"if-then", `{"properties":{"a":{"if":{"type":"string"},"then":{"minLength":1}}}}`, []string{`{"a":"x"}`, `{"a":""}`, `{"a":1}`, `{}`}},
	{"if-else", `{"if":{"type":"integer"},"else":{"type":"string"}}`, []string{`1`, `"a"`, `1.5`, `null`}},
	{"dependencies-schema", `{"dependencies":{"a":{"required":["b"]},"c":{"properties":{"d":{"type":"integer"}}}}}`, []string{`{"a":1,"b":1}`, `{"a":1}`, `{"b":1}`, `{"c":1,"d":1}`, `{"c":1,"d":"x"}`, `{"d":"x"}`, `1`}},
	{"dependentSchemas", `{"dependentSchemas":{"a":{"properties":{"b":{"type":"string"}}}}}`, []string{`{"a":1,"b":"x"}`, `{"a":1,"b":1}`, `{"b":1}`}},
	{"boolean-schema", `true`, []string{`1`, `{"a":[true,null]}`, `"x"`}},
	{"nested", `{"type":"object","properties":{"list":{"type":"array","items":{"type":"object","properties":{"id":{"type":"integer"},"tags":{"type":"array","items":{"type":"string"},"maxItems":2}},"required":["id"]}}},"required":["list"]}`,
		[]string{`{"list":[]}`, `{"list":[{"id":1,"tags":["a","b"]}]}`, `{"list":[{"tags":[]}]}`, `{"list":[{"id":1,"tags":["a","b","c"]}]}`}},
}

func TestKeywords(t *testing.T) {
	for _, kc := range keywordCases {
		t.Run(kc.name, func(t *testing.T) {
			g, err := Compile([]byte(kc.schema), Options{})
			if err != nil {
				t.Fatalf("compile: %v", err)
			}
			v := newValidator(t, []byte(kc.schema))
			nValid, nInvalid := 0, 0
			for _, inst := range kc.instances {
				want := v.valid([]byte(inst))
				got := g.Match([]byte(inst))
				if got && !want {
					t.Errorf("FALSE ACCEPT %s", inst)
				}
				if want && !got {
					t.Errorf("valid instance rejected: %s", inst)
				}
				if want {
					nValid++
				} else {
					nInvalid++
				}
			}
			if nValid == 0 || nInvalid == 0 && kc.name != "boolean-schema" {
				t.Errorf("case needs valid and invalid instances (%d/%d)", nValid, nInvalid)
			}
		})
	}
}

func TestCompileErrors(t *testing.T) {
	cases := []struct{ schema, keyword, ptr string }{
		{`{"type":"string","pattern":"((?!a).)*"}`, "pattern", "/pattern"},
		{`{"type":"string","pattern":"(a)\\1"}`, "pattern", "/pattern"},
		{`{"type":"array","uniqueItems":true}`, "uniqueItems", "/uniqueItems"},
		{`{"properties":{"a":{"if":{"type":"string","format":"email"},"then":{"minLength":1}}}}`, "if", "/properties/a/if"},
		{`{"oneOf":[{"type":"string"},{"type":"string","format":"email"}]}`, "oneOf", "/oneOf"},
		{`{"not":{"type":"array","uniqueItems":true}}`, "not", "/not"},
		{`{"type":"object","allOf":[{"not":{"propertyNames":{"const":"a"}}},{"not":{"propertyNames":{"const":"b"}}},{"not":{"propertyNames":{"const":"c"}}},{"not":{"propertyNames":{"const":"d"}}}]}`, "not", "/allOf/0/not/propertyNames"},
		{`{"not":{"const":{"a":1}}}`, "not", "/not"},
		{`{"$ref":"http://example.com/other.json"}`, "$ref", "/$ref"},
		{`{"properties":{"a":{"contains":{"type":"string"},"maxContains":2}}}`, "contains", "/properties/a/contains"},
	}
	for _, c := range cases {
		_, err := Compile([]byte(c.schema), Options{})
		ce, ok := err.(*CompileError)
		if !ok {
			t.Errorf("%s: want *CompileError, got %v", c.schema, err)
			continue
		}
		if ce.Keyword != c.keyword || !strings.HasPrefix(ce.Pointer, c.ptr) {
			t.Errorf("%s: got keyword %q pointer %q, want %q %q", c.schema, ce.Keyword, ce.Pointer, c.keyword, c.ptr)
		}
		g, err := Compile([]byte(c.schema), Options{Lenient: true})
		if err != nil {
			if c.keyword == "$ref" {
				continue // a remote reference cannot be loosened
			}
			t.Errorf("%s lenient: %v", c.schema, err)
			continue
		}
		if len(g.Loosened) == 0 || g.Loosened[0].Keyword != c.keyword {
			t.Errorf("%s lenient: loosened %v", c.schema, g.Loosened)
		}
	}
}

func TestOptions(t *testing.T) {
	schema := []byte(`{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"}}}`)
	g, _ := Compile(schema, Options{PropertyOrder: DeclaredOrder})
	if !g.Match([]byte(`{"a":1,"b":2}`)) || g.Match([]byte(`{"b":2,"a":1}`)) {
		t.Error("DeclaredOrder")
	}
	g, _ = Compile(schema, Options{Strict: true})
	if g.Match([]byte(`{"a":1,"c":2}`)) || !g.Match([]byte(`{"a":1}`)) {
		t.Error("Strict")
	}
	g, _ = Compile(schema, Options{Whitespace: WhitespaceFlexible, MaxWhitespace: 2})
	if !g.Match([]byte("{ \"a\" : 1 ,\n\"b\":2}")) || g.Match([]byte("{   \"a\":1}")) {
		t.Error("WhitespaceFlexible")
	}
	g, _ = Compile(schema, Options{})
	if g.Match([]byte(`{ "a":1}`)) {
		t.Error("compact allows whitespace")
	}
	g, _ = Compile([]byte(`{"type":"string"}`), Options{MaxStringBytes: 3})
	if !g.Match([]byte(`"abc"`)) || g.Match([]byte(`"abcd"`)) {
		t.Error("MaxStringBytes")
	}
	g, _ = Compile([]byte(`{"type":"number"}`), Options{MaxNumberDigits: 3})
	if !g.Match([]byte(`123.456`)) || g.Match([]byte(`1234`)) {
		t.Error("MaxNumberDigits")
	}
}

func TestMatcherAPI(t *testing.T) {
	g, err := Compile([]byte(`{"type":"object","properties":{"name":{"const":"airs"},"n":{"type":"integer"}},"required":["name","n"],"additionalProperties":false}`), Options{PropertyOrder: DeclaredOrder})
	if err != nil {
		t.Fatal(err)
	}
	m := g.NewMatcher()
	if f := string(m.Forced()); f != `{"name":"airs","n":` {
		t.Errorf("forced %q", f)
	}
	n, ok := m.AdvanceBytes([]byte(`{"name":"airs","n":12`))
	if !ok || n != 21 || m.IsAccepting() {
		t.Fatalf("advance %d %v", n, ok)
	}
	snap := m.Snapshot()
	if !m.Advance('}') || !m.IsAccepting() || m.CanContinue() {
		t.Error("close")
	}
	m.Restore(snap)
	if m.IsAccepting() || !m.Advance('3') {
		t.Error("restore")
	}
	m.Rollback(3)
	if m.Len() != 19 || m.Advance('x') {
		t.Error("rollback")
	}
	sc := g.NewStreamChecker()
	_, err = sc.Write([]byte(`{"name":"ai`))
	if err != nil {
		t.Fatal(err)
	}
	n, err = sc.Write([]byte(`rs","n":1x}`))
	obe, ok2 := err.(*OffendingByteError)
	if !ok2 || obe.Offset != 20 || obe.Byte != 'x' || n != 9 {
		t.Errorf("stream: n=%d err=%v", n, err)
	}
	sc = g.NewStreamChecker()
	sc.Write([]byte(`{"name":"airs","n":1`))
	if sc.Close() == nil {
		t.Error("incomplete stream closed")
	}
	sc.Write([]byte(`}`))
	if sc.Close() != nil || !sc.Complete() {
		t.Error("complete stream")
	}
}
