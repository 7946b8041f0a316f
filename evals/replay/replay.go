// Package replay re-runs AIRS's selection on recorded sessions and scores it
// against what happened (`airs eval replay`), and fits the selection weights
// on them (`airs eval tune`).
//
// # What is replayed against
//
// A recording names its candidate tools but does not carry their
// descriptions or schemas, so the tools come from a registry: the one the
// current airs.yaml configures (the builtins and its manifests), the same
// registry `airs chat` would select from today. A record whose labelled tool
// is not in that registry cannot be scored fairly (no configuration could
// choose it) and is skipped and counted (Result.MissingTool); recorded
// candidates missing from the registry are counted too (MissingCandidates),
// so a drifted registry shows up in the report instead of silently lowering
// accuracy.
//
// # Labels
//
// The label of a record is session.Record.Label: the executed and accepted
// call, a corrected call overriding it, "none" when no tool was right;
// dismissed records are unlabelled. With Options.Implicit, a call that ran
// with outcome ok counts as accepted.
//
// # Replay order
//
// Records are replayed in log order through one ranker, and after each
// record its recorded execution (outcome and latency) is fed to the
// ranker's statistics and its feedback to the preferences, as the live
// engine does: a record's success_rate, latency_score and preference_score
// come only from the records before it.
package replay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/airs-dev/airs/embeddings"
	"github.com/airs-dev/airs/evals/predict"
	"github.com/airs-dev/airs/evals/report"
	"github.com/airs-dev/airs/grammar"
	"github.com/airs-dev/airs/pipeline"
	"github.com/airs-dev/airs/scoring"
	"github.com/airs-dev/airs/selector"
	"github.com/airs-dev/airs/session"
	"github.com/airs-dev/airs/understand"
)

// Config is one configuration to replay with: the weights, the embedder and
// the model. Its JSON form is the file --baseline reads, e.g.
//
//	{"name": "defaults", "weights": {"semantic": 0.55, "trust": 0.15,
//	 "success": 0.15, "latency": 0.05, "preference": 0.10},
//	 "embedder": "lexical", "model": "none", "top_k": 8}
type Config struct {
	Name string `json:"name,omitempty"`
	// Weights nil: scoring.DefaultWeights.
	Weights *scoring.SelectionWeights `json:"weights,omitempty"`
	// Embedder is "" or "blend" (the engine's default: the tool model
	// with the word vectors), "model", "lexical" or "ollama:MODEL".
	Embedder string `json:"embedder,omitempty"`
	// Model is "" or "none" for the no-LLM path, else an Ollama model name
	// ("ollama:" prefix optional).
	Model string `json:"model,omitempty"`
	// TopK is the number of candidates retrieved (default 8).
	TopK int `json:"top_k,omitempty"`
}

// LoadConfig reads a Config file (unknown fields are an error, so a typo
// does not silently replay the defaults).
func LoadConfig(path string) (Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Config{}, err
	}
	var c Config
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return Config{}, fmt.Errorf("%s: %w", path, err)
	}
	if c.Weights != nil {
		if err := c.Weights.Validate(); err != nil {
			return Config{}, fmt.Errorf("%s: %w", path, err)
		}
	}
	if c.Name == "" {
		c.Name = strings.TrimSuffix(baseName(path), ".json")
	}
	return c, nil
}

// LoadWeights reads a weights file: a SelectionWeights object, as `airs
// eval tune --write` writes it.
func LoadWeights(path string) (scoring.SelectionWeights, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return scoring.SelectionWeights{}, err
	}
	var w scoring.SelectionWeights
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&w); err != nil {
		return w, fmt.Errorf("%s: %w", path, err)
	}
	return w, w.Validate()
}

