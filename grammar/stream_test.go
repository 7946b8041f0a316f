package grammar

import (
	"math/rand/v2"
	"testing"
)

// randomDoc walks the compact grammar byte by byte, choosing uniformly among
// the allowed bytes of a small alphabet, until it can stop; "" if it got
// stuck or too long.
func randomDoc(g *Grammar, rng *rand.Rand, alphabet []byte) string {
	m := g.NewMatcher()
	var out []byte
	for len(out) < 400 {
		if m.IsAccepting() && rng.IntN(3) == 0 {
			return string(out)
		}
		var ok []byte
		for _, b := range alphabet {
			if m.Advance(b) {
				ok = append(ok, b)
				m.Rollback(1)
			}
		}
		if len(ok) == 0 {
			if m.IsAccepting() {
				return string(out)
			}
			return ""
		}
		b := ok[rng.IntN(len(ok))]
		m.Advance(b)
		out = append(out, b)
	}
	return ""
}

// sprinkle inserts runs of whitespace at random places, inside strings,
// numbers and literals too.
func sprinkle(doc string, rng *rand.Rand) string {
	var out []byte
	for i := 0; i <= len(doc); i++ {
		structural := i > 0 && i < len(doc) && (isStructural(doc[i-1]) || isStructural(doc[i]))
		if structural && rng.IntN(3) == 0 || rng.IntN(40) == 0 {
			n := 1 + rng.IntN(6)
			if rng.IntN(8) == 0 {
				n = 30 + rng.IntN(6) // around the bound of 32
			}
			for k := 0; k < n; k++ {
				out = append(out, " \t\n\r"[rng.IntN(4)])
			}
		}
		if i < len(doc) {
			out = append(out, doc[i])
		}
	}
	return string(out)
}

func isStructural(b byte) bool {
	switch b {
	case '{', '}', '[', ']', ':', ',':
		return true
	}
	return false
}

func checkAll(g *Grammar, max int, s string) (accepted, complete bool) {
	c := g.NewWhitespaceChecker(max)
	if _, err := c.Write([]byte(s)); err != nil {
		return false, false
	}
	return true, c.Complete()
}

// TestWhitespaceCheckerMatchesFlexible: a compact grammar behind a
// WhitespaceChecker accepts exactly what the same schema compiled with
// WhitespaceFlexible accepts, on random documents with whitespace inserted
// everywhere (between tokens, inside strings, numbers and literals), and
// at the same first offending byte.
func TestWhitespaceCheckerMatchesFlexible(t *testing.T) {
	schemas := []string{
		`{"type":"object","properties":{"city":{"type":"string","maxLength":6},"days":{"type":"integer","minimum":-20,"maximum":700},"t":{"type":"number"},"ok":{"type":"boolean"},"n":{"type":"null"}},"required":["city"],"additionalProperties":false}`,
		`{"type":"array","items":{"anyOf":[{"type":"integer"},{"enum":["a b","c",true,null]},{"type":"array","items":{"type":"number"},"maxItems":3}]},"maxItems":4}`,
		`{"type":"object","properties":{"q":{"type":"string","pattern":"^[a-z ]{1,5}$"},"xs":{"type":"array","items":{"type":"boolean"},"maxItems":3}},"additionalProperties":{"type":"integer"},"maxProperties":3}`,
	}
	const max = 32
	var alphabet []byte
	for b := byte(' '); b < 0x7F; b++ {
		alphabet = append(alphabet, b)
	}
	rng := rand.New(rand.NewPCG(3, 5))
	for _, sch := range schemas {
		compact, err := Compile([]byte(sch), Options{MaxStringBytes: 6})
		if err != nil {
			t.Fatal(err)
		}
		flex, err := Compile([]byte(sch), Options{MaxStringBytes: 6, Whitespace: WhitespaceFlexible, MaxWhitespace: max})
		if err != nil {
			t.Fatal(err)
		}
		docs, agreeAccept, agreeReject := 0, 0, 0
		for i := 0; i < 400; i++ {
			doc := randomDoc(compact, rng, alphabet)
			if doc == "" {
				continue
			}
			docs++
			for k := 0; k < 5; k++ {
				s := sprinkle(doc, rng)
				fm := flex.NewMatcher()
				n, fok := fm.AdvanceBytes([]byte(s))
				fComplete := fok && fm.IsAccepting()
				c := compact.NewWhitespaceChecker(max)
				cn, cerr := c.Write([]byte(s))
				if (cerr == nil) != fok || (fok && c.Complete() != fComplete) {
					t.Fatalf("%s\n%q: flexible prefix ok %v complete %v; checker ok %v complete %v", sch, s, fok, fComplete, cerr == nil, c.Complete())
				}
				if !fok && cn != n {
					t.Fatalf("%q: flexible stops at %d, checker at %d", s, n, cn)
				}
				if fComplete {
					agreeAccept++
				} else {
					agreeReject++
				}
			}
		}
		t.Logf("%d docs: %d sprinkled accepted by both, %d rejected by both", docs, agreeAccept, agreeReject)
		if docs < 100 || agreeAccept < 50 || agreeReject < 50 {
			t.Errorf("%s: too few cases: %d docs, %d accepted, %d rejected", sch, docs, agreeAccept, agreeReject)
		}
	}
}

func TestWhitespaceCheckerCases(t *testing.T) {
	g, err := Compile([]byte(`{"type":"object","properties":{"a":{"type":"array","items":{"type":"integer"}},"s":{"type":"string"}}}`), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		in              string
		accepted, compl bool
	}{
		{`{"a":[1,2]}`, true, true},
		{"{\n\t\"a\" : [ 1 , 2 ] }", true, true},
		{`{"a":[1 2]}`, false, false}, // would merge into 12
		{`{"a":[12]}`, true, true},
		{`{"s":"x  y"}`, true, true}, // inside a string it is content
		{`{"a":[1] `, true, false},
		{` {"a":[1]}`, false, false},           // not before the value
		{`{"a":[1]} `, false, false},           // nor after it
		{`{"a":[1 `, true, false},              // a comma or ] may follow
		{"{" + spaces(33) + "}", false, false}, // a run over the bound
		{"{" + spaces(32) + "}", true, true},
	} {
		a, cpl := checkAll(g, 32, c.in)
		if a != c.accepted || cpl != c.compl {
			t.Errorf("%q: accepted %v complete %v, want %v %v", c.in, a, cpl, c.accepted, c.compl)
		}
	}
}

func spaces(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = ' '
	}
	return string(b)
}
