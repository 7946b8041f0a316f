package selector

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/airs-dev/airs/chains"
	"github.com/airs-dev/airs/grammar"
	"github.com/airs-dev/airs/grammar/export"
	"github.com/airs-dev/airs/pipeline"
)

// Tools shaped like the builtin ones the seed's plans use.
var (
	extractTool = pipeline.Tool{Name: "extract", Version: "1.0.0",
		Description: "Extract the text of a PDF.",
		Parameters: json.RawMessage(`{"type": "object",
			"properties": {
				"path": {"type": "string", "minLength": 1, "maxLength": 4096},
				"first_page": {"type": "integer", "minimum": 1},
				"space": {"type": "string", "enum": ["docs", "{{x}}"]}
			},
			"required": ["path"], "additionalProperties": false}`),
		ReturnSchema: json.RawMessage(`{"type": "object",
			"properties": {"text": {"type": "string"}, "pages": {"type": "integer"}, "meta": {"type": "object"}},
			"required": ["text", "pages"], "additionalProperties": false}`),
		Idempotent: true}
	compareTool = pipeline.Tool{Name: "compare", Version: "1.0.0",
		Description: "Compare two texts.",
		Parameters: json.RawMessage(`{"type": "object",
			"properties": {
				"a": {"type": "string", "maxLength": 2000000},
				"b": {"type": "string", "maxLength": 2000000},
				"label": {"type": "string", "maxLength": 10},
				"context": {"type": "integer", "minimum": 0, "maximum": 100},
				"flags": {"type": "array", "items": {"enum": ["words", "case"]}},
				"city": {"type": "string", "pattern": "^[A-Za-z {]+$", "maxLength": 12}
			},
			"required": ["a", "b"], "additionalProperties": false}`),
		ReturnSchema: json.RawMessage(`{"type": "object",
			"properties": {"changes": {"type": "array", "items": {"type": "object",
				"properties": {"line": {"type": "integer"}, "text": {"type": "string"}}, "additionalProperties": false}}},
			"additionalProperties": false}`),
		Idempotent: true}
	// opaqueTool says nothing of its output: any path into it resolves.
	opaqueTool = pipeline.Tool{Name: "opaque", Version: "1.0.0", Description: "Anything.",
		Parameters: json.RawMessage(`{"type": "object", "properties": {"n": {"type": "integer", "minimum": 1, "maximum": 9}}, "required": ["n"]}`),
		Idempotent: true}
)

// toolCatalog is a chains.Catalog over fixed tools.
type toolCatalog map[string]pipeline.Tool

func (c toolCatalog) Tool(caller, name string) (pipeline.Tool, error) {
	t, ok := c[name]
	if !ok {
		return pipeline.Tool{}, fmt.Errorf("no tool %q", name)
	}
	return t, nil
}

var testCatalog = toolCatalog{"extract": extractTool, "compare": compareTool, "opaque": opaqueTool}

// planGrammar compiles PlanSchema(tools) as the selector does, and the
// exported format (PlanFormat, then grammar/export) with an independent
// validator.
func planGrammar(t *testing.T, tools ...pipeline.Tool) (*grammar.Grammar, *jsonschema.Schema, Budget) {
	t.Helper()
	schema, budget, err := PlanSchema(tools, PlanLimits{})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	g, err := grammar.Compile(schema, grammar.Options{Strict: true, Lenient: true})
	if err != nil {
		t.Fatalf("compile: %v\n%s", err, schema)
	}
	if len(g.Loosened) > 0 {
		t.Errorf("the grammar loosened %v", g.Loosened)
	}
	t.Logf("plan grammar over %d steps: %v, budget %d bytes", len(tools), time.Since(start), budget.Bytes)
	format, err := PlanFormat(schema)
	if err != nil {
		t.Fatal(err)
	}
	out, loose, err := export.OllamaFormat(format)
	if err != nil {
		t.Fatal(err)
	}
	if len(loose) > 0 {
		t.Errorf("the export loosened %v: the bounds would not reach the model", loose)
	}
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(string(out)))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("mem://format.json", doc); err != nil {
		t.Fatal(err)
	}
	fs, err := c.Compile("mem://format.json")
	if err != nil {
		t.Fatalf("the exported format is not a valid schema: %v\n%s", err, out)
	}
	return g, fs, budget
}

