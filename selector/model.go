package selector

import (
	"context"
	"encoding/json"
	"errors"
)

// Model is what the selector needs from a language model: one streamed
// reply, constrained by a JSON Schema. The selector owns this interface (as
// embeddings owns EmbedClient) so that it depends on no model backend;
// internal/engine adapts the Ollama client to it (engine.SelectorModel).
type Model interface {
	// Generate streams one reply to req. onChunk receives each piece of
	// content as it arrives; when it returns an error, generation stops and
	// Generate returns that error (wrapped or not). Errors of the backend
	// match ErrModelUnavailable, ErrModelNotFound or ErrModelRepeatLimit
	// (errors.Is) when they mean that.
	Generate(ctx context.Context, req ModelRequest, onChunk func(chunk string) error) error
}

// Message is one chat message.
type Message struct {
	Role    string `json:"role"` // "system", "user" or "assistant"
	Content string `json:"content"`
}

// ModelRequest is one generation. The selector always decodes greedily
// (temperature 0) with a fixed seed.
type ModelRequest struct {
	Model    string
	Messages []Message
	// Format is the JSON Schema the reply must follow (Ollama's `format`).
	Format     json.RawMessage
	Seed       int
	NumCtx     int // context window in tokens
	NumPredict int // maximum tokens to generate
}

// The model errors the selector acts on. A Model's errors match them with
// errors.Is; the backend's own error text is what the user sees.
var (
	// ErrModelUnavailable: no model server answers. Select and Plan fall
	// back to no-LLM mode.
	ErrModelUnavailable = errors.New("selector: model server unavailable")
	// ErrModelNotFound: the server answers but has no such model — a
	// configuration error, reported with how to fix it, never a fallback.
	ErrModelNotFound = errors.New("selector: model not found")
	// ErrModelRepeatLimit: the server stopped a looping generation; the
	// model's fault, so the output gets the repair attempt.
	ErrModelRepeatLimit = errors.New("selector: the server stopped a looping generation")
)
