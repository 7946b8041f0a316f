package grammar

import (
	"math/rand/v2"
	"testing"

	"github.com/dlclark/regexp2"
)

// TestLookaheadDifferential: patterns with lookahead against regexp2 (the
// ECMA-262 engine the validator uses for pattern) on generated strings.
func TestLookaheadDifferential(t *testing.T) {
	cases := []struct {
		pattern string
		frags   []string // strings are 0-5 of these, concatenated
	}{
		{`^(?!org\.b)[a-z.]+$`, []string{"org", ".", "b", "x", "o"}},
		{`^(?=[^=]+$)(?!\s+$)(.|\n)+$`, []string{"a", "=", " ", "\n"}},
		{`^(?!pattern$).*$`, []string{"pattern", "p", "x", "\n"}},
		{`^(?!^lucene\.|builtin\.|mongodb\.).*`, []string{"lucene", ".", "builtin", "x", "\n"}},
		{`((?:[^/]*/)*)(?=\.(yaml|yml|json))`, []string{"/", ".", "yaml", "json", "a", "yml"}},
		{`^(https?://|/?.?-?(?!\w+://)\w).+\.ya?ml$`, []string{"http", "s", "://", "/", "-", "a", ".yaml", ".yml", "b"}},
		{`^@([\da-z](?:(?!.*--)[\da-z-]*[\da-z])?)/([\da-z](?:(?!.*--)[\da-z-]*[\da-z])?)$`, []string{"@", "a", "-", "--", "/", "1"}},
		{`a(?=b)`, []string{"a", "b", "c"}},
		{`(?!a)b`, []string{"a", "b"}},
		{`^(?=.{2,4}$)(?!.*aa)[ab]*$`, []string{"a", "b", "aa"}},
	}
	rng := rand.New(rand.NewPCG(22, 1))
	for _, c := range cases {
		d, err := regexDFA(c.pattern)
		if err != nil {
			t.Fatalf("%s: %v", c.pattern, err)
		}
		re := regexp2.MustCompile(c.pattern, regexp2.ECMAScript)
		re.MatchTimeout = 1e9
		yes, no := 0, 0
		for i := 0; i < 4000; i++ {
			s := ""
			for j := rng.IntN(6); j > 0; j-- {
				s += c.frags[rng.IntN(len(c.frags))]
			}
			want, err := re.MatchString(s)
			if err != nil {
				t.Fatal(err)
			}
			if got := d.accepts(s); got != want {
				t.Errorf("%s: %q: automaton %v, regexp2 %v", c.pattern, s, got, want)
			}
			if want {
				yes++
			} else {
				no++
			}
		}
		if yes == 0 || no == 0 {
			t.Errorf("%s: drew %d matching and %d other strings: want both", c.pattern, yes, no)
		}
	}
}

func TestLookaheadRefused(t *testing.T) {
	for _, p := range []string{
		`^((?!clyde).)*$`, // inside a repetition
		`(?=a)*`,
		`a(?=^b)`,
		`(?=a(?=b))`,
		`a^(?=b)`,
	} {
		if _, err := regexDFA(p); err == nil {
			t.Errorf("%s: compiled, want a refusal", p)
		}
	}
}
