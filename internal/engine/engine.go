// Package engine is AIRS running: the Tool Manager, the tool index, the
// selector, the model (when one is reachable) and the session recorder,
// wired from configuration. `airs chat`, `airs serve` and `airs run` are thin
// channels over it; each passes the caller its channel authenticated.
package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync/atomic"
	"time"

	"github.com/airs-dev/airs/chains"
	"github.com/airs-dev/airs/config"
	"github.com/airs-dev/airs/embeddings"
	"github.com/airs-dev/airs/guard"
	"github.com/airs-dev/airs/internal/ollama"
	"github.com/airs-dev/airs/model/ollamamodel"
	"github.com/airs-dev/airs/pipeline"
	"github.com/airs-dev/airs/recommender"
	"github.com/airs-dev/airs/recommender/watch"
	"github.com/airs-dev/airs/selector"
	"github.com/airs-dev/airs/session"
	"github.com/airs-dev/airs/speculation"
	"github.com/airs-dev/airs/store/pg"
)

// Engine is one AIRS instance. Its parts are built by New from the
// configuration and Options and stay its own: callers use its methods
// (the read accessors in access.go name what each gives).
type Engine struct {
	cfg      *config.Config
	registry *pipeline.Registry
	manager  *pipeline.Manager
	catalog  *selector.RegistryCatalog
	index    *embeddings.Index
	sel      *selector.Selector
	ranker   *selector.StatsRanker
	// model writes turns' answers and answers MCP sampling; nil in no-LLM
	// mode, and modelNotice says why.
	model       selector.Model
	modelName   string
	modelNotice string
	local       selector.Model    // Options.Local
	answersOnly bool              // Options.Client without Local: calls are chosen without a model
	recorder    *session.Recorder // nil: recording off
	channel     string            // "chat", "serve", "run"

	// maxResultBytes bounds a tool result shown to the model; more is cut
	// with a note saying so (Options.MaxResultBytes, default 8 KiB).
	maxResultBytes int
	// stepLimit bounds the tool calls of one Turn (config's max_steps;
	// 0 or less: config.DefaultMaxSteps).
	stepLimit int

	// guard is the intent gate the Manager runs (pipeline.Config.Gate),
	// when there is one: a destructive call the user confirms in a channel
	// that can ask is recorded there as decided (confirm.go).
	guard *guard.Guard

	// recommender suggests tools from the callers' context; it follows the
	// pipeline's calls and learns from accept, dismiss and ignore.
	recommender *recommender.Recommender

	files fileNames // the spaces' file names, for resolving what requests name (objects.go)

	// mcp are the outside MCP servers whose tools are registered (nil: none).
	mcp *MCP

	// chainRunner, when set, runs every chain (Options.Chains): nil runs
	// them in process (chains_runner.go).
	chainRunner ChainRunner

	learned         *learnedStore // the ranker's learning, persisted in AIRS_HOME; nil without a home
	stopRecommender func() error
	watcher         *watch.Watcher                         // the spaces' file watcher (chat, serve); nil otherwise
	affinity        *affinityState                         // tool affinity (affinity.go); nil when off
	speculator      atomic.Pointer[speculation.Speculator] // speculate.go; nil: guard.speculation off
	stopSpeculator  func()
	pg              *pg.DB // storage on PostgreSQL (pgstate.go); nil: files only
	pgShared        bool   // pg is sharedPG: not closed by the engine
	sharedPG        *pg.DB // Options.PG
}

// MinCoverage is the threshold in force for cfg: selection.min_coverage,
// else selector.NoLLMMinCoverage.
func MinCoverage(cfg *config.Config) float64 {
	if cfg != nil && cfg.Selection.MinCoverage != nil {
		return *cfg.Selection.MinCoverage
	}
	return selector.NoLLMMinCoverage
}

