package selector

import (
	"encoding/json"
	"testing"
)

func TestExtractArguments(t *testing.T) {
	cases := []struct {
		schema, text, want string
	}{
		{`{"type":"object","properties":{"base":{"type":"integer"},"height":{"type":"integer"},"unit":{"type":"string"}},"required":["base","height"]}`,
			"Find the area of a triangle with a base of 10 units and height of 5 units.",
			`{"base":10,"height":5}`},
		{`{"type":"object","properties":{"height":{"type":"integer"},"base":{"type":"integer"}},"required":["base","height"]}`,
			"Find the area of a triangle with a base of 10 units and height of 5 units.",
			`{"base":10,"height":5}`},
		{`{"type":"object","properties":{"player_name":{"type":"string"},"season":{"type":"string"}},"required":["player_name"]}`,
			"Get point and rebound stats for player 'LeBron James' from last basketball game",
			`{"player_name":"LeBron James"}`},
		{`{"type":"object","properties":{"origin":{"type":"string"},"destination":{"type":"string"},"consider_terrain":{"type":"boolean"}},"required":["origin","destination"]}`,
			"Find the distance between New York and Boston, accounting for terrain.",
			`{"consider_terrain":true,"destination":"Boston","origin":"New York"}`},
		{`{"type":"object","properties":{"rate":{"type":"number"},"years":{"type":"integer"}},"required":["rate","years"]}`,
			"an annual interest rate of 5% over 2 years",
			`{"rate":0.05,"years":2}`},
		{`{"type":"object","properties":{"space":{"type":"string"},"pattern":{"type":"string"}},"required":["space"]}`,
			"Summarize the research papers in my documents folder",
			`{"space":"documents"}`},
		{`{"type":"object","properties":{"sort":{"type":"string","enum":["asc","desc","importance"]}},"required":[]}`,
			"Find ten events sorted by importance",
			`{"sort":"importance"}`},
	}
	for _, c := range cases {
		got, err := ExtractArguments(json.RawMessage(c.schema), c.text, Hints{Spaces: []string{"documents"}})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(got)
		if string(b) != c.want {
			t.Errorf("%q:\n got %s\nwant %s", c.text, b, c.want)
		}
	}
}

func TestExtractExpression(t *testing.T) {
	got, err := ExtractArguments(json.RawMessage(`{"type":"object","properties":{"expression":{"type":"string"}},"required":["expression"]}`),
		"what is (2 + 3) * 4.5 - 1?", Hints{})
	if err != nil {
		t.Fatal(err)
	}
	if got["expression"] != "(2 + 3) * 4.5 - 1" {
		t.Errorf("got %q", got["expression"])
	}
}
