package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"time"

	"github.com/airs-dev/airs/evals/bfcl"
	"github.com/airs-dev/airs/evals/predict"
	"github.com/airs-dev/airs/evals/replay"
	"github.com/airs-dev/airs/internal/engine"
	"github.com/airs-dev/airs/internal/ollama"
	"github.com/airs-dev/airs/model/ollamamodel"
	"github.com/airs-dev/airs/selector"
)

var evalCmd = &command{
	Name:    "eval",
	Summary: "measure selection: BFCL, retrieval benchmarks, replay and tuning on recorded sessions",
	Usage: `Usage:
  airs eval bfcl [--data DIR] [--categories a,b] [--model none|ollama:M] [--json] [--report DIR] [--limit N]
  airs eval retrieval --data FILE… [--embedder blend|model|model:FILE|lexical|ollama:M] [--reranker FILE|none] [--split all|test|unseen] [--json]
  airs eval replay [SESSIONS.jsonl] [--weights W.json] [--embedder lexical|ollama:M] [--model M]
                   [--baseline CONFIG.json] [--report DIR] [--json] [--k 3] [--implicit]
  airs eval tune [SESSIONS.jsonl] [--holdout 0.3] [--seed 1] [--write W.json] [--json]
  airs eval nofit [--realistic FILE] [--offtopic FILE] [--json]   ("no tool fits" rates, no-LLM mode; see 'airs eval nofit --help')
  airs eval everyday [--suite FILE] [--json]   (everyday requests planned without a model; see 'airs eval everyday --help')
  airs eval recommend [--train F] [--data F] [--functions F] [--json] [--learning-curve PNG]
                      (proactive recommendations on BFCL multi-turn; see 'airs eval recommend --help')
  airs eval guard [--train-days 28] [--test-days 14] [--seed 1] [--json]
                      (the anomaly gate on a traffic model with injected anomalies; see 'airs eval guard --help')
  airs eval speculate [--data F] [--functions F] [--json]
                      (speculative execution on a BFCL multi-turn replay; see 'airs eval speculate --help')
  airs eval injection [--json] [--docs DIR]   (level 2 against prompt injection; see 'airs eval injection --help')

bfcl runs BFCL's single-turn categories (--data defaults to $DATA_DIR/bfcl,
else ../shared/data/bfcl; evals/bfcl/testdata holds 4 questions of each)
and scores them with the port of BFCL's AST checker. --model none is AIRS's
no-LLM path: for each question it ranks the question's own candidate
functions with the tool index (lexical embedder fitted once on every BFCL
function in --data) and the composite score, answers "no call" when the best
similarity is under a calibrated threshold or when no candidate fits the
request by the same learned decision airs itself makes (selector's
DefaultFitModel; EVALS.md says how it was trained), and extracts the
arguments from the text; in the parallel categories it makes one call per clause of the
request. --model ollama:M generates through Ollama under the tool-call
grammar (temperature 0, one call per question). With --json, one line per
category: {"category":…,"n":N,"function_acc":x,"ast_acc":x}.

retrieval measures AIRS's tool retrieval against plain BM25 on MetaTool,
StableToolBench, BFCL and MCP tool files (one JSON line per dataset and
method with --json). --split test scores only the MetaTool and
StableToolBench queries held out of the tool model's training, --split
unseen those whose tools were held out of it (see 'airs train retrieval').

replay re-runs selection on the requests of a session log (default: the one
airs chat and airs serve record with recording.enabled, in recording.dir,
else $AIRS_HOME/sessions/sessions.jsonl) against the tools of
the current airs.yaml (builtins and manifests) and scores it against the
labels: the executed and accepted call, or the corrected one. It reports
top-1 and top-k tool accuracy, argument match, validity, "none" correctness
and latency percentiles. --baseline CONFIG.json replays a second
configuration ({"name","weights","embedder","model","top_k"}) on the same
requests and reports the paired differences with bootstrap 95% intervals;
--report writes replay.md and compare.md with plots. With --json: one line
per configuration, then one line per compared metric
{"metric","n","baseline","candidate","diff","lo","hi"}.

recommend ranks, for every call of BFCL multi-turn conversations, the
functions a recommender could propose from the conversation so far: AIRS's
recommender models (text, recent calls, call history, fused by a model
learned from feedback) against frequency, Markov and BM25 baselines, with
5-fold cross-validation by default (hit@1, hit@3, MRR).

tune fits the selection weights on the recorded candidates' score
components (conditional logit, non-negative weights) on part of the log and
reports held-out top-1 against the default weights. It writes the weights
only with --write; use them with 'airs eval replay --weights', and in chat,
serve and run with selection.weights in airs.yaml ('airs help config').

Examples:
  airs eval bfcl --model none --categories multiple,live_multiple
  airs eval bfcl --model none --json --report /tmp/bfcl
  airs eval bfcl --model ollama:qwen3:0.6b --limit 20
  airs eval retrieval --data $DATA_DIR/retrieval/metatool_tools.jsonl.gz $DATA_DIR/retrieval/metatool_queries.jsonl.gz
  airs eval replay
  airs eval bfcl --model none --data evals/bfcl/testdata
  echo '{"name":"trust-heavy","weights":{"semantic":0.3,"trust":0.7}}' > base.json
  airs eval replay sessions.jsonl --baseline base.json --report /tmp/replay
  airs eval tune sessions.jsonl --holdout 0.3 --write weights.json
  airs eval replay sessions.jsonl --weights weights.json --baseline base.json
  airs eval recommend --json
`,
	Run: runEval,
}

