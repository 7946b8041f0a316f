package tinymodel

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/ollama/ollama/api"
)

// TokenizerOf reads the tokenizer of a model an Ollama server serves, from
// /api/show's model_info (verbose: without it the token lists are left
// out), so that a variant of the model can be written with the very same
// vocabulary.
func TokenizerOf(ctx context.Context, client *api.Client, model string) (*Tokenizer, error) {
	resp, err := client.Show(ctx, &api.ShowRequest{Model: model, Verbose: true})
	if err != nil {
		return nil, fmt.Errorf("tinymodel: show %s: %w", model, err)
	}
	info := resp.ModelInfo
	strs := func(key string) ([]string, error) {
		xs, ok := info[key].([]any)
		if !ok || len(xs) == 0 {
			return nil, fmt.Errorf("tinymodel: %s: no %s in model_info", model, key)
		}
		out := make([]string, len(xs))
		for i, x := range xs {
			if out[i], ok = x.(string); !ok {
				return nil, fmt.Errorf("tinymodel: %s: %s[%d] is not a string", model, key, i)
			}
		}
		return out, nil
	}
	num := func(key string) (float64, error) {
		f, ok := info[key].(float64)
		if !ok {
			return 0, fmt.Errorf("tinymodel: %s: no %s in model_info", model, key)
		}
		return f, nil
	}
	tok := &Tokenizer{}
	if tok.Tokens, err = strs("tokenizer.ggml.tokens"); err != nil {
		return nil, err
	}
	if tok.Merges, err = strs("tokenizer.ggml.merges"); err != nil {
		return nil, err
	}
	types, ok := info["tokenizer.ggml.token_type"].([]any)
	if !ok || len(types) != len(tok.Tokens) {
		return nil, fmt.Errorf("tinymodel: %s: tokenizer.ggml.token_type does not match the tokens", model)
	}
	tok.Types = make([]int32, len(types))
	for i, x := range types {
		f, ok := x.(float64)
		if !ok {
			return nil, fmt.Errorf("tinymodel: %s: token_type[%d] is not a number", model, i)
		}
		tok.Types[i] = int32(f)
	}
	if tok.Pre, ok = info["tokenizer.ggml.pre"].(string); !ok {
		return nil, fmt.Errorf("tinymodel: %s: no tokenizer.ggml.pre in model_info", model)
	}
	bos, err := num("tokenizer.ggml.bos_token_id")
	if err != nil {
		return nil, err
	}
	eos, err := num("tokenizer.ggml.eos_token_id")
	if err != nil {
		return nil, err
	}
	tok.BOS, tok.EOS = uint32(bos), uint32(eos)
	return tok, nil
}

// Create writes the model c with tokenizer tok into dir, uploads it to the
// Ollama server behind client and creates it there as c.Name, with the
// Modelfile's ChatML template and stop token.
func Create(ctx context.Context, client *api.Client, dir string, c Config, tok *Tokenizer) error {
	path := filepath.Join(dir, c.Name+".gguf")
	if err := Write(path, c, tok); err != nil {
		return err
	}
	digest, err := fileDigest(path)
	if err != nil {
		return err
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := client.CreateBlob(ctx, digest, f); err != nil {
		return fmt.Errorf("tinymodel: upload %s: %w", path, err)
	}
	var last api.ProgressResponse
	err = client.Create(ctx, &api.CreateRequest{
		Model:      c.Name,
		Files:      map[string]string{filepath.Base(path): digest},
		Template:   chatMLTemplate,
		Parameters: map[string]any{"stop": []string{"<|im_end|>"}},
	}, func(p api.ProgressResponse) error { last = p; return nil })
	if err != nil {
		return fmt.Errorf("tinymodel: create %s: %w", c.Name, err)
	}
	if last.Status != "success" {
		return errors.New("tinymodel: create " + c.Name + ": ended with " + last.Status)
	}
	return nil
}

func fileDigest(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}
