//go:build inproc

package inproc

import (
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/airs-dev/airs/internal/tinymodel"
)

var (
	tinyOnce sync.Once
	tinyEng  *Engine
	tinyPath string
	tinyErr  error
)

// tokenizerPath finds the Qwen3 tokenizer the e2e setup uses.
func tokenizerPath() string {
	for _, p := range []string{
		os.Getenv("AIRS_TOKENIZER"),
		filepath.Join(os.Getenv("DATA_DIR"), "tokenizers", "qwen3.tokenizer.json.gz"),
		"../../../shared/data/tokenizers/qwen3.tokenizer.json.gz",
		filepath.Join(os.Getenv("HOME"), ".cache", "airs-e2e", "tokenizers", "qwen3-3.7.2.tokenizer.json"),
	} {
		if p != "" {
			if _, err := os.Stat(p); err == nil {
				return p
			}
		}
	}
	return ""
}

// tinyGGUF writes the tiny e2e model (untied output: a random function of
// the context, not a repeater) once per test binary, or uses
// $AIRS_INPROC_GGUF.
func tinyGGUF(t testing.TB) string {
	if p := os.Getenv("AIRS_INPROC_GGUF"); p != "" {
		return p
	}
	tinyOnce.Do(func() {
		tp := tokenizerPath()
		if tp == "" {
			tinyErr = os.ErrNotExist
			return
		}
		tok, err := tinymodel.ReadTokenizerFile(tp, "qwen2")
		if err != nil {
			tinyErr = err
			return
		}
		dir, err := os.MkdirTemp("", "inproc-tiny")
		if err != nil {
			tinyErr = err
			return
		}
		c := tinymodel.DefaultConfig()
		c.TieEmbeddings = false
		tinyPath = filepath.Join(dir, "tiny.gguf")
		tinyErr = tinymodel.Write(tinyPath, c, tok)
	})
	if tinyErr != nil {
		t.Fatalf("writing the tiny model (set AIRS_TOKENIZER to a Qwen3 tokenizer.json, or AIRS_INPROC_GGUF): %v", tinyErr)
	}
	return tinyPath
}

func tinyEngine(t testing.TB) *Engine {
	p := tinyGGUF(t)
	if tinyEng == nil {
		// INPROC_CTX: a larger context for the schemas whose shortest
		// valid value is thousands of tokens (Github_ultra's protocols)
		e, _, err := Open(p, Options{ContextLen: envInt("INPROC_CTX", 8192), Threads: 1})
		if err != nil {
			t.Fatal(err)
		}
		tinyEng = e
	}
	return tinyEng
}
