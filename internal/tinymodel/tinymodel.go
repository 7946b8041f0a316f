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
		"general.file_type":                      uint32(0), // all F32
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
		ts = append(ts, &ggml.Tensor{
			Name:     name,
			Kind:     uint32(ggml.TensorTypeF32),
			Shape:    s,
			WriterTo: randomF32{seed: c.Seed, name: name, n: product(shape), std: std},
		})
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

func product(xs []int) int {
	p := 1
	for _, x := range xs {
		p *= x
	}
	return p
}