func runEval(a *app, args []string) error {
	if len(args) == 0 {
		return usagef("say bfcl, retrieval, replay, tune, nofit, everyday, recommend, guard or speculate")
	}
	switch args[0] {
	case "-h", "--help", "-help":
		printCommandUsage(a.stdout, a.cmd, nil)
		return nil
	case "bfcl":
		return evalBFCL(a, args[1:])
	case "retrieval":
		return evalRetrieval(a, args[1:])
	case "replay":
		return evalReplay(a, args[1:])
	case "tune":
		return evalTune(a, args[1:])
	case "nofit":
		return evalNoFit(a, args[1:])
	case "recommend":
		return evalRecommend(a, args[1:])
	case "guard":
		return evalGuard(a, args[1:])
	case "speculate":
		return evalSpeculate(a, args[1:])
	case "everyday":
		return evalEveryday(a, args[1:])
	case "injection":
		return evalInjection(a, args[1:])
	}
	return usagef("unknown 'eval' action %q: say bfcl, retrieval, replay, tune, nofit, everyday, recommend, guard or speculate", args[0])
}

// defaultDataDir is the shared data's place when DATA_DIR is not set: the
// Makefile's default, beside the repository, for a command run from the
// repository's root.
const defaultDataDir = "../shared/data"

// withBFCLData returns the bfcl arguments with --data set when it is not
// given: $DATA_DIR/bfcl when DATA_DIR is set (evalBFCL's own default),
// else ../shared/data/bfcl when that exists. With neither, the arguments
// go through unchanged, so that evalBFCL still reports a bad flag first,
// and then "--data is required" followed by bfclNoDataHint.
func withBFCLData(args []string) []string {
	if flagValue(args, "data") != "" || os.Getenv("DATA_DIR") != "" {
		return args
	}
	dir := filepath.Join(defaultDataDir, "bfcl")
	if st, err := os.Stat(dir); err == nil && st.IsDir() {
		return append([]string{"--data", dir}, args...)
	}
	return args
}

// dataOrigin says where the evals' public data comes from: one folder this
// repository does not carry, whose README lists each set with its source.
const dataOrigin = `where the data comes from: the evals read public data sets kept outside this repository,
  in one folder: $DATA_DIR, else ` + defaultDataDir + ` beside the repository; that folder's README.md
  lists each set with its public source (BFCL: github.com/ShishirPatil/gorilla; MetaTool:
  github.com/HowieHwong/MetaTool; StableToolBench: github.com/THUNLP-MT/StableToolBench;
  JSONSchemaBench: github.com/guidance-ai/jsonschemabench). 'airs doctor' says what it finds.`

