// Package tinymodel writes a tiny llama-architecture GGUF model with random
// weights and a real tokenizer, for end-to-end tests against a real Ollama
// server.
//
// The model is useless as a language model — its weights are seeded noise —
// but it is a complete, loadable llama model: Ollama creates it from a
// Modelfile (FROM model.gguf), llama.cpp runs it on the CPU in milliseconds,
// and everything around the weights is real: the tokenizer (so prompts and
// grammar-constrained output go through true byte-level BPE), the chat
// template, /api/chat with a JSON-Schema `format` (grammar-constrained
// sampling), streaming, and /api/embed (vectors of Config.Dim dimensions).
//
// The file is written with github.com/ollama/ollama/fs/ggml.WriteGGUF. Keys
// and tensors follow llama.cpp's LLM_ARCH_LLAMA:
//
//	llama.{context_length, embedding_length, block_count, feed_forward_length,
//	       attention.head_count, attention.head_count_kv,
//	       attention.layer_norm_rms_epsilon, rope.dimension_count,
//	       rope.freq_base, vocab_size}
//	token_embd.weight            [dim, vocab]
//	blk.N.attn_norm.weight       [dim]
//	blk.N.attn_q.weight          [dim, heads*headDim]
//	blk.N.attn_k.weight          [dim, kvHeads*headDim]
//	blk.N.attn_v.weight          [dim, kvHeads*headDim]
//	blk.N.attn_output.weight     [heads*headDim, dim]
//	blk.N.ffn_norm.weight        [dim]
//	blk.N.ffn_gate.weight        [dim, ffn]
//	blk.N.ffn_up.weight          [dim, ffn]
//	blk.N.ffn_down.weight        [ffn, dim]
//	output_norm.weight           [dim]
//	output.weight                [dim, vocab]   (omitted when TieEmbeddings)
//
// (shapes in GGML order: the first dimension is the contiguous one). All
// tensors are F32. Weights are drawn from N(0, 0.02²) with a PCG generator
// seeded from Config.Seed and the tensor's name, so a given Config and
// tokenizer always give byte-identical files.
//
// Tied embeddings (TieEmbeddings, the default) make a degenerate model:
// two weak random blocks leave the last position's hidden state close to its
// input token's embedding, so that token's own logit (its embedding's
// squared norm) usually wins and greedy decoding repeats the previous token
// ("lanç lanç lanç ..."). Some tests rely on that (a generation Ollama's
// runaway check ends: a token repeated over 30 times). But inside a string
// a grammar allows, the repetition then runs until the grammar's length
// bound forces the string closed or, for any bound above about 30 tokens,
// until that runaway check cuts the output. With an untied output
// projection (TieEmbeddings false: a random output.weight of its own) the
// next token is a random function of the context instead: the grammar still
// decides every structural choice and bound, and the model finishes what
// the grammar allows, as a real model would. Create puts such a variant on a
// running server, with the tokenizer of the model it serves (TokenizerOf).
package tinymodel

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"

	"github.com/ollama/ollama/fs/ggml"
)

// Config sizes the model. The zero value is not usable; start from
// DefaultConfig.
type Config struct {
	Name          string
	Layers        int     // block_count
	Dim           int     // embedding_length (also the embedding vector size)
	Heads         int     // attention.head_count
	KVHeads       int     // attention.head_count_kv
	FFN           int     // feed_forward_length
	Context       int     // context_length
	RopeBase      float32 // rope.freq_base
	Epsilon       float32 // attention.layer_norm_rms_epsilon
	Seed          uint64
	TieEmbeddings bool // no output.weight: the output projection reuses token_embd (a model that repeats its last token; see above)
	Q8            bool // weight matrices as Q8_0 (about a quarter of F32's bytes and memory traffic), norms F32
}

// DefaultConfig is 2 layers, 64 dimensions, 4 heads (2 KV heads), FFN 128,
// context 4096, seed 1, tied embeddings.
func DefaultConfig() Config {
	return Config{
		Name:          "airs-tiny",
		Layers:        2,
		Dim:           64,
		Heads:         4,
		KVHeads:       2,
		FFN:           128,
		Context:       4096,
		RopeBase:      10000,
		Epsilon:       1e-6,
		Seed:          1,
		TieEmbeddings: true,
	}
}

func (c Config) validate() error {
	switch {
	case c.Layers < 1, c.Dim < 1, c.Heads < 1, c.KVHeads < 1, c.FFN < 1, c.Context < 1:
		return errors.New("tinymodel: Layers, Dim, Heads, KVHeads, FFN and Context must be positive")
	case c.Dim%c.Heads != 0:
		return fmt.Errorf("tinymodel: Dim %d not a multiple of Heads %d", c.Dim, c.Heads)
	case c.Heads%c.KVHeads != 0:
		return fmt.Errorf("tinymodel: Heads %d not a multiple of KVHeads %d", c.Heads, c.KVHeads)
	case (c.Dim/c.Heads)%2 != 0:
		return fmt.Errorf("tinymodel: head dimension %d must be even for RoPE", c.Dim/c.Heads)
	}
	return nil
}