func formatAccepts(t *testing.T, fs *jsonschema.Schema, doc string) bool {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(doc))
	if err != nil {
		t.Fatalf("%v: %s", err, doc)
	}
	return fs.Validate(v) == nil
}

// planDoc writes a plan over the outline with the given arguments.
func planDoc(outline []string, args ...string) string {
	var steps []string
	for i, a := range args {
		fn := "?"
		if i < len(outline) {
			fn = outline[i]
		}
		steps = append(steps, fmt.Sprintf(`{"id":"s%d","function":%q,"arguments":%s}`, i+1, fn, a))
	}
	return `{"steps":[` + strings.Join(steps, ",") + `]}`
}

// TestPlanSchemaReferences: under the plan grammar of the outline
// extract, extract, compare, a reference can only name an earlier step,
// a field its tool returns, of the parameter's type; literals are bounded
// and hold no "{". What the grammar accepts, ParsePlan and Validate accept;
// the references it rejects, Validate rejects too (they are not just
// unusual, they are invalid plans). The exported format agrees.
func TestPlanSchemaReferences(t *testing.T) {
	outline := []string{"extract", "extract", "compare"}
	g, fs, _ := planGrammar(t, extractTool, extractTool, compareTool)
	s1 := `{"path":"a.pdf"}`
	s2 := `{"path":"b.pdf","first_page":"{{steps.s1.output.pages}}"}`
	long := strings.Repeat("x", 256)
	valid := []string{
		planDoc(outline, s1, s2, `{"a":"{{steps.s1.output.text}}","b":"{{steps.s2.output.text}}"}`),
		planDoc(outline, `{"path":"a.pdf","first_page":2,"space":"docs"}`, `{"path":"{{steps.s1.output.text}}"}`,
			`{"a":"`+long+`","b":"","label":"0123456789","context":"{{steps.s2.output.pages}}","flags":["case","words"],"city":"Paris"}`),
		// The opaque tool's output is unknown: any path into it resolves.
		`{"steps":[{"id":"s1","function":"opaque","arguments":{"n":3}},{"id":"s2","function":"compare","arguments":{"a":"{{steps.s1.output}}","b":"{{steps.s1.output.x[2].y}}"}}]}`,
	}
	gOpaque, fsOpaque, _ := planGrammar(t, opaqueTool, compareTool)
	for i, doc := range valid {
		gg, ff := g, fs
		if i == 2 {
			gg, ff = gOpaque, fsOpaque
		}
		if !gg.Match([]byte(doc)) {
			t.Errorf("the plan grammar rejects a valid plan:\n%s", doc)
		}
		if !formatAccepts(t, ff, doc) {
			t.Errorf("the exported format rejects a valid plan:\n%s", doc)
		}
		c, err := chains.ParsePlan([]byte(doc))
		if err != nil {
			t.Errorf("ParsePlan: %v\n%s", err, doc)
			continue
		}
		if err := c.Validate(testCatalog, "u"); err != nil {
			t.Errorf("Validate: %v\n%s", err, doc)
		}
	}

	third := func(a string) string { return planDoc(outline, s1, s2, a) }
	for _, tc := range []struct {
		why, doc    string
		invalidPlan bool // ParsePlan or Validate rejects it too
	}{
		{"a reference to a later step", planDoc(outline, `{"path":"{{steps.s2.output.text}}"}`, s2, `{"a":"x","b":"y"}`), true},
		{"a reference to the step itself", planDoc(outline, s1, `{"path":"{{steps.s2.output.text}}"}`, `{"a":"x","b":"y"}`), true},
		{"a reference to an unknown step", third(`{"a":"{{steps.s9.output.text}}","b":"y"}`), true},
		{"a reference to an id the plan does not use", third(`{"a":"{{steps.a.output.text}}","b":"y"}`), true},
		{"a field the output does not have", third(`{"a":"{{steps.s1.output.txt}}","b":"y"}`), true},
		{"a field of the wrong type (integer for a string)", third(`{"a":"{{steps.s1.output.pages}}","b":"y"}`), true},
		{"a field of the wrong type (string for an integer)", third(`{"a":"x","b":"y","context":"{{steps.s1.output.text}}"}`), true},
		{"the whole output (an object) for a string", third(`{"a":"{{steps.s1.output}}","b":"y"}`), true},
		{"a path below a string", third(`{"a":"{{steps.s1.output.text.x}}","b":"y"}`), true},
		{"an input reference (a plan has no inputs)", third(`{"a":"{{input.text}}","b":"y"}`), false},
		{"a reference inside a string", third(`{"a":"see {{steps.s1.output.text}}","b":"y"}`), false},
		{"a literal string with {", third(`{"a":"a{b","b":"y"}`), false},
		{"a literal over MaxLiteral", third(`{"a":"` + long + `x","b":"y"}`), false},
		{"a literal over the parameter's maxLength", third(`{"a":"x","b":"y","label":"0123456789a"}`), false},
		{"a pattern literal over its maxLength", third(`{"a":"x","b":"y","city":"Paris Paris P"}`), false},
		{"a pattern literal with { (taken out of the class)", third(`{"a":"x","b":"y","city":"Par{s"}`), false},
		{"an enum value holding {{", planDoc(outline, `{"path":"a","space":"{{x}}"}`, s2, `{"a":"x","b":"y"}`), false},
		{"a required argument missing", third(`{"a":"x"}`), true},
		{"an undeclared argument", third(`{"a":"x","b":"y","extra":1}`), false},
		{"an integer out of range", third(`{"a":"x","b":"y","context":101}`), true},
		{"a step id out of order", strings.Replace(third(`{"a":"x","b":"y"}`), `"s2"`, `"s3"`, 1), false},
		{"a tool other than the outline's", strings.Replace(third(`{"a":"x","b":"y"}`), `"function":"extract"`, `"function":"compare"`, 1), false},
		{"a step more than the outline", planDoc(append(outline, "extract"), s1, s2, `{"a":"x","b":"y"}`, s1), false},
		{"a step less than the outline", planDoc(outline, s1, s2), false},
	} {
		if g.Match([]byte(tc.doc)) {
			t.Errorf("the plan grammar accepts %s:\n%s", tc.why, tc.doc)
		}
		if formatAccepts(t, fs, tc.doc) {
			t.Errorf("the exported format accepts %s:\n%s", tc.why, tc.doc)
		}
		if tc.invalidPlan {
			c, err := chains.ParsePlan([]byte(tc.doc))
			if err == nil {
				err = c.Validate(testCatalog, "u")
			}
			if err == nil {
				t.Errorf("ParsePlan and Validate accept %s, which the grammar rejects:\n%s", tc.why, tc.doc)
			}
		}
	}
}

