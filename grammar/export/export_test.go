package export

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

func compileSchema(t testing.TB, schema []byte) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		t.Fatalf("unmarshal %s: %v", schema, err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource("mem://s.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("mem://s.json")
	if err != nil {
		t.Fatalf("compile %s: %v", schema, err)
	}
	return s
}

func validates(t testing.TB, s *jsonschema.Schema, inst string) bool {
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(inst))
	if err != nil {
		t.Fatalf("instance %s: %v", inst, err)
	}
	return s.Validate(v) == nil
}

func keysOf(ls []Loosening) []string {
	var out []string
	for _, l := range ls {
		out = append(out, l.Pointer+" "+l.Keyword)
	}
	sort.Strings(out)
	return out
}

// The loosening table: each schema, the (pointer keyword) pairs reported.
var looseningCases = []struct {
	name   string
	schema string
	want   []string
}{
	{"plain object", `{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"integer","minimum":0}},"required":["a"]}`, nil},
	{"number bounds", `{"type":"number","minimum":0,"exclusiveMaximum":1}`, []string{" exclusiveMaximum", " minimum"}},
	{"number integer multipleOf is exact", `{"type":"number","multipleOf":2,"minimum":0,"maximum":6}`, nil},
	{"number fractional multipleOf", `{"type":"number","multipleOf":0.01}`, []string{" multipleOf"}},
	{"integer fractional bounds rounded", `{"type":"integer","minimum":1.5,"maximum":9.5}`, nil},
	{"integer multipleOf unbounded", `{"type":"integer","multipleOf":7}`, []string{" multipleOf"}},
	{"uniqueItems", `{"type":"array","items":{"type":"string"},"uniqueItems":true}`, []string{" uniqueItems"}},
	{"uniqueItems with maxItems 1", `{"type":"array","items":{"type":"string"},"uniqueItems":true,"maxItems":1}`, nil},
	{"contains", `{"type":"array","contains":{"const":1}}`, []string{" contains"}},
	{"not", `{"type":"string","not":{"const":"x"}}`, []string{" not"}},
	{"if then else", `{"if":{"type":"string"},"then":{"minLength":1},"else":{"type":"null"}}`, []string{" if"}},
	{"lookahead pattern", `{"type":"string","pattern":"^(?=a)a+$"}`, []string{" pattern"}},
	{"backreference", `{"type":"string","pattern":"(a)\\1"}`, []string{" pattern"}},
	{"word boundary", `{"type":"string","pattern":"\\bx"}`, []string{" pattern"}},
	{"pattern needs an escaped quote", `{"type":"string","pattern":"^\"$"}`, []string{" pattern"}},
	{"pattern with lengths inside its range", `{"type":"string","pattern":"^[a-z]{2,4}$","minLength":1,"maxLength":5}`, nil},
	{"pattern with tighter lengths (folded into it)", `{"type":"string","pattern":"^[a-z]+$","maxLength":5}`, nil},
	{"pattern with tighter lengths, not one repeated class", `{"type":"string","pattern":"^(ab|c)+$","maxLength":5,"minLength":2}`, []string{" maxLength", " minLength"}},
	{"format email is a subset pattern", `{"type":"string","format":"email"}`, nil},
	{"format with pattern", `{"type":"string","format":"date","pattern":"^2"}`, []string{" format"}},
	{"unsupported asserted format", `{"type":"string","format":"uri-template"}`, []string{" format"}},
	{"custom format is an annotation", `{"type":"string","format":"color"}`, nil},
	{"overlapping oneOf", `{"oneOf":[{"type":"string"},{"type":"string","maxLength":3}]}`, []string{" oneOf"}},
	{"disjoint oneOf by type", `{"oneOf":[{"type":"string"},{"type":"integer"}]}`, nil},
	{"disjoint oneOf by const discriminator", `{"oneOf":[{"type":"object","properties":{"k":{"const":"a"}},"required":["k"]},{"type":"object","properties":{"k":{"const":"b"},"x":{"type":"integer"}},"required":["k"]}]}`, nil},
	{"dependentRequired", `{"type":"object","properties":{"a":{},"b":{}},"dependentRequired":{"a":["b"]}}`, []string{" dependentRequired"}},
	{"propertyNames with declared props", `{"type":"object","properties":{"a":{}},"propertyNames":{"maxLength":3}}`, []string{" propertyNames"}},
	{"minProperties filled from optional", `{"type":"object","properties":{"a":{},"b":{}},"minProperties":1}`, nil},
	{"minProperties beyond declared", `{"type":"object","properties":{"a":{}},"additionalProperties":false,"minProperties":2}`, []string{" minProperties"}},
	{"allOf merged", `{"allOf":[{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]},{"properties":{"a":{"maxLength":3},"b":{"type":"integer"}}}]}`, nil},
	{"allOf two patterns", `{"allOf":[{"type":"string","pattern":"^a"},{"pattern":"b$"}]}`, []string{"/allOf/1 pattern"}},
	{"recursive ref", `{"$defs":{"n":{"type":"object","properties":{"next":{"$ref":"#/$defs/n"}}}},"$ref":"#/$defs/n"}`, nil},
	{"remote ref", `{"$ref":"https://example.com/s.json"}`, []string{" $ref"}},
	{"enum with other constraints", `{"type":"string","enum":["a","bb"],"maxLength":1}`, []string{" maxLength"}},
	{"draft-04 exclusiveMinimum", `{"type":"integer","minimum":0,"exclusiveMinimum":true}`, nil},
	{"huge minLength", `{"type":"string","minLength":5000}`, []string{" minLength"}},
}

