package selector

import (
	"context"
	"encoding/json"
	"errors"
	"time"
)

// Model is AIRS's one chat-model interface: one streamed reply, greedy and
// constrained by a JSON Schema for the selector, or sampled free text for
// a turn's answer and MCP sampling (ModelRequest.Sample). The selector owns
// it (as embeddings owns EmbedClient) so that nothing above depends on a
// model backend: Ollama (adapted by ollamamodel.New) and the
// in-process engine (model/inproc) implement it. A request with no
// Messages is a warm-up: the backend loads the model (with the request's
// NumCtx and KeepAlive) and generates nothing.
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
	// KeepAlive is how long the backend keeps the model loaded after the
	// request: 0 is its default, negative keeps it loaded.
	KeepAlive time.Duration
	// Sample, when set, asks for sampled text (a turn's answer, an MCP
	// server's sampling request) instead of the selector's greedy
	// decoding with Seed.
	Sample *Sampling
}

// Sampling is a request for sampled text.
type Sampling struct {
	// Temperature; nil leaves the backend's (the model's) default.
	Temperature *float64
	// Seed; nil: the backend's choice (a random one).
	Seed *int
	// Stop sequences end the reply (not part of it).
	Stop []string
	// Truncated, when not nil, is set to whether the reply stopped at
	// NumPredict rather than at its end.
	Truncated *bool
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