// TestPlanSchemaFirstStepHasNoReferences: the first step has no earlier
// step, so its arguments are literals; a required argument that could only
// be a reference (no literal fits it) cannot be planned there, and says so.
func TestPlanSchemaFirstStepHasNoReferences(t *testing.T) {
	g, _, _ := planGrammar(t, compareTool)
	if g.Match([]byte(`{"steps":[{"id":"s1","function":"compare","arguments":{"a":"{{steps.s1.output.changes}}","b":"y"}}]}`)) {
		t.Error("the first step may hold a reference")
	}
	if !g.Match([]byte(`{"steps":[{"id":"s1","function":"compare","arguments":{"a":"x","b":"y"}}]}`)) {
		t.Error("the first step's literal arguments are rejected")
	}
	onlyLong := pipeline.Tool{Name: "big", Parameters: json.RawMessage(`{"type":"object","properties":{"x":{"enum":["{{a}}"]}},"required":["x"]}`)}
	if _, _, err := PlanSchema([]pipeline.Tool{onlyLong}, PlanLimits{}); err == nil || !strings.Contains(err.Error(), `step s1 (big): required argument "x"`) {
		t.Errorf("PlanSchema of an unplannable first step: %v", err)
	}
}

// longestDoc writes, from a compact document, the same document with
// MaxWhitespace bytes of white space between every two tokens (the stream
// check takes none before the first, and generation stops at the last).
func longestDoc(compact string) string {
	ws := strings.Repeat(" ", MaxWhitespace)
	var b strings.Builder
	for i := 0; i < len(compact); {
		j := i + 1
		switch c := compact[i]; {
		case c == '"':
			for j < len(compact) && compact[j] != '"' {
				if compact[j] == '\\' {
					j++
				}
				j++
			}
			j++
		case strings.IndexByte("{}[],:", c) < 0:
			for j < len(compact) && strings.IndexByte("{}[],:\"", compact[j]) < 0 {
				j++
			}
		}
		if i > 0 {
			b.WriteString(ws)
		}
		b.WriteString(compact[i:j])
		i = j
	}
	return b.String()
}

