package grammar

import (
	"math/bits"
	"math/rand/v2"
	"testing"
)

// Liveness: every byte the matcher accepts (and so every token a mask
// allows) leaves an output that can still be completed. These are the dead
// ends the JSONSchemaBench sampling check (jsb_sample_test.go) found, on
// committed data only.
var livenessCases = []struct {
	name   string
	schema string
	opts   Options
	ok     []string // complete outputs the grammar accepts
	dead   []string // prefixes whose last byte must be refused
}{
	{
		// Glaive's objects under a property bound: once the undeclared keys
		// written and the required ones still missing fill maxProperties,
		// neither an undeclared key nor an optional declared one can be
		// finished, so neither may be started (the comma takes the key start
		// that allows declared names only).
		name:   "undeclared key when only the required properties fit",
		schema: `{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"},"c":{"type":"integer"}},"required":["a","b"],"maxProperties":3}`,
		opts:   Options{MaxStringBytes: 16},
		ok:     []string{`{"x":1,"a":2,"b":3}`, `{"a":1,"x":2,"b":3}`, `{"c":1,"b":2,"a":3}`, `{"a":1,"b":2,"x":3}`},
		dead:   []string{`{"x":1,"y`, `{"x":1,"c`, `{"c":1,"x`, `{"x":1,"a":2,"y`},
	},
	{
		// the same bound from Options.MaxContainerItems, on an open value
		name:   "generation bound on an object with required properties",
		schema: `{"properties":{"p":{"type":"string"},"q":{"type":"number"}},"required":["p","q"]}`,
		opts:   Options{MaxStringBytes: 16, MaxContainerItems: 3},
		ok:     []string{`{"z":{"a":1,"b":2,"c":3},"p":"","q":1}`},
		dead:   []string{`{"z":1,"y`, `{"z":{"a":1,"b":2,"c":3,`},
	},
	{
		// declared order: writing the last property first leaves
		// minProperties unreachable
		name:   "declared order and minProperties",
		schema: `{"properties":{"a":{},"b":{},"c":{}},"minProperties":2,"additionalProperties":false}`,
		opts:   Options{PropertyOrder: DeclaredOrder, MaxStringBytes: 16, MaxContainerItems: 3},
		ok:     []string{`{"a":1,"c":2}`, `{"b":1,"c":2}`},
		dead:   []string{`{"c`, `{"b":1,"a`},
	},
	{
		// a property whose dependencies do not fit maxProperties
		name:   "dependentRequired and maxProperties",
		schema: `{"properties":{"a":{},"b":{},"c":{}},"dependentRequired":{"a":["b"]},"maxProperties":1,"additionalProperties":false}`,
		opts:   Options{MaxStringBytes: 16, MaxContainerItems: 3},
		ok:     []string{`{"b":1}`, `{"c":1}`, `{}`},
		dead:   []string{`{"a`},
	},
	{
		// a pattern under the default string bound: the letters must leave
		// room for "@" and one more
		name:   "pattern suffix within the string bound",
		schema: `{"type":"string","pattern":"^[a-z]+@[a-z]+$"}`,
		opts:   Options{MaxStringBytes: 8},
		ok:     []string{`"aaaaaa@b"`, `"a@b"`},
		dead:   []string{`"aaaaaaa`, `"aaaaaa@bb`},
	},
	{
		// a token that opens a string ("ab, ","ab) counts that string's
		// code points as the matcher does: the mask must not offer "abc
		// for a maxLength of 2
		name:   "strings opened mid-token under a small maxLength",
		schema: `{"type":"array","items":{"type":"string","maxLength":2},"maxItems":4}`,
		ok:     []string{`["ab","c",""]`},
		dead:   []string{`["abc`, `["a","bcd`},
	},
	{
		// the default bound never makes a string unsatisfiable
		name:   "formats and minLength longer than the string bound",
		schema: `{"type":"object","properties":{"id":{"type":"string","format":"uuid"},"s":{"type":"string","minLength":10}},"required":["id","s"],"additionalProperties":false}`,
		opts:   Options{MaxStringBytes: 4},
		ok:     []string{`{"id":"123e4567-e89b-12d3-a456-426614174000","s":"abcdefghij"}`},
		dead:   []string{`{"s":"abcdefghijk`},
	},
}

func TestLivenessCases(t *testing.T) {
	for _, c := range livenessCases {
		g, err := Compile([]byte(c.schema), c.opts)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		val := newValidator(t, []byte(c.schema))
		for _, x := range c.ok {
			if !g.Match([]byte(x)) {
				t.Errorf("%s: %s rejected", c.name, x)
			}
			if !val.valid([]byte(x)) {
				t.Errorf("%s: test output %s does not validate", c.name, x)
			}
		}
		for _, p := range c.dead {
			m := g.NewMatcher()
			if n, _ := m.AdvanceBytes([]byte(p)); n != len(p)-1 {
				t.Errorf("%s: %s: %d bytes accepted, want all but the last (%d)", c.name, p, n, len(p)-1)
			}
		}
	}
}

// TestLivenessSampling draws outputs uniformly among the allowed tokens of
// the committed qwen3 vocabulary: none may dead-end (before the fix, the
// first case dead-ended in most draws: a random key is almost always an
// undeclared one), each terminates, and each validates.
func TestLivenessSampling(t *testing.T) {
	ti := NewTokenizerInfo(testVocab(t))
	bits := make([]uint64, ti.MaskWords())
	rng := rand.New(rand.NewPCG(3, 5))
	for _, c := range livenessCases {
		g, err := Compile([]byte(c.schema), c.opts)
		if err != nil {
			t.Fatal(err)
		}
		val := newValidator(t, []byte(c.schema))
		sampleValidates(t, c.name, g, val, ti, bits, rng, 20)
	}
}

// sampleValidates draws outputs from g uniformly among the allowed tokens
// (a random model) and checks each: no dead end, no allowed token
// rejected, EOS within 2,000 tokens, and valid against the reference
// validator; name labels the failures.
func sampleValidates(t *testing.T, name string, g *Grammar, val *refValidator, ti *TokenizerInfo, bits []uint64, rng *rand.Rand, draws int) {
	t.Helper()
	for d := 0; d < draws; d++ {
		tm := g.NewTokenMatcher(ti)
		var out []byte
		for step := 0; step < 2000 && !tm.IsTerminated(); step++ {
			tm.FillMask(bits)
			id := pickUniform(bits, rng)
			if id < 0 {
				t.Fatalf("%s: dead end (no token allowed) after %q", name, out)
			}
			if !tm.Accept(id) {
				t.Fatalf("%s: allowed token %q rejected after %q", name, ti.v.Tokens[id], out)
			}
			if !tm.IsTerminated() {
				out = append(out, ti.v.Tokens[id]...)
			}
		}
		switch {
		case !tm.IsTerminated():
			t.Errorf("%s: no EOS within 2000 tokens: %.200q", name, out)
		case !val.valid(out):
			t.Errorf("%s: sampled output does not validate: %s", name, out)
		}
	}
}

// pickUniform returns a token id drawn uniformly among the set bits of
// mask (-1 if none).
func pickUniform(mask []uint64, rng *rand.Rand) int {
	n := 0
	for _, w := range mask {
		n += bits.OnesCount64(w)
	}
	if n == 0 {
		return -1
	}
	k := rng.IntN(n)
	for i, w := range mask {
		c := bits.OnesCount64(w)
		if k >= c {
			k -= c
			continue
		}
		for ; k > 0; k-- {
			w &= w - 1
		}
		return i*64 + bits.TrailingZeros64(w)
	}
	return -1
}