// Options are what the channel adds to the configuration.
type Options struct {
	Channel string
	// Model overrides config's ollama.model ("" keeps it; "none" forces
	// no-LLM mode).
	Model string
	// ProbeTimeout bounds the check that Ollama answers (default 2 s).
	ProbeTimeout time.Duration
	// Guard is the Manager's intent gate, when it has one.
	Guard *guard.Guard
	// Local, when set, is the selector's model instead of Ollama's (the
	// in-process engine, model.engine inproc), named LocalName; Ollama is
	// then not probed.
	Local     selector.Model
	LocalName string
	// Client, with Local, is the same model as the one that writes turns'
	// answers and answers MCP sampling (Engine.AnswerModel); nil leaves
	// those off, as in no-LLM mode. Embeddings stay the built-in embedder.
	// Client without Local writes the answers alone, named LocalName:
	// calls are then chosen without a model, and Ollama is not probed.
	Client selector.Model
	// MCP are the outside MCP servers already registered in the registry
	// (StartMCP); the engine reindexes when their tools change. The
	// caller that started them closes them.
	MCP *MCP
	// PG is the process's PostgreSQL database, when it has one open (the
	// audit log's): the engine's index, learned state, recommender and
	// sessions use it rather than a pool of their own. The caller closes
	// it, after the engine. Nil: the engine opens one if airs.yaml needs it.
	PG *pg.DB
	// Chains, when set, runs every chain (chains.engine temporal: cmd/airs
	// passes chains/temporal's runner); nil runs them in process.
	Chains ChainRunner
	// MaxResultBytes bounds a tool result shown to the model; more is cut
	// with a note saying so (0: 8 KiB).
	MaxResultBytes int
}

// New wires an engine over an existing registry and manager (cmd/airs
// builds those, with the durable audit log).
func New(ctx context.Context, cfg *config.Config, reg *pipeline.Registry, m *pipeline.Manager, policy pipeline.AccessPolicy, opts Options) (*Engine, error) {
	e := &Engine{cfg: cfg, registry: reg, manager: m, channel: opts.Channel, maxResultBytes: opts.MaxResultBytes, stepLimit: cfg.MaxSteps,
		guard: opts.Guard, mcp: opts.MCP, sharedPG: opts.PG, chainRunner: opts.Chains}
	if e.maxResultBytes <= 0 {
		e.maxResultBytes = 8 << 10
	}
	e.catalog = &selector.RegistryCatalog{Registry: reg, Policy: policy}

	model := cfg.Ollama.Model
	if opts.Model != "" {
		model = opts.Model
	}
	var embedClient embeddings.EmbedClient // Ollama's, when it answers
	if opts.Local != nil || opts.Client != nil {
		e.local, e.modelName, e.model = opts.Local, opts.LocalName, opts.Client
		e.answersOnly = opts.Local == nil
	} else if model != "" && model != "none" {
		c, err := ollama.New(ollama.Config{Host: cfg.Ollama.Host})
		if err != nil {
			return nil, err
		}
		pt := opts.ProbeTimeout
		if pt <= 0 {
			pt = 2 * time.Second
		}
		pctx, cancel := context.WithTimeout(ctx, pt)
		err = c.Ping(pctx)
		cancel()
		if err != nil {
			e.modelNotice = fmt.Sprintf("Ollama at %s is not reachable (%v): %s", c.Host(), err, selector.NoLLMNotice)
		} else {
			e.model, e.modelName, embedClient = ollamamodel.New(c), model, c
		}
	} else {
		e.modelNotice = selector.NoLLMNotice
	}

	var emb embeddings.Embedder
	switch sel := cfg.Selection.Embedder; {
	case (sel == config.EmbedderOllama || sel == "") && cfg.Ollama.EmbedModel != "" && embedClient != nil:
		emb = embeddings.NewOllama(embedClient, cfg.Ollama.EmbedModel)
	case sel == config.EmbedderLexical:
		emb = embeddings.NewLexical(embeddings.LexicalOptions{})
	case sel == config.EmbedderModel:
		m, err := embeddings.DefaultModel()
		if err != nil {
			return nil, fmt.Errorf("the built-in tool model: %w (selection.embedder: lexical works without it)", err)
		}
		emb = m
	default:
		b, err := embeddings.DefaultBlend()
		if err != nil {
			return nil, fmt.Errorf("the built-in tool model and word vectors: %w (selection.embedder: lexical works without them)", err)
		}
		emb = b
	}
	dir := ""
	if cfg.Home != "" {
		dir = cfg.IndexDir()
	}
	var err error
	if indexOnPG(cfg) {
		err = e.openPGIndex(ctx, emb)
	} else {
		err = e.openIndex(ctx, emb, dir)
	}
	if err != nil {
		e.closePG()
		return nil, err
	}
	ix := e.index
	e.followMCP(opts.MCP)

	e.ranker = selector.NewStatsRanker()
	selModel := e.modelName // the selector's model is named; answers alone leave it without one
	if e.answersOnly {
		selModel = ""
	}
	e.sel = selector.New(selector.Parts{
		Catalog:  e.catalog,
		Index:    ix,
		Ranker:   e.ranker,
		Validate: m.Validate,
		Model:    e.selectorModel(), // the Ollama model with affinity's keep-alive
		Config: selector.Config{Model: selModel, Hints: selector.Hints{Spaces: spaceNames(cfg)},
			MinCoverage: MinCoverage(cfg), RequireEvidence: true},
	})
	e.sel.Env = e.understandEnv

	if cfg.Recording.Enabled {
		rec, err := e.openRecorder(ctx)
		if err != nil {
			e.closePG()
			return nil, fmt.Errorf("opening the session log: %w", err)
		}
		e.recorder = rec
	}
	if err := e.loadLearning(); err != nil {
		e.Close()
		return nil, err
	}
	if err := e.startRecommender(); err != nil {
		e.Close()
		return nil, err
	}
	e.startAffinity()
	e.startSpeculator()
	return e, nil
}

