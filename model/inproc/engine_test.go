package inproc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"hash/fnv"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airs-dev/airs/grammar"
	"github.com/airs-dev/airs/internal/tinymodel"
)

// fakeBackend is a random model over a small vocabulary: every byte, some
// JSON pieces, and an EOS. Its logits are a hash of the position and the
// last token; Tokenize is greedy longest match (canonical for this vocab).
type fakeBackend struct {
	v      *grammar.Vocab
	seq    []int
	evals  int
	pieces map[int][]byte // Piece overrides (the mismatch test)
	favor  []byte         // tokens holding one of these bytes get +20 (a model that nests)
	nvocab int            // NumVocab override
}

func newFakeVocab() *grammar.Vocab {
	v := &grammar.Vocab{Name: "fake"}
	for b := 0; b < 256; b++ {
		v.Tokens = append(v.Tokens, []byte{byte(b)})
		v.Special = append(v.Special, false)
	}
	for _, s := range []string{`{"`, `function`, `":"`, `arguments`, `":{`, `"}`, `}}`, `",`, `get_weather`, `city`, `days`, `true`, `null`, `<eos>`} {
		v.Tokens = append(v.Tokens, []byte(s))
		v.Special = append(v.Special, s == "<eos>")
	}
	v.EOS = []int{len(v.Tokens) - 1}
	v.Size = len(v.Tokens)
	return v
}

func (f *fakeBackend) Tokenize(text string, special bool) ([]int, error) {
	var out []int
	for len(text) > 0 {
		best, bl := -1, 0
		for id, t := range f.v.Tokens {
			if f.v.Special[id] {
				continue
			}
			if len(t) > bl && strings.HasPrefix(text, string(t)) {
				best, bl = id, len(t)
			}
		}
		out = append(out, best)
		text = text[bl:]
	}
	return out, nil
}

func (f *fakeBackend) Eval(tokens []int) ([]float32, error) {
	f.evals++
	f.seq = append(f.seq, tokens...)
	l := make([]float32, len(f.v.Tokens))
	for id := range l {
		h := fnv.New64a()
		var b [24]byte
		for i, x := range []int{len(f.seq), f.seq[len(f.seq)-1], id} {
			for k := 0; k < 8; k++ {
				b[i*8+k] = byte(x >> (8 * k))
			}
		}
		h.Write(b[:])
		l[id] = float32(h.Sum64()%10000) / 1000
		if len(f.favor) > 0 && bytes.ContainsAny(f.v.Tokens[id], string(f.favor)) {
			l[id] += 20
		}
	}
	return l, nil
}

func (f *fakeBackend) Reset() { f.seq = f.seq[:0] }
func (f *fakeBackend) NumVocab() int {
	if f.nvocab > 0 {
		return f.nvocab
	}
	return len(f.v.Tokens)
}
func (f *fakeBackend) ContextLen() int { return 4096 }
func (f *fakeBackend) Piece(id int) []byte {
	if p, ok := f.pieces[id]; ok {
		return p
	}
	return f.v.Tokens[id]
}

func fakeEngine(t *testing.T) (*Engine, *fakeBackend) {
	v := newFakeVocab()
	b := &fakeBackend{v: v}
	e, err := New(b, v)
	if err != nil {
		t.Fatal(err)
	}
	return e, b
}

var weatherTools = []grammar.ToolSchema{
	{Name: "get_weather", Parameters: []byte(`{"type":"object","properties":{"city":{"type":"string","maxLength":12},"days":{"type":"integer","minimum":1,"maximum":7}},"required":["city","days"]}`)},
	{Name: "get_time", Parameters: []byte(`{"type":"object","properties":{"zone":{"enum":["UTC","CET"]}},"required":["zone"]}`)},
}

