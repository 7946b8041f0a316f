package selector_test

import (
	"testing"

	"github.com/airs-dev/airs/pipeline/builtin"
	"github.com/airs-dev/airs/selector"
	"github.com/airs-dev/airs/understand"
)

// TestSuggestionsOnlyOfTheirTypes: a call offered to a person has every
// argument a value of its type, read from the request against the files —
// "the attention paper" is papers/attention.pdf for pdf-extract; arithmetic
// is the calculator's expression — and the calls the recommender used to
// offer (a space's name or a city as a text to compare, a PDF for
// read-file, "documents" as an expression, a word of a question as a text
// to summarize) are refused before they are shown.
func TestSuggestionsOnlyOfTheirTypes(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, "papers/attention.pdf", "meeting-notes.md", "quotes/acme-2024.pdf", "quotes/acme-2025.pdf")
	tools, err := builtin.Tools(builtin.Options{Spaces: map[string]string{"documents": dir}})
	if err != nil {
		t.Fatal(err)
	}
	var callable []selector.Entry
	byName := map[string]selector.Entry{}
	for _, e := range tools {
		en := selector.Entry{Provider: builtin.ProviderID, Tool: e.Tool}
		callable = append(callable, en)
		byName[e.Tool.Name] = en
	}
	files := understand.NewFileIndex()
	if err := files.Build("documents", dir); err != nil {
		t.Fatal(err)
	}
	env := understand.Env{Spaces: []string{"documents"}, Index: files}
	hints := selector.Hints{Spaces: []string{"documents"}}
	exists := func(space, p string) bool { return space == "documents" && files.Has(space, p) }

	fill := func(tool, request string) (map[string]any, error) {
		return selector.CallUnderstood(byName[tool], understand.Parse(request, env), env, callable, hints)
	}
	if args, err := fill("pdf-extract", "read the attention paper"); err != nil || args["path"] != "papers/attention.pdf" || args["space"] != "documents" {
		t.Errorf("pdf-extract for the attention paper: %v, %v", args, err)
	}
	if args, err := fill("calculator", "what's 12% of 350"); err != nil || !understand.IsExpression(args["expression"].(string)) {
		t.Errorf("calculator: %v, %v", args, err)
	}
	for _, c := range []struct{ tool, request string }{
		{"compare", "what is the capital of France? Paris"},
		{"summarize", "summarize the papers in my documents"}, // needs the papers' text first
		{"summarize", "what is the capital of France? Paris"},
		{"read-file", "read the attention paper"}, // pdf-extract reads PDFs
		{"calculator", "list my documents"},
		{"pdf-extract", "read the acme quote"},   // two files fit: the person chooses
		{"read-file", "delete meeting-notes.md"}, // a deletion is no read
	} {
		if args, err := fill(c.tool, c.request); err == nil {
			t.Errorf("%s for %q: offered %v", c.tool, c.request, args)
		}
	}

	fits := func(tool string, args map[string]any) error {
		return selector.SuggestionFits(byName[tool].Tool, args, callable, hints.Spaces, exists)
	}
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"compare", map[string]any{"a": "documents", "b": "Paris"}},
		{"read-file", map[string]any{"space": "documents", "path": "papers/attention.pdf"}},
		{"calculator", map[string]any{"expression": "documents"}},
		{"pdf-extract", map[string]any{"space": "documents", "path": "17 * 23 + 4"}},
		{"read-file", map[string]any{"space": "documents", "path": "documents"}},
		{"summarize", map[string]any{"text": "documents"}},
		{"read-file", map[string]any{"space": "documents", "path": "gone.md"}},
	} {
		if err := fits(c.tool, c.args); err == nil {
			t.Errorf("%s %v passed the dry check", c.tool, c.args)
		}
	}
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"pdf-extract", map[string]any{"space": "documents", "path": "papers/attention.pdf"}},
		{"read-file", map[string]any{"space": "documents", "path": "meeting-notes.md"}},
		{"calculator", map[string]any{"expression": "0.12 * 350"}},
	} {
		if err := fits(c.tool, c.args); err != nil {
			t.Errorf("%s %v refused: %v", c.tool, c.args, err)
		}
	}
}
