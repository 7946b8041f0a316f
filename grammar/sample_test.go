package grammar

import (
	"math/rand/v2"
	"path/filepath"
	"sync"
	"testing"
)

var (
	qwenOnce  sync.Once
	qwenVocab *Vocab
	qwenErr   error
)

// testVocab is the committed qwen3 vocabulary (Apache-2.0).
func testVocab(t testing.TB) *Vocab {
	qwenOnce.Do(func() { qwenVocab, qwenErr = LoadVocab(filepath.Join("testdata", "qwen3.vocab.jsonl.gz")) })
	if qwenErr != nil {
		t.Fatal(qwenErr)
	}
	return qwenVocab
}

func TestVocabJSONL(t *testing.T) {
	v := testVocab(t)
	if len(v.Tokens) != 151669 || v.Size != len(v.Tokens) {
		t.Errorf("qwen3: %d tokens, size %d", len(v.Tokens), v.Size)
	}
	if string(v.Tokens[1]) != `"` || !v.Special[151643] {
		t.Errorf("token 1 %q, 151643 special %v", v.Tokens[1], v.Special[151643])
	}
	if !containsInt(v.EOS, 151643) || !containsInt(v.EOS, 151645) {
		t.Errorf("EOS %v", v.EOS)
	}
	if NewTokenizerInfo(v) != NewTokenizerInfo(v) {
		t.Error("TokenizerInfo not cached")
	}
}

// sampleOutput draws uniformly among allowed tokens until EOS; it returns
// the text and whether EOS was reached within budget.
func sampleOutput(t *testing.T, g *Grammar, ti *TokenizerInfo, rng *rand.Rand, budget int) ([]byte, bool) {
	tm := g.NewTokenMatcher(ti)
	bits := make([]uint64, ti.MaskWords())
	var out []byte
	var allowed []int
	for step := 0; step < budget; step++ {
		tm.FillMask(bits)
		allowed = allowed[:0]
		for w, x := range bits {
			for x != 0 {
				allowed = append(allowed, w*64+trailingZeros(x))
				x &= x - 1
			}
		}
		if len(allowed) == 0 {
			t.Fatalf("dead end after %q", out)
		}
		id := allowed[rng.IntN(len(allowed))]
		// prefer ending or structure now and then so outputs stay short
		if step > budget/2 && tm.IsAccepting() {
			id = ti.v.EOS[0]
		}
		if !tm.Accept(id) {
			t.Fatalf("allowed token %d %q rejected after %q", id, ti.v.Tokens[id], out)
		}
		if tm.IsTerminated() {
			return out, true
		}
		out = append(out, ti.v.Tokens[id]...)
	}
	return out, false
}

// TestSamplingCompliance: random allowed tokens never leave the grammar,
// and every completed output validates.
func TestSamplingCompliance(t *testing.T) {
	v := testVocab(t)
	ti := NewTokenizerInfo(v)
	rng := rand.New(rand.NewPCG(1, 2))
	schemas := []string{
		`{"type":"object","properties":{"name":{"type":"string","maxLength":12},"age":{"type":"integer","minimum":0,"maximum":150},"tags":{"type":"array","items":{"enum":["a","b","c"]},"maxItems":3}},"required":["name","age"],"additionalProperties":false}`,
		`{"type":"object","properties":{"when":{"type":"string","format":"date-time"},"id":{"type":"string","format":"uuid"},"kind":{"enum":["x","y"]}},"required":["when","id","kind"],"additionalProperties":false}`,
		`{"type":"array","prefixItems":[{"type":"boolean"},{"type":"number","minimum":-1,"maximum":1}],"items":false,"minItems":2}`,
		`{"anyOf":[{"type":"null"},{"type":"string","pattern":"^[a-z]{2,4}$"}]}`,
		`{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"string","maxLength":5}},"minProperties":1,"maxProperties":2,"additionalProperties":false}`,
	}
	for _, s := range schemas {
		g, err := Compile([]byte(s), Options{})
		if err != nil {
			t.Fatal(err)
		}
		val := newValidator(t, []byte(s))
		for i := 0; i < 5; i++ {
			out, done := sampleOutput(t, g, ti, rng, 300)
			if !done {
				t.Errorf("%s: no EOS within budget: %q", s, out)
				continue
			}
			if !val.valid(out) {
				t.Errorf("%s: sampled output does not validate: %s", s, out)
			}
		}
	}
}

// TestMaskMatchesAccept: for every allowed token Accept agrees, and a
// sample of disallowed ones are rejected.
func TestMaskMatchesAccept(t *testing.T) {
	v := testVocab(t)
	ti := NewTokenizerInfo(v)
	g, err := Compile([]byte(`{"type":"object","properties":{"q":{"type":"string","minLength":2},"n":{"type":"array","items":{"type":"integer"}}},"required":["q"]}`), Options{})
	if err != nil {
		t.Fatal(err)
	}
	text := []byte(`{"q":"hello world","n":[1,22,-3],"x":{"y":null}}`)
	tok := newGreedyTokenizer(v)
	ids := tok.tokenize(text)
	tm := g.NewTokenMatcher(ti)
	bits := make([]uint64, ti.MaskWords())
	for _, id := range ids {
		tm.FillMask(bits)
		for probe := 0; probe < len(v.Tokens); probe += 97 {
			allowed := bits[probe/64]&(1<<(probe%64)) != 0
			ok := tm.Accept(probe)
			if ok {
				tm.Rollback(1)
			}
			if allowed != ok {
				t.Fatalf("after %d steps: token %d %q mask %v accept %v", tm.Steps(), probe, v.Tokens[probe], allowed, ok)
			}
		}
		if bits[id/64]&(1<<(id%64)) == 0 || !tm.Accept(id) {
			t.Fatalf("token %q of a valid instance rejected", v.Tokens[id])
		}
	}
	tm.FillMask(bits)
	e := v.EOS[0]
	if bits[e/64]&(1<<(e%64)) == 0 || !tm.Accept(e) || !tm.IsTerminated() {
		t.Fatal("EOS not allowed at the end")
	}
	tm.FillMask(bits)
	for _, w := range bits {
		if w != 0 {
			t.Fatal("tokens allowed after EOS")
		}
	}
	tm.Rollback(2)
	if tm.IsTerminated() || tm.IsAccepting() {
		t.Fatal("rollback over EOS")
	}
	// special tokens are never allowed; EOS not before the end
	tm.Reset()
	tm.FillMask(bits)
	if bits[151644/64]&(1<<(151644%64)) != 0 || bits[e/64]&(1<<(e%64)) != 0 {
		t.Fatal("special token or EOS allowed at start")
	}
	if f := string(tm.Forced()); f != `{"` {
		t.Errorf("forced %q", f)
	}
}

func TestDuplicateTokenBytes(t *testing.T) {
	v := &Vocab{Name: "dup", Tokens: [][]byte{[]byte(`"`), []byte(`a`), []byte(`a`), []byte(`</s>`)}, Special: []bool{false, false, false, true}, EOS: []int{3}, Size: 8}
	g, _ := Compile([]byte(`{"type":"string"}`), Options{})
	tm := g.NewTokenMatcher(NewTokenizerInfo(v))
	tm.Accept(0)
	bits := make([]uint64, 1)
	tm.FillMask(bits)
	if bits[0] != 0b0111 {
		t.Errorf("mask %b, want both ids of \"a\" and the quote", bits[0])
	}
}
