package main

import (
	"context"
	"fmt"
	"os"
	"text/tabwriter"

	"github.com/airs-dev/airs/config"
	"github.com/airs-dev/airs/guard"
	"github.com/airs-dev/airs/guard/anomaly"
	"github.com/airs-dev/airs/guard/anomaly/traffic"
	"github.com/airs-dev/airs/internal/engine"
	"github.com/airs-dev/airs/pipeline/audit"
)

var guardCmd = &command{
	Name:    "guard",
	Summary: "the anomaly gate: train its model from the audit log, show what is in force",
	Usage: `Usage:
  airs guard train [--audit FILE] [--out MODEL] [--update] [--json]
  airs guard status [--json]
  airs guard trace [--audit FILE] [--out TRACE]

The anomaly gate scores every call without any LLM, against a profile of
its agent learned from the audit log: a tool the agent never called, a
call rate far above its fastest (in the last 10 s, minute, and over its
last five calls), arguments far larger than it sends that tool, a folder it
never touched (the paths its arguments name), an hour of day it never works.
Each feature's score is bounded by the history behind it: with little
history a feature abstains rather than holding ordinary calls (the hour of
day is judged only after several days). A score is in [0, 1]; at guard.anomaly.warn
(0.8) a warning is logged and the call goes on, at review (0.9) it goes on
and is queued for review ('airs review'), at block (0.95) it is held until a
person confirms it, as a destructive call is (exit 23, 428 over HTTP, with
a confirmation id). Every scored call's audit record carries anomaly_score
and anomaly_model (the model's version).

'train' learns what is usual from the audit log (--audit FILE; by default
$AIRS_HOME/audit.jsonl, or the database's with storage.audit: postgres —
every replica's calls): it replays the log's calls in order to compute the
features as the running airs does (a held call counts in its agent's rate
like any other), leaves out calls a person denied or that are still held,
and learns the rest — a held call a person approved included, so an
approval makes that pattern usual for the agent (see 'go doc
github.com/airs-dev/airs/guard/anomaly'). A running 'airs serve' learns
approvals at once, and updates its model file with the log's new calls
every hour; --update does the same by hand.
It writes the model to --out (default guard.anomaly.model, else
$AIRS_HOME/guard/anomaly.model), atomically; a running 'airs serve' picks
a new model up within seconds (or on SIGHUP), without a restart. With
storage.guard: postgres the model goes to the database instead (the slot of
guard.anomaly.model, or of guard.anomaly.candidate when --out names that
file; another --out is still a file), and every replica's gate polls its
version and loads a new one within seconds. It needs
at least 20 calls; days of normal use teach it the daily rhythm.

'status' says which model is in force (its version), the thresholds, the
reduced mode when there is no model ("anomaly gate off"), and what the
model can judge of each agent yet.

'trace' writes the audit log's scored calls as a trace (one JSON line a
call: time, agent, tool, args_bytes, label "normal") for 'airs eval guard
--train/--test'; the audit log keeps no arguments, so neither does the
trace.

'airs eval guard' measures the gate on traffic models and on traces.

Examples:
  airs guard train
  airs guard train --audit /var/backups/airs/audit.jsonl --out /tmp/candidate.model
  airs guard status
  airs guard trace --out /tmp/today.jsonl
`,
	Run: runGuard,
}

func runGuard(a *app, args []string) error {
	if len(args) == 0 {
		return usagef("say 'train', 'status' or 'trace'")
	}
	switch args[0] {
	case "-h", "--help", "-help":
		printCommandUsage(a.stdout, a.cmd, nil)
		return nil
	case "train":
		return guardTrain(a, args[1:])
	case "status":
		return guardStatus(a, args[1:])
	case "trace":
		return guardTrace(a, args[1:])
	}
	return usagef("unknown 'guard' action %q: say 'train', 'status' or 'trace'", args[0])
}