// TestPlanBudget: the budget is the most any document of the schema can
// take. The longest documents we can write — every optional argument, every
// literal at its bound in characters of the longest encoding (\u0001, six
// bytes), integers at their widest, and the most white space between every
// two tokens — are accepted by the stream check and fit the budget.
func TestPlanBudget(t *testing.T) {
	g, _, budget := planGrammar(t, extractTool, compareTool)
	if !budget.Bounded {
		t.Fatal("the plan's budget is unbounded")
	}
	ctl := func(n int) string { return strings.Repeat(`\u0001`, n) }
	doc := planDoc([]string{"extract", "compare"},
		`{"path":"`+ctl(256)+`","first_page":12345678901234567890,"space":"docs"}`,
		`{"a":"`+ctl(256)+`","b":"`+ctl(256)+`","label":"`+ctl(10)+`","context":100,"flags":[`+strings.TrimSuffix(strings.Repeat(`"words",`, 16), ",")+`],"city":"ABCDEFGHIJKL"}`)
	long := longestDoc(doc)
	// first_page is only bounded below: the grammar takes any integer, the
	// validator does not; the stream check is what bounds generation.
	sc := NewOutputChecker(g)
	if _, err := sc.Write([]byte(long)); err != nil || !sc.Complete() {
		t.Fatalf("the stream check rejects the longest document (%v, complete %v):\n%s", err, sc.Complete(), long)
	}
	if len(long) > budget.Bytes {
		t.Errorf("a document of %d bytes over the budget of %d", len(long), budget.Bytes)
	}
	t.Logf("longest document written: %d bytes, budget %d", len(long), budget.Bytes)

	// The same for outlines.
	os, ob, err := OutlineSchema([]string{"extract", "compare", "opaque"}, PlanLimits{})
	if err != nil {
		t.Fatal(err)
	}
	og, err := grammar.Compile(os, grammar.Options{Strict: true, Lenient: true})
	if err != nil {
		t.Fatal(err)
	}
	odoc := longestDoc(`{"steps":["compare","compare","compare","compare","compare","compare","compare","compare"]}`)
	sc = NewOutputChecker(og)
	if _, err := sc.Write([]byte(odoc)); err != nil || !sc.Complete() {
		t.Fatalf("the stream check rejects the longest outline (%v):\n%s", err, odoc)
	}
	if !ob.Bounded || len(odoc) > ob.Bytes {
		t.Errorf("an outline of %d bytes over the budget %+v", len(odoc), ob)
	}
}

