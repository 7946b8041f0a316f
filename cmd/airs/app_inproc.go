package main

import (
	"flag"
	"path/filepath"

	"github.com/airs-dev/airs/config"
	"github.com/airs-dev/airs/internal/engine"
	"github.com/airs-dev/airs/model/inproc"
)

// engineFlags are the flags that choose what decodes (select, plan, chat,
// serve, run share them).
type engineFlags struct {
	engine, gguf *string
}

func addEngineFlags(fs *flag.FlagSet) engineFlags {
	return engineFlags{
		engine: fs.String("engine", "", "what decodes: ollama or inproc (a GGUF in process under AIRS's masks; default: model.engine in airs.yaml)"),
		gguf:   fs.String("gguf", "", "the GGUF `file` --engine inproc loads (default: --model's GGUF in Ollama's store, else model.gguf or model.name in airs.yaml)"),
	}
}

// openLocal loads the in-process engine when the engine in force (the
// --engine flag, else model.engine) is inproc, and makes it opts' model:
// the selector's (opts.Local) and the one that writes answers
// (opts.Client). The model is --gguf, else --model read from Ollama's
// store, else model.gguf or model.name; --model none keeps the no-LLM mode
// and loads nothing. close frees the model (a no-op when nothing was
// loaded).
func (a *app) openLocal(cfg *config.Config, ef engineFlags, model string, opts *engine.Options) (func(), error) {
	eng := cfg.Model.Engine
	if *ef.engine != "" {
		eng = *ef.engine
	}
	switch eng {
	case "", config.EngineOllama:
		if *ef.gguf != "" {
			return nil, usagef("--gguf needs --engine inproc")
		}
		return func() {}, a.requireModel(cfg, opts)
	case config.EngineInproc:
	default:
		return nil, usagef("--engine %q: want ollama or inproc", eng)
	}
	if model == "none" {
		if *ef.gguf != "" {
			return nil, usagef("--gguf and --model none: the no-LLM mode loads no model")
		}
		return func() {}, nil
	}
	if *ef.gguf != "" && model != "" {
		return nil, usagef("--gguf and --model both name the model: give one (--gguf FILE, or --model NAME pulled into Ollama)")
	}
	path, name := *ef.gguf, ""
	switch {
	case path != "":
	case model != "":
		name = model
	case cfg.Model.GGUF != "":
		path = cfg.Model.GGUF
	case cfg.Model.Name != "":
		name = cfg.Model.Name
	default:
		return nil, usagef("--engine inproc needs the model: --gguf FILE or --model NAME (a model pulled into Ollama), or model.gguf or model.name in airs.yaml")
	}
	shown := filepath.Base(path)
	if name != "" {
		p, err := inproc.ResolveModel("", name)
		if err != nil {
			return nil, err
		}
		path, shown = p, name
	}
	ie, closeE, err := inproc.Open(path, inproc.Options{Threads: cfg.Model.Threads})
	if err != nil {
		return nil, err
	}
	if _, notice := ie.Template(); notice != "" {
		a.warnf("%s", notice)
	}
	a.inproc = &inproc.Model{Engine: ie, Name: shown}
	opts.Local, opts.LocalName = a.inproc, shown
	opts.Client = &inproc.Client{Engine: ie, Name: shown}
	if cfg.Ollama.EmbedModel != "" {
		a.warnf("ollama.embed_model %s is not used with the in-process engine: the tool index uses the built-in embedder", cfg.Ollama.EmbedModel)
	}
	return closeE, nil
}
