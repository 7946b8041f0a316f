package predict

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/airs-dev/airs/evals/bfcl"
)

func catalogOf(t *testing.T, name, schema string) toolsCatalog {
	t.Helper()
	return entriesOf([]bfcl.ToolSchemaJSON{{Name: name, Description: "a tool", Parameters: json.RawMessage(schema)}})
}

func TestUnfillableByKind(t *testing.T) {
	num := catalogOf(t, "get_closest_prime", `{"type":"object","properties":{"number":{"type":"integer"}},"required":["number"]}`)
	withDefault := catalogOf(t, "roll", `{"type":"object","properties":{"sides":{"type":"integer","default":6}},"required":["sides"]}`)
	place := catalogOf(t, "find_hotel", `{"type":"object","properties":{"location":{"type":"string"}},"required":["location"]}`)
	season := catalogOf(t, "top_scorer", `{"type":"object","properties":{"season":{"type":"string"}},"required":["season"]}`)
	other := catalogOf(t, "get_recipe", `{"type":"object","properties":{"dish_name":{"type":"string"}},"required":["dish_name"]}`)
	for _, c := range []struct {
		cat  toolsCatalog
		text string
		want string
	}{
		{num, "what is the closest prime to 30?", ""},
		{num, "what is the closest prime to thirty?", ""},
		{num, "who is the vice president of the united states?", "number"},
		{withDefault, "roll a die", ""},
		{place, "find a hotel in Miami", ""},
		{place, "find a pet-friendly hotel", "location"},
		{season, "who was the top scorer in the 2019-2020 season?", ""},
		{season, "who is the top scorer in the premier league?", "season"},
		{other, "what is the recipe for lasagna?", ""},
	} {
		if got := Unfillable(c.cat, c.cat[0].Tool.Name, c.text); got != c.want {
			t.Errorf("Unfillable(%s, %q) = %q, want %q", c.cat[0].Tool.Name, c.text, got, c.want)
		}
	}
}

// TestNoCallWhenUnfillable: the predictor answers no call when the chosen
// tool's required number cannot come from the request, and calls it when
// it can (no pool: similarity threshold off, so only the typed check acts).
func TestNoCallWhenUnfillable(t *testing.T) {
	ctx := context.Background()
	p, err := NewNoLLM(ctx, Options{MinSimilarity: 0})
	if err != nil {
		t.Fatal(err)
	}
	p.minSimilarity = 0 // refusing on; every similarity passes (cosine of a match > 0)
	tools := []bfcl.ToolSchemaJSON{{Name: "get_closest_prime", Description: "Find the closest prime number to a given number.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"number":{"type":"integer","description":"the number"}},"required":["number"]}`)}}
	calls, err := p.Predict(ctx, question("simple_python", "find the closest prime number to 30"), tools)
	if err != nil || len(calls) != 1 {
		t.Fatalf("with a number: calls %v, err %v; want one call", calls, err)
	}
	calls, err = p.Predict(ctx, question("irrelevance", "what is the closest prime number to me"), tools)
	if err != nil || len(calls) != 0 {
		t.Fatalf("with no number: calls %v, err %v; want none", calls, err)
	}
}

func question(category, text string) bfcl.Question {
	return bfcl.Question{ID: category, Category: category, Turns: [][]bfcl.Message{{{Role: "user", Content: text}}}}
}
