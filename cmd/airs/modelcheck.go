package main

import (
	"context"
	"strings"

	"github.com/airs-dev/airs/config"
	"github.com/airs-dev/airs/internal/engine"
	"github.com/airs-dev/airs/internal/modelcheck"
)

// requireModel refuses to start a command whose Ollama model was asked for
// (opts.Model, else ollama.model) but is not there, with exit code
// exitModel and the steps that fix it. An unset model is the no-LLM mode
// and passes; so does "none".
func (a *app) requireModel(cfg *config.Config, opts *engine.Options) error {
	model := opts.Model
	if model == "" {
		model = cfg.Ollama.Model
	}
	if err := modelcheck.Require(context.Background(), cfg.Ollama.Host, model); err != nil {
		return &exitError{code: exitModel, err: err}
	}
	return nil
}

// requireOllama is requireModel for the evals, whose --model (or
// --embedder) says "ollama:NAME" or a bare NAME: the model must be there
// before hours of questions fail one by one. host "" is OLLAMA_HOST or the
// default.
func requireOllama(host, model string) error {
	name, _ := strings.CutPrefix(model, "ollama:")
	if err := modelcheck.Require(context.Background(), host, name); err != nil {
		return &exitError{code: exitModel, err: err}
	}
	return nil
}
