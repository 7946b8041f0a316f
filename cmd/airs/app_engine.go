package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/airs-dev/airs/internal/engine"
)

// engine builds the running AIRS (manager with the durable audit log, tool
// index, selector, model when reachable, recorder) for a channel. model
// overrides ollama.model from airs.yaml ("" keeps it, "none" forces no-LLM
// mode). close releases everything.
func (a *app) engine(ctx context.Context, channel, model string) (*engine.Engine, func(), error) {
	return a.engineWith(ctx, engine.Options{Channel: channel, Model: model})
}

// engineWith is engine with more options (the in-process model).
func (a *app) engineWith(ctx context.Context, opts engine.Options) (*engine.Engine, func(), error) {
	channel := opts.Channel
	if chatTestTools != nil { // a test binary (-tags airs_chattest): its slow tool on every replica
		reg, err := a.registry()
		if err != nil {
			return nil, nil, err
		}
		_ = chatTestTools(reg) // already there when a command registered it itself
	}
	m, closeM, err := a.manager()
	if err != nil {
		return nil, nil, err
	}
	opts.Guard, opts.MCP = a.guard, a.mcp
	if opts.PG, err = a.enginePG(); err != nil {
		closeM()
		return nil, nil, err
	}
	e, err := engine.New(ctx, a.cfg, a.reg, m, a.policy, opts)
	if err != nil {
		closeM()
		return nil, nil, fmt.Errorf("starting airs: %w", err)
	}
	if l2 := m.Level2(); l2 != nil {
		if e.Recommender != nil {
			l2.SetTask(e.Recommender.Task) // the verifier reads the caller's task
		}
		if a.cfg.Level2.Verifier == "model" {
			if v := e.Verifier(); v != nil {
				l2.SetVerifier(v)
			} else {
				a.warnf("level2.verifier is model but no model is reachable: the intent verifier runs without one")
			}
		}
	}
	if e.ModelNotice != "" && channel != "run" && channel != "recommend" && channel != "mcp" {
		fmt.Fprintln(a.stderr, "airs:", e.ModelNotice)
	}
	if n := e.AffinityNotice(); n != "" {
		a.warnf("%s", n)
	}
	closeChains := a.wireChains(e, channel)
	return e, func() { e.Close(); closeChains(); closeM() }, nil
}

// context is the base context of a command.
func (a *app) context() context.Context { return context.Background() }

// warnf prints a note for the user on stderr.
func (a *app) warnf(format string, args ...any) {
	fmt.Fprintf(a.stderr, "airs: "+format+"\n", args...)
}

// logger writes structured logs to stderr.
func (a *app) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(a.stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
}