// bfclNoDataHint says what the BFCL data is, where to get it, and how to
// try the command without it.
const bfclNoDataHint = `hint: no ` + defaultDataDir + `/bfcl here either (the default beside the repository).
  Pass --data DIR or set DATA_DIR (then DATA_DIR/bfcl is read): DIR holds BFCL v4's
  single-turn files as CATEGORY.jsonl.gz (multiple, parallel, live_simple, …), one question
  a line as in github.com/ShishirPatil/gorilla berkeley-function-call-leaderboard/bfcl_eval/data,
  each joined with its possible_answer as "ground_truth". To try the command now, on the 4
  questions of each category kept in this repository:
    airs eval bfcl --model none --data evals/bfcl/testdata
` + dataOrigin

// bfclFactory builds the predictors; for "none" it fits the lexical
// embedder on every function of the data directory the run reads.
func bfclFactory(args []string, stderr interface{ Write([]byte) (int, error) }) bfcl.PredictorFactory {
	return func(model string) (bfcl.Predictor, error) {
		o := predict.Options{MinSimilarity: predict.DefaultMinSimilarity, Parallel: true}
		if model == "none" || model == "" {
			dir := flagValue(args, "data")
			if dir == "" && os.Getenv("DATA_DIR") != "" {
				dir = filepath.Join(os.Getenv("DATA_DIR"), "bfcl")
			}
			pool, err := predict.PoolTexts(dir)
			if err != nil {
				return nil, fmt.Errorf("reading the functions of %s: %w", dir, err)
			}
			start := time.Now()
			stop := progressLines(stderr, fmt.Sprintf("airs eval bfcl: no-LLM mode: fitting the lexical embedder on %d BFCL functions (half a minute or so on a small machine)…", len(pool)),
				"fitting", 5*time.Second)
			p, err := predict.NewNoLLM(context.Background(), predict.Options{Pool: pool, MinSimilarity: o.MinSimilarity, Parallel: true})
			stop()
			if err != nil {
				return nil, err
			}
			fmt.Fprintf(stderr, "airs eval bfcl: no-LLM mode: lexical embedder fitted on %d BFCL functions in %s; irrelevance threshold %.2f; \"does a candidate fit\": airs's own decision (threshold %.3f)\n",
				len(pool), time.Since(start).Round(time.Millisecond), o.MinSimilarity, selector.DefaultFitModel.Threshold)
			return p, nil
		}
		if name, ok := strings.CutPrefix(model, "ollama:"); ok && name != "" {
			if err := requireOllama("", name); err != nil {
				return nil, err
			}
			h, err := ollama.FromEnvironment()
			if err != nil {
				return nil, err
			}
			o.Model = ollamamodel.New(h)
		}
		return predict.New(model, o)
	}
}

// progressLines says what a long silent step does, at once and then every
// interval with the time spent, until stop is called: a terminal that says
// nothing for half a minute looks hung.
func progressLines(w interface{ Write([]byte) (int, error) }, first, still string, interval time.Duration) (stop func()) {
	fmt.Fprintln(w, first)
	done := make(chan struct{})
	finished := make(chan struct{})
	start := time.Now()
	go func() {
		defer close(finished)
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				fmt.Fprintf(w, "  … still %s (%s)\n", still, time.Since(start).Round(time.Second))
			}
		}
	}()
	return func() { close(done); <-finished }
}

// flagValue finds --name V or --name=V among args.
func flagValue(args []string, name string) string {
	for i, s := range args {
		for _, p := range []string{"--" + name, "-" + name} {
			if s == p && i+1 < len(args) {
				return args[i+1]
			}
			if v, ok := strings.CutPrefix(s, p+"="); ok {
				return v
			}
		}
	}
	return ""
}

