package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"text/tabwriter"

	"github.com/airs-dev/airs/guard"

	"github.com/airs-dev/airs/guard/anomaly/traffic"
)

const evalGuardUsage = `Usage:
  airs eval guard [--train-days 28] [--test-days 14] [--seed 1] [--json]
  airs eval guard --train TRACE --test TRACE [--block 0.95] [--json]
  airs eval guard --generate DIR [--seed 1] [--train-minutes 30 | --history-days 7] [--test-minutes 240]

With --train and --test it measures the gate on recorded traffic: it
learns a model from the train trace as 'airs guard train' does, then
replays the test trace through the scorer a running airs uses, its history
warmed with the train trace as a restart warms it from the audit log, doing
with a held call (at --block) what the running airs does: the call counts
in its agent's rates, and its tool and folders are not learned (nobody
approves it here). A trace is JSON Lines in time order:
  {"time":"2026-01-05T10:00:00Z","agent":"ana","tool":"read-file","args_bytes":38,"label":"normal"}
with optional "args" (the arguments: their paths are a feature) and
"factor" (a burst's multiple of the agent's rate); label is normal, burst,
novel, payload, off-hours or path. 'airs guard trace' records one from the
audit log. The normal line adds the share held, overall and for the agent
held most. Goals (trained on 30 minutes): normal ≤ 1% at 0.8, no agent
with more than 5% held; bursts ≥ 20× ≥ 90% at 0.9; novel and payload ≥ 95%
at 0.9.

--generate DIR writes train.jsonl and test.jsonl of the hard traffic model
(guard/anomaly/traffic, Hard): eight agents working in sessions with
pauses, sharing tools, naming files in their own folders, at paces two
orders of magnitude apart; the test adds bursts at 5×, 20× and 50×, tools
other agents use, 100× payloads, foreign folders and (with
--history-days 4 or more) off-hours sessions.

Without them:

Measures the anomaly gate (the model 'airs guard train' makes). Without
--train/--test/--generate, on the
documented traffic model of guard/anomaly/traffic: three human agents
working weekdays 8–19h UTC with their own tool habits, an agent that reads
about 5 files a day, and two bots at fixed hours. It trains on
--train-days of that traffic, then scores --test-days of held-out normal
traffic and the seed's anomalies, injected after it:

  burst      the 5-files-a-day agent reading 500 files in one minute
  novel      every agent calling send-email, a tool it never called
  off-hours  each bot running its usual job at an hour it never runs

For each kind, the share of its calls scoring at or above 0.8, 0.9 and 0.95
(the default warn, review and block thresholds); for the normal calls, the
same shares are false positives. Goals (issue 16): burst and novel ≥ 95%
at 0.9; normal ≤ 0.5% at 0.8. The same seed gives the same figures.

Output: a table, or with --json one line per kind
  {"kind":"burst","n":…,"detected@0.8":…,"detected@0.9":…,"detected@0.95":…}
and for the normal calls
  {"kind":"normal","n":…,"fpr@0.8":…,"fpr@0.9":…,"fpr@0.95":…}

Examples:
  airs eval guard
  airs eval guard --json
  airs eval guard --seed 7 --train-days 56
  airs eval guard --generate /tmp/hard && airs eval guard --train /tmp/hard/train.jsonl --test /tmp/hard/test.jsonl

Flags:
`

type guardKindLine struct {
	Kind string  `json:"kind"`
	N    int     `json:"n"`
	At08 float64 `json:"detected@0.8"`
	At09 float64 `json:"detected@0.9"`
	At95 float64 `json:"detected@0.95"`
}

type guardNormalLine struct {
	Kind string  `json:"kind"`
	N    int     `json:"n"`
	At08 float64 `json:"fpr@0.8"`
	At09 float64 `json:"fpr@0.9"`
	At95 float64 `json:"fpr@0.95"`
}

