package main

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/airs-dev/airs/evals/speculate"
)

const speculateUsage = `Usage:
  airs eval speculate [--data CONVERSATIONS.jsonl.gz] [--functions FUNCS.jsonl.gz]
                      [--service 5ms] [--top 2] [--ttl 10s] [--json]

Measures speculative execution on a replay of BFCL multi-turn conversations.
Every ground-truth call, with its arguments, is made in order through a real
pipeline as the conversation's caller; after each user turn and each call the
predictor speculates its top predictions (read-only, idempotent functions
only: the list is in evals/speculate), and a real call that matches one is
answered from it. Three runs on the same replay:

  off     no speculation: the latency baseline
  airs    the engine's predictor as airs serve runs it: the live
          recommender's suggestions (learning online from the replay,
          starting empty) and affinity repeats
  oracle  speculates exactly the next call: the ceiling left by the sandbox
          rule (read-only + idempotent), the TTL and write invalidation

BFCL's functions cannot run here: each is a handler that waits --service and
echoes its params. Clock: 60 s before each turn, 2 s before each call.

Output: a table, or with --json one line per run
{"dataset","predictor","calls","speculable_calls","speculations","hits",
"hit_rate","hit_rate_speculable","used","wasted","saved_ms","wasted_ms",
"mean_latency_ms","p50_latency_ms","by_source","call_errors"}.
hit_rate = hits / calls; used = hits / speculations; saved_ms and wasted_ms
are handler time (used and never-used speculations).

Files: --data defaults to $DATA_DIR/bfcl_multi_turn/base.jsonl.gz and
--functions to $DATA_DIR/bfcl_multi_turn/functions.jsonl.gz (DATA_DIR
defaults to ../shared/data); evals/recommend/testdata has a small set.

Examples:
  airs eval speculate
  airs eval speculate --json
  airs eval speculate --data evals/recommend/testdata/conversations.jsonl.gz --functions evals/recommend/testdata/functions.jsonl.gz

Flags:
`

// evalSpeculate is `airs eval speculate`: the flags around speculate.Run.
func evalSpeculate(a *app, args []string) error {
	fs := a.flags()
	data := fs.String("data", "", "conversations `file` (default $DATA_DIR/bfcl_multi_turn/base.jsonl.gz)")
	funcs := fs.String("functions", "", "functions `file` (default $DATA_DIR/bfcl_multi_turn/functions.jsonl.gz)")
	service := fs.Duration("service", 5*time.Millisecond, "each function's service time")
	top := fs.Int("top", 2, "predictions speculated after each turn and call")
	ttl := fs.Duration("ttl", 10*time.Second, "a speculative result's life")
	asJSON := fs.Bool("json", false, "one JSON line per run")
	fs.Usage = func() {
		fmt.Fprint(a.stdout, speculateUsage)
		fs.PrintDefaults()
	}
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("unexpected argument %q ('eval speculate' takes flags only; see --help)", pos[0])
	}
	if *service <= 0 || *top < 1 || *ttl <= 0 {
		return usagef("--service and --ttl must be above 0 and --top at least 1")
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
	for _, f := range []string{*data, *funcs} {
		if _, err := os.Stat(f); err != nil {
			return usagef("%v\nhint: the BFCL multi-turn files are $DATA_DIR/bfcl_multi_turn/base.jsonl.gz and functions.jsonl.gz (DATA_DIR is %q); set DATA_DIR or pass --data and --functions; to try the command on the small set in this repository:\n  airs eval speculate --data evals/recommend/testdata/conversations.jsonl.gz --functions evals/recommend/testdata/functions.jsonl.gz\n%s", err, os.Getenv("DATA_DIR"), dataOrigin)
		}
	}
	_, err = speculate.Run(a.context(), speculate.Options{Data: *data, Functions: *funcs, Service: *service, Top: *top, TTL: *ttl, JSON: *asJSON}, a.stdout)
	return err
}
