package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/airs-dev/airs/evals/recommend"
)

const recommendUsage = `Usage:
  airs eval recommend [--train TRAIN.jsonl.gz] [--data TEST.jsonl.gz] [--functions FUNCS.jsonl.gz]
                      [--folds 5] [--json] [--learning-curve FILE.png]

Measures the recommender's learning models on BFCL multi-turn conversations.
For every ground-truth call, given the conversation so far (the user turns up
to and including the current one, and every previous call, this turn's
earlier calls included), it ranks the functions of the conversation's
involved classes, and reports hit@1, hit@3 and MRR of the true call for:

  airs       the recommender's own models: recommender.TextModel on the
             current turn (conversation signal) and on the earlier turns,
             each turn of age weighing half (task signal), RecentScores on
             the previous calls, History (trigram → bigram → unigram) on the
             previous calls; fused by recommender.Fusion trained on the
             training conversations (each true call accepted, 8 sampled
             other candidates dismissed, 3 passes; features cross-fitted)
  markov     first-order Markov chain over the previous call's name
             (frequency when there is none or it was never seen)
  frequency  the function called most often in training
  bm25       BM25 of the current turn's text over the functions' name,
             description and parameters

Training and test: with --train, fit on TRAIN and score on --data; without
it, 5-fold cross-validation over --data (--folds), folds by conversation
(FNV hash of the id, deterministic), figures pooled over the folds.

Files: --data defaults to $DATA_DIR/bfcl_multi_turn/base.jsonl.gz and
--functions to $DATA_DIR/bfcl_multi_turn/functions.jsonl.gz (DATA_DIR
defaults to ../shared/data). A conversation is a line
{"id","involved_classes","turns":[{"user","calls":["cd(folder='x')",…]}]}, a
function a line {"class","name","description","parameters"}; a call's
function is the text before "(". evals/recommend/testdata has a small set.

--learning-curve FILE.png also runs the simulated user of EVALS.md
(recommend.DefaultSimUser: a hidden preference for history over chat text,
for the math tools and against the social ones) on 500 recommendations
ranked by Fusion, once learning from the feedback and once frozen at the
prior, and plots acceptance per 50 recommendations.

Output: a table, or with --json one line per method
{"dataset":"bfcl_multi_turn","method":…,"n":…,"hit@1":…,"hit@3":…,"mrr":…}
(and one line per simulation run with --learning-curve).

Examples:
  airs eval recommend
  airs eval recommend --json --learning-curve /tmp/curve.png
  airs eval recommend --data evals/recommend/testdata/conversations.jsonl.gz --functions evals/recommend/testdata/functions.jsonl.gz --folds 3
  airs eval recommend --train train.jsonl.gz --data test.jsonl.gz --functions functions.jsonl.gz --json

Flags:
`

// evalRecommend is `airs eval recommend`: the flags around recommend.Run.
func evalRecommend(a *app, args []string) error {
	fs := a.flags()
	train := fs.String("train", "", "training conversations `file` (default: cross-validation over --data)")
	data := fs.String("data", "", "test conversations `file` (default $DATA_DIR/bfcl_multi_turn/base.jsonl.gz)")
	funcs := fs.String("functions", "", "functions `file` (default $DATA_DIR/bfcl_multi_turn/functions.jsonl.gz)")
	folds := fs.Int("folds", 5, "cross-validation folds when there is no --train")
	asJSON := fs.Bool("json", false, "one JSON line per method")
	curve := fs.String("learning-curve", "", "also simulate a user and write the learning curve to this PNG `file`")
	fs.Usage = func() {
		fmt.Fprint(a.stdout, recommendUsage)
		fs.PrintDefaults()
	}
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("unexpected argument %q ('eval recommend' takes flags only; see --help)", pos[0])
	}
	dir := os.Getenv("DATA_DIR")
	if dir == "" {
		dir = defaultDataDir
	}
	if *data == "" {
		*data = filepath.Join(dir, "bfcl_multi_turn", "base.jsonl.gz")
	}
	if *funcs == "" {
		*funcs = filepath.Join(dir, "bfcl_multi_turn", "functions.jsonl.gz")
	}
	for _, f := range []string{*train, *data, *funcs} {
		if f == "" {
			continue
		}
		if _, err := os.Stat(f); err != nil {
			return usagef("%v\nhint: the BFCL multi-turn files are $DATA_DIR/bfcl_multi_turn/base.jsonl.gz and functions.jsonl.gz (DATA_DIR is %q); set DATA_DIR or pass --data and --functions; to try the command on the small set in this repository:\n  airs eval recommend --data evals/recommend/testdata/conversations.jsonl.gz --functions evals/recommend/testdata/functions.jsonl.gz --folds 3\n%s", err, os.Getenv("DATA_DIR"), dataOrigin)
		}
	}
	_, _, err = recommend.Run(recommend.RunOptions{Train: *train, Data: *data, Functions: *funcs, Folds: *folds, JSON: *asJSON, LearningCurve: *curve}, a.stdout)
	return err
}
