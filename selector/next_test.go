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

// Next shows the model the earlier calls and their results, and holds its
// answer to the same grammar and validation as the first call: an invalid
// call gets the repair attempt, "none" ends the turn.
func TestNextSeesResultsAndValidates(t *testing.T) {
	calc := pipeline.Tool{Name: "calculator", Parameters: json.RawMessage(`{"type":"object","properties":{"expression":{"type":"string"}},"required":["expression"],"additionalProperties":false}`)}
	cat := listCatalog{{Provider: "p", Tool: calc}}
	m := &scripted{replies: []string{
		`{"function":"calculator","arguments":{}}`,                    // invalid: expression missing
		`{"function":"calculator","arguments":{"expression":"42*2"}}`, // the repair
		`{"function":"none","arguments":{}}`,
	}}
	s := &Selector{Catalog: cat, Ranker: orderRanker{}, Validate: validate, Model: m, FormatFor: FormatFor,
		Retriever: fixedRetriever{{Name: "calculator", Semantic: 2, Dense: 0.9}}, Config: Config{Model: "m"}}
	prior := []Prior{{Function: "calculator", Arguments: []byte(`{"expression": "6*7"}`), Result: `{"result":42}`}}
	sel, err := s.Next(context.Background(), "u", "compute 6*7 then double it", prior)
	if err != nil {
		t.Fatal(err)
	}
	if sel.Function != "calculator" || string(sel.Arguments) != `{"expression":"42*2"}` || !sel.Repaired || sel.Validation != "ok" {
		t.Errorf("got %s %s repaired=%v validation=%s", sel.Function, sel.Arguments, sel.Repaired, sel.Validation)
	}
	msgs := m.reqs[0].Messages
	if len(msgs) != 4 || msgs[2].Role != "assistant" || !strings.Contains(msgs[2].Content, `"calculator"`) ||
		msgs[3].Role != "user" || !strings.Contains(msgs[3].Content, `{"result":42}`) || !strings.Contains(msgs[0].Content, "none") {
		t.Errorf("the model was not shown the earlier call and result: %+v", msgs)
	}
	if len(m.reqs[0].Format) == 0 {
		t.Error("no grammar format for the next step")
	}
	prior = append(prior, Prior{Function: "calculator", Arguments: sel.Arguments, Error: "timeout"})
	sel, err = s.Next(context.Background(), "u", "compute 6*7 then double it", prior)
	if err != nil || sel.Function != grammar.NoneTool {
		t.Fatalf("want none, got %+v %v", sel, err)
	}
	if last := m.reqs[2].Messages[len(m.reqs[2].Messages)-1].Content; !strings.Contains(last, "The call failed: timeout") {
		t.Errorf("the failed call's error is not shown: %q", last)
	}
	s.Model = nil
	if _, err := s.Next(context.Background(), "u", "x", prior); !errors.Is(err, ErrNextNeedsModel) {
		t.Errorf("no-LLM Next: %v", err)
	}
}
