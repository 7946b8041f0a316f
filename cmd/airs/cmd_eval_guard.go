package main

import (
	"encoding/json"
	"fmt"
	"text/tabwriter"

	"github.com/airs-dev/airs/guard/anomaly/traffic"
)

const evalGuardUsage = `Usage:
  airs eval guard [--train-days 28] [--test-days 14] [--seed 1] [--json]

Measures the anomaly gate (the model 'airs guard train' makes) on the
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
	fmt.Fprintf(a.stdout, "anomaly gate on the traffic model: trained on %d days, %d held out (model %s, %d nodes)\n\n",
		*trainDays, *testDays, m.Version(), m.Nodes())
	tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "kind\tcalls\t≥ 0.8\t≥ 0.9\t≥ 0.95\t")
	for _, l := range lines {
		fmt.Fprintf(tw, "%s\t%d\t%.1f%%\t%.1f%%\t%.1f%%\t\n", l.Kind, l.N, 100*l.At[0], 100*l.At[1], 100*l.At[2])
	}
	tw.Flush()
	fmt.Fprintln(a.stdout, "\nanomalies: the share detected at each threshold; normal: the false-positive rate")
	return nil
}