func guardTrain(a *app, args []string) error {
	fs := a.flags()
	auditPath := fs.String("audit", "", "the audit log `file` to learn from (default $AIRS_HOME/audit.jsonl, or PostgreSQL's with storage.audit: postgres)")
	out := fs.String("out", "", "where to write the `model` (default guard.anomaly.model, else $AIRS_HOME/guard/anomaly.model)")
	update := fs.Bool("update", false, "learn only the calls newer than the model at --out (counting: the same model as training on the whole log, without replaying it)")
	asJSON := fs.Bool("json", false, "print one JSON object")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 0 {
		return usagef("'guard train' takes no arguments (did you mean --audit %s?)", pos[0])
	}
	c, err := a.config()
	if err != nil {
		return err
	}
	outGiven := *out != ""
	if *out == "" {
		*out = c.Guard.Anomaly.Model
	}
	var ts *guard.TrainingSet
	if *auditPath == "" && c.Storage.Audit == config.StoragePostgres {
		// storage.audit: postgres — the log every replica appends to.
		*auditPath = "the PostgreSQL audit log (storage.dsn " + c.Storage.RedactedDSN() + ")"
		ts, err = pgTrainingSet(a, c)
	} else {
		if *auditPath == "" {
			*auditPath = c.AuditPath()
		}
		ts, err = guard.ReadTrainingSet(*auditPath, c.Guard.Anomaly.Block)
	}
	if err != nil {
		return err
	}
	var m *anomaly.Model
	if *update {
		cur, lerr := anomaly.Load(*out)
		if lerr != nil {
			return fmt.Errorf("--update: %w (train a first model without --update)", lerr)
		}
		m, err = cur.Update(ts.After(cur.Through()))
	} else {
		m, err = anomaly.Train(ts.Calls)
	}
	if err != nil {
		return fmt.Errorf("%w (%s has %d records, %d of them usable)", err, *auditPath, ts.Records, len(ts.Calls))
	}
	slot, err := a.saveTrainedModel(c, m, *out, outGiven)
	if err != nil {
		return err
	}
	if slot != "" {
		*out = "PostgreSQL (airs_anomaly_models '" + slot + "')"
	}
	callers, tools := map[string]bool{}, map[string]bool{}
	for _, f := range ts.Calls {
		callers[f.Caller], tools[f.Tool] = true, true
	}
	if *asJSON {
		return writeJSON(a.stdout, map[string]any{"model": *out, "version": m.Version(), "agents": m.Agents(),
			"calls": len(ts.Calls), "records": ts.Records, "skipped": ts.Skipped, "excluded": ts.Excluded,
			"callers": len(callers), "tools": len(tools), "from": ts.From, "to": ts.To})
	}
	fmt.Fprintf(a.stdout, "trained on %d calls of %d callers and %d tools, %s to %s (%d records: %d refused before scoring, %d denied or held)\n",
		len(ts.Calls), len(callers), len(tools), ts.From.UTC().Format("2006-01-02 15:04"), ts.To.UTC().Format("2006-01-02 15:04"),
		ts.Records, ts.Skipped, ts.Excluded)
	fmt.Fprintf(a.stdout, "model %s (%d agents) written to %s\n", m.Version(), m.Agents(), *out)
	fmt.Fprintln(a.stdout, "'airs guard status' says what it can judge of each agent yet")
	if slot != "" {
		fmt.Fprintln(a.stdout, "it is in force for the next call; every airs serve replica on this database loads it within seconds")
	} else if *out == c.Guard.Anomaly.Model {
		fmt.Fprintln(a.stdout, "it is in force for the next call; a running airs serve loads it within seconds")
	} else {
		fmt.Fprintf(a.stdout, "to use it: guard.anomaly.model: %s (or as guard.anomaly.candidate for a share of callers)\n", *out)
	}
	return nil
}

