package tinymodel

import (
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ollama/ollama/fs/ggml"
)

func fixture(t *testing.T) *Tokenizer {
	t.Helper()
	tok, err := ReadTokenizerFile("testdata/tokenizer.json", "qwen2")
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func TestReadTokenizerJSON(t *testing.T) {
	tok := fixture(t)
	if len(tok.Tokens) != 12 {
		t.Fatalf("tokens = %d, want 12", len(tok.Tokens))
	}
	if tok.Tokens[4] != "ab" || tok.Types[4] != TokenNormal {
		t.Errorf("token 4 = %q type %d", tok.Tokens[4], tok.Types[4])
	}
	if tok.Types[10] != TokenControl || tok.Types[11] != TokenUserDefined {
		t.Errorf("types of added tokens = %d, %d; want control, user-defined", tok.Types[10], tok.Types[11])
	}
	if want := []string{"a b", "ab c", "Ġ a"}; !slices.Equal(tok.Merges, want) {
		t.Errorf("merges = %q, want %q", tok.Merges, want)
	}
	if tok.BOS != 8 || tok.EOS != 10 {
		t.Errorf("bos/eos = %d/%d, want 8/10", tok.BOS, tok.EOS)
	}

	// Merges as "a b" strings are read the same way.
	s := `{"added_tokens":[{"id":2,"content":"<|im_end|>","special":true},{"id":3,"content":"<|endoftext|>","special":true}],
		"model":{"type":"BPE","vocab":{"a":0,"b":1},"merges":["a b"]}}`
	tok2, err := ReadTokenizerJSON(strings.NewReader(s), "qwen2")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(tok2.Merges, []string{"a b"}) || tok2.EOS != 2 || tok2.BOS != 3 {
		t.Errorf("string merges: %+v", tok2)
	}

	// A hole in the ids is an error, not a silently shifted vocabulary.
	s = `{"added_tokens":[{"id":5,"content":"<|im_end|>","special":true}],"model":{"type":"BPE","vocab":{"a":0},"merges":[]}}`
	if _, err := ReadTokenizerJSON(strings.NewReader(s), "qwen2"); err == nil || !strings.Contains(err.Error(), "dense") {
		t.Errorf("sparse ids: err = %v, want a 'not dense' error", err)
	}
}

func TestWriteDecodes(t *testing.T) {
	tok := fixture(t)
	c := DefaultConfig()
	path := filepath.Join(t.TempDir(), "m.gguf")
	if err := Write(path, c, tok); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	g, err := ggml.Decode(f, -1)
	if err != nil {
		t.Fatal(err)
	}
	kv := g.KV()
	if kv.Architecture() != "llama" {
		t.Errorf("architecture = %q", kv.Architecture())
	}
	for key, want := range map[string]uint32{
		"block_count": 2, "embedding_length": 64, "attention.head_count": 4,
		"attention.head_count_kv": 2, "feed_forward_length": 128, "context_length": 4096,
		"rope.dimension_count": 16, "vocab_size": 12,
	} {
		if got := kv.Uint(key); got != want {
			t.Errorf("%s = %d, want %d", key, got, want)
		}
	}
	if got := kv.String("tokenizer.ggml.pre"); got != "qwen2" {
		t.Errorf("pre = %q", got)
	}
	if got := kv.Strings("tokenizer.ggml.tokens"); !slices.Equal(got, tok.Tokens) {
		t.Errorf("tokens = %q", got)
	}
	if got := kv.Strings("tokenizer.ggml.merges"); !slices.Equal(got, tok.Merges) {
		t.Errorf("merges = %q", got)
	}

	shapes := map[string][]uint64{}
	for _, ts := range g.Tensors().Items() {
		shapes[ts.Name] = ts.Shape
		if ts.Kind != uint32(ggml.TensorTypeF32) {
			t.Errorf("%s kind %d", ts.Name, ts.Kind)
		}
	}
	want := map[string][]uint64{
		"token_embd.weight":        {64, 12},
		"blk.0.attn_q.weight":      {64, 64},
		"blk.1.attn_k.weight":      {64, 32},
		"blk.1.attn_v.weight":      {64, 32},
		"blk.0.attn_output.weight": {64, 64},
		"blk.1.ffn_gate.weight":    {64, 128},
		"blk.1.ffn_down.weight":    {128, 64},
		"blk.0.ffn_norm.weight":    {64},
		"output_norm.weight":       {64},
	}
	for name, s := range want {
		if !slices.Equal(shapes[name], s) {
			t.Errorf("%s shape = %v, want %v", name, shapes[name], s)
		}
	}
	if n := len(shapes); n != 1+2*9+1 {
		t.Errorf("%d tensors, want 20 (tied embeddings)", n)
	}
	if _, ok := shapes["output.weight"]; ok {
		t.Error("output.weight present with TieEmbeddings")
	}

	// Untied: an output projection of its own.
	c.TieEmbeddings = false
	if err := Write(path, c, tok); err != nil {
		t.Fatal(err)
	}
	uf, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer uf.Close()
	ug, err := ggml.Decode(uf, -1)
	if err != nil {
		t.Fatal(err)
	}
	ushapes := map[string][]uint64{}
	for _, ts := range ug.Tensors().Items() {
		ushapes[ts.Name] = ts.Shape
	}
	if len(ushapes) != 1+2*9+2 || !slices.Equal(ushapes["output.weight"], []uint64{64, 12}) {
		t.Errorf("untied: %d tensors, output.weight %v; want 21, [64 12]", len(ushapes), ushapes["output.weight"])
	}
}

func TestWriteDeterministic(t *testing.T) {
	tok := fixture(t)
	dir := t.TempDir()
	read := func(name string, seed uint64) []byte {
		c := DefaultConfig()
		c.Seed = seed
		p := filepath.Join(dir, name)
		if err := Write(p, c, tok); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	a, b, other := read("a.gguf", 7), read("b.gguf", 7), read("c.gguf", 8)
	if !bytes.Equal(a, b) {
		t.Error("same config and seed gave different files")
	}
	if bytes.Equal(a, other) {
		t.Error("different seeds gave the same file")
	}
}

func TestConfigValidate(t *testing.T) {
	c := DefaultConfig()
	c.Heads = 3
	if err := Write(filepath.Join(t.TempDir(), "x.gguf"), c, fixture(t)); err == nil {
		t.Error("Dim 64 with 3 heads accepted")
	}
}

func TestModelfile(t *testing.T) {
	mf := Modelfile("/m/x.gguf")
	for _, s := range []string{"FROM /m/x.gguf\n", "<|im_start|>{{ .Role }}", "PARAMETER stop <|im_end|>"} {
		if !strings.Contains(mf, s) {
			t.Errorf("Modelfile lacks %q:\n%s", s, mf)
		}
	}
}

// A Q8_0 file: the weight matrices Q8_0, the norms F32, file type Q8_0 (what
// Ollama's create reads), and every weight within half a step of the F32
// file's value.
func TestWriteQ8(t *testing.T) {
	tok := fixture(t)
	c := DefaultConfig()
	dir := t.TempDir()
	f32Path, q8Path := filepath.Join(dir, "f32.gguf"), filepath.Join(dir, "q8.gguf")
	if err := Write(f32Path, c, tok); err != nil {
		t.Fatal(err)
	}
	c.Q8 = true
	if err := Write(q8Path, c, tok); err != nil {
		t.Fatal(err)
	}
	tensor := func(path, name string) (*ggml.Tensor, []byte, string) {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		g, err := ggml.Decode(f, -1)
		if err != nil {
			t.Fatal(err)
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, ts := range g.Tensors().Items() {
			if ts.Name == name {
				off := g.Tensors().Offset + ts.Offset
				return ts, raw[off : off+ts.Size()], g.KV().FileType().String()
			}
		}
		t.Fatalf("%s: no tensor %s", path, name)
		return nil, nil, ""
	}
	ft, f32, _ := tensor(f32Path, "blk.1.ffn_down.weight")
	qt, q8, fileType := tensor(q8Path, "blk.1.ffn_down.weight")
	if fileType != "Q8_0" || qt.Kind != uint32(ggml.TensorTypeQ8_0) {
		t.Fatalf("file type %s, tensor kind %d; want Q8_0", fileType, qt.Kind)
	}
	if nt, _, _ := tensor(q8Path, "blk.1.ffn_norm.weight"); nt.Kind != uint32(ggml.TensorTypeF32) {
		t.Errorf("norm kind %d, want F32", nt.Kind)
	}
	n := int(ft.Elements())
	if len(q8) != n/32*34 {
		t.Fatalf("Q8_0 bytes %d, want %d", len(q8), n/32*34)
	}
	for b := range n / 32 {
		blk := q8[34*b:]
		d := float16Value(binary.LittleEndian.Uint16(blk))
		for i := range 32 {
			want := math.Float32frombits(binary.LittleEndian.Uint32(f32[4*(32*b+i):]))
			got := d * float32(int8(blk[2+i]))
			if diff := math.Abs(float64(got - want)); diff > float64(d)*0.5+1e-6 {
				t.Fatalf("block %d value %d: %g, want %g (step %g)", b, i, got, want, d)
			}
		}
	}
}

func TestFloat16Bits(t *testing.T) {
	for _, c := range []struct {
		f    float32
		want uint16
	}{
		{0, 0}, {1, 0x3c00}, {0.5, 0x3800}, {-2, 0xc000}, {65504, 0x7bff}, {1e6, 0x7c00},
		{6.103515625e-05, 0x0400}, {5.960464477539063e-08, 0x0001}, {1e-9, 0},
		{1.0009765625, 0x3c01}, {1.00048828125, 0x3c00}, // halfway: to even
		{1.00146484375, 0x3c02}, // halfway: to even (up)
	} {
		if got := float16Bits(c.f); got != c.want {
			t.Errorf("float16Bits(%g) = %#04x, want %#04x", c.f, got, c.want)
		}
	}
}

// float16Value decodes binary16 (the test's reference decoder).
func float16Value(h uint16) float32 {
	exp, mant := int(h>>10&0x1f), float64(h&0x3ff)
	v := math.Ldexp(1+mant/1024, exp-15)
	if exp == 0 {
		v = math.Ldexp(mant/1024, -14)
	}
	if h&0x8000 != 0 {
		v = -v
	}
	return float32(v)
}
