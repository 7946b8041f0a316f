package selector

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/airs-dev/airs/embeddings"
	"github.com/airs-dev/airs/grammar"
	"github.com/airs-dev/airs/pipeline"
)

// A Selector left with a nil FormatFor sends the model the same format as
// one given FormatFor: the zero value is the default.
func TestZeroFormatForIsFormatFor(t *testing.T) {
	calc := pipeline.Tool{Name: "calculator", Parameters: json.RawMessage(`{"type":"object","properties":{"expression":{"type":"string"}},"required":["expression"]}`)}
	reply := `{"function":"calculator","arguments":{"expression":"2*21"}}`
	var formats []json.RawMessage
	for _, ff := range []func([]grammar.ToolSchema, bool) (json.RawMessage, bool, error){FormatFor, nil} {
		m := &scripted{replies: []string{reply}}
		s := &Selector{Catalog: listCatalog{{Provider: "p", Tool: calc}}, Ranker: orderRanker{}, Validate: validate, Model: m, FormatFor: ff,
			Retriever: fixedRetriever{{Name: "calculator", Semantic: 2, Dense: 0.9}}, Config: Config{Model: "m"}}
		sel, err := s.Select(context.Background(), "u", "what is 2*21")
		if err != nil {
			t.Fatal(err)
		}
		if sel.Function != "calculator" || len(m.reqs) != 1 {
			t.Fatalf("got %s after %d requests", sel.Function, len(m.reqs))
		}
		formats = append(formats, m.reqs[0].Format)
	}
	if len(formats[0]) == 0 || !bytes.Equal(formats[0], formats[1]) {
		t.Errorf("nil FormatFor sent %s, FormatFor sent %s", formats[1], formats[0])
	}
}

// New fills the defaults in one place: a StatsRanker when none is given,
// both format exporters, the model only when there is one.
func TestNewDefaults(t *testing.T) {
	ix, err := embeddings.Open(context.Background(), embeddings.NewLexical(embeddings.LexicalOptions{}), embeddings.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := New(Parts{Catalog: listCatalog{}, Index: ix, Config: Config{TopK: 3}})
	if _, ok := s.Ranker.(*StatsRanker); !ok {
		t.Errorf("default ranker %T, want *StatsRanker", s.Ranker)
	}
	if s.FormatFor == nil || s.FormatSchema == nil || s.Model != nil || s.Validate != nil {
		t.Errorf("hooks: FormatFor %v, FormatSchema %v, Model %v, Validate %v", s.FormatFor != nil, s.FormatSchema != nil, s.Model, s.Validate != nil)
	}
	if r, ok := s.Retriever.(*IndexRetriever); !ok || r.Index != ix {
		t.Errorf("retriever %T does not search the given index", s.Retriever)
	}
	if c := s.Config.WithDefaults(); c.TopK != 3 || c.NumCtx != 8192 || c.Seed != 42 || c.NumPredict != 1024 || c.MaxOutputBytes != 16384 {
		t.Errorf("WithDefaults: %+v", c)
	}
	r := NewStatsRanker()
	if s := New(Parts{Catalog: listCatalog{}, Index: ix, Ranker: r, Model: &scripted{}}); s.Ranker != r || s.Model == nil {
		t.Errorf("given ranker or model not kept: %v %v", s.Ranker, s.Model)
	}
}

// unavailable is a Model whose server does not answer.
type unavailable struct{}

func (unavailable) Generate(context.Context, ModelRequest, func(string) error) error {
	return fmt.Errorf("dial tcp: %w", ErrModelUnavailable)
}

// A model that is unreachable makes Select fall back to no-LLM mode, by the
// selector's own sentinel (no backend's error type).
func TestUnavailableModelFallsBackToNoLLM(t *testing.T) {
	calc := pipeline.Tool{Name: "calculator", Parameters: json.RawMessage(`{"type":"object","properties":{"expression":{"type":"string"}},"required":["expression"]}`)}
	s := &Selector{Catalog: listCatalog{{Provider: "p", Tool: calc}}, Ranker: orderRanker{}, Validate: validate, Model: unavailable{},
		Retriever: fixedRetriever{{Name: "calculator", Semantic: 2, Dense: 0.9}}, Config: Config{Model: "m"}}
	sel, err := s.Select(context.Background(), "u", "what is 2*21")
	if err != nil {
		t.Fatal(err)
	}
	if sel.Mode != ModeNoLLM || sel.Notice != NoLLMNotice {
		t.Errorf("mode %s notice %q, want the no-LLM fallback", sel.Mode, sel.Notice)
	}
}
