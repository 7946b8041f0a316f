// Package ollamamodel is Ollama behind AIRS's one chat-model interface,
// selector.Model: the selector's greedy, grammar-constrained requests,
// sampled text for answers and MCP sampling, warm-ups — over the Ollama
// client of internal/ollama.
package ollamamodel

import (
	"context"
	"errors"

	"github.com/airs-dev/airs/internal/ollama"
	"github.com/airs-dev/airs/selector"
)

// New adapts an Ollama client to selector.Model; nil stays nil (no-LLM
// mode).
func New(c ollama.Client) selector.Model {
	if c == nil {
		return nil
	}
	return ollamaModel{c: c}
}

type ollamaModel struct {
	c ollama.Client
}

// Generate implements selector.Model. Without Sample: greedy decoding, the
// request's seed; with it: its temperature (or the model's default) and
// stop sequences, no seed.
func (m ollamaModel) Generate(ctx context.Context, req selector.ModelRequest, onChunk func(string) error) error {
	if len(req.Messages) == 0 {
		_, err := ollama.Load(ctx, m.c, req.Model, req.KeepAlive, ollama.Options{NumCtx: req.NumCtx})
		return modelError(err)
	}
	msgs := make([]ollama.Message, len(req.Messages))
	for i, msg := range req.Messages {
		msgs[i] = ollama.Message{Role: msg.Role, Content: msg.Content}
	}
	opts := ollama.Options{NumCtx: req.NumCtx, NumPredict: req.NumPredict}
	if s := req.Sample; s != nil {
		opts.Temperature, opts.Stop, opts.Seed = s.Temperature, s.Stop, s.Seed
	} else {
		temp, seed := 0.0, req.Seed
		opts.Temperature, opts.Seed = &temp, &seed
	}
	resp, err := m.c.Chat(ctx, ollama.ChatRequest{
		KeepAlive: req.KeepAlive,
		Model:     req.Model,
		Messages:  msgs,
		Format:    req.Format,
		Options:   opts,
	}, onChunk)
	if req.Sample != nil && req.Sample.Truncated != nil {
		*req.Sample.Truncated = resp.DoneReason == "length"
	}
	return modelError(err)
}

// modelError makes an Ollama error also match the selector's sentinel for
// it, keeping its text (what the user sees) and its own chain.
func modelError(err error) error {
	var also error
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ollama.ErrUnavailable):
		also = selector.ErrModelUnavailable
	case errors.Is(err, ollama.ErrModelNotFound):
		also = selector.ErrModelNotFound
	case errors.Is(err, ollama.ErrRepeatLimit):
		also = selector.ErrModelRepeatLimit
	default:
		return err
	}
	return &bothError{err: err, also: also}
}

type bothError struct{ err, also error }

func (e *bothError) Error() string   { return e.err.Error() }
func (e *bothError) Unwrap() []error { return []error{e.err, e.also} }
