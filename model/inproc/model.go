package inproc

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/airs-dev/airs/grammar"
	"github.com/airs-dev/airs/selector"
)

// Model is the engine as a selector.Model: selection, planning and repair
// run on it unchanged. The request's Format (the JSON Schema the selector
// exports for a tool call or a plan) is compiled with the selector's
// tool-call options and drives the masks; the selector's own stream check
// of the output stays as it is.
type Model struct {
	Engine *Engine
	Name   string // shown as the model's name
	// Sampling for every request; Seed is replaced by the request's.
	// The zero value decodes greedily, as the selector asks.
	Sampling Sampling
	last     atomic.Pointer[Result]
}

// Last is the most recent generation's result (for --json and figures);
// nil before the first.
func (m *Model) Last() *Result { return m.last.Load() }

// GenerationBounds bound what the format leaves open, so that a call ends
// within the selector's token cap (1024) whatever the weights: strings
// without maxLength take at most 256 code points, arrays and objects
// without maxItems/maxProperties at most 16 items (grammar.Options:
// where the schema sets no bound). Outputs stay valid against the schema:
// the bounds only narrow what may be generated.
var GenerationBounds = grammar.Options{MaxStringBytes: 256, MaxContainerItems: 16}

var _ selector.Model = (*Model)(nil)

// Generate implements selector.Model.
func (m *Model) Generate(ctx context.Context, req selector.ModelRequest, onChunk func(string) error) error {
	if len(req.Format) == 0 {
		return errors.New("inproc: a request without a format: the in-process engine only decodes under a grammar")
	}
	g, err := grammar.CompileCached(req.Format, GenerationOptions())
	if err != nil {
		return fmt.Errorf("inproc: compiling the request's format: %w", err)
	}
	s := m.Sampling
	s.Seed = uint64(req.Seed)
	if req.NumPredict > 0 {
		s.MaxTokens = req.NumPredict
	}
	res, err := m.Engine.Constrained(ctx, m.Engine.Prompt(req.Messages), g, s, onChunk)
	if res != nil {
		m.last.Store(res)
	}
	if errors.Is(err, ErrRunaway) {
		return fmt.Errorf("%w: %w", selector.ErrModelRepeatLimit, err)
	}
	return err
}

// GenerationOptions compile a request's format: the selector's tool-call
// options with GenerationBounds, in declared order (the format lists
// "function" before "arguments", the order the selector's own tool-call
// grammar, its stream check, wants; AnyOrder would let the model start
// with "arguments").
func GenerationOptions() grammar.Options {
	o := selector.ToolCallGrammar.Options
	o.PropertyOrder = grammar.DeclaredOrder
	o.MaxStringBytes, o.MaxContainerItems = GenerationBounds.MaxStringBytes, GenerationBounds.MaxContainerItems
	return o
}

// ChatPrompt renders messages in the ChatML template (Qwen's, and the tiny
// e2e model's), ending with the assistant's turn open.
func ChatPrompt(msgs []selector.Message) string {
	var b strings.Builder
	for _, m := range msgs {
		fmt.Fprintf(&b, "<|im_start|>%s\n%s<|im_end|>\n", m.Role, m.Content)
	}
	b.WriteString("<|im_start|>assistant\n")
	return b.String()
}
