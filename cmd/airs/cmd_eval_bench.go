package main

import (
	"context"
	"fmt"
	"github.com/airs-dev/airs/embeddings"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"time"

	"github.com/airs-dev/airs/evals/bfcl"
	"github.com/airs-dev/airs/evals/retrieval"
	"github.com/airs-dev/airs/internal/ollama"
)

// evalBFCL is `airs eval bfcl`: the flags and output around bfcl.Run.
func evalBFCL(a *app, args []string) error {
	args = withBFCLData(args)
	fs := a.flags()
	dataDir := fs.String("data", "", "`directory` holding BFCL <category>.jsonl.gz files (default $DATA_DIR/bfcl)")
	cats := fs.String("categories", "", "comma-separated categories (default: all present)")
	model := fs.String("model", "none", `"none" (no LLM) or "ollama:MODEL"`)
	asJSON := fs.Bool("json", false, "print one JSON line per category")
	reportDir := fs.String("report", "", "write a Markdown report with plots into this `directory`")
	limit := fs.Int("limit", 0, "questions per category (0 = all)")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("unexpected argument %q (bfcl takes flags only)", pos[0])
	}
	if *dataDir == "" {
		d := os.Getenv("DATA_DIR")
		if d == "" {
			return usagef("--data is required (or set DATA_DIR)\n%s", bfclNoDataHint)
		}
		*dataDir = filepath.Join(d, "bfcl")
	}
	var categories []string
	for _, c := range strings.Split(*cats, ",") {
		if c = strings.TrimSpace(c); c != "" {
			if !bfcl.IsKnownCategory(c) {
				return usagef("unknown category %q (known: %s)", c, strings.Join(bfcl.SingleTurnCategories, ", "))
			}
			categories = append(categories, c)
		}
	}
	pred, err := bfclFactory(args, a.stderr)(*model)
	if err != nil {
		return fmt.Errorf("model %q: %w", *model, err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	start := time.Now()
	results, err := bfcl.Run(ctx, bfcl.Options{DataDir: *dataDir, Categories: categories, Predictor: pred, Limit: *limit}, a.stderr)
	if err != nil {
		return err
	}
	elapsed := time.Since(start)
	if *asJSON {
		for _, r := range results {
			fmt.Fprintf(a.stdout, "%s\n", r.JSONLine())
		}
	} else {
		bfcl.WriteTable(a.stdout, results)
		fmt.Fprintf(a.stdout, "model %s, %s\n", *model, elapsed.Round(time.Millisecond))
	}
	if *reportDir != "" {
		cmd := "airs eval bfcl " + strings.Join(args, " ")
		p, err := bfcl.WriteReport(*reportDir, results, bfcl.ReportInfo{Command: cmd, Model: *model, Elapsed: elapsed})
		if err != nil {
			return fmt.Errorf("report: %w", err)
		}
		fmt.Fprintf(a.stderr, "report: %s\n", p)
	}
	return nil
}

// evalRetrieval is `airs eval retrieval`: the flags around retrieval.Run.
func evalRetrieval(a *app, args []string) error {
	fs := a.flags()
	var data multiFlag
	fs.Var(&data, "data", "data `file` (repeatable; further file arguments are data files too)")
	embedder := fs.String("embedder", retrieval.DefaultEmbedder, "blend[:words=W,dense=X,map=FILE,raw=1,…] (the committed trained tool model joined with the pretrained word vectors, as airs indexes by default), model (the tool model alone), model:FILE (one 'airs train retrieval' wrote), ensemble[:lex=W,dim=D,dense=X,norm=minmax] (the model joined with a lexical half fitted on the pool), words (the word vectors alone), lexical or ollama:MODEL")
	split := fs.String("split", "all", "which queries of MetaTool and StableToolBench to score: all, test (held out of training), unseen (their tools held out of training), dev, unseen-dev or train")
	asJSON := fs.Bool("json", false, "one JSON line per dataset and method")
	pool := fs.String("pool", "all", "the tools MetaTool's and StableToolBench's queries are asked among: all, or held-out (only the tools held out of training, the queries' other right tools dropped: no ranker gains by demoting the tools it was trained on)")
	reranker := fs.String("reranker", "", "re-rank the fused list: model (the committed reranker, fitted over --embedder model), a reranker `file` ('airs train retrieval --reranker' writes one), or none (default: what the index does unasked)")
	quiet := fs.Bool("quiet", false, "no progress lines")
	reportDir := fs.String("report", "", "write retrieval.md with tables and PNG charts into this `dir`")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	data = append(data, pos...) // --data A B C
	if len(data) == 0 {
		return usagef("--data FILE… is required: the retrieval sets are under $DATA_DIR/retrieval\n%s", dataOrigin)
	}
	// A missing file is most often the shared data not being here: say
	// where it comes from rather than only "no such file".
	for _, f := range data {
		if _, err := os.Stat(f); err != nil {
			return usagef("%v\nhint: the retrieval sets are under $DATA_DIR/retrieval (metatool_tools.jsonl.gz with metatool_queries.jsonl.gz, stabletoolbench_queries.jsonl.gz; DATA_DIR is %q): set DATA_DIR to the shared data folder (make conformance uses ../shared/data) or pass the files' paths\n%s", err, os.Getenv("DATA_DIR"), dataOrigin)
		}
	}
	switch retrieval.Part(*split) {
	case "all", retrieval.PartTrain, retrieval.PartDev, retrieval.PartTest, retrieval.PartUnseen, retrieval.PartUnseenDev:
	default:
		return usagef("--split %q: say all, test, unseen, dev or train", *split)
	}
	if *pool != "all" && *pool != "held-out" {
		return usagef("--pool %q: say all or held-out", *pool)
	}
	o := retrieval.Options{Data: data, Embedder: *embedder, JSON: *asJSON, ReportDir: *reportDir, Split: retrieval.Part(*split), HeldOutPool: *pool == "held-out"}
	switch *reranker {
	case "":
	case "none":
		o.Index.NoRerank = true
	case "model":
		r := embeddings.CommittedReranker()
		if r == nil {
			return usagef("--reranker model: this build carries no reranker (fit one with 'airs train retrieval --reranker')")
		}
		if *embedder != "model" && !strings.HasPrefix(*embedder, "model:") {
			return usagef("--reranker model: the committed reranker was fitted over the tool model alone (%s): add --embedder model", r.Embedder)
		}
		o.Index.Reranker = r
	default:
		r, err := embeddings.LoadReranker(*reranker)
		if err != nil {
			return usagef("--reranker: %v", err)
		}
		o.Index.Reranker = r
	}
	if !*quiet {
		o.Progress = a.stderr
	}
	if strings.HasPrefix(*embedder, "ollama:") {
		c, err := ollama.FromEnvironment()
		if err != nil {
			return err
		}
		o.EmbedClient = c
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	return retrieval.Run(ctx, o, a.stdout)
}
