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
	// seq are the tokens whose keys and values the cache holds (seq[i] at
	// position i); after Reset the next Eval keeps the prefix it shares
	// with them (a selection's system prompt and tool list, a chat's
	// earlier turns) instead of decoding it again.
	seq     []int
	reset   bool
	reused  int  // prompt tokens the last Reset + Eval kept
	noReuse bool // Options.NoPrefixReuse
	// threads decode one token or a short fast-forwarded run, which the
	// mask goroutine overlaps; bthreads decode a prompt (at least
	// bigBatch tokens), while the mask is idle.
	threads, bthreads int
	wide              bool // bthreads are set
}

// bigBatch is the batch size from which a decode uses every CPU: a
// prompt, not a fast-forwarded key or closing run.
const bigBatch = 32

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
	bthreads := opts.BatchThreads
	if bthreads <= 0 {
		bthreads = max(threads, runtime.NumCPU())
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
	setThreads(c, threads, threads)
	b := &llamaBackend{m: m, c: c, batch: batch, nb: nb, nctx: nctx, noReuse: opts.NoPrefixReuse,
		threads: threads, bthreads: bthreads}
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
	if b.reset {
		b.reset = false
		// Keep at least the last token to decode: its logits are the answer.
		k := 0
		if !b.noReuse {
			for k < len(b.seq) && k < len(tokens)-1 && b.seq[k] == tokens[k] {
				k++
			}
		}
		if k == 0 || !b.c.KvCacheSeqRm(0, k, -1) {
			// A cache that cannot drop a suffix (recurrent models) starts over.
			b.c.KvCacheClear()
			k = 0
		}
		b.seq, b.pos, b.reused = b.seq[:k], k, k
		tokens = tokens[k:]
	}
	if b.pos+len(tokens) > b.nctx {
		return nil, fmt.Errorf("the context of %d tokens is full", b.nctx)
	}
	if wide := len(tokens) >= bigBatch && b.bthreads != b.threads; wide != b.wide {
		n := b.threads
		if wide {
			n = b.bthreads
		}
		setThreads(b.c, b.threads, n)
		b.wide = wide
	}
	for i := 0; i < len(tokens); i += b.nb {
		part := tokens[i:min(len(tokens), i+b.nb)]
		b.batch.Clear()
		for j, t := range part {
			b.batch.Add(t, nil, b.pos+j, i+j == len(tokens)-1, 0)
		}
		if err := b.c.Decode(b.batch); err != nil {
			// What the cache holds is no longer known: drop it all.
			b.c.KvCacheClear()
			b.seq, b.pos = b.seq[:0], 0
			return nil, err
		}
		b.pos += len(part)
		b.seq = append(b.seq, part...)
	}
	l := b.c.GetLogitsIth(b.batch.NumTokens() - 1)
	if l == nil {
		return nil, fmt.Errorf("llama.cpp returned no logits")
	}
	return l, nil
}

// Reset starts a new sequence; the cache is trimmed by the next Eval, to
// the prefix it shares with the new prompt.
func (b *llamaBackend) Reset() { b.reset = true }

// ReusedPrompt is how many tokens of the last prompt came from the cache.
func (b *llamaBackend) ReusedPrompt() int { return b.reused }

func (b *llamaBackend) NumVocab() int   { return b.m.NumVocab() }
func (b *llamaBackend) ContextLen() int { return b.nctx }
func (b *llamaBackend) Piece(id int) []byte {
	return []byte(b.m.TokenToPiece(id))
}
