package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/airs-dev/airs/internal/engine"
)

// The program is assembled here, once, for every command that runs AIRS
// (chat, select, plan, serve, mcp, run, worker, recommend, train and the
// evals that need an engine): build turns airs.yaml into the running
// engine. Its parts are the app's lazy pieces, each built at most once per
// process — the registry with the MCP servers (app.registry), the guard
// (app.guardian), the Manager with its audit log, claims and anomaly gate
// (app.manager), the PostgreSQL pool (app.sharedPG, app_storage.go), the
// model: in process (app.openLocal, app_inproc.go) or Ollama's, which must
// be there when asked for (app.requireModel, internal/modelcheck) — then
// engine.New over them with the chains' runner (app.chainsRunner,
// run_temporal.go). `airs call` takes the Manager alone; `airs doctor`
// checks each part without building any.

// engineSpec is what a command asks of the builder.
type engineSpec struct {
	// Channel names the command: it decides which notices are printed
	// here (chat, run, recommend and mcp show or need none) and whether
	// chains run on Temporal (not in a worker).
	Channel string
	// Model overrides ollama.model ("" keeps it, "none" is the no-LLM
	// mode).
	Model string
	// Local, when set, are the command's --engine and --gguf flags: the
	// in-process model is loaded when the engine in force is inproc
	// (LocalModel is then --model), and an Ollama model that is asked for
	// must be reachable before anything starts. Nil: no model is loaded
	// here, and an unreachable Ollama is the no-LLM mode with a notice.
	Local      *engineFlags
	LocalModel string
}

// build assembles the running AIRS for spec. close releases what it
// built (the engine, the chains' client, the Manager, the in-process
// model); app.close releases the shared parts (MCP servers, PostgreSQL).
func (a *app) build(ctx context.Context, spec engineSpec) (*engine.Engine, func(), error) {
	cfg, err := a.config()
	if err != nil {
		return nil, nil, err
	}
	opts := engine.Options{Channel: spec.Channel, Model: spec.Model}
	closeLocal := func() {}
	if spec.Local != nil {
		if closeLocal, err = a.openLocal(cfg, *spec.Local, spec.LocalModel, &opts); err != nil {
			return nil, nil, err
		}
	}
	e, closeE, err := a.assemble(ctx, opts)
	if err != nil {
		closeLocal()
		return nil, nil, err
	}
	return e, func() { closeE(); closeLocal() }, nil
}

// assemble builds the engine over the app's registry, Manager, guard, MCP
// servers and database, with the model opts already names.
func (a *app) assemble(ctx context.Context, opts engine.Options) (*engine.Engine, func(), error) {
	channel := opts.Channel
	if chatTestTools != nil { // a test binary (-tags airs_chattest): its slow tool on every replica
		reg, err := a.registry()
		if err != nil {
			return nil, nil, err
		}
		if err := chatTestTools(reg); err != nil {
			return nil, nil, err
		}
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
	var closeChains func()
	opts.Chains, closeChains = a.chainsRunner(channel)
	e, err := engine.New(ctx, a.cfg, a.reg, m, a.policy, opts)
	if err != nil {
		closeChains()
		closeM()
		return nil, nil, fmt.Errorf("starting airs: %w", err)
	}
	if l2 := m.Level2(); l2 != nil {
		if rc := e.Recommender(); rc != nil {
			l2.SetTask(rc.Task) // the verifier reads the caller's task
		}
		if a.cfg.Level2.Verifier == "model" {
			if v := e.Verifier(); v != nil {
				l2.SetVerifier(v)
			} else {
				a.warnf("level2.verifier is model but no model is reachable: the intent verifier runs without one")
			}
		}
	}
	switch channel {
	case "chat", "run", "recommend", "mcp": // chat shows it at its start; the others use no model
	default:
		if e.ModelNotice() != "" {
			fmt.Fprintln(a.stderr, "airs:", e.ModelNotice())
		}
	}
	if n := e.AffinityNotice(); n != "" {
		a.warnf("%s", n)
	}
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