func toolGrammar(t *testing.T) *grammar.Grammar {
	g, err := grammar.ToolCall(weatherTools, grammar.ToolCallOptions{AllowNone: true, Options: grammar.Options{Strict: true}})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// Every output is a complete sentence of the grammar and a JSON object,
// greedy or sampled, with or without fast-forward; fast-forward appends
// tokens in fewer decodes than sampling them one by one.
func TestConstrainedValidAndFastForward(t *testing.T) {
	e, b := fakeEngine(t)
	g := toolGrammar(t)
	var ff, noff, ffEvals, noffEvals, forced int
	for seed := uint64(0); seed < 30; seed++ {
		for _, noFF := range []bool{false, true} {
			s := Sampling{Temperature: 1, TopP: 0.9, TopK: 20, Seed: seed, NoFastForward: noFF}
			if seed%5 == 0 {
				s.Temperature = 0
			}
			b.evals = 0
			var chunks strings.Builder
			r, err := e.Constrained(context.Background(), "prompt", g, s, func(c string) error { chunks.WriteString(c); return nil })
			if err != nil {
				t.Fatalf("seed %d noFF %v: %v", seed, noFF, err)
			}
			if chunks.String() != r.Text || !g.Match([]byte(r.Text)) {
				t.Fatalf("seed %d: output %q (chunks %q) is not a sentence of the grammar", seed, r.Text, chunks.String())
			}
			var call struct {
				Function  string          `json:"function"`
				Arguments json.RawMessage `json:"arguments"`
			}
			if err := json.Unmarshal([]byte(r.Text), &call); err != nil || call.Function == "" {
				t.Fatalf("seed %d: %q: %v", seed, r.Text, err)
			}
			if r.Evals != b.evals {
				t.Fatalf("Evals %d, backend saw %d", r.Evals, b.evals)
			}
			if noFF {
				noff += r.Sampled
				noffEvals += r.Evals
				if r.Forced != 0 {
					t.Fatalf("NoFastForward forced %d tokens", r.Forced)
				}
			} else {
				ff += r.Sampled
				ffEvals += r.Evals
				forced += r.Forced
			}
		}
	}
	if forced == 0 || ff >= noff || ffEvals >= noffEvals {
		t.Fatalf("fast-forward: %d sampled + %d forced in %d decodes, without it %d sampled in %d decodes", ff, forced, ffEvals, noff, noffEvals)
	}
	t.Logf("fast-forward: %d sampled + %d forced in %d decodes; without: %d sampled in %d decodes", ff, forced, ffEvals, noff, noffEvals)
}

// A token outside the mask never reaches the output: with the mask
// dropped (every token allowed) the matcher's assertion stops it.
func TestMaskIsEnforced(t *testing.T) {
	e, _ := fakeEngine(t)
	g := toolGrammar(t)
	mask := make([]uint64, e.ti.MaskWords())
	tm := g.NewTokenMatcher(e.ti)
	tm.FillMask(mask)
	n := 0
	forEach(mask, len(e.vocab.Tokens), func(id int) {
		n++
		if e.vocab.Tokens[id][0] != '{' {
			t.Errorf("token %q allowed at the start", e.vocab.Tokens[id])
		}
	})
	if n == 0 {
		t.Fatal("nothing allowed at the start")
	}
}

func TestRunaway(t *testing.T) {
	e, _ := fakeEngine(t)
	_, err := e.Constrained(context.Background(), "p", toolGrammar(t), Sampling{MaxTokens: 3, NoFastForward: true}, nil)
	if !errors.Is(err, ErrRunaway) {
		t.Fatalf("err %v, want ErrRunaway", err)
	}
}

// A model that keeps opening containers under an open value never
// finishes within its budget; past half the budget closing pressure stops
// it opening more, and the output is still a complete, valid value.
func TestClosingPressure(t *testing.T) {
	e, b := fakeEngine(t)
	b.favor = []byte("[{")
	g, err := grammar.Compile([]byte(`{"type":"array","items":true}`), grammar.Options{MaxContainerItems: 4, MaxStringBytes: 8})
	if err != nil {
		t.Fatal(err)
	}
	s := Sampling{Temperature: 1, Seed: 3, MaxTokens: 400}
	s.NoPressure = true
	if _, err := e.Constrained(context.Background(), "p", g, s, nil); !errors.Is(err, ErrRunaway) {
		t.Fatalf("without pressure: err %v, want ErrRunaway (the test's model does not nest enough)", err)
	}
	s.NoPressure = false
	r, err := e.Constrained(context.Background(), "p", g, s, nil)
	if err != nil {
		t.Fatalf("with pressure: %v", err)
	}
	if !g.Match([]byte(r.Text)) || r.Pressed == 0 || r.Sampled+r.Forced > s.MaxTokens {
		t.Fatalf("with pressure: %d sampled + %d forced, %d pressed, output %q", r.Sampled, r.Forced, r.Pressed, r.Text)
	}
	t.Logf("with pressure: %d sampled + %d forced (%d under pressure), %d bytes", r.Sampled, r.Forced, r.Pressed, len(r.Text))
}

// A recursive list of objects, with a model that favours commas and
// openers: not opening is not enough (each comma takes an item, which
// must open), so late in the budget only closing tokens are left where
// there are any.
func TestClosingPressureLate(t *testing.T) {
	e, b := fakeEngine(t)
	b.favor = []byte(",[{\"k")
	g, err := grammar.Compile([]byte(`{"$ref":"#/definitions/h","definitions":{"h":{"type":"array","minItems":1,
		"items":{"type":"object","properties":{"k":{"$ref":"#/definitions/h"}},"additionalProperties":false}}}}`),
		grammar.Options{MaxContainerItems: 4, MaxStringBytes: 8})
	if err != nil {
		t.Fatal(err)
	}
	for seed := uint64(1); seed <= 5; seed++ {
		s := Sampling{Temperature: 1, Seed: seed, MaxTokens: 300}
		r, err := e.Constrained(context.Background(), "p", g, s, nil)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if !g.Match([]byte(r.Text)) {
			t.Fatalf("seed %d: not a sentence: %q", seed, r.Text)
		}
	}
}

func TestVocabMismatch(t *testing.T) {
	v := newFakeVocab()
	if _, err := New(&fakeBackend{v: v, nvocab: len(v.Tokens) + 5}, v); err == nil || !strings.Contains(err.Error(), "does not match its tokenizer") {
		t.Fatalf("size mismatch: %v", err)
	}
	if _, err := New(&fakeBackend{v: v, pieces: map[int][]byte{'a': []byte("b")}}, v); err == nil || !strings.Contains(err.Error(), "does not match its tokenizer") {
		t.Fatalf("piece mismatch: %v", err)
	}
}

func TestSampleTopK(t *testing.T) {
	e, _ := fakeEngine(t)
	logits := make([]float32, len(e.vocab.Tokens))
	logits['x'], logits['y'] = 10, 9
	all := make([]uint64, e.ti.MaskWords())
	for i := range all {
		all[i] = ^uint64(0)
	}
	if id := e.sample(logits, all, Sampling{}, nil); id != 'x' {
		t.Fatalf("greedy %d", id)
	}
	only := make([]uint64, len(all))
	only['z'>>6] |= 1 << ('z' & 63)
	if id := e.sample(logits, only, Sampling{}, nil); id != 'z' {
		t.Fatalf("greedy under a mask: %d", id)
	}
	seen := map[int]bool{}
	for seed := uint64(0); seed < 200; seed++ {
		seen[e.sample(logits, all, Sampling{Temperature: 1, TopK: 2, Seed: seed}, newRand(seed))] = true
	}
	if len(seen) != 2 || !seen['x'] || !seen['y'] {
		t.Fatalf("top-2 sampled %v", seen)
	}
}

func TestPreflight(t *testing.T) {
	dir := t.TempDir()
	txt := filepath.Join(dir, "model.txt")
	os.WriteFile(txt, []byte("not a model at all"), 0o644)
	if _, err := Preflight(txt, Options{}); err == nil || !strings.Contains(err.Error(), "not a GGUF model file") {
		t.Fatalf("text file: %v", err)
	}
	if _, _, err := Open(txt, Options{}); err == nil || !strings.Contains(err.Error(), "not a GGUF model file") {
		t.Fatalf("Open text file: %v", err)
	}
	tok, err := tinymodel.ReadTokenizerFile("../../internal/tinymodel/testdata/tokenizer.json", "qwen2")
	if err != nil {
		t.Fatal(err)
	}
	gguf := filepath.Join(dir, "tiny.gguf")
	if err := tinymodel.Write(gguf, tinymodel.DefaultConfig(), tok); err != nil {
		t.Fatal(err)
	}
	if _, err := Preflight(gguf, Options{MemAvailable: 1 << 20}); err == nil || !strings.Contains(err.Error(), "too large for this machine's memory") {
		t.Fatalf("1 MiB available: %v", err)
	}
	v, err := Preflight(gguf, Options{})
	if err != nil || len(v.Tokens) != len(tok.Tokens) {
		t.Fatalf("tiny model: %v", err)
	}
	if !Built {
		if _, _, err := Open(gguf, Options{}); !errors.Is(err, ErrNotBuilt) || !strings.Contains(err.Error(), "-tags inproc") {
			t.Fatalf("Open without the tag: %v", err)
		}
	}
}