// TestOutlineSchema: an outline names only the offered tools, 1 to MaxSteps
// of them, repeats allowed.
func TestOutlineSchema(t *testing.T) {
	s, _, err := OutlineSchema([]string{"extract", "compare"}, PlanLimits{MaxSteps: 3})
	if err != nil {
		t.Fatal(err)
	}
	g, err := grammar.Compile(s, grammar.Options{Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	for doc, want := range map[string]bool{
		`{"steps":["extract","extract","compare"]}`:           true,
		`{"steps":["compare"]}`:                               true,
		`{"steps":[]}`:                                        false,
		`{"steps":["extract","extract","compare","compare"]}`: false,
		`{"steps":["rm-rf"]}`:                                 false,
		`{"steps":["extract"],"more":1}`:                      false,
	} {
		if got := g.Match([]byte(doc)); got != want {
			t.Errorf("outline grammar on %s: %v, want %v", doc, got, want)
		}
	}
}

// TestPlanFormatFoldsLengths: in the format sent to Ollama no string has a
// maxLength beside its pattern (llama.cpp's converter would drop it): the
// bound is in the pattern, and the export passes it on.
func TestPlanFormatFoldsLengths(t *testing.T) {
	schema, _, err := PlanSchema([]pipeline.Tool{extractTool, compareTool}, PlanLimits{})
	if err != nil {
		t.Fatal(err)
	}
	format, err := PlanFormat(schema)
	if err != nil {
		t.Fatal(err)
	}
	f := string(format)
	for _, want := range []string{`"pattern":"^[^{]{1,256}$"`, `"pattern":"^[^{]{0,10}$"`, `"pattern":"^[ A-Za-z]{1,12}$"`} {
		if !strings.Contains(f, want) {
			t.Errorf("format lacks %s:\n%s", want, f)
		}
	}
	if strings.Contains(f, "maxLength") {
		t.Errorf("format keeps a maxLength:\n%s", f)
	}
	if !strings.Contains(string(schema), `"pattern":"^[^{]*$","minLength":1,"maxLength":256`) {
		t.Errorf("the grammar's schema does not bound strings with a counter:\n%s", schema)
	}
}

// TestPlanTwoPasses: Plan asks for the outline, then for the plan of that
// outline under its own grammar, each with its schema's budget as
// num_predict; the plan comes back parsed and validated, the two
// extractions independent and the comparison after both.
func TestPlanTwoPasses(t *testing.T) {
	cat := listCatalog{{Provider: "p", Tool: extractTool}, {Provider: "p", Tool: compareTool}}
	outline := `{"steps": ["extract", "extract", "compare"]}`
	plan := "{\"steps\": [\n {\"id\": \"s1\", \"function\": \"extract\", \"arguments\": {\"path\": \"a.pdf\"}},\n" +
		` {"id": "s2", "function": "extract", "arguments": {"path": "b.pdf"}},` + "\n" +
		` {"id": "s3", "function": "compare", "arguments": {"a": "{{steps.s1.output.text}}", "b": "{{steps.s2.output.text}}", "label": "2024"}}]}`
	m := &scripted{replies: []string{outline, plan}}
	s := &Selector{Catalog: cat, Ranker: orderRanker{}, Validate: validate, Model: m,
		Retriever: fixedRetriever{{Name: "extract", Semantic: 2, Dense: 0.9}, {Name: "compare", Semantic: 1, Dense: 0.8}},
		Config:    Config{Model: "m", NumPredict: 64}}
	pr, err := s.Plan(context.Background(), "u", "compare the pricing in a.pdf and b.pdf", testCatalog)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(pr.Outline, " ") != "extract extract compare" || pr.Chain == nil || len(pr.Chain.Steps) != 3 || pr.Repaired {
		t.Fatalf("plan %+v", pr)
	}
	if got := string(pr.Plan.Steps[2].Arguments); !strings.Contains(got, `"a":"{{steps.s1.output.text}}"`) || strings.Contains(got, "\n") {
		t.Errorf("plan %s", got)
	}
	if len(m.reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(m.reqs))
	}
	schema, budget, _ := PlanSchema([]pipeline.Tool{extractTool, extractTool, compareTool}, PlanLimits{})
	if pr.GrammarHash != hashOf(schema) || pr.Budget != budget.Bytes {
		t.Errorf("grammar hash %s budget %d, want %s %d", pr.GrammarHash, pr.Budget, hashOf(schema), budget.Bytes)
	}
	if got := m.reqs[1].NumPredict; got != budget.Bytes+1 {
		t.Errorf("plan num_predict %d, want the budget %d + 1 (not the configured 64)", got, budget.Bytes)
	}
	if !strings.Contains(string(m.reqs[1].Format), `{"const":"s3"}`) || !strings.Contains(m.reqs[1].Messages[0].Content, "- s3: compare") {
		t.Errorf("the second pass is not the outline's plan:\n%s\n%s", m.reqs[1].Format, m.reqs[1].Messages[0].Content)
	}

	// An output cut short (a server's repeat limit) is repaired once; twice
	// is the clear error, with the output.
	cut := plan[:len(plan)/2]
	m = &scripted{replies: []string{outline, cut, cut}}
	s.Model = m
	_, err = s.Plan(context.Background(), "u", "compare", testCatalog)
	var ice *InvalidCallError
	if !errors.As(err, &ice) || ice.Raw != cut || len(m.reqs) != 3 {
		t.Errorf("two cut plans: %v (%d requests)", err, len(m.reqs))
	}
	m = &scripted{replies: []string{outline, cut, plan}}
	s.Model = m
	if pr, err = s.Plan(context.Background(), "u", "compare", testCatalog); err != nil || !pr.Repaired {
		t.Errorf("a cut plan, then a whole one: %v %+v", err, pr)
	}
}
