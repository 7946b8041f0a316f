package grammar

import "testing"

// TestNoDeadEndAtDepthLimit: whatever prefix the matcher accepts can still
// be continued or is complete — also at the nesting limit, where an object
// opened there must not accept a key whose value would need one more level.
func TestNoDeadEndAtDepthLimit(t *testing.T) {
	schema := `{"type":"object","properties":{"v":{}},"required":["v"]}`
	for _, maxDepth := range []int{3, 6} {
		g, err := Compile([]byte(schema), Options{MaxDepth: maxDepth})
		if err != nil {
			t.Fatal(err)
		}
		for _, unit := range []string{`{"a":`, `[`, `[{"a":`} {
			prefix := `{"v":`
			for k := 0; k < 2*maxDepth; k++ {
				m := g.NewMatcher()
				if _, ok := m.AdvanceBytes([]byte(prefix)); !ok {
					break // the limit refused to open one more level: fine
				}
				live := m.IsAccepting()
				for b := 0; b < 256 && !live; b++ {
					snap := m.Snapshot()
					live = m.Advance(byte(b))
					m.Restore(snap)
				}
				if !live {
					t.Fatalf("MaxDepth %d: dead end after %q", maxDepth, prefix)
				}
				prefix += unit
			}
		}
	}
}

func TestMaxContainerItems(t *testing.T) {
	cases := []struct {
		schema string
		ok, no []string
	}{
		{`{"type":"array"}`, []string{`[]`, `[1,2,3]`, `[[1,2,3]]`}, []string{`[1,2,3,4]`}},
		// open values (items and undeclared properties with no schema) too
		{`{}`, []string{`[1,2,3]`, `{"a":[{"b":1,"c":2,"d":3}]}`}, []string{`[1,2,3,4]`, `{"a":[{"b":1,"c":2,"d":3,"e":4}]}`}},
		{`{"type":"array"}`, []string{`[[{"a":[1,2,3]}]]`}, []string{`[[1,2,3,4,5]]`, `[{"a":[1,2,3,4]}]`}},
		{`{"properties":{"a":{}}}`, []string{`{"a":[1,2,3],"b":{"c":1}}`}, []string{`{"a":[1,2,3,4]}`, `{"b":{"a":1,"b":2,"c":3,"d":4}}`}},
		{`{"type":"array","items":{"type":"array"}}`, []string{`[[1,2,3]]`}, []string{`[[1,2,3,4]]`}},
		{`{"type":"object"}`, []string{`{}`, `{"a":1,"b":2,"c":3}`}, []string{`{"a":1,"b":2,"c":3,"d":4}`}},
		{`{"type":"array","minItems":5}`, []string{`[1,2,3,4,5]`}, []string{`[1,2,3,4,5,6]`}},
		{`{"type":"array","maxItems":10}`, []string{`[1,2,3,4,5,6,7,8,9,10]`}, []string{`[1,2,3,4,5,6,7,8,9,10,11]`}},
	}
	for _, c := range cases {
		g, err := Compile([]byte(c.schema), Options{MaxContainerItems: 3})
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range c.ok {
			if !g.Match([]byte(x)) {
				t.Errorf("%s: %s rejected", c.schema, x)
			}
		}
		for _, x := range c.no {
			if g.Match([]byte(x)) {
				t.Errorf("%s: %s accepted with MaxContainerItems 3", c.schema, x)
			}
		}
	}
	// The default is the schema's own: unbounded.
	g, _ := Compile([]byte(`{"type":"array"}`), Options{})
	if !g.Match([]byte(`[1,2,3,4,5,6,7,8,9,10,11,12]`)) {
		t.Error("unbounded array limited by default")
	}
}