// evalGuard is `airs eval guard`: the flags around traffic.Evaluate.
func evalGuard(a *app, args []string) error {
	fs := a.flags()
	trainDays := fs.Int("train-days", 28, "days of normal traffic to train on")
	testDays := fs.Int("test-days", 14, "days of held-out normal traffic to score")
	seed := fs.Uint64("seed", 1, "the traffic's and the reference sample's seed")
	asJSON := fs.Bool("json", false, "one JSON line per kind")
	trainTrace := fs.String("train", "", "learn from this trace `file`")
	testTrace := fs.String("test", "", "replay this trace `file`")
	block := fs.Float64("block", 0.95, "the block threshold the replay holds calls at")
	generate := fs.String("generate", "", "write a generated train.jsonl and test.jsonl to `dir`")
	trainMinutes := fs.Int("train-minutes", 30, "--generate: minutes of history")
	historyDays := fs.Int("history-days", 0, "--generate: days of history instead of minutes")
	testMinutes := fs.Int("test-minutes", 240, "--generate: minutes of test traffic")
	fs.Usage = func() {
		fmt.Fprint(a.stdout, evalGuardUsage)
		fs.PrintDefaults()
	}
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 0 {
		return usagef("'eval guard' takes no arguments")
	}
	if *generate != "" {
		return evalGuardGenerate(a, *generate, traffic.HardOptions{Seed: *seed, TrainMinutes: *trainMinutes, Days: *historyDays, TestMinutes: *testMinutes})
	}
	if *trainTrace != "" || *testTrace != "" {
		if *trainTrace == "" || *testTrace == "" {
			return usagef("--train and --test go together: a trace to learn from and one to replay")
		}
		return evalGuardTraces(a, *trainTrace, *testTrace, *block, *asJSON)
	}
	if *trainDays < 1 || *testDays < 1 {
		return usagef("--train-days and --test-days must be at least 1")
	}
	m, lines, err := traffic.Evaluate(traffic.EvalOptions{TrainDays: *trainDays, TestDays: *testDays, Seed: *seed})
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(a.stdout) // one line per kind
		for _, l := range lines {
			var v any = guardKindLine{l.Kind, l.N, l.At[0], l.At[1], l.At[2]}
			if l.Kind == "normal" {
				v = guardNormalLine{l.Kind, l.N, l.At[0], l.At[1], l.At[2]}
			}
			if err := enc.Encode(v); err != nil {
				return err
			}
		}
		return nil
	}
	fmt.Fprintf(a.stdout, "anomaly gate on the traffic model: trained on %d days, %d held out (model %s, %d agents)\n\n",
		*trainDays, *testDays, m.Version(), m.Agents())
	tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "kind\tcalls\t≥ 0.8\t≥ 0.9\t≥ 0.95\t")
	for _, l := range lines {
		fmt.Fprintf(tw, "%s\t%d\t%.1f%%\t%.1f%%\t%.1f%%\t\n", l.Kind, l.N, 100*l.At[0], 100*l.At[1], 100*l.At[2])
	}
	tw.Flush()
	fmt.Fprintln(a.stdout, "\nanomalies: the share detected at each threshold; normal: the false-positive rate")
	return nil
}

type guardTraceNormalLine struct {
	Kind       string  `json:"kind"`
	N          int     `json:"n"`
	At08       float64 `json:"fpr@0.8"`
	At09       float64 `json:"fpr@0.9"`
	At95       float64 `json:"fpr@0.95"`
	Held       float64 `json:"held"`
	MostHeld   float64 `json:"most_held_agent_share"`
	MostHeldBy string  `json:"most_held_agent"`
}

func readTraceFile(path string) ([]traffic.TraceLine, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	lines, err := traffic.ReadTrace(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return lines, nil
}

// evalGuardTraces is `airs eval guard --train --test`.
func evalGuardTraces(a *app, trainPath, testPath string, block float64, asJSON bool) error {
	train, err := readTraceFile(trainPath)
	if err != nil {
		return err
	}
	test, err := readTraceFile(testPath)
	if err != nil {
		return err
	}
	m, lines, err := guard.EvaluateTraces(train, test, block)
	if err != nil {
		return err
	}
	if asJSON {
		enc := json.NewEncoder(a.stdout)
		for _, l := range lines {
			var v any = guardKindLine{l.Kind, l.N, l.At[0], l.At[1], l.At[2]}
			if l.Kind == traffic.LabelNormal {
				v = guardTraceNormalLine{l.Kind, l.N, l.At[0], l.At[1], l.At[2], l.Held, l.MostHeld, l.MostHeldBy}
			}
			if err := enc.Encode(v); err != nil {
				return err
			}
		}
		return nil
	}
	fmt.Fprintf(a.stdout, "anomaly gate on %s, trained on %s (%d calls; model %s, %d agents)\n\n", testPath, trainPath, len(train), m.Version(), m.Agents())
	tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "kind\tcalls\t≥ 0.8\t≥ 0.9\t≥ 0.95\t")
	for _, l := range lines {
		fmt.Fprintf(tw, "%s\t%d\t%.1f%%\t%.1f%%\t%.1f%%\t\n", l.Kind, l.N, 100*l.At[0], 100*l.At[1], 100*l.At[2])
	}
	tw.Flush()
	for _, l := range lines {
		if l.Kind == traffic.LabelNormal {
			fmt.Fprintf(a.stdout, "\nnormal calls held (≥ %.2f): %.2f%%; the agent held most: %s, %.2f%% of its calls\n", block, 100*l.Held, l.MostHeldBy, 100*l.MostHeld)
		}
	}
	fmt.Fprintln(a.stdout, "anomalies: the share detected at each threshold; normal: the false-positive rate")
	return nil
}

// evalGuardGenerate is `airs eval guard --generate`.
func evalGuardGenerate(a *app, dir string, o traffic.HardOptions) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	train, test := traffic.Hard(o)
	for name, lines := range map[string][]traffic.TraceLine{"train.jsonl": train, "test.jsonl": test} {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			return err
		}
		err = traffic.WriteTrace(f, lines)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	}
	fmt.Fprintf(a.stdout, "%d training and %d test calls written to %s (train.jsonl, test.jsonl)\n", len(train), len(test), dir)
	return nil
}
