package grammar

import (
	"math/rand/v2"
	"testing"
)

// uniqueCases: uniqueItems over finite item domains (enforced exactly), each
// with a pool of item texts (in and out of the domain) the differential
// test draws arrays from.
var uniqueCases = []struct {
	schema string
	pool   []string
}{
	{`{"type":"array","items":{"enum":["a","b","c"]},"uniqueItems":true}`,
		[]string{`"a"`, `"b"`, `"c"`, `"d"`, `1`}},
	{`{"type":"array","items":{"type":"string","enum":["x","y\n","z","w"]},"uniqueItems":true,"minItems":2,"maxItems":3}`,
		[]string{`"x"`, `"y\n"`, `"z"`, `"w"`, `"q"`}},
	{`{"type":"array","items":{"type":"boolean"},"uniqueItems":true}`,
		[]string{`true`, `false`, `null`}},
	{`{"type":"array","items":{"enum":[null,1,2,"1",true]},"uniqueItems":true,"minItems":1}`,
		[]string{`null`, `1`, `2`, `"1"`, `true`, `false`, `3`}},
	{`{"type":"array","items":{"type":"integer","minimum":1,"maximum":4},"uniqueItems":true,"minItems":2}`,
		[]string{`0`, `1`, `2`, `3`, `4`, `5`}},
	{`{"type":"object","properties":{"k":{"allOf":[{"type":"array","items":{"enum":["p","q","r"]}},{"uniqueItems":true}]}},"required":["k"],"additionalProperties":false}`,
		[]string{`"p"`, `"q"`, `"r"`, `"s"`}},
	{`{"type":"array","items":{"type":"string"},"uniqueItems":true,"maxItems":1}`,
		[]string{`"a"`, `"b"`, `"a"`}},
}

func TestUniqueItemsDifferential(t *testing.T) {
	rng := rand.New(rand.NewPCG(20, 1))
	for _, c := range uniqueCases {
		nValid, nInvalid := poolDifferential(t, c.schema, 3000, arrayDraw(rng, c.schema, c.pool, 6))
		wantBoth(t, c.schema, nValid, nInvalid)
	}
}

// TestUniqueItemsSampling: a random model under the masks never dead-ends
// and every output it finishes is unique and valid.
func TestUniqueItemsSampling(t *testing.T) {
	ti := NewTokenizerInfo(testVocab(t))
	bits := make([]uint64, ti.MaskWords())
	rng := rand.New(rand.NewPCG(20, 2))
	for _, c := range uniqueCases {
		g, err := Compile([]byte(c.schema), Options{MaxStringBytes: 16})
		if err != nil {
			t.Fatal(err)
		}
		val := newValidator(t, []byte(c.schema))
		sampleValidates(t, c.schema, g, val, ti, bits, rng, 20)
	}
}

func TestUniqueItemsRefused(t *testing.T) {
	for _, s := range []string{
		// strings are now kept unique by the matcher (unique_strings_test.go)
		`{"type":"array","items":{"type":"string","maxLength":8},"uniqueItems":true}`,
		`{"type":"array","items":{"type":"object","additionalProperties":false},"uniqueItems":true}`,
		`{"type":"array","items":{"enum":[1,1.0]},"uniqueItems":true}`,
		`{"type":"array","items":{"enum":[[1],[2]]},"uniqueItems":true}`,
		`{"type":"array","prefixItems":[{"const":1}],"items":{"enum":[1,2]},"uniqueItems":true}`,
		// [1,1] itself is now dropped exactly (conjlits_test.go); 1 and 1.0
		// are equal but spelled apart, which the literal check cannot decide
		`{"type":"array","enum":[[1,1.0]],"uniqueItems":true}`,
		`{"type":"array","items":{"type":"integer","minimum":0,"maximum":100},"uniqueItems":true}`,
	} {
		_, err := Compile([]byte(s), Options{})
		ce, ok := err.(*CompileError)
		if !ok || ce.Keyword != "uniqueItems" {
			t.Errorf("%s: want a uniqueItems CompileError, got %v", s, err)
		}
	}
}
