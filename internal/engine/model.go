package engine

import (
	"context"
	"errors"
	"time"

	"github.com/airs-dev/airs/internal/ollama"
	"github.com/airs-dev/airs/selector"
)

// SelectorModel adapts an Ollama client to the model interface the
// selector owns (selector.Model); nil stays nil (no-LLM mode).
func SelectorModel(c ollama.Client) selector.Model {
	if c == nil {
		return nil
	}
	return ollamaModel{c: c}
}

type ollamaModel struct {
	c ollama.Client
	// keepAlive, when set, is the requests' keep_alive (0: the server's
	// default): the engine's affinity keeps the model loaded with it.
	keepAlive func() time.Duration
}

// Generate implements selector.Model: greedy decoding, the request's seed.
func (m ollamaModel) Generate(ctx context.Context, req selector.ModelRequest, onChunk func(string) error) error {
	msgs := make([]ollama.Message, len(req.Messages))
	for i, msg := range req.Messages {
		msgs[i] = ollama.Message{Role: msg.Role, Content: msg.Content}
	}
	temp, seed := 0.0, req.Seed
	var keep time.Duration
	if m.keepAlive != nil {
		keep = m.keepAlive()
	}
	_, err := m.c.Chat(ctx, ollama.ChatRequest{
		KeepAlive: keep,
		Model:     req.Model,
		Messages:  msgs,
		Format:    req.Format,
		Options:   ollama.Options{Temperature: &temp, Seed: &seed, NumCtx: req.NumCtx, NumPredict: req.NumPredict},
	}, onChunk)
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