func guardStatus(a *app, args []string) error {
	fs := a.flags()
	asJSON := fs.Bool("json", false, "print one JSON object")
	if _, err := parseArgs(fs, args); err != nil {
		return err
	}
	c, err := a.config()
	if err != nil {
		return err
	}
	an := c.Guard.Anomaly
	mode, version, candidate, notice := "on", "", "", ""
	var judges []anomaly.Judgement
	if !c.Guard.Enabled {
		mode, notice = "off", "guard.enabled is false: neither the anomaly gate nor intent verification runs"
	} else {
		g := engine.StartAnomaly(c, nil, false)
		defer g.Close()
		version, candidate = g.Models.Versions()
		if m := g.Models.Main(); m != nil {
			judges = m.Judges()
		}
		if g.Notice != "" {
			notice = g.Notice
		}
		if version == "" {
			mode = "off"
		}
	}
	if *asJSON {
		return writeJSON(a.stdout, map[string]any{"mode": mode, "model": an.Model, "version": version, "candidate": an.Candidate,
			"candidate_version": candidate, "candidate_share": an.CandidateShare, "warn": an.Warn, "review": an.Review,
			"block": an.Block, "notice": notice, "agents": judges})
	}
	fmt.Fprintf(a.stdout, "anomaly gate: %s\n", mode)
	if version != "" {
		fmt.Fprintf(a.stdout, "model: %s (version %s)\n", an.Model, version)
	}
	if candidate != "" {
		fmt.Fprintf(a.stdout, "candidate: %s (version %s) for %.0f%% of callers\n", an.Candidate, candidate, an.CandidateShare*100)
	}
	fmt.Fprintf(a.stdout, "thresholds: warn %.2f, review %.2f, block %.2f\n", an.Warn, an.Review, an.Block)
	if notice != "" {
		fmt.Fprintln(a.stdout, notice)
	}
	if len(judges) > 0 {
		fmt.Fprintln(a.stdout, "\nwhat the model can judge of each agent (a feature with too little history abstains: it never raises the score)")
		tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "agent\tcalls\tminutes\tdays\tnew tool\tnew folder\tburst at\targs at\thour of day\t")
		for _, j := range judges {
			fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t\n", j.Agent, j.Calls, j.Minutes, j.Days,
				judged(j.NewTool > 0, fmt.Sprintf("%.2f", j.NewTool)), judged(j.NewFolder > 0, fmt.Sprintf("%.2f", j.NewFolder)),
				judged(j.Rate, fmt.Sprintf("%.0f/min", j.RateAt)), judged(j.SizeAt > 0, fmt.Sprintf("%d B", j.SizeAt)),
				judged(j.Hour, "yes"))
		}
		tw.Flush()
		fmt.Fprintf(a.stdout, "new tool/folder: the score one gets; burst/args: what scores 0.9; hour of day: judged after %d days of an agent's history\n", anomaly.MinDaysForHour)
	}
	return nil
}

func judged(ok bool, v string) string {
	if !ok {
		return "not yet"
	}
	return v
}

// pgTrainingSet reads the PostgreSQL audit log's records for guard train.
func pgTrainingSet(a *app, c *config.Config) (*guard.TrainingSet, error) {
	db, err := a.sharedPG()
	if err != nil {
		return nil, err
	}
	var recs []audit.Record
	if err := db.ReadAudit(context.Background(), func(r *audit.Record) error {
		recs = append(recs, *r)
		return nil
	}); err != nil {
		return nil, err
	}
	return guard.TrainingSetOf(recs, c.Guard.Anomaly.Block), nil
}

// guardTrace is `airs guard trace`: the audit log's scored calls as a
// trace for `airs eval guard --train/--test`.
func guardTrace(a *app, args []string) error {
	fs := a.flags()
	auditPath := fs.String("audit", "", "the audit log `file` (default $AIRS_HOME/audit.jsonl)")
	out := fs.String("out", "", "write the trace to `file` (default standard output)")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 0 {
		return usagef("'guard trace' takes no arguments (did you mean --audit %s?)", pos[0])
	}
	if *auditPath == "" {
		c, err := a.config()
		if err != nil {
			return err
		}
		*auditPath = c.AuditPath()
	}
	lines, err := guard.TraceOfAudit(*auditPath)
	if err != nil {
		return err
	}
	w := a.stdout
	if *out != "" {
		f, err := os.Create(*out)
		if err != nil {
			return err
		}
		defer f.Close()
		w = f
	}
	if err := traffic.WriteTrace(w, lines); err != nil {
		return err
	}
	if *out != "" {
		fmt.Fprintf(a.stderr, "%d calls written to %s\n", len(lines), *out)
	}
	return nil
}