func spaceNames(cfg *config.Config) []string {
	var out []string
	for n := range cfg.Spaces {
		out = append(out, n)
	}
	return out
}

// SessionPath is the recorded-session log: recording.dir (default
// $AIRS_HOME/sessions) /sessions.jsonl. `airs eval replay` reads it by default.
func SessionPath(cfg *config.Config) string { return sessionPath(cfg) }

func sessionPath(cfg *config.Config) string {
	dir := cfg.Recording.Dir
	if dir == "" {
		dir = cfg.Home + "/sessions"
	}
	return dir + "/sessions.jsonl"
}

// Reindex brings the tool index up to date with the registry (only tools
// whose description changed are embedded again).
func (e *Engine) Reindex(ctx context.Context) error {
	var all []selector.Entry
	for _, r := range e.registry.List() {
		all = append(all, selector.Entry{Provider: r.Provider, Tool: r.Tool})
	}
	if _, err := e.index.Sync(ctx, selector.Docs(all)); err != nil {
		return fmt.Errorf("indexing tools: %w", err)
	}
	return nil
}

// Close saves what the ranker learned and flushes the recorder.
func (e *Engine) Close() error {
	var err error
	if e.watcher != nil {
		err = e.watcher.Close()
		e.watcher = nil
	}
	if e.stopRecommender != nil {
		err = errors.Join(err, e.stopRecommender())
		e.stopRecommender = nil
	}
	err = errors.Join(err, e.stopAffinity())
	if e.stopSpeculator != nil { // after the recommender: it calls the speculator
		e.stopSpeculator()
		e.stopSpeculator = nil
	}
	if e.learned != nil {
		err = errors.Join(err, e.learned.close())
	}
	if e.recorder != nil {
		err = errors.Join(err, e.recorder.Close())
	}
	e.closePG()
	return err
}

// NoFitThreshold is the coverage under which no-LLM mode proposes no tool
// (selection.min_coverage, else the calibrated selector.NoLLMMinCoverage).
func (e *Engine) NoFitThreshold() float64 { return e.sel.Config.MinCoverage }

// RecordingPath is the session log's file, "" when recording is off.
func (e *Engine) RecordingPath() string {
	if e.recorder == nil {
		return ""
	}
	return e.recorder.Path()
}

// Mode names how calls are chosen right now.
func (e *Engine) Mode() string {
	if e.local != nil {
		return "model " + e.modelName + " (in process)"
	}
	if e.model != nil && !e.answersOnly {
		return "model " + e.modelName + " (Ollama)"
	}
	return "no-LLM mode"
}

