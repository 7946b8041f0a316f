package chains

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestParseRef(t *testing.T) {
	for _, tc := range []struct {
		in, want string // want: String() of the parsed ref, or "error: substring"
	}{
		{"input.topic", "{{input.topic}}"},
		{" input.topic ", "{{input.topic}}"},
		{"input", "{{input}}"},
		{"item", "{{item}}"},
		{"item.id", "{{item.id}}"},
		{"steps.search.output", "{{steps.search.output}}"},
		{"steps.search.output.documents[0].id", "{{steps.search.output.documents[0].id}}"},
		{"steps.pdf-extract.output[12]", "{{steps.pdf-extract.output[12]}}"},
		{`steps.a.output["key with space"].x`, `{{steps.a.output["key with space"].x}}`},
		{"steps.a", "error: want steps.a.output"},
		{"steps.a.outputs", "error: want steps.a.output"},
		{"steps..output", "error: bad step id"},
		{"steps.9a.output", "error: bad step id"},
		{"foo.bar", "error: unknown root"},
		{"", "error: empty reference"},
		{"input.", "error: bad key"},
		{"item[x]", "error: bad index"},
		{"item[01]", "error: bad index"},
		{"item[-1]", "error: bad index"},
		{"item[1", "error: missing ]"},
		{"item a", "error: unexpected \"a\""},
		{"item[*].x", "{{item[*].x}}"},
		{"item | join", `{{item | join "\n"}}`},
		{`item|join "; "`, `{{item | join "; "}}`},
		{"item | upper", "error: unknown filter"},
		{"item | join x", "error: separator is a JSON string"},
	} {
		r, err := parseRef(tc.in)
		if msg, isErr := strings.CutPrefix(tc.want, "error: "); isErr {
			if err == nil || !strings.Contains(err.Error(), msg) {
				t.Errorf("parseRef(%q) = %v, %v; want error containing %q", tc.in, r, err, msg)
			}
			continue
		}
		if err != nil {
			t.Errorf("parseRef(%q): %v", tc.in, err)
			continue
		}
		if got := r.String(); got != tc.want {
			t.Errorf("parseRef(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

func TestRenderKeepsTypesAndInterpolates(t *testing.T) {
	out, err := decodeJSON([]byte(`{"n": 3, "f": 1.5, "ok": true, "none": null, "docs": [{"id": "d1"}, {"id": "d2"}], "obj": {"a": [1, 2]}}`))
	if err != nil {
		t.Fatal(err)
	}
	e := &env{
		input:   map[string]any{"topic": "go", "k": json.Number("7")},
		steps:   map[string]any{"search": out},
		item:    map[string]any{"id": "x9", "tags": []any{"a", "b"}},
		hasItem: true,
	}
	for _, tc := range []struct {
		tmpl any
		want string
	}{
		{"{{steps.search.output.n}}", `3`},
		{"{{steps.search.output.f}}", `1.5`},
		{"{{steps.search.output.ok}}", `true`},
		{"{{steps.search.output.none}}", `null`},
		{"{{steps.search.output.docs}}", `[{"id":"d1"},{"id":"d2"}]`},
		{"{{steps.search.output.docs[1].id}}", `"d2"`},
		{"{{ steps.search.output.obj }}", `{"a":[1,2]}`},
		{"{{item}}", `{"id":"x9","tags":["a","b"]}`},
		{"{{item.tags[0]}}", `"a"`},
		{"{{input.k}}", `7`},
		{"{{input}}", `{"k":7,"topic":"go"}`},
		{"about {{input.topic}}", `"about go"`},
		{"n={{steps.search.output.n}} docs={{steps.search.output.docs[0]}}", `"n=3 docs={\"id\":\"d1\"}"`},
		{"{{item.id}}{{item.id}}", `"x9x9"`},
		{`\{{not a ref}}`, `"{{not a ref}}"`},
		{`\{{x}} {{input.topic}}`, `"{{x}} go"`},
		{"plain", `"plain"`},
		{"{{steps.search.output.docs[*].id}}", `["d1","d2"]`},
		{"{{steps.search.output.docs[*]}}", `[{"id":"d1"},{"id":"d2"}]`},
		{`{{steps.search.output.docs[*].id | join ", "}}`, `"d1, d2"`},
		{"{{steps.search.output.docs[*].id|join}}", `"d1\nd2"`},
		{"ids: {{steps.search.output.docs[*].id | join \"+\"}}.", `"ids: d1+d2."`},
		{"{{steps.search.output.obj.a | join}}", `"1\n2"`},
		{map[string]any{"q": "{{input.topic}}", "limit": 5, "nested": []any{"{{steps.search.output.n}}", "x"}}, `{"limit":5,"nested":[3,"x"],"q":"go"}`},
	} {
		tm, err := NewTemplate(tc.tmpl)
		if err != nil {
			t.Errorf("NewTemplate(%v): %v", tc.tmpl, err)
			continue
		}
		v, err := tm.render(e)
		if err != nil {
			t.Errorf("render(%v): %v", tc.tmpl, err)
			continue
		}
		got, _ := json.Marshal(v)
		if string(got) != tc.want {
			t.Errorf("render(%v) = %s, want %s", tc.tmpl, got, tc.want)
		}
		// The source form parses back to the same template.
		src, _ := json.Marshal(tm)
		var back any
		_ = json.Unmarshal(src, &back)
		tm2, err := NewTemplate(back)
		if err != nil {
			t.Errorf("reparse %s: %v", src, err)
			continue
		}
		v2, _ := tm2.render(e)
		if got2, _ := json.Marshal(v2); string(got2) != tc.want {
			t.Errorf("round trip %s renders %s, want %s", src, got2, tc.want)
		}
	}
}

func TestRenderErrors(t *testing.T) {
	e := &env{input: map[string]any{}, steps: map[string]any{"s": map[string]any{"a": []any{json.Number("1")}, "str": "x"}}}
	for _, tc := range []struct{ tmpl, want string }{
		{"{{steps.s.output.b}}", `has no key "b"`},
		{"{{steps.s.output.a[3]}}", "index 3 out of range"},
		{"{{steps.s.output.a.x}}", "is an array, not an object"},
		{"{{steps.s.output[0]}}", "is an object, not an array"},
		{"{{steps.s.output.str.x}}", "is string, cannot take .x"},
		{"{{steps.t.output}}", "step t has no output"},
		{"{{item}}", "no foreach item"},
		{"{{steps.s.output.str | join}}", "join wants an array, not string"},
		{"{{steps.s.output[*]}}", "is an object, not an array"},
	} {
		tm := MustTemplate(tc.tmpl)
		_, err := tm.render(e)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("render(%s) error = %v, want %q", tc.tmpl, err, tc.want)
		}
	}
}

func TestTemplateKinds(t *testing.T) {
	if !MustTemplate(map[string]any{"a": []any{1, "x"}}).IsLiteral() {
		t.Error("an object without references should collapse to a literal")
	}
	if MustTemplate("{{input.x}}").Ref() == nil {
		t.Error("a whole reference should be a Ref")
	}
	if MustTemplate("a {{input.x}}").Ref() != nil {
		t.Error("an interpolation is not a whole reference")
	}
	if _, err := NewTemplate("{{input.x"); err == nil || !strings.Contains(err.Error(), "unclosed") {
		t.Errorf("unclosed reference: %v", err)
	}
	refs := MustTemplate(map[string]any{"b": "{{steps.b.output}}", "a": "x {{steps.a.output.y}} {{item}}"}).Refs()
	var got []string
	for _, r := range refs {
		got = append(got, r.String())
	}
	if want := "{{steps.a.output.y}} {{item}} {{steps.b.output}}"; strings.Join(got, " ") != want {
		t.Errorf("Refs = %v, want %s", got, want)
	}
}