// KV returns the GGUF metadata for the model with tokenizer tok.
func KV(c Config, tok *Tokenizer) ggml.KV {
	headDim := c.Dim / c.Heads
	return ggml.KV{
		"general.architecture":                   "llama",
		"general.name":                           c.Name,
		"general.file_type":                      fileType(c),
		"general.alignment":                      uint32(32),
		"llama.vocab_size":                       uint32(len(tok.Tokens)),
		"llama.context_length":                   uint32(c.Context),
		"llama.embedding_length":                 uint32(c.Dim),
		"llama.block_count":                      uint32(c.Layers),
		"llama.feed_forward_length":              uint32(c.FFN),
		"llama.attention.head_count":             uint32(c.Heads),
		"llama.attention.head_count_kv":          uint32(c.KVHeads),
		"llama.attention.key_length":             uint32(headDim),
		"llama.attention.value_length":           uint32(headDim),
		"llama.attention.layer_norm_rms_epsilon": c.Epsilon,
		"llama.rope.dimension_count":             uint32(headDim),
		"llama.rope.freq_base":                   c.RopeBase,
		"tokenizer.ggml.model":                   "gpt2",
		"tokenizer.ggml.pre":                     tok.Pre,
		"tokenizer.ggml.tokens":                  tok.Tokens,
		"tokenizer.ggml.token_type":              tok.Types,
		"tokenizer.ggml.merges":                  tok.Merges,
		"tokenizer.ggml.bos_token_id":            tok.BOS,
		"tokenizer.ggml.eos_token_id":            tok.EOS,
		"tokenizer.ggml.padding_token_id":        tok.BOS,
		"tokenizer.ggml.add_bos_token":           false,
		"tokenizer.ggml.add_eos_token":           false,
	}
}

// Tensors returns the model's tensors with their (lazily generated) random
// weights.
func Tensors(c Config, vocab int) []*ggml.Tensor {
	headDim := c.Dim / c.Heads
	q, kv := c.Heads*headDim, c.KVHeads*headDim
	var ts []*ggml.Tensor
	add := func(name string, std float32, shape ...int) {
		s := make([]uint64, len(shape))
		for i, d := range shape {
			s[i] = uint64(d)
		}
		w := randomF32{seed: c.Seed, name: name, n: product(shape), std: std}
		t := &ggml.Tensor{Name: name, Kind: uint32(ggml.TensorTypeF32), Shape: s, WriterTo: w}
		if c.Q8 && std != 0 && shape[0]%q8Block == 0 { // norms stay F32, as in real Q8_0 files
			t.Kind, t.WriterTo = uint32(ggml.TensorTypeQ8_0), q8Writer{w}
		}
		ts = append(ts, t)
	}
	const std = 0.02
	add("token_embd.weight", std, c.Dim, vocab)
	for i := range c.Layers {
		b := fmt.Sprintf("blk.%d.", i)
		add(b+"attn_norm.weight", 0, c.Dim)
		add(b+"attn_q.weight", std, c.Dim, q)
		add(b+"attn_k.weight", std, c.Dim, kv)
		add(b+"attn_v.weight", std, c.Dim, kv)
		add(b+"attn_output.weight", std, q, c.Dim)
		add(b+"ffn_norm.weight", 0, c.Dim)
		add(b+"ffn_gate.weight", std, c.Dim, c.FFN)
		add(b+"ffn_up.weight", std, c.Dim, c.FFN)
		add(b+"ffn_down.weight", std, c.FFN, c.Dim)
	}
	add("output_norm.weight", 0, c.Dim)
	if !c.TieEmbeddings {
		add("output.weight", std, c.Dim, vocab)
	}
	return ts
}

