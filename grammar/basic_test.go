package grammar

import "testing"

func TestBasicAcceptReject(t *testing.T) {
	cases := []struct {
		schema  string
		ok, bad []string
	}{
		{`{"type":"object","properties":{"a":{"type":"integer","minimum":3},"b":{"type":"string","maxLength":3}},"required":["a"],"additionalProperties":false}`,
			[]string{`{"a":3}`, `{"b":"xyz","a":10}`, `{"a":3,"b":""}`},
			[]string{`{"a":1}`, `{}`, `{"b":"x"}`, `{"a":3,"b":"abcd"}`, `{"a":3,"c":1}`, `{"a":3,"a":4}`}},
		{`{"type":"array","items":{"enum":["x","y"]},"minItems":2,"maxItems":3}`,
			[]string{`["x","y"]`, `["x","x","y"]`}, []string{`[]`, `["x"]`, `["x","y","x","y"]`, `["z","x"]`}},
		{`{"anyOf":[{"type":"string","format":"date"},{"type":"null"}]}`, []string{`"2024-02-29"`, `null`}, []string{`"2023-02-29"`, `1`}},
		{`{"$defs":{"n":{"type":"object","properties":{"c":{"type":"array","items":{"$ref":"#/$defs/n"}}}}},"$ref":"#/$defs/n"}`,
			[]string{`{}`, `{"c":[{},{"c":[]}]}`, `{"x":1}`}, []string{`{"c":[1]}`}},
		{`{"type":"number","exclusiveMinimum":0.5,"maximum":10,"multipleOf":0.25}`, []string{`0.75`, `10`, `9.25`, `1`}, []string{`0.5`, `10.25`, `0.3`, `-1`}},
	}
	for _, c := range cases {
		g, err := Compile([]byte(c.schema), Options{})
		if err != nil {
			t.Fatalf("%s: %v", c.schema, err)
		}
		t.Logf("%s: %v", c.schema, g.Stats())
		for _, s := range c.ok {
			if !g.Match([]byte(s)) {
				t.Errorf("%s: should accept %s", c.schema, s)
			}
		}
		for _, s := range c.bad {
			if g.Match([]byte(s)) {
				t.Errorf("%s: should reject %s", c.schema, s)
			}
		}
	}
}

func TestAutomatonView(t *testing.T) {
	g, err := Compile([]byte(`{"type":"object","properties":{"a":{"type":"boolean"}},"required":["a"],"additionalProperties":false}`), Options{})
	if err != nil {
		t.Fatal(err)
	}
	a := g.Automaton()
	if a.Rules[a.Root].Kind != "value" || len(a.Rules) < 5 {
		t.Fatalf("rules %d", len(a.Rules))
	}
	var checks, calls int
	for _, r := range a.Rules {
		for _, s := range r.States {
			for _, e := range s.Edges {
				if e.Check != "" {
					checks++
				}
			}
			calls += len(s.Calls)
		}
	}
	if checks == 0 || calls == 0 {
		t.Errorf("checks %d calls %d", checks, calls)
	}
}
