//go:build inproc

package inproc

import (
	"fmt"
	"runtime"
	"sync"

	"github.com/ollama/ollama/llama"
	"github.com/ollama/ollama/ml"
)

// Built reports whether this binary has the llama.cpp backend.
const Built = true

var backendOnce sync.Once

// llamaBackend is one llama.cpp context with one sequence (id 0).
type llamaBackend struct {
	m     *llama.Model
	c     *llama.Context
	batch *llama.Batch
	nb    int // batch capacity
	nctx  int
	pos   int
}

// Open checks path (Preflight), loads it on the CPU and returns an engine
// over it; close frees the model.
func Open(path string, opts Options) (*Engine, func(), error) {
	vocab, err := Preflight(path, opts)
	if err != nil {
		return nil, nil, err
	}
	ct, err := ReadChatTemplate(path)
	if err != nil {
		return nil, nil, err
	}
	backendOnce.Do(llama.BackendInit)
	nctx := opts.ContextLen
	if nctx <= 0 {
		nctx = 4096
	}
	threads := opts.Threads
	if threads <= 0 {
		// Half the logical CPUs (the physical cores on SMT machines, as
		// Ollama does): ggml's threads spin, and one per logical CPU plus
		// the mask goroutine oversubscribes (on 2 shared cores, 2 threads
		// made a token 10x slower than 1).
		threads = max(1, runtime.NumCPU()/2)
	}
	m, err := llama.LoadModelFromFile(path, llama.ModelParams{UseMmap: true})
	if err != nil {
		return nil, nil, fmt.Errorf("inproc: %w", err)
	}
	const nb = 512
	c, err := llama.NewContextWithModel(m, llama.NewContextParams(nctx, nb, 1, threads, ml.FlashAttentionDisabled, ""))
	if err != nil {
		llama.FreeModel(m)
		return nil, nil, fmt.Errorf("inproc: %w", err)
	}
	batch, err := llama.NewBatch(nb, 1, 0)
	if err != nil {
		llama.FreeModel(m)
		return nil, nil, fmt.Errorf("inproc: %w", err)
	}
	b := &llamaBackend{m: m, c: c, batch: batch, nb: nb, nctx: nctx}
	e, err := New(b, vocab)
	if err != nil {
		batch.Free()
		llama.FreeModel(m)
		return nil, nil, err
	}
	e.SetTemplate(DetectTemplate(ct))
	return e, func() { batch.Free(); llama.FreeModel(m) }, nil
}

func (b *llamaBackend) Tokenize(text string, special bool) ([]int, error) {
	return b.m.Tokenize(text, special, special)
}

func (b *llamaBackend) Eval(tokens []int) ([]float32, error) {
	if b.pos+len(tokens) > b.nctx {
		return nil, fmt.Errorf("the context of %d tokens is full", b.nctx)
	}
	for i := 0; i < len(tokens); i += b.nb {
		part := tokens[i:min(len(tokens), i+b.nb)]
		b.batch.Clear()
		for j, t := range part {
			b.batch.Add(t, nil, b.pos+j, i+j == len(tokens)-1, 0)
		}
		if err := b.c.Decode(b.batch); err != nil {
			return nil, err
		}
		b.pos += len(part)
	}
	l := b.c.GetLogitsIth(b.batch.NumTokens() - 1)
	if l == nil {
		return nil, fmt.Errorf("llama.cpp returned no logits")
	}
	return l, nil
}

func (b *llamaBackend) Reset() {
	b.c.KvCacheClear()
	b.pos = 0
}

func (b *llamaBackend) NumVocab() int   { return b.m.NumVocab() }
func (b *llamaBackend) ContextLen() int { return b.nctx }
func (b *llamaBackend) Piece(id int) []byte {
	return []byte(b.m.TokenToPiece(id))
}
