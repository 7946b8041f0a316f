package grammar

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// containsCases: contains enforced exactly (contains.go), each with a pool
// of item texts the differential test draws arrays from.
var containsCases = []struct {
	schema string
	pool   []string
}{
	{`{"type":"array","contains":{"const":1}}`, []string{`1`, `2`, `"1"`, `null`}},
	{`{"type":"array","items":{"type":"integer"},"contains":{"minimum":5},"maxItems":3}`,
		[]string{`1`, `5`, `7`, `4`, `"x"`}},
	{`{"type":"array","prefixItems":[{"type":"string"},{"type":"integer"}],"contains":{"type":"integer","multipleOf":2}}`,
		[]string{`"a"`, `1`, `2`, `4`, `true`}},
	{`{"$schema":"http://json-schema.org/draft-07/schema#","type":"array","items":[{"type":"string"}],"additionalItems":false,"contains":{"pattern":"^a"}}`,
		[]string{`"abc"`, `"b"`, `1`}},
	{`{"allOf":[{"type":"array","items":{"enum":["x","y","z",1]}},{"contains":{"type":"string","not":{"const":"x"}}}],"minItems":2}`,
		[]string{`"x"`, `"y"`, `"z"`, `1`}},
	{`{"type":"object","properties":{"k":{"contains":{"type":"object","required":["a"]},"minContains":1}},"required":["k"]}`,
		[]string{`{"a":1}`, `{"b":1}`, `{}`, `1`}},
	{`{"type":"array","contains":false}`, []string{`1`, `null`}},
	{`{"contains":{"const":1},"minContains":0,"maxItems":2}`, []string{`1`, `2`}},
	{`{"anyOf":[{"type":"array","contains":{"const":"a"}},{"type":"array","contains":{"const":"b"},"minItems":3}]}`,
		[]string{`"a"`, `"b"`, `"c"`}},
	// several contains: 2^k copies
	{`{"allOf":[{"contains":{"const":1}},{"contains":{"const":2}}],"maxItems":4}`, []string{`1`, `2`, `3`}},
	{`{"type":"array","items":{"type":"integer"},"allOf":[{"contains":{"minimum":3}},{"contains":{"maximum":1}},{"contains":{"multipleOf":2}}]}`,
		[]string{`0`, `1`, `2`, `3`, `4`, `5`}},
	{`{"type":"array","prefixItems":[{"const":1},{"type":"integer"}],"allOf":[{"contains":{"const":1}},{"contains":{"const":2}}]}`,
		[]string{`1`, `2`, `3`}},
	// ¬items: S is contains: ¬S (negate.go)
	{`{"type":"array","not":{"items":{"type":"integer","minimum":2}}}`, []string{`1`, `2`, `5`, `"a"`}},
	{`{"type":"array","oneOf":[{"anyOf":[{"items":{"const":1}},{"contains":{"const":2}}]},{"anyOf":[{"items":{"const":2}},{"contains":{"const":1}}]}]}`,
		[]string{`1`, `2`, `3`}},
}

func TestContainsDifferential(t *testing.T) {
	rng := rand.New(rand.NewPCG(20, 3))
	for _, c := range containsCases {
		nValid, nInvalid := poolDifferential(t, c.schema, 3000, arrayDraw(rng, c.schema, c.pool, 6))
		if nInvalid == 0 || nValid == 0 && !strings.Contains(c.schema, `"contains":false`) {
			t.Errorf("%s: the generator drew %d valid and %d invalid instances: want both", c.schema, nValid, nInvalid)
		}
	}
}

// TestContainsSampling: a random model under the masks (with the generation
// bound on items, which unrolls the "no witness yet" copy) never dead-ends
// and every output validates.
func TestContainsSampling(t *testing.T) {
	ti := NewTokenizerInfo(testVocab(t))
	bits := make([]uint64, ti.MaskWords())
	rng := rand.New(rand.NewPCG(20, 4))
	for _, c := range containsCases {
		if strings.Contains(c.schema, `"contains":false`) {
			continue // no array at all: the object case is elsewhere
		}
		g, err := Compile([]byte(c.schema), Options{MaxStringBytes: 16, MaxContainerItems: 4})
		if err != nil {
			t.Fatal(err)
		}
		val := newValidator(t, []byte(c.schema))
		sampleValidates(t, c.schema, g, val, ti, bits, rng, 20)
	}
}

func TestContainsRefused(t *testing.T) {
	for _, s := range []string{
		`{"contains":{"const":1},"maxContains":2}`,
		`{"contains":{"const":1},"minContains":2}`,
		`{"contains":{"format":"email"}}`, // no exact complement
		`{"allOf":[{"contains":{"const":1}},{"contains":{"const":2}},{"contains":{"const":3}},{"contains":{"const":4}}]}`,
		`{"contains":{"const":1},"uniqueItems":true,"items":{"enum":[1,2]}}`,
	} {
		_, err := Compile([]byte(s), Options{})
		ce, ok := err.(*CompileError)
		if !ok || ce.Keyword != "contains" {
			t.Errorf("%s: want a contains CompileError, got %v", s, err)
		}
	}
}

// TestContainsNoDeadPrefix: a prefix after which no witness can come is
// refused at its last byte, not left to end in a state that can never
// close. (The rules' automata are trimmed of states that cannot reach the
// end, so this holds even with containsArr's liveness pruning removed —
// seeded, it still passes; the pruning only keeps the automaton smaller.)
func TestContainsNoDeadPrefix(t *testing.T) {
	for _, c := range []struct{ schema, ok, dead string }{
		{`{"type":"array","prefixItems":[{"enum":[1,2]},{"enum":[1,3]}],"items":false,"contains":{"const":2}}`, `[2,`, `[1,`},
		{`{"type":"array","items":{"type":"integer"},"contains":{"const":7},"maxItems":2}`, `[1,`, `[1,1,`},
		{`{"type":"array","items":{"enum":[1,2]},"allOf":[{"contains":{"const":1}},{"contains":{"const":2}}],"maxItems":2}`, `[1,`, `[1,1,`},
	} {
		g, err := Compile([]byte(c.schema), Options{})
		if err != nil {
			t.Fatalf("%s: %v", c.schema, err)
		}
		if _, ok := g.NewMatcher().AdvanceBytes([]byte(c.ok)); !ok {
			t.Errorf("%s: %s refused", c.schema, c.ok)
		}
		if _, ok := g.NewMatcher().AdvanceBytes([]byte(c.dead)); ok {
			t.Errorf("%s: %s accepted: no completion is valid", c.schema, c.dead)
		}
	}
}
