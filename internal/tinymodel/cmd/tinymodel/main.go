// Command tinymodel writes the tiny random-weight llama GGUF used by the e2e
// tests (see package tinymodel), plus a Modelfile next to it.
//
//	tinymodel -tokenizer qwen3.tokenizer.json[.gz] -o DIR [-seed N] [-layers N] [-dim N]
//
// It writes DIR/airs-tiny.gguf and DIR/Modelfile; then
// `ollama create airs-tiny -f DIR/Modelfile` registers the model.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/airs-dev/airs/internal/tinymodel"
)

func main() {
	c := tinymodel.DefaultConfig()
	tokPath := flag.String("tokenizer", "", "Hugging Face tokenizer.json (BPE), optionally gzipped (required)")
	pre := flag.String("pre", "qwen2", "tokenizer.ggml.pre: qwen2 (Qwen3) or llama-bpe (Llama 3)")
	out := flag.String("o", ".", "output directory")
	flag.StringVar(&c.Name, "name", c.Name, "model name (general.name and file name)")
	flag.Uint64Var(&c.Seed, "seed", c.Seed, "weights seed")
	flag.IntVar(&c.Layers, "layers", c.Layers, "transformer blocks")
	flag.IntVar(&c.Dim, "dim", c.Dim, "embedding dimension")
	flag.IntVar(&c.Heads, "heads", c.Heads, "attention heads")
	flag.IntVar(&c.KVHeads, "kv-heads", c.KVHeads, "key/value heads")
	flag.IntVar(&c.FFN, "ffn", c.FFN, "feed-forward dimension")
	flag.IntVar(&c.Context, "ctx", c.Context, "context length")
	flag.BoolVar(&c.TieEmbeddings, "tie", c.TieEmbeddings, "reuse the token embeddings as the output projection (a random model that repeats its last token)")
	flag.BoolVar(&c.Q8, "q8", c.Q8, "write the weight matrices as Q8_0 (norms stay F32): a quarter of the size, and a file Ollama's create accepts at a realistic size (it will not quantize an F32 file)")
	flag.Parse()
	if *tokPath == "" {
		fmt.Fprintln(os.Stderr, "tinymodel: -tokenizer is required")
		flag.Usage()
		os.Exit(2)
	}
	if err := run(c, *tokPath, *pre, *out); err != nil {
		fmt.Fprintln(os.Stderr, "tinymodel:", err)
		os.Exit(1)
	}
}

func run(c tinymodel.Config, tokPath, pre, out string) error {
	start := time.Now()
	tok, err := tinymodel.ReadTokenizerFile(tokPath, pre)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	gguf := filepath.Join(out, c.Name+".gguf")
	if err := tinymodel.Write(gguf, c, tok); err != nil {
		return err
	}
	abs, err := filepath.Abs(gguf)
	if err != nil {
		return err
	}
	mf := filepath.Join(out, "Modelfile")
	if err := os.WriteFile(mf, []byte(tinymodel.Modelfile(abs)), 0o644); err != nil {
		return err
	}
	fi, err := os.Stat(gguf)
	if err != nil {
		return err
	}
	fmt.Printf("wrote %s (%d tokens, %d layers, dim %d, %.1f MB) and %s in %s\n",
		gguf, len(tok.Tokens), c.Layers, c.Dim, float64(fi.Size())/1e6, mf, time.Since(start).Round(time.Millisecond))
	return nil
}