func TestLooseningTable(t *testing.T) {
	for _, c := range looseningCases {
		out, loose, err := OllamaFormat([]byte(c.schema))
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		got := keysOf(loose)
		want := append([]string(nil), c.want...)
		sort.Strings(want)
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("%s: loosened %q, want %q\n  out %s\n  %v", c.name, got, want, out, loose)
		}
		compileSchema(t, out) // the export is a valid 2020-12 schema
		g, _, err := GBNF([]byte(c.schema))
		if err != nil {
			t.Errorf("%s: GBNF: %v", c.name, err)
			continue
		}
		if _, err := parseGBNF(g); err != nil {
			t.Errorf("%s: GBNF does not parse: %v\n%s", c.name, err, g)
		}
	}
}

// Soundness: for schemas the export reports no loosening for, every
// candidate document the GBNF accepts validates against the original schema;
// and the documents listed as "generable" are accepted.
var soundnessCases = []struct {
	schema    string
	generable []string
	others    []string
}{
	{`{"type":"object","properties":{"name":{"type":"string","minLength":2,"maxLength":4},"age":{"type":"integer","minimum":18,"maximum":120}},"required":["name"]}`,
		[]string{`{"name":"ab"}`, `{"name":"abcd","age":18}`, `{"name":"ab","age":120}`, `{"name":"é\"x"}`, `{"name":"ab","other":[1,{"x":null}]}`},
		[]string{`{"name":"a"}`, `{"name":"abcde"}`, `{"age":20}`, `{"name":"ab","age":17}`, `{"name":"ab","age":121}`, `{"name":"ab","age":1.5}`, `{"name":"ab","name":"cd"}`, `{}`, `[]`, `{"name":"ab","age":-0}`}},
	{`{"type":"string","format":"date"}`,
		[]string{`"2024-02-29"`, `"2023-12-31"`, `"2000-02-29"`},
		[]string{`"2023-02-29"`, `"1900-02-29"`, `"2023-04-31"`, `"2023-13-01"`, `"2023-1-01"`, `""`}},
	{`{"type":"string","format":"date-time"}`,
		[]string{`"2024-01-01T12:30:00Z"`, `"2024-01-01T23:59:59.123+05:30"`},
		[]string{`"2024-01-01 12:30:00Z"`, `"2024-01-01T24:00:00Z"`, `"2024-01-01T12:30:00"`}},
	{`{"type":"string","pattern":"^[A-Z]{2}-\\d{3}$"}`,
		[]string{`"AB-123"`},
		[]string{`"AB-12"`, `"ab-123"`, `"AB-1234"`}},
	{`{"type":"string","pattern":"a\"b|c\\\\d"}`,
		[]string{`"a\"b"`, `"c\\d"`},
		[]string{`"ab"`, `"a\\\"b"`, `"c\d"`}},
	{`{"type":"array","prefixItems":[{"type":"boolean"},{"enum":["x","y"]}],"items":false}`,
		[]string{`[true,"x"]`, `[false,"y"]`},
		[]string{`[true]`, `[true,"z"]`, `[true,"x",1]`, `["x",true]`}},
	{`{"type":"array","items":{"type":"integer","minimum":-5,"maximum":5},"minItems":1,"maxItems":3}`,
		[]string{`[0]`, `[-5,5,3]`},
		[]string{`[]`, `[1,2,3,4]`, `[6]`, `[-6]`, `[1.0]`}},
	{`{"anyOf":[{"type":"null"},{"type":"object","properties":{"k":{"const":1}},"required":["k"],"additionalProperties":false}]}`,
		[]string{`null`, `{"k":1}`},
		[]string{`{"k":2}`, `{"k":1,"j":1}`, `{}`}},
	{`{"$defs":{"t":{"type":"object","properties":{"v":{"type":"integer"},"kids":{"type":"array","items":{"$ref":"#/$defs/t"}}},"required":["v"],"additionalProperties":false}},"$ref":"#/$defs/t"}`,
		[]string{`{"v":1}`, `{"v":1,"kids":[{"v":2},{"v":3,"kids":[]}]}`},
		[]string{`{"v":1,"kids":[{}]}`, `{"kids":[]}`, `{"v":"1"}`}},
	{`{"type":"object","properties":{"a":{"type":"integer"}},"additionalProperties":{"type":"boolean"}}`,
		[]string{`{"a":1,"b":true}`, `{"ab":false}`, `{}`},
		[]string{`{"a":true}`, `{"b":1}`, `{"a":1,"a":2}`}},
	{`{"type":"integer","multipleOf":5,"minimum":1,"maximum":30}`,
		[]string{`5`, `30`},
		[]string{`0`, `7`, `35`}},
	{`{"type":"string","format":"ipv4"}`, []string{`"192.168.0.1"`}, []string{`"256.1.1.1"`, `"1.2.3"`, `"01.2.3.4"`}},
	{`{"type":"string","format":"email"}`, []string{`"john.doe@example.com"`}, []string{`"john..doe@example.com"`, `"@x.com"`}},
}