// Write writes the model to path (atomically: a temporary file renamed into
// place).
func Write(path string, c Config, tok *Tokenizer) error {
	if err := c.validate(); err != nil {
		return err
	}
	if tok == nil || len(tok.Tokens) == 0 || len(tok.Types) != len(tok.Tokens) {
		return errors.New("tinymodel: tokenizer has no tokens or mismatched token types")
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".tinymodel-*.gguf")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if err := ggml.WriteGGUF(f, KV(c, tok), Tensors(c, len(tok.Tokens))); err != nil {
		f.Close()
		return fmt.Errorf("tinymodel: write gguf: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

// Modelfile returns a Modelfile for `ollama create` that loads gguf (a path,
// relative to the Modelfile's directory or absolute) with a ChatML template
// (Qwen's <|im_start|>role ... <|im_end|>) and stop token <|im_end|>.
func Modelfile(gguf string) string {
	return "FROM " + gguf + "\n" +
		"TEMPLATE \"\"\"" + chatMLTemplate + "\"\"\"\n" +
		"PARAMETER stop <|im_end|>\n"
}

const chatMLTemplate = `{{- range .Messages }}<|im_start|>{{ .Role }}
{{ .Content }}<|im_end|>
{{ end }}<|im_start|>assistant
`

// randomF32 writes n float32 values, little-endian: N(0, std²) from a PCG
// seeded by (seed, FNV-1a of name), or all ones when std is 0 (norm weights).
type randomF32 struct {
	seed uint64
	name string
	n    int
	std  float32
}

func (r randomF32) WriteTo(w io.Writer) (int64, error) {
	h := fnv.New64a()
	h.Write([]byte(r.name))
	rng := rand.New(rand.NewPCG(r.seed, h.Sum64()))
	const chunk = 16 << 10
	buf := make([]byte, 0, 4*chunk)
	var written int64
	for left := r.n; left > 0; {
		m := min(left, chunk)
		buf = buf[:4*m]
		for i := range m {
			v := float32(1)
			if r.std != 0 {
				v = float32(rng.NormFloat64()) * r.std
			}
			binary.LittleEndian.PutUint32(buf[4*i:], math.Float32bits(v))
		}
		k, err := w.Write(buf)
		written += int64(k)
		if err != nil {
			return written, err
		}
		left -= m
	}
	return written, nil
}

// fileType is general.file_type: F32, or "mostly Q8_0" (the weight
// matrices Q8_0, the norms F32) with Config.Q8. Ollama's create reads an
// F32 file's type 0 as unknown and refuses to quantize it, so a model meant
// for Ollama and the in-process engine alike at a realistic size is written
// as Q8_0 directly: the same bytes serve both.
func fileType(c Config) uint32 {
	if c.Q8 {
		return uint32(ggml.FileTypeQ8_0)
	}
	return uint32(ggml.FileTypeF32)
}

// q8Block is GGML's Q8_0 block: 32 weights as one float16 scale and 32 int8s.
const q8Block = 32

// q8Writer writes the values r would write as F32, quantized to Q8_0 the way
// (scale = max|x|/127 as float16, each weight rounded to the nearest step).
type q8Writer struct{ r randomF32 }

func (q q8Writer) WriteTo(w io.Writer) (int64, error) {
	var f32 bytes.Buffer
	if _, err := q.r.WriteTo(&f32); err != nil {
		return 0, err
	}
	raw := f32.Bytes()
	out := make([]byte, 0, 34*(q.r.n/q8Block))
	var blk [q8Block]float32
	for off := 0; off+4*q8Block <= len(raw); off += 4 * q8Block {
		amax := float32(0)
		for i := range blk {
			blk[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[off+4*i:]))
			amax = max(amax, float32(math.Abs(float64(blk[i]))))
		}
		// The scale is rounded to float16 before the weights are divided by
		// it (ggml's reference divides by the float32 scale), so every
		// dequantized weight is within half a step of its value.
		h := float16Bits(amax / 127)
		inv := float32(0)
		if d := float16Float(h); d != 0 {
			inv = 1 / d
		}
		out = binary.LittleEndian.AppendUint16(out, h)
		for _, v := range blk {
			out = append(out, byte(int8(math.Round(float64(v*inv)))))
		}
	}
	n, err := w.Write(out)
	return int64(n), err
}

// float16Bits is IEEE 754 binary16 of f, rounded to nearest even; f is a
// finite non-negative scale here, but subnormals and overflow are handled.
func float16Bits(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int((b>>23)&0xff) - 127 + 15
	mant := b & 0x7fffff
	switch {
	case exp >= 31:
		return sign | 0x7c00
	case exp <= 0:
		if exp < -10 {
			return sign
		}
		mant |= 0x800000
		shift := uint(14 - exp)
		h := mant >> shift
		if rem := mant & (1<<shift - 1); rem > 1<<(shift-1) || rem == 1<<(shift-1) && h&1 == 1 {
			h++
		}
		return sign | uint16(h)
	}
	h := uint32(exp)<<10 | mant>>13
	if rem := mant & 0x1fff; rem > 0x1000 || rem == 0x1000 && h&1 == 1 {
		h++ // a carry into the exponent is the right rounding too
	}
	return sign | uint16(h)
}

// float16Float is the value of binary16 h.
func float16Float(h uint16) float32 {
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

func product(xs []int) int {
	p := 1
	for _, x := range xs {
		p *= x
	}
	return p
}
