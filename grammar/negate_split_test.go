package grammar

import "testing"

// ¬s for a schema object is the union of what each keyword rejects, every
// entry of a keyword included: a property schema that accepts everything
// (true) adds nothing but must not hide the properties after it.
func TestNegateKeepsEveryEntry(t *testing.T) {
	for _, c := range []struct {
		schema string
		in     map[string]bool
	}{
		{`{"not": {"properties": {"a": true, "b": {"type": "string"}}}}`,
			map[string]bool{`{"b":1}`: true, `{"b":"x"}`: false, `{"a":1}`: false}},
		{`{"not": {"dependencies": {"a": true, "b": ["c"]}}}`,
			map[string]bool{`{"b":1}`: true, `{"b":1,"c":2}`: false, `{"a":1}`: false}},
		{`{"not": {"dependentRequired": {"a": {}, "b": ["c"]}}}`,
			map[string]bool{`{"b":1}`: true, `{"b":1,"c":2}`: false, `{"a":1}`: false}},
		{`{"not": {"minimum": 1, "maximum": 5}}`,
			map[string]bool{`0`: true, `6`: true, `3`: false, `"s"`: false}},
	} {
		g, err := Compile([]byte(c.schema), Options{})
		if err != nil {
			t.Fatalf("%s: %v", c.schema, err)
		}
		for in, want := range c.in {
			if got := g.Match([]byte(in)); got != want {
				t.Errorf("%s: Match(%s) = %v, want %v", c.schema, in, got, want)
			}
		}
	}
}