func baseName(p string) string {
	if i := strings.LastIndexAny(p, `/\`); i >= 0 {
		return p[i+1:]
	}
	return p
}

func (c Config) weights() scoring.SelectionWeights {
	if c.Weights != nil {
		return *c.Weights
	}
	return scoring.DefaultWeights
}

func (c Config) modelName() string {
	m := strings.TrimPrefix(c.Model, "ollama:")
	if m == "none" {
		return ""
	}
	return m
}

// Label says what c is, for reports: its name, else its parts.
func (c Config) Label() string {
	if c.Name != "" {
		return c.Name
	}
	emb := c.Embedder
	if emb == "" {
		emb = "blend"
	}
	m := c.modelName()
	if m == "" {
		m = "no-LLM"
	}
	return fmt.Sprintf("%s/%s", emb, m)
}

// Item is one labelled request.
type Item struct {
	ID      string
	Caller  string
	Request string
	// Gold is the right call; nil: no tool was right.
	Gold *session.Call
	// Recorded is the record, for its candidates and execution.
	Recorded session.Record
}

// Items reads a session log and returns its labelled requests in log
// order, with the number of request records left unlabelled.
func Items(path string, implicit bool) (items []Item, unlabelled int, err error) {
	recs, err := session.ReadFile(path)
	if err != nil {
		return nil, 0, err
	}
	items, unlabelled = ItemsOf(recs, implicit)
	return items, unlabelled, nil
}

// ItemsOf is Items over records already read (a session log kept in
// PostgreSQL: store/pg's SessionLog.ReadAll), in log order.
func ItemsOf(recs []session.Record, implicit bool) (items []Item, unlabelled int) {
	reqs, _ := session.Merge(recs)
	for _, r := range reqs {
		if strings.TrimSpace(r.Request) == "" {
			unlabelled++
			continue
		}
		gold, ok := r.Label(implicit)
		if !ok {
			unlabelled++
			continue
		}
		items = append(items, Item{ID: r.ID, Caller: r.Caller, Request: r.Request, Gold: gold, Recorded: r})
	}
	return items, unlabelled
}

// Options are what a replay needs besides the configuration.
type Options struct {
	// Registry is the tool set to select from (see the package doc).
	Registry *pipeline.Registry
	// Policy decides what each recorded caller may call (nil: AllowAll).
	Policy pipeline.AccessPolicy
	// Hints for the no-LLM extractor (the configured spaces).
	Hints selector.Hints
	// K for top-k accuracy (default 3).
	K int
	// Embed serves an "ollama:" embedder and Model a model (cmd/airs gives
	// its Ollama client, adapted by ollamamodel.New); each is required
	// only when a Config names one.
	Embed embeddings.EmbedClient
	Model selector.Model
	// Progress receives a progress bar or lines (nil: none).
	Progress io.Writer
	// MinCoverage is no-LLM mode's "no tool fits" threshold; nil: the
	// engine's default (selector.NoLLMMinCoverage). Pass
	// engine.MinCoverage(cfg) to replay under airs.yaml's.
	MinCoverage *float64
	// Env is what no-LLM mode reads requests against (the spaces and their
	// files), as the engine gives it (selector.Selector.Env); nil: the
	// words alone.
	Env func(caller string) understand.Env
}

// ItemResult is one replayed item.
type ItemResult struct {
	ID        string
	Predicted string   // tool name, or "none"
	Ranked    []string // candidates, best first
	Top1      bool
	TopK      bool
	ArgMatch  bool // right tool and the same arguments as the label
	Valid     bool // the produced call validates (true for "none")
	GoldNone  bool
	PredNone  bool
	Latency   time.Duration
	Err       string // selection failed (scored wrong)
}

// Metrics summarise a replay.
type Metrics struct {
	N        int     `json:"n"`
	K        int     `json:"k"`
	Top1     float64 `json:"top1"`
	TopK     float64 `json:"topk"`
	ArgMatch float64 `json:"arg_match"`
	// Validity is the fraction of produced calls that validate.
	Validity float64 `json:"validity"`
	// NoneRate: items labelled "none" answered none; FalseNoneRate: items
	// with a right tool answered none.
	NoneRate      float64 `json:"none_rate"`
	FalseNoneRate float64 `json:"false_none_rate"`
	GoldNone      int     `json:"gold_none"`
	P50MS         float64 `json:"p50_ms"`
	P90MS         float64 `json:"p90_ms"`
	P99MS         float64 `json:"p99_ms"`
	Errors        int     `json:"errors"`
}

// Result is a replay under one configuration.
type Result struct {
	Config            Config
	Items             []ItemResult
	Metrics           Metrics
	Latencies         []time.Duration
	MissingTool       int // labelled tool not in the registry: skipped
	MissingCandidates int // recorded candidates not in the registry
	Elapsed           time.Duration
}

// Run replays items under cfg.
func Run(ctx context.Context, items []Item, cfg Config, o Options) (*Result, error) {
	if o.Registry == nil {
		return nil, errors.New("replay: no registry")
	}
	if o.K <= 0 {
		o.K = 3
	}
	start := time.Now()
	sel, ranker, err := newSelector(ctx, cfg, o)
	if err != nil {
		return nil, err
	}
	known := map[string]bool{}
	for _, r := range o.Registry.List() {
		known[r.Tool.Name] = true
	}
	res := &Result{Config: cfg}
	prog := report.NewProgress(o.Progress, "replay "+cfg.Label(), len(items))
	defer prog.Done()
	for _, it := range items {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		prog.Add(1)
		for _, c := range it.Recorded.Candidates {
			if !known[c.Tool] {
				res.MissingCandidates++
			}
		}
		if it.Gold != nil && !known[it.Gold.Tool] {
			res.MissingTool++
			continue
		}
		ir := ItemResult{ID: it.ID, GoldNone: it.Gold == nil}
		t0 := time.Now()
		s, err := sel.Select(ctx, it.Caller, it.Request)
		ir.Latency = time.Since(t0)
		switch {
		case errors.Is(err, selector.ErrNoTools):
			ir.Predicted, ir.PredNone, ir.Valid = grammar.NoneTool, true, true
		case err != nil:
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			ir.Err = err.Error()
			ir.Predicted = ""
		default:
			ir.Predicted = s.Function
			ir.PredNone = s.Function == grammar.NoneTool
			ir.Valid = ir.PredNone || s.Validation == "ok"
			for _, c := range s.Candidates {
				ir.Ranked = append(ir.Ranked, c.Name)
			}
			if it.Gold != nil && s.Function == it.Gold.Tool {
				var args map[string]any
				dec := json.NewDecoder(strings.NewReader(string(s.Arguments)))
				dec.UseNumber()
				if dec.Decode(&args) == nil {
					gold := it.Gold.Arguments
					if gold == nil {
						gold = map[string]any{}
					}
					if args == nil {
						args = map[string]any{}
					}
					ir.ArgMatch = report.ArgumentsMatch(args, gold)
				}
			}
		}
		if it.Gold == nil {
			ir.Top1 = ir.PredNone
			ir.TopK = ir.PredNone
		} else {
			ir.Top1 = ir.Predicted == it.Gold.Tool
			for i, n := range ir.Ranked {
				if i < o.K && n == it.Gold.Tool {
					ir.TopK = true
				}
			}
		}
		res.Items = append(res.Items, ir)
		res.Latencies = append(res.Latencies, ir.Latency)
		observe(ranker, it.Recorded)
	}
	res.Metrics = summarize(res.Items, res.Latencies, o.K)
	res.Elapsed = time.Since(start)
	return res, nil
}

// observe feeds a record's feedback to the ranker's preferences and its
// execution to its statistics, as the live engine did after the request.
func observe(r *selector.StatsRanker, rec session.Record) {
	if rec.Call == nil {
		return
	}
	if rec.Feedback != nil {
		switch rec.Feedback.Verdict {
		case session.Accepted:
			r.Prefs().Accept(rec.Call.Tool)
		case session.Dismissed:
			r.Prefs().Dismiss(rec.Call.Tool)
		}
	}
	if rec.Execution == nil {
		return
	}
	lat := time.Duration(rec.Execution.LatencyMS * float64(time.Millisecond))
	res := &pipeline.Result{Tool: rec.Call.Tool, Latency: lat}
	var err error
	switch rec.Execution.Outcome {
	case session.OutcomeOK:
	case session.OutcomeError, session.OutcomeTimeout, session.OutcomeDenied, session.OutcomeCancelled:
		// The recorded error kind decides, as in the live engine, whether
		// the failure counts against the tool.
		err = pipeline.ErrProviderRejected
		for _, s := range kinds {
			if pipeline.KindOf(s) == rec.Execution.ErrorKind {
				err = s
			}
		}
	default:
		return // skipped: never ran
	}
	r.Observe(rec.Call.Tool, res, err)
}

// kinds are the pipeline's error sentinels, to map a recorded error kind
// back to its error.
var kinds = []error{
	pipeline.ErrToolNotFound, pipeline.ErrToolDeprecated, pipeline.ErrChannelCapabilityDenied,
	pipeline.ErrIntentMisaligned, pipeline.ErrToolCapabilityDenied, pipeline.ErrSchemaValidationFailed,
	pipeline.ErrPayloadTooLarge, pipeline.ErrTimeout, pipeline.ErrProviderUnavailable,
	pipeline.ErrProviderCrashed, pipeline.ErrProviderRejected, pipeline.ErrRateLimited, pipeline.ErrCancelled,
}

func summarize(items []ItemResult, lats []time.Duration, k int) Metrics {
	m := Metrics{N: len(items), K: k}
	if m.N == 0 {
		return m
	}
	var top1, topk, arg, calls, valid, goldTool int
	predNone := make([]bool, len(items))
	goldNone := make([]bool, len(items))
	for i, it := range items {
		if it.Top1 {
			top1++
		}
		if it.TopK {
			topk++
		}
		if it.ArgMatch {
			arg++
		}
		if !it.GoldNone {
			goldTool++
		}
		if !it.PredNone && it.Err == "" {
			calls++
			if it.Valid {
				valid++
			}
		}
		if it.Err != "" {
			m.Errors++
		}
		predNone[i], goldNone[i] = it.PredNone, it.GoldNone
	}
	n := float64(m.N)
	m.Top1, m.TopK = float64(top1)/n, float64(topk)/n
	if goldTool > 0 {
		m.ArgMatch = float64(arg) / float64(goldTool)
	}
	m.Validity = 1
	if calls > 0 {
		m.Validity = float64(valid) / float64(calls)
	}
	ns := report.NoneCorrectness(predNone, goldNone)
	m.NoneRate, m.FalseNoneRate, m.GoldNone = ns.Rate, ns.FalseNoneRate, ns.GoldNone
	ls := report.SummarizeLatency(lats)
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	m.P50MS, m.P90MS, m.P99MS = ms(ls.P50), ms(ls.P90), ms(ls.P99)
	return m
}

// newSelector builds the selector cfg describes over the registry.
func newSelector(ctx context.Context, cfg Config, o Options) (*selector.Selector, *selector.StatsRanker, error) {
	catalog := &selector.RegistryCatalog{Registry: o.Registry, Policy: o.Policy}
	if strings.HasPrefix(cfg.Embedder, "ollama:") && o.Embed == nil {
		return nil, nil, fmt.Errorf("replay: the embedder %q needs an Ollama client (Options.Embed)", cfg.Embedder)
	}
	if cfg.modelName() != "" && o.Model == nil {
		return nil, nil, fmt.Errorf("replay: the model %q needs a model client (Options.Model)", cfg.modelName())
	}
	var emb embeddings.Embedder
	switch {
	case cfg.Embedder == "" || cfg.Embedder == "blend":
		// The engine's default: replay selects as the recording did.
		b, err := embeddings.DefaultBlend()
		if err != nil {
			return nil, nil, err
		}
		emb = b
	case cfg.Embedder == "model":
		m, err := embeddings.DefaultModel()
		if err != nil {
			return nil, nil, err
		}
		emb = m
	case cfg.Embedder == "lexical":
		emb = embeddings.NewLexical(embeddings.LexicalOptions{})
	case strings.HasPrefix(cfg.Embedder, "ollama:"):
		emb = embeddings.NewOllama(o.Embed, strings.TrimPrefix(cfg.Embedder, "ollama:"))
	default:
		return nil, nil, fmt.Errorf("replay: unknown embedder %q (blend, model, lexical or ollama:MODEL)", cfg.Embedder)
	}
	ix, err := embeddings.Open(ctx, emb, embeddings.Options{})
	if err != nil {
		return nil, nil, err
	}
	var all []selector.Entry
	for _, r := range o.Registry.List() {
		all = append(all, selector.Entry{Provider: r.Provider, Tool: r.Tool})
	}
	if _, err := ix.Sync(ctx, selector.Docs(all)); err != nil {
		return nil, nil, fmt.Errorf("replay: indexing the registry: %w", err)
	}
	ranker := selector.NewStatsRanker()
	if err := ranker.SetWeights(cfg.weights()); err != nil {
		return nil, nil, err
	}
	parts := selector.Parts{
		Catalog:  catalog,
		Index:    ix,
		Ranker:   ranker,
		Validate: predict.Validator(),
		// No-LLM decisions as the engine makes them (engine.New).
		Config: selector.Config{Model: cfg.modelName(), TopK: cfg.TopK, Hints: o.Hints,
			MinCoverage: selector.NoLLMMinCoverage, RequireEvidence: true},
	}
	if o.MinCoverage != nil {
		parts.Config.MinCoverage = *o.MinCoverage
	}
	if cfg.modelName() != "" {
		parts.Model = o.Model
	}
	s := selector.New(parts)
	s.Env = o.Env
	return s, ranker, nil
}
