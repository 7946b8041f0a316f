package selector

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/airs-dev/airs/grammar"
	"github.com/airs-dev/airs/pipeline"
)

type fixedRetriever []Retrieved

func (f fixedRetriever) Retrieve(ctx context.Context, q string, k int, allowed []string) ([]Retrieved, error) {
	return f, nil
}

type orderRanker struct{}

func (orderRanker) Rank(caller string, hits []Retrieved, entries map[string]Entry) []Candidate {
	out := make([]Candidate, 0, len(hits))
	for _, h := range hits {
		out = append(out, Candidate{Name: h.Name, Provider: entries[h.Name].Provider, Score: map[string]float64{"similarity": h.Dense, "composite": h.Semantic}})
	}
	return out
}

type listCatalog []Entry

func (l listCatalog) Callable(string) []Entry { return l }

// validate stands in for the pipeline's validator: string arguments must be
// non-empty, and a calculator expression must contain a digit.
func validate(t pipeline.Tool, args json.RawMessage) error {
	var m map[string]any
	if err := json.Unmarshal(args, &m); err != nil {
		return err
	}
	for k, v := range m {
		s, ok := v.(string)
		if ok && s == "" {
			return errors.New(k + " is empty")
		}
		if ok && t.Name == "calculator" && !strings.ContainsAny(s, "0123456789") {
			return errors.New(k + " is not arithmetic")
		}
	}
	return nil
}

func TestNoLLMTriesNextThenNone(t *testing.T) {
	calc := pipeline.Tool{Name: "calculator", Parameters: json.RawMessage(`{"type":"object","properties":{"expression":{"type":"string"}},"required":["expression"]}`)}
	greet := pipeline.Tool{Name: "greet", Parameters: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`)}
	cat := listCatalog{{Provider: "p", Tool: calc}, {Provider: "p", Tool: greet}}
	s := &Selector{Catalog: cat, Ranker: orderRanker{}, Validate: validate, Config: Config{Fit: NoFitOff},
		Retriever: fixedRetriever{{Name: "calculator", Semantic: 2, Dense: 0.9}, {Name: "greet", Semantic: 1, Dense: 0.8}}}

	// The best tool's arguments cannot come from the text; the next one's can.
	sel, err := s.Select(context.Background(), "u", "say hello to 'Ada Lovelace'")
	if err != nil {
		t.Fatal(err)
	}
	if sel.Function != "greet" || string(sel.Arguments) != `{"name":"Ada Lovelace"}` {
		t.Errorf("got %s %s", sel.Function, sel.Arguments)
	}
	// No candidate can be called from the text: none, and the notice says why.
	sel, err = s.Select(context.Background(), "u", "tell me a joke")
	if err != nil {
		t.Fatal(err)
	}
	if sel.Function != grammar.NoneTool || !strings.Contains(sel.Notice, "closest: calculator") {
		t.Errorf("got %s, notice %q", sel.Function, sel.Notice)
	}
}

// TestNoLLMAskedTools: no-LLM mode tries the tool whose subject the
// request names before a closer one it does not name.
func TestNoLLMAskedTools(t *testing.T) {
	params := json.RawMessage(`{"type":"object","properties":{"specialization":{"type":"string"},"location":{"type":"string"}},"required":["location"]}`)
	doctor := pipeline.Tool{Name: "doctor.search", Parameters: params}
	lawyer := pipeline.Tool{Name: "lawyer.search", Parameters: params}
	cat := listCatalog{{Provider: "p", Tool: doctor}, {Provider: "p", Tool: lawyer}}
	s := &Selector{Catalog: cat, Ranker: orderRanker{}, Validate: validate,
		Retriever: fixedRetriever{{Name: "doctor.search", Semantic: 2, Dense: 0.56}, {Name: "lawyer.search", Semantic: 1, Dense: 0.55}}}
	sel, err := s.Select(context.Background(), "u", "Search for divorce law specialists in Los Angeles")
	if err != nil {
		t.Fatal(err)
	}
	if sel.Function != "lawyer.search" {
		t.Errorf("got %s %s, want lawyer.search", sel.Function, sel.Arguments)
	}
}

// TestNoLLMFitDecision: with the default fit model, no-LLM mode does not
// try a tool the request is not for, however close its similarity, and
// does try the same tool when the request names what it is about.
func TestNoLLMFitDecision(t *testing.T) {
	cooking := pipeline.Tool{Name: "get_cooking_time", Description: "Calculate the cooking time for a given ingredient.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"ingredient_type":{"type":"string","description":"The ingredient to cook"}},"required":["ingredient_type"]}`)}
	s := &Selector{Catalog: listCatalog{{Provider: "p", Tool: cooking}}, Ranker: orderRanker{}, Validate: validate,
		Retriever: fixedRetriever{{Name: "get_cooking_time", Semantic: 1, Dense: 0.5}}}
	for request, want := range map[string]string{
		"What is the best way to boil an egg?":    grammar.NoneTool,
		"the cooking time of an 'egg'":            "get_cooking_time",
		"how long is the cooking time for 'rice'": "get_cooking_time",
	} {
		sel, err := s.Select(context.Background(), "u", request)
		if err != nil {
			t.Fatal(err)
		}
		if sel.Function != want {
			t.Errorf("%q: got %s, want %s", request, sel.Function, want)
		}
	}
	// Turned off, the same far request gets the tool.
	s.Config.Fit = NoFitOff
	sel, err := s.Select(context.Background(), "u", "What is the best way to boil an 'egg'?")
	if err != nil {
		t.Fatal(err)
	}
	if sel.Function != "get_cooking_time" {
		t.Errorf("fit off: got %s, want get_cooking_time", sel.Function)
	}
}

// TestNoLLMFitRefusalWithEvidenceRule: where calls need evidence (the
// engine's configuration), a tool the fit decision refuses is still shown
// as the tool that fits but lacks arguments when its arguments are missing
// (it never runs either way), and a call that could be made of it is not.
func TestNoLLMFitRefusalWithEvidenceRule(t *testing.T) {
	cooking := pipeline.Tool{Name: "get_cooking_time", Description: "Calculate the cooking time for a given ingredient.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"ingredient_type":{"type":"string","description":"The ingredient to cook"}},"required":["ingredient_type"]}`)}
	s := &Selector{Catalog: listCatalog{{Provider: "p", Tool: cooking}}, Ranker: orderRanker{}, Validate: validate,
		Config:    Config{RequireEvidence: true},
		Retriever: fixedRetriever{{Name: "get_cooking_time", Semantic: 1, Dense: 0.5}}}
	sel, err := s.Select(context.Background(), "u", "What is the best way to boil an 'egg'?")
	if err != nil {
		t.Fatal(err)
	}
	if sel.Function != grammar.NoneTool || !strings.Contains(sel.Notice, "not what the request asks for") {
		t.Errorf("runnable but not asked for: got %s, notice %q", sel.Function, sel.Notice)
	}
	sel, err = s.Select(context.Background(), "u", "What is the best way to boil something?")
	if err != nil {
		t.Fatal(err)
	}
	if DefaultFitModel.Fits(FitFeatures("What is the best way to boil something?", sel.Candidates, 0, cooking)) {
		t.Fatal("the fit decision does not refuse the request this case is about")
	}
	if sel.Function != "get_cooking_time" || sel.Validation == "ok" {
		t.Errorf("arguments missing: got %s (validation %q), want get_cooking_time shown as not runnable", sel.Function, sel.Validation)
	}
}