func TestGBNFSoundness(t *testing.T) {
	for _, c := range soundnessCases {
		src, loose, err := GBNF([]byte(c.schema))
		if err != nil {
			t.Fatalf("%s: %v", c.schema, err)
		}
		if len(loose) > 0 {
			t.Fatalf("%s: unexpected loosening %v", c.schema, loose)
		}
		g, err := parseGBNF(src)
		if err != nil {
			t.Fatalf("%s: GBNF does not parse: %v\n%s", c.schema, err, src)
		}
		orig := compileSchema(t, []byte(c.schema))
		for _, d := range c.generable {
			if !validates(t, orig, d) {
				t.Fatalf("test bug: %s is not valid for %s", d, c.schema)
			}
			if !g.match(d) {
				t.Errorf("%s: GBNF rejects %s\n%s", c.schema, d, src)
			}
		}
		for _, d := range c.others {
			if g.match(d) && !validates(t, orig, d) {
				t.Errorf("%s: GBNF accepts %s, which the schema rejects\n%s", c.schema, d, src)
			}
		}
	}
}

func TestIntRangeExhaustive(t *testing.T) {
	for _, r := range [][2]int64{{-123, 4567}, {0, 0}, {7, 7}, {10, 99}, {-99, -10}, {3, 1000}, {-1, 1}, {95, 105}, {1, 1999}} {
		g, err := parseGBNF("root ::= " + intRange(big.NewInt(r[0]), big.NewInt(r[1])) + "\n")
		if err != nil {
			t.Fatalf("%v: %v", r, err)
		}
		for x := r[0] - 150; x <= r[1]+150; x++ {
			in := x >= r[0] && x <= r[1]
			if got := g.match(fmt.Sprint(x)); got != in {
				t.Fatalf("range %v: %d matched=%v", r, x, got)
			}
		}
		if g.match("-0") || g.match("007") && r[0] <= 7 {
			t.Fatalf("range %v: matched a non-canonical lexeme", r)
		}
	}
	g, _ := parseGBNF("root ::= " + intRange(big.NewInt(3), nil) + "\n")
	for _, s := range []string{"3", "9", "10", "12345678"} {
		if !g.match(s) {
			t.Errorf("[3,inf) rejects %s", s)
		}
	}
	for _, s := range []string{"2", "0", "-1", "03"} {
		if g.match(s) {
			t.Errorf("[3,inf) accepts %s", s)
		}
	}
}

func TestParseGBNFRejects(t *testing.T) {
	for _, bad := range []string{
		"root ::= foo\n",                  // undefined rule
		"root ::= \"a\\q\"\n",             // unknown escape
		"root ::= [a-\n",                  // unterminated class
		"root ::= x{2001}\nx ::= \"a\"\n", // over the repetition limit
		"root ::= root \"a\"\n",           // left recursion
		"root ::= \"a\" ) \n",             // stray paren
	} {
		if _, err := parseGBNF(bad); err == nil {
			t.Errorf("parsed %q", bad)
		}
	}
}