func evalReplay(a *app, args []string) error {
	fs := a.flags()
	weights := fs.String("weights", "", "selection weights `file` (JSON, as 'airs eval tune --write' writes it; default: the built-in weights)")
	embedder := fs.String("embedder", "lexical", "embedder: lexical or ollama:MODEL")
	model := fs.String("model", "none", "none (no-LLM) or an Ollama model to generate calls with")
	baseline := fs.String("baseline", "", "a second configuration `file` to compare against (JSON: name, weights, embedder, model, top_k)")
	reportDir := fs.String("report", "", "write replay.md (and compare.md) with plots into this `dir`")
	asJSON := fs.Bool("json", false, "print JSON lines")
	k := fs.Int("k", 3, "k of top-k accuracy")
	implicit := fs.Bool("implicit", false, "count a call that ran ok without feedback as accepted")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 1 {
		return usagef("'eval replay' takes one SESSIONS.jsonl (default: the recorded sessions of airs.yaml)")
	}
	arg := ""
	if len(pos) == 1 {
		arg = pos[0]
	}
	cand := replay.Config{Name: "candidate", Embedder: *embedder, Model: *model}
	if *weights != "" {
		w, err := replay.LoadWeights(*weights)
		if err != nil {
			return err
		}
		cand.Weights = &w
		cand.Name = strings.TrimSuffix(filepath.Base(*weights), ".json")
	} else {
		cand.Name = "default"
	}
	var base *replay.Config
	if *baseline != "" {
		c, err := replay.LoadConfig(*baseline)
		if err != nil {
			return err
		}
		base = &c
		if c.Label() == cand.Label() {
			cand.Name += " (candidate)"
		}
	}
	items, unlabelled, from, err := a.recordedItems(arg, *implicit)
	if err != nil {
		return err
	}
	if len(items) == 0 {
		return fmt.Errorf("%s: no labelled requests (%d unlabelled; try --implicit)", from, unlabelled)
	}
	reg, err := a.registry()
	if err != nil {
		return err
	}
	cfg := a.cfg
	models := []string{cand.Model} // "none" needs nothing
	if m, ok := strings.CutPrefix(cand.Embedder, "ollama:"); ok {
		models = append(models, m)
	}
	for _, m := range models {
		if err := requireOllama(cfg.Ollama.Host, m); err != nil {
			return err
		}
	}
	minCov := engine.MinCoverage(a.cfg)
	o := replay.Options{Registry: reg, Policy: a.policy, K: *k, Progress: a.stderr, MinCoverage: &minCov}
	for n := range cfg.Spaces {
		o.Hints.Spaces = append(o.Hints.Spaces, n)
	}
	o.Env = spacesEnv(cfg.Spaces) // no-LLM decisions as the engine makes them
	if strings.HasPrefix(*embedder, "ollama:") || (*model != "none" && *model != "") || base != nil && (base.Model != "" && base.Model != "none" || strings.HasPrefix(base.Embedder, "ollama:")) {
		c, err := ollama.New(ollama.Config{Host: cfg.Ollama.Host})
		if err != nil {
			return err
		}
		o.Embed, o.Model = c, ollamamodel.New(c)
	}
	ctx, stop := signal.NotifyContext(a.context(), os.Interrupt)
	defer stop()
	fmt.Fprintf(a.stderr, "airs eval replay: %d labelled requests (%d unlabelled) from %s; %s\n", len(items), unlabelled, from, selectorMode(*model))
	res, err := replay.Run(ctx, items, cand, o)
	if err != nil {
		return err
	}
	var baseRes *replay.Result
	var diffs []replay.DiffLine
	if base != nil {
		if baseRes, err = replay.Run(ctx, items, *base, o); err != nil {
			return err
		}
		if diffs, err = replay.Compare(baseRes, res); err != nil {
			return err
		}
	}
	if *asJSON {
		if baseRes != nil {
			replay.WriteJSON(a.stdout, baseRes.Line())
		}
		replay.WriteJSON(a.stdout, res.Line())
		for _, d := range diffs {
			replay.WriteJSON(a.stdout, d)
		}
	} else {
		if baseRes != nil {
			replay.WriteTable(a.stdout, baseRes, res)
			fmt.Fprintf(a.stdout, "\n%s − %s (paired, bootstrap 95%% interval):\n", res.Config.Label(), baseRes.Config.Label())
			for _, d := range diffs {
				fmt.Fprintf(a.stdout, "  %-10s %+.4f [%+.4f, %+.4f]\n", d.Metric, d.Diff, d.Lo, d.Hi)
			}
		} else {
			replay.WriteTable(a.stdout, res)
		}
		fmt.Fprintf(a.stdout, "replayed %d requests in %s\n", len(res.Items), res.Elapsed.Round(time.Millisecond))
	}
	if *reportDir != "" {
		p, err := replay.WriteReport(*reportDir, res, baseRes, replay.ReportInfo{Command: "airs eval replay " + strings.Join(args, " "), Log: from})
		if err != nil {
			return err
		}
		fmt.Fprintf(a.stderr, "report: %s\n", p)
	}
	return nil
}

