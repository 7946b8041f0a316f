package grammar

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// uniqueStrCases: uniqueItems over strings, kept unique by the matcher
// (unique.go, uniqueStrings), each with a pool of item texts that makes
// duplicates likely (including one value written two ways: the grammar
// takes JSON's short escapes only, so "/" and "\/" are the two spellings
// of one string it accepts).
var uniqueStrCases = []struct {
	schema string
	pool   []string
}{
	{`{"type":"array","items":{"type":"string"},"uniqueItems":true}`,
		[]string{`"a"`, `"b"`, `"a/"`, `"a\/"`, `"ab"`, `""`, `1`}},
	{`{"type":"array","items":{"type":"string"},"uniqueItems":true,"minItems":2,"maxItems":3}`,
		[]string{`"a"`, `"b"`, `"/"`, `"\/"`, `"\n"`}},
	{`{"type":"array","items":{"type":"string","pattern":"^[a-z]+$"},"uniqueItems":true}`,
		[]string{`"ab"`, `"x"`, `"ab"`, `"A"`, `""`}},
	{`{"type":"array","items":{"type":"string","minLength":2},"uniqueItems":true}`,
		[]string{`"ab"`, `"b"`, `"ab"`, `"abc"`}},
	{`{"type":"object","properties":{"k":{"type":"array","items":{"type":"string"},"uniqueItems":true}},"required":["k"]}`,
		[]string{`"x"`, `"y"`, `"x"`}},
	// each array has its own set
	{`{"type":"array","items":{"type":"array","items":{"type":"string"},"uniqueItems":true}}`,
		[]string{`["a","b"]`, `["a","a"]`, `[]`, `["b"]`}},
	// containers: equal as JSON values (key order, 1 and 1.0)
	{`{"type":"array","items":{"type":"object"},"uniqueItems":true}`,
		[]string{`{}`, `{"a":1}`, `{"a":1.0}`, `{"a":10e-1}`, `{"b":[1,2]}`, `{"a":1,"b":2}`, `{"b":2,"a":1}`}},
	{`{"type":"array","items":{"type":["string","array"]},"uniqueItems":true}`,
		[]string{`"a"`, `[]`, `["a"]`, `[1]`, `[1.0]`, `[{"x":null}]`}},
	{`{"type":"array","items":{"type":"object","properties":{"n":{"type":"string"}},"required":["n"]},"uniqueItems":true,"maxItems":4}`,
		[]string{`{"n":"x"}`, `{"n":"y"}`, `{"n":"x","m":1}`, `{"m":1,"n":"x"}`}},
}

func TestUniqueStringsDifferential(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 1))
	for _, c := range uniqueStrCases {
		nValid, nInvalid := poolDifferential(t, c.schema, 2000, arrayDraw(rng, c.schema, c.pool, 5))
		wantBoth(t, c.schema, nValid, nInvalid)
	}
}

// TestUniqueStringsMaskExact: at prefixes where a duplicate is one token
// away, the mask allows exactly the tokens the matcher accepts (tokens
// through the checked closing quote are simulated, not taken from the
// per-state cache), and the duplicate-closing ones are among the refused.
func TestUniqueStringsMaskExact(t *testing.T) {
	ti := NewTokenizerInfo(testVocab(t))
	bits := make([]uint64, ti.MaskWords())
	g, err := Compile([]byte(`{"type":"array","items":{"type":"string"},"uniqueItems":true}`), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		prefix string
		dup    []string // token texts that would close a duplicate
	}{
		{`["ab","`, []string{`ab"`, `ab",`, `ab"]`}},
		{`["ab","a`, []string{`b"`, `b"]`}},
		{`["","x",`, []string{`""`, `"",`, `"x"`}},
		{`["a/b","a\/`, []string{`b"`}},
	} {
		checkMaskExact(t, g, ti, bits, c.prefix, c.dup)
	}
	g, err = Compile([]byte(`{"type":"array","items":{"type":"object"},"uniqueItems":true}`), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		prefix string
		dup    []string
	}{
		{`[{"a":1},{"a":1`, []string{`}`, `}]`, `},`}},
		{`[{"a":1,"b":[2]},{"b":[2],"a":1`, []string{`}`, `}]`}},
		{`[{},`, []string{`{}`, `{}]`}},
	} {
		checkMaskExact(t, g, ti, bits, c.prefix, c.dup)
	}
}