// Call runs one call through the pipeline and feeds its outcome to the
// ranker's statistics.
func (e *Engine) Call(ctx context.Context, req pipeline.Request) (*pipeline.Result, error) {
	res, err := e.manager.Call(ctx, req)
	e.ranker.Observe(req.Tool, res, err)
	if e.recommender != nil && err == nil && !req.Speculative {
		// The call just made is no suggestion when the turn ends (the
		// recommender hears of it through the pipeline's events later).
		e.recommender.Done(req.Caller, req.Tool, req.Params)
	}
	return res, err
}

// Select chooses a call for the request. A selection that names files no
// readable space holds is an error that lists them (CheckObjects): nothing
// may run on a file that is not there, and a tool must not be handed the
// file's name in place of its content.
func (e *Engine) Select(ctx context.Context, caller, text string) (*selector.Selection, error) {
	sel, err := e.sel.Select(ctx, caller, text)
	if err != nil {
		return sel, err
	}
	if cerr := e.CheckObjects(caller, text, sel); cerr != nil {
		return nil, cerr
	}
	return sel, nil
}

// Plan plans a multi-step request. Like Select, a plan whose steps (or, in
// no-LLM mode, whose request) name files no readable space holds is an
// error that lists them.
func (e *Engine) Plan(ctx context.Context, caller, text string) (*selector.PlanResult, error) {
	pr, err := e.sel.Plan(ctx, caller, text, e.catalog)
	if err != nil || pr == nil {
		return pr, err
	}
	steps := []*selector.Selection{{Mode: pr.Mode}} // the request's own mentions
	for _, st := range pr.Plan.Steps {
		steps = append(steps, &selector.Selection{Mode: selector.ModeModel, Function: st.Function, Arguments: st.Arguments})
	}
	var missing *MissingFilesError
	for _, st := range steps {
		var me *MissingFilesError
		if errors.As(e.CheckObjects(caller, text, st), &me) {
			if missing == nil {
				missing = me
				continue
			}
			for _, n := range me.Names {
				if !slices.Contains(missing.Names, n) {
					missing.Names = append(missing.Names, n)
				}
			}
		}
	}
	if missing != nil {
		return nil, missing
	}
	return pr, nil
}

// Executor is chains' view of the engine: calls go through the pipeline.
func (e *Engine) Executor() chains.Executor { return chainExec{e} }

type chainExec struct{ e *Engine }

func (c chainExec) Call(ctx context.Context, req pipeline.Request) (*pipeline.Result, error) {
	return c.e.Call(ctx, req)
}
func (c chainExec) Cancel(id string) bool { return c.e.manager.Cancel(id) }

// RunPipeline parses, validates and runs a DSL pipeline for the caller;
// with continueOnFailure, independent steps go on after a failure.
func (e *Engine) RunPipeline(ctx context.Context, caller, file string, yaml []byte, input map[string]any, continueOnFailure bool) (*chains.Result, error) {
	c, err := chains.Parse(file, yaml)
	if err != nil {
		return nil, err
	}
	opts := chains.Options{Executor: e.Executor(), Catalog: e.toolCatalog(), Caller: caller}
	if continueOnFailure {
		opts.OnFailure = chains.ContinueOnFailure
	}
	return e.runChain(ctx, c, yaml, "dsl", file, input, opts)
}

// Truncate cuts a result for the model's context, never silently: the
// note says how much was left out.
func Truncate(b []byte, max int) (string, bool) {
	if len(b) <= max {
		return string(b), false
	}
	cut := max
	for cut > 0 && b[cut]&0xC0 == 0x80 { // do not split a UTF-8 sequence
		cut--
	}
	return string(b[:cut]) + fmt.Sprintf("\n[truncated: %d of %d bytes shown]", cut, len(b)), true
}

// WriteMetrics writes the Prometheus text of the Manager's metrics.
func (e *Engine) WriteMetrics(w io.Writer) error {
	if err := e.manager.WritePrometheus(w); err != nil {
		return err
	}
	if err := e.writeAffinityMetrics(w); err != nil {
		return err
	}
	if err := e.manager.WriteSpeculationPrometheus(w); err != nil {
		return err
	}
	return e.writeRecommenderMetrics(w)
}

var errDeclined = errors.New("declined")