func TestToolCallFormat(t *testing.T) {
	tools := []Tool{
		{Name: "get_weather", Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"},"unit":{"enum":["c","f"]}},"required":["city"]}`)},
		{Name: "search", Parameters: json.RawMessage(`{"$defs":{"q":{"type":"string","minLength":1}},"type":"object","properties":{"q":{"$ref":"#/$defs/q"},"n":{"type":"integer","minimum":1,"maximum":10}},"required":["q"],"additionalProperties":false}`)},
		{Name: "ping"},
	}
	out, loose, err := ToolCallFormat(tools, true)
	if err != nil || len(loose) > 0 {
		t.Fatalf("%v %v", err, loose)
	}
	s := compileSchema(t, out)
	for _, d := range []string{
		`{"function":"get_weather","arguments":{"city":"Paris"}}`,
		`{"function":"search","arguments":{"q":"go","n":3}}`,
		`{"function":"ping","arguments":{"anything":1}}`,
		`{"function":"none","arguments":{}}`,
	} {
		if !validates(t, s, d) {
			t.Errorf("export rejects %s", d)
		}
	}
	for _, d := range []string{
		`{"function":"search","arguments":{"city":"Paris"}}`,
		`{"function":"nope","arguments":{}}`,
		`{"function":"none","arguments":{"x":1}}`,
	} {
		if validates(t, s, d) {
			t.Errorf("export accepts %s", d)
		}
	}
	src, _, err := ToolCallGBNF(tools, true, GBNFOptions{})
	if err != nil {
		t.Fatal(err)
	}
	g, err := parseGBNF(src)
	if err != nil {
		t.Fatalf("%v\n%s", err, src)
	}
	for _, d := range []string{`{"function":"get_weather","arguments":{"city":"Paris","unit":"c"}}`, `{"function":"search","arguments":{"q":"go"}}`, `{"function":"none","arguments":{}}`} {
		if !g.match(d) {
			t.Errorf("tool GBNF rejects %s\n%s", d, src)
		}
	}
	for _, d := range []string{`{"function":"search","arguments":{"q":""}}`, `{"function":"search","arguments":{"q":"a","n":11}}`, `{"arguments":{},"function":"none"}`} {
		if g.match(d) {
			t.Errorf("tool GBNF accepts %s", d)
		}
	}
	if _, _, err := ToolCallFormat([]Tool{{Name: "a"}, {Name: "a"}}, false); err == nil {
		t.Error("duplicate names accepted")
	}
}

func TestGBNFWhitespace(t *testing.T) {
	src, _, err := GBNFWith([]byte(`{"type":"object","properties":{"a":{"type":"array","items":{"type":"boolean"}}},"required":["a"]}`), GBNFOptions{Whitespace: 2})
	if err != nil {
		t.Fatal(err)
	}
	g, err := parseGBNF(src)
	if err != nil {
		t.Fatal(err)
	}
	if !g.match("{ \"a\" : [ true,\n false ] }") || !g.match(`{"a":[]}`) {
		t.Errorf("bounded whitespace rejected\n%s", src)
	}
	if g.match("{   \"a\":[]}") {
		t.Errorf("3 spaces accepted with Whitespace 2")
	}
}

func TestOllamaFormatShapes(t *testing.T) {
	// What llama.cpp's converter needs: no schema without a type, patterns
	// anchored, integer bounds as integers, no allOf left.
	out, _, err := OllamaFormat([]byte(`{"allOf":[{"properties":{"a":{"pattern":"x"}}},{"properties":{"b":{"minimum":1.5,"type":"integer"}}}],"required":["a"]}`))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"type":"object","properties":{"a":{"type":"string","pattern":"^x$"},"b":{"type":"integer","minimum":2}},"required":["a"],"additionalProperties":true}`
	if string(out) != want {
		t.Errorf("got  %s\nwant %s", out, want)
	}
	if _, _, err := OllamaFormat([]byte(`false`)); err == nil {
		t.Error("false schema exported")
	}
	if _, _, err := OllamaFormat([]byte(`{"type":"object"`)); err == nil {
		t.Error("bad JSON exported")
	}
}

// Every JSONSchemaBench schema exports without panicking; for every 8th, the
// JSON Schema export compiles with a 2020-12 validator and the GBNF parses.
// The slowest export is logged, not asserted: speed goals live in benchmarks
// (BenchmarkExport*), and this test runs under -race on a shared machine.
func TestExportJSONSchemaBench(t *testing.T) {
	dir := os.Getenv("DATA_DIR")
	if dir == "" {
		t.Skip("DATA_DIR not set: skipping the export of all JSONSchemaBench schemas (run by make conformance)")
	}
	files, _ := filepath.Glob(filepath.Join(dir, "jsonschemabench", "*.jsonl.gz"))
	if len(files) == 0 {
		t.Skip("no jsonschemabench under DATA_DIR")
	}
	n, noValue, loosened := 0, 0, 0
	var slowest time.Duration
	slowestID := ""
	for _, f := range files {
		forEachSchema(t, f, func(id string, schema []byte) {
			n++
			start := time.Now()
			defer func() {
				if d := time.Since(start); d > slowest {
					slowest, slowestID = d, id
				}
			}()
			if os.Getenv("EXPORT_TRACE") != "" {
				fmt.Fprintln(os.Stderr, id)
			}
			out, loose, err := OllamaFormat(schema)
			if err != nil {
				noValue++
				return
			}
			if len(loose) > 0 {
				loosened++
			}
			src, _, gerr := GBNF(schema)
			if gerr != nil {
				t.Errorf("%s: GBNF: %v", id, gerr)
				return
			}
			if n%8 != 0 {
				return // the full checks below on every 8th schema (they are slow)
			}
			doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(out))
			if err != nil {
				t.Errorf("%s: export is not JSON: %v", id, err)
				return
			}
			c := jsonschema.NewCompiler()
			_ = c.AddResource("mem://s.json", doc)
			if _, err := c.Compile("mem://s.json"); err != nil {
				t.Errorf("%s: export does not compile: %v", id, err)
			}
			if _, err := parseGBNF(src); err != nil {
				t.Errorf("%s: GBNF does not parse: %v", id, err)
			}
		})
	}
	t.Logf("%d schemas: %d exported with loosenings, %d accept no value; slowest %s (%v, with the checks)", n, loosened, noValue, slowestID, slowest)
}

// Length bounds beside a pattern of fixed parts around one repeated class
// are folded into the pattern: the exported pattern alone accepts exactly
// the strings the pattern and the bounds accept together.
func TestFoldLengthIntoPattern(t *testing.T) {
	cases := []struct {
		pattern string
		lo, hi  int
	}{
		{"^[A-Za-z ]+$", 0, 4},
		{"^[A-Z][a-z]*$", 3, 5},
		{"^x-[0-9]+-y$", 0, 6},
		{"^[a-c]{2,}$", 4, -1},
		{"^ab$", 0, 1}, // empty: the schema accepts no value
	}
	alpha := []rune("aAZx0-y ")
	for _, c := range cases {
		schema := `{"type":"string","pattern":"` + c.pattern + `","minLength":` + strconv.Itoa(c.lo)
		if c.hi >= 0 {
			schema += `,"maxLength":` + strconv.Itoa(c.hi)
		}
		schema += `}`
		out, loose, err := OllamaFormat([]byte(schema))
		if c.pattern == "^ab$" { // no string of the pattern is that short
			if err == nil || !strings.Contains(err.Error(), "accepts no value") {
				t.Errorf("%s: %s, %v; want 'accepts no value'", schema, out, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", schema, err)
		}
		if len(loose) > 0 {
			t.Errorf("%s: loosened %v", schema, loose)
		}
		var exp struct {
			Pattern   string `json:"pattern"`
			MinLength *int   `json:"minLength"`
			MaxLength *int   `json:"maxLength"`
		}
		if err := json.Unmarshal(out, &exp); err != nil {
			t.Fatal(err)
		}
		orig := regexp.MustCompile(c.pattern)
		var got *regexp.Regexp
		if exp.Pattern != "" {
			got = regexp.MustCompile(exp.Pattern)
		}
		// every string over alpha up to 6 code points
		var walk func(prefix []rune)
		walk = func(prefix []rune) {
			s := string(prefix)
			n := len(prefix)
			want := orig.MatchString(s) && n >= c.lo && (c.hi < 0 || n <= c.hi)
			have := got != nil && got.MatchString(s)
			if want != have {
				t.Fatalf("%s: exported %s: %q accepted=%v, want %v", schema, out, s, have, want)
			}
			if n < 6 {
				for _, r := range alpha {
					walk(append(prefix, r))
				}
			}
		}
		walk(nil)
	}
}
