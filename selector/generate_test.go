package selector

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/airs-dev/airs/pipeline"
)

// scripted is a Model that replies with fixed outputs, in chunks of 3
// bytes, and records what it was sent. (The real server is in the e2e
// tests; this checks the selector's own handling of the stream.)
type scripted struct {
	replies []string
	reqs    []ModelRequest
	sent    []string // what each reply's stream delivered before it was stopped
}

func (s *scripted) Generate(ctx context.Context, req ModelRequest, on func(string) error) error {
	s.reqs = append(s.reqs, req)
	r := s.replies[0]
	s.replies = s.replies[1:]
	var got strings.Builder
	defer func() { s.sent = append(s.sent, got.String()) }()
	for i := 0; i < len(r); i += 3 {
		c := r[i:min(i+3, len(r))]
		got.WriteString(c)
		if err := on(c); err != nil {
			return err
		}
	}
	return nil
}

// TestGenerateStrictWithWhitespace: the model's output may carry bounded
// whitespace between tokens (as llama.cpp's converter allows), but an
// argument the tool does not declare leaves the grammar at once — the
// stream stops there and the repair attempt shows the model the error —
// even though the tool's schema itself allows undeclared properties. The
// exported format says so too (additionalProperties false).
func TestGenerateStrictWithWhitespace(t *testing.T) {
	calc := pipeline.Tool{Name: "calculator", Parameters: json.RawMessage(`{"type":"object","properties":{"expression":{"type":"string"}},"required":["expression"]}`)}
	cat := listCatalog{{Provider: "p", Tool: calc}}
	bad := `{"function":"calculator","arguments":{"expression":"1+1","precision":2}}`
	good := "{ \"function\" : \"calculator\",\n  \"arguments\": {\"expression\": \"2*21\"} }"
	m := &scripted{replies: []string{bad, good}}
	s := &Selector{Catalog: cat, Ranker: orderRanker{}, Validate: validate, Model: m, FormatFor: FormatFor,
		Retriever: fixedRetriever{{Name: "calculator", Semantic: 2, Dense: 0.9}}, Config: Config{Model: "m"}}
	sel, err := s.Select(context.Background(), "u", "what is 2*21")
	if err != nil {
		t.Fatal(err)
	}
	if sel.Function != "calculator" || string(sel.Arguments) != `{"expression":"2*21"}` || !sel.Repaired {
		t.Errorf("got %s %s repaired=%v", sel.Function, sel.Arguments, sel.Repaired)
	}
	// With "expression" the only declared argument, the comma after it is
	// already outside the grammar.
	if len(m.sent) != 2 || strings.Contains(m.sent[0], "precision") || !strings.Contains(m.sent[0], `"1+1"`) {
		t.Errorf("the first stream was not stopped at the undeclared argument: %q", m.sent)
	}
	var format map[string]any
	if err := json.Unmarshal(m.reqs[0].Format, &format); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(m.reqs[0].Format), `"additionalProperties":false`) || strings.Contains(string(m.reqs[0].Format), `"additionalProperties":true`) {
		t.Errorf("format is not strict: %s", m.reqs[0].Format)
	}
	if len(m.reqs) != 2 || !strings.Contains(m.reqs[1].Messages[len(m.reqs[1].Messages)-1].Content, "invalid") {
		t.Errorf("no repair attempt with the error: %+v", m.reqs)
	}
}
