// Package embeddings turns tool descriptions into vectors and finds the
// tools nearest to a request: an Embedder (Ollama's /api/embed, or the
// embedded Lexical default that needs no server and no weights), a vector
// index persisted with chromem-go, a BM25 index, and hybrid retrieval that
// fuses both with reciprocal rank fusion after applying capability, trust
// and metadata filters. It ranks by retrieval only; the composite score is
// the scoring package's business.
//
// See README.md in this directory for the method and the measured figures.
package embeddings

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
)

// Embedder maps texts to vectors of a fixed dimension.
type Embedder interface {
	// Embed returns one vector per text, in order. Implementations batch.
	Embed(ctx context.Context, texts []string) ([][]float32, error)
	// Dim is the vector length (0 until known, e.g. before the first
	// Ollama call or before a Lexical embedder is fitted).
	Dim() int
	// ID names the model and everything that changes its vectors; vectors
	// made under different IDs are never compared. Used as the cache key.
	ID() string
}

// Fitter is an Embedder that learns from the corpus it will index (the
// Lexical embedder's idf and LSA basis). The Index fits it over the
// registry's own documents.
type Fitter interface {
	Embedder
	Fit(ctx context.Context, corpus []string) error
	Fitted() bool
}

// EmbedClient is the part of an Ollama client the Ollama embedder needs
// (POST /api/embed with a batch of inputs).
type EmbedClient interface {
	Embed(ctx context.Context, model string, inputs []string) ([][]float32, error)
}

// Ollama embeds through an Ollama server, e.g. with nomic-embed-text.
type Ollama struct {
	Client EmbedClient
	Model  string
	// Batch is the number of texts per request (default 64).
	Batch int
	dim   atomic.Int64
}

// NewOllama returns an Ollama embedder for model.
func NewOllama(c EmbedClient, model string) *Ollama { return &Ollama{Client: c, Model: model} }

// ID is "ollama:" + the model name.
func (o *Ollama) ID() string { return "ollama:" + o.Model }

// Dim is known after the first successful call.
func (o *Ollama) Dim() int { return int(o.dim.Load()) }

// Embed sends the texts in batches and checks that every vector has the
// same, non-zero length.
func (o *Ollama) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if o.Client == nil {
		return nil, errors.New("embeddings: Ollama embedder has no client")
	}
	batch := o.Batch
	if batch <= 0 {
		batch = 64
	}
	out := make([][]float32, 0, len(texts))
	for i := 0; i < len(texts); i += batch {
		j := min(i+batch, len(texts))
		vs, err := o.Client.Embed(ctx, o.Model, texts[i:j])
		if err != nil {
			return nil, fmt.Errorf("embeddings: ollama %s: %w", o.Model, err)
		}
		if len(vs) != j-i {
			return nil, fmt.Errorf("embeddings: ollama %s returned %d vectors for %d inputs", o.Model, len(vs), j-i)
		}
		for _, v := range vs {
			if len(v) == 0 {
				return nil, fmt.Errorf("embeddings: ollama %s returned an empty vector", o.Model)
			}
			o.dim.CompareAndSwap(0, int64(len(v)))
			if d := o.Dim(); len(v) != d {
				return nil, fmt.Errorf("embeddings: ollama %s returned dimension %d, expected %d", o.Model, len(v), d)
			}
		}
		out = append(out, vs...)
	}
	return out, nil
}
