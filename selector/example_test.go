package selector_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/airs-dev/airs/embeddings"
	"github.com/airs-dev/airs/pipeline"
	"github.com/airs-dev/airs/selector"
)

// A request's text becomes one validated tool call. With no model (no
// Parts.Model), the selector works in no-LLM mode and says so: the best
// scoring tool, its arguments taken from the text.
func Example() {
	ctx := context.Background()
	reg := pipeline.NewRegistry(pipeline.RegistryConfig{})
	noop := pipeline.HandlerFunc(func(context.Context, json.RawMessage, *pipeline.Call) (json.RawMessage, error) {
		return json.RawMessage(`{}`), nil
	})
	for _, t := range []pipeline.Tool{
		{Name: "weather", Version: "1.0.0", Description: "Current weather and forecast for a city.",
			Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string","description":"the city"}},"required":["city"]}`),
			Trust:      pipeline.TL2, LatencyClass: pipeline.Fast, Idempotent: true, ReadOnly: true},
		{Name: "calculator", Version: "1.0.0", Description: "Evaluate an arithmetic expression.",
			Parameters: json.RawMessage(`{"type":"object","properties":{"expression":{"type":"string","description":"the expression, e.g. 2*21"}},"required":["expression"]}`),
			Trust:      pipeline.TL2, LatencyClass: pipeline.Fast, Idempotent: true, ReadOnly: true},
	} {
		if err := reg.Register("example", t, noop); err != nil {
			fmt.Println(err)
			return
		}
	}
	catalog := &selector.RegistryCatalog{Registry: reg} // no Policy: every tool is callable
	ix, err := embeddings.Open(ctx, embeddings.NewLexical(embeddings.LexicalOptions{}), embeddings.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	if _, err := ix.Sync(ctx, selector.Docs(catalog.Callable("alice"))); err != nil {
		fmt.Println(err)
		return
	}
	s := selector.New(selector.Parts{Catalog: catalog, Index: ix})

	sel, err := s.Select(ctx, "alice", `what is the weather forecast in "Lyon"`)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(sel.Mode, sel.Function, string(sel.Arguments))
	// Output:
	// no-llm weather {"city":"Lyon"}
}