func selectorMode(model string) string {
	if model == "" || model == "none" {
		return "no-LLM mode (retrieval, ranking and argument extraction; no model)"
	}
	return "model " + model + " through Ollama"
}

func evalTune(a *app, args []string) error {
	fs := a.flags()
	holdout := fs.Float64("holdout", 0.3, "fraction of the decisions held out for scoring")
	seed := fs.Uint64("seed", 1, "seed of the split")
	write := fs.String("write", "", "write the fitted weights to this `file` (JSON)")
	asJSON := fs.Bool("json", false, "print one JSON line")
	implicit := fs.Bool("implicit", false, "count a call that ran ok without feedback as accepted")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 1 {
		return usagef("'eval tune' takes one SESSIONS.jsonl (default: the recorded sessions of airs.yaml)")
	}
	arg := ""
	if len(pos) == 1 {
		arg = pos[0]
	}
	items, _, _, err := a.recordedItems(arg, *implicit)
	if err != nil {
		return err
	}
	r, err := replay.Tune(items, *holdout, *seed)
	if err != nil {
		return err
	}
	if *asJSON {
		out := struct {
			Train   int `json:"train"`
			Test    int `json:"test"`
			Skipped int `json:"skipped"`
			*replay.TuneResult
			Written string `json:"written,omitempty"`
		}{r.Train, r.Test, r.Skipped, r, *write}
		replay.WriteJSON(a.stdout, out)
	} else {
		w := r.Weights
		fmt.Fprintf(a.stdout, "decisions: %d to fit, %d held out (%d records skipped: unlabelled, \"none\", or right tool not among the recorded candidates)\n", r.Train, r.Test, r.Skipped)
		fmt.Fprintf(a.stdout, "fitted weights: semantic %.3f  trust %.3f  success %.3f  latency %.3f  preference %.3f\n", w.Semantic, w.Trust, w.Success, w.Latency, w.Preference)
		fmt.Fprintf(a.stdout, "held-out top-1: default %.3f, fitted %.3f, difference %+.3f [%+.3f, %+.3f] (bootstrap 95%%)\n",
			r.DefaultTop1, r.TunedTop1, r.Diff.Mean, r.Diff.Lo, r.Diff.Hi)
		fmt.Fprintf(a.stdout, "training top-1: default %.3f, fitted %.3f\n", r.TrainDefault, r.TrainTuned)
	}
	if *write != "" {
		b, _ := json.MarshalIndent(r.Weights, "", "  ")
		if err := os.WriteFile(*write, append(b, '\n'), 0o644); err != nil {
			return err
		}
		if !*asJSON {
			fmt.Fprintf(a.stdout, "wrote %s\n", *write)
		}
	} else if !*asJSON {
		fmt.Fprintln(a.stdout, "(not written: pass --write FILE to keep them)")
	}
	return nil
}

// recordedSessions is the session log 'airs chat' and 'airs serve' write,
// the default of replay and tune; when there is none yet it says how to
// record one.
func (a *app) recordedSessions() (string, error) {
	cfg, err := a.config()
	if err != nil {
		return "", err
	}
	p := engine.SessionPath(cfg)
	if _, err := os.Stat(p); err == nil {
		return p, nil
	}
	state := "recording is on"
	if !cfg.Recording.Enabled {
		state = "recording is off"
	}
	return "", &exitError{code: exitUsage, err: fmt.Errorf(`no recorded sessions at %s (%s)
hint: set 'recording: {enabled: true}' in airs.yaml ('airs help config'), then make requests with
  'airs chat' or 'airs serve' and /accept or /dismiss what they chose; or name a SESSIONS.jsonl`, p, state)}
}
