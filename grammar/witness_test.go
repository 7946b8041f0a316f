package grammar

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// witnessCases: ¬propertyNames, ¬patternProperties, ¬additionalProperties
// (witness.go), with a pool of properties the differential test draws
// objects from.
var witnessCases = []struct {
	schema string
	pool   []string
}{
	{`{"type":"object","not":{"propertyNames":{"not":{"const":"0"}}}}`, []string{`"0":1`, `"1":2`, `"a":null`}},
	{`{"type":"object","not":{"propertyNames":{"pattern":"^[a-z]+$"}},"patternProperties":{"\\d":{"type":"boolean"}}}`,
		[]string{`"ab":1`, `"A":2`, `"1":true`, `"2":3`, `"x1":false`}},
	{`{"type":"object","not":{"patternProperties":{"^a":{"type":"string"}}}}`, []string{`"ab":"x"`, `"ab":1`, `"b":1`, `"a":true`}},
	{`{"type":"object","not":{"patternProperties":{"a":false,"b":{"minimum":3}}}}`, []string{`"xa":1`, `"b":1`, `"b":5`, `"c":0`}},
	{`{"type":"object","properties":{"k":{}},"not":{"properties":{"k":{}},"additionalProperties":{"type":"integer"}}}`,
		[]string{`"k":"s"`, `"m":1`, `"m":"s"`, `"n":2.5`}},
	{`{"type":"object","not":{"propertyNames":{"enum":["a","b"]}},"maxProperties":2}`, []string{`"a":1`, `"b":1`, `"c":1`, `"d":1`}},
	{`{"type":"object","properties":{"x":{"type":"integer"}},"not":{"patternProperties":{"^x$":{"minimum":0}}}}`,
		[]string{`"x":1`, `"x":-1`, `"y":-1`}},
	{`{"type":"object","oneOf":[{"patternProperties":{"a":{"type":"integer"}}},{"patternProperties":{"b":{"type":"integer"}}}]}`,
		[]string{`"a":1`, `"a":"s"`, `"b":2`, `"b":"t"`, `"ab":3`, `"c":"u"`}},
	// several witnesses: a copy per set seen
	{`{"type":"object","allOf":[{"not":{"propertyNames":{"not":{"const":"x"}}}},{"not":{"patternProperties":{"^y":{"type":"integer"}}}}]}`,
		[]string{`"x":1`, `"y":1`, `"y":"s"`, `"yz":null`, `"q":0`}},
	{`{"type":"object","allOf":[{"not":{"patternProperties":{"a":{"type":"string"}}}},{"not":{"patternProperties":{"b":{"type":"string"}}}},{"not":{"propertyNames":{"maxLength":2}}}],"maxProperties":3}`,
		[]string{`"ab":1`, `"a":2`, `"b":"s"`, `"bbb":3`, `"abc":"t"`, `"c":4`}},
	{`{"type":"object","patternProperties":{"^[0-9]$":{"type":"integer"}},"additionalProperties":false,"not":{"anyOf":[{"propertyNames":{"not":{"enum":["1","3"]}}},{"propertyNames":{"not":{"enum":["2","3"]}}}]},"maxProperties":2}`,
		[]string{`"1":1`, `"2":2`, `"3":3`, `"4":4`, `"x":1`}},
}

func TestWitnessDifferential(t *testing.T) {
	rng := rand.New(rand.NewPCG(20, 5))
	for _, c := range witnessCases {
		// objects of fewer than 5 properties from the pool, each key once
		draw := func() string {
			n := rng.IntN(5)
			var props []string
			seen := map[string]bool{}
			for j := 0; j < n; j++ {
				p := c.pool[rng.IntN(len(c.pool))]
				key := p[:strings.Index(p, `":`)+1]
				if !seen[key] {
					seen[key] = true
					props = append(props, p)
				}
			}
			return "{" + strings.Join(props, ",") + "}"
		}
		nValid, nInvalid := poolDifferential(t, c.schema, 3000, draw)
		wantBoth(t, c.schema, nValid, nInvalid)
	}
}

// TestWitnessSampling: under the generation bound (unrolled by key count)
// a random model never dead-ends and every output validates.
func TestWitnessSampling(t *testing.T) {
	ti := NewTokenizerInfo(testVocab(t))
	bits := make([]uint64, ti.MaskWords())
	rng := rand.New(rand.NewPCG(20, 6))
	for _, c := range witnessCases {
		g, err := Compile([]byte(c.schema), Options{MaxStringBytes: 16, MaxContainerItems: 4})
		if err != nil {
			t.Logf("%s: %v (refused under the generation bound)", c.schema, err)
			continue
		}
		val := newValidator(t, []byte(c.schema))
		sampleValidates(t, c.schema, g, val, ti, bits, rng, 20)
	}
}