func checkMaskExact(t *testing.T, g *Grammar, ti *TokenizerInfo, bits []uint64, prefix string, dup []string) {
	t.Helper()
	c := struct {
		prefix string
		dup    []string
	}{prefix, dup}
	{
		tm := g.NewTokenMatcher(ti)
		if !tm.AcceptBytes([]byte(c.prefix)) {
			t.Fatalf("prefix %s refused", c.prefix)
		}
		tm.FillMask(bits)
		allowed := 0
		for id, tok := range ti.v.Tokens {
			if len(tok) == 0 || id < len(ti.v.Special) && ti.v.Special[id] {
				continue
			}
			inMask := bits[id>>6]&(1<<(id&63)) != 0
			ok := tm.AcceptBytes(tok)
			if ok {
				tm.Rollback(1)
				allowed++
			}
			if inMask != ok {
				t.Errorf("%s: token %q: mask %v, matcher %v", c.prefix, tok, inMask, ok)
			}
		}
		if allowed == 0 {
			t.Errorf("%s: no token allowed", c.prefix)
		}
		for _, d := range c.dup {
			id := tokenID(ti.v, d)
			if id < 0 {
				continue // not a token of this vocabulary
			}
			if bits[id>>6]&(1<<(id&63)) != 0 {
				t.Errorf("%s: the mask allows %q, a duplicate item", c.prefix, d)
			}
		}
	}
}

func tokenID(v *Vocab, s string) int {
	for id, t := range v.Tokens {
		if bytes.Equal(t, []byte(s)) && !(id < len(v.Special) && v.Special[id]) {
			return id
		}
	}
	return -1
}

// TestUniqueStringsSampling: a model that prefers to repeat itself (tokens
// of a few short strings drawn first when allowed) under the masks never
// dead-ends, and every output validates.
func TestUniqueStringsSampling(t *testing.T) {
	ti := NewTokenizerInfo(testVocab(t))
	bits := make([]uint64, ti.MaskWords())
	rng := rand.New(rand.NewPCG(21, 2))
	var pref []int
	for _, s := range []string{`"`, `a`, `b`, `"a"`, `",`, `"]`, `","`, `,`, `]`, `ab`, `{}`, `{`, `}`, `},`, `}]`, `"a":`, `1`, `[]`, `["a"]`} {
		if id := tokenID(ti.v, s); id >= 0 {
			pref = append(pref, id)
		}
	}
	for _, c := range uniqueStrCases {
		g, err := Compile([]byte(c.schema), Options{MaxStringBytes: 6, MaxContainerItems: 6})
		if err != nil {
			t.Fatal(err)
		}
		val := newValidator(t, []byte(c.schema))
		for d := 0; d < 40; d++ {
			tm := g.NewTokenMatcher(ti)
			var out []byte
			for step := 0; step < 400 && !tm.IsTerminated(); step++ {
				tm.FillMask(bits)
				id := -1
				if rng.IntN(10) < 8 {
					rng.Shuffle(len(pref), func(i, j int) { pref[i], pref[j] = pref[j], pref[i] })
					for _, p := range pref {
						if bits[p>>6]&(1<<(p&63)) != 0 {
							id = p
							break
						}
					}
				}
				if id < 0 {
					id = pickUniform(bits, rng)
				}
				if id < 0 {
					t.Fatalf("%s: dead end (no token allowed) after %q", c.schema, out)
				}
				if !tm.Accept(id) {
					t.Fatalf("%s: allowed token %q rejected after %q", c.schema, ti.v.Tokens[id], out)
				}
				if !tm.IsTerminated() {
					out = append(out, ti.v.Tokens[id]...)
				}
			}
			switch {
			case !tm.IsTerminated():
				t.Errorf("%s: no EOS within 400 tokens: %.200q", c.schema, out)
			case !val.valid(out):
				t.Errorf("%s: sampled output does not validate: %s", c.schema, out)
			}
		}
	}
}

func TestUniqueStringsRefused(t *testing.T) {
	for _, s := range []string{
		`{"items":{"type":"string","maxLength":3},"uniqueItems":true}`,
		`{"items":{"type":"string","pattern":"^(a|b+)$"},"uniqueItems":true}`,
		`{"items":{"type":"string","format":"date"},"uniqueItems":true}`,
		`{"items":{"type":["string","integer"]},"uniqueItems":true}`,
		`{"items":{"type":"object","additionalProperties":false,"properties":{"a":{"type":"string"}}},"uniqueItems":true}`,
		`{"items":{"type":"object","maxProperties":3},"uniqueItems":true}`,
		`{"items":{"type":"array","maxItems":3},"uniqueItems":true}`,
		`{"uniqueItems":true}`,
	} {
		_, err := Compile([]byte(s), Options{})
		ce, ok := err.(*CompileError)
		if !ok || ce.Keyword != "uniqueItems" {
			t.Errorf("%s: want a uniqueItems CompileError, got %v", s, err)
		}
	}
}
