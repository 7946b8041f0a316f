package main

import (
	"context"
	"fmt"

	"github.com/airs-dev/airs/config"
	"github.com/airs-dev/airs/guard"
	"github.com/airs-dev/airs/guard/anomaly"
	"github.com/airs-dev/airs/internal/engine"
	"github.com/airs-dev/airs/pipeline/audit"
)

var guardCmd = &command{
	Name:    "guard",
	Summary: "the anomaly gate: train its model from the audit log, show what is in force",
	Usage: `Usage:
  airs guard train [--audit FILE] [--out MODEL] [--seed N] [--json]
  airs guard status [--json]

The anomaly gate scores every call without any LLM: a decision tree over
the caller, the tool, the hour (UTC), the caller's calls in the last minute,
whether the tool is new to the caller, the params' size and the caller's
trust level (agents.ID.trust). A score is in [0, 1]; at guard.anomaly.warn
(0.8) a warning is logged and the call goes on, at review (0.9) it goes on
and is queued for review ('airs review'), at block (0.95) it is held until a
person confirms it, as a destructive call is (exit 23, 428 over HTTP, with
a confirmation id). Every scored call's audit record carries anomaly_score
and anomaly_model (the model's version).

'train' learns what is usual from the audit log (--audit FILE; by default
$AIRS_HOME/audit.jsonl, or the database's with storage.audit: postgres —
every replica's calls): it replays the log's calls in order to compute the
features as the running airs does, leaves out calls a person denied or that
are still held, and trains the tree to tell those calls from a reference
sample of plausible calls (the anomaly score of a call is the reference's
share where it falls: see 'go doc github.com/airs-dev/airs/guard/anomaly').
It writes the model to --out (default guard.anomaly.model, else
$AIRS_HOME/guard/anomaly.model), atomically; a running 'airs serve' picks
a new model up within seconds (or on SIGHUP), without a restart. With
storage.guard: postgres the model goes to the database instead (the slot of
guard.anomaly.model, or of guard.anomaly.candidate when --out names that
file; another --out is still a file), and every replica's gate polls its
version and loads a new one within seconds. It needs
at least 20 calls; weeks of normal use teach it the daily rhythm.

'status' says which model is in force (its version), the thresholds, and
the reduced mode when there is no model ("anomaly gate off").

'airs eval guard' measures the gate on a documented traffic model with the
seed's anomalies injected.

Examples:
  airs guard train
  airs guard train --audit /var/backups/airs/audit.jsonl --out /tmp/candidate.model
  airs guard status
`,
	Run: runGuard,
}

func runGuard(a *app, args []string) error {
	if len(args) == 0 {
		return usagef("say 'train' or 'status'")
	}
	switch args[0] {
	case "-h", "--help", "-help":
		printCommandUsage(a.stdout, a.cmd, nil)
		return nil
	case "train":
		return guardTrain(a, args[1:])
	case "status":
		return guardStatus(a, args[1:])
	}
	return usagef("unknown 'guard' action %q: say 'train' or 'status'", args[0])
}

func guardTrain(a *app, args []string) error {
	fs := a.flags()
	auditPath := fs.String("audit", "", "the audit log `file` to learn from (default $AIRS_HOME/audit.jsonl, or PostgreSQL's with storage.audit: postgres)")
	out := fs.String("out", "", "where to write the `model` (default guard.anomaly.model, else $AIRS_HOME/guard/anomaly.model)")
	seed := fs.Uint64("seed", 1, "the reference sample's seed (the same log and seed give the same model)")
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
		ts, err = guard.ReadTrainingSet(*auditPath, c.TrustLevels(), c.Guard.Anomaly.Block)
	}
	if err != nil {
		return err
	}
	m, err := anomaly.Train(ts.Calls, anomaly.TrainOptions{Seed: *seed})
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
		return writeJSON(a.stdout, map[string]any{"model": *out, "version": m.Version(), "nodes": m.Nodes(),
			"calls": len(ts.Calls), "records": ts.Records, "skipped": ts.Skipped, "excluded": ts.Excluded,
			"callers": len(callers), "tools": len(tools), "from": ts.From, "to": ts.To})
	}
	fmt.Fprintf(a.stdout, "trained on %d calls of %d callers and %d tools, %s to %s (%d records: %d refused before scoring, %d denied or held)\n",
		len(ts.Calls), len(callers), len(tools), ts.From.UTC().Format("2006-01-02 15:04"), ts.To.UTC().Format("2006-01-02 15:04"),
		ts.Records, ts.Skipped, ts.Excluded)
	fmt.Fprintf(a.stdout, "model %s (%d nodes) written to %s\n", m.Version(), m.Nodes(), *out)
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
	if !c.Guard.Enabled {
		mode, notice = "off", "guard.enabled is false: neither the anomaly gate nor intent verification runs"
	} else {
		g := engine.StartAnomaly(c, nil, false)
		defer g.Close()
		version, candidate = g.Models.Versions()
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
			"block": an.Block, "notice": notice})
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
	return nil
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
	return guard.TrainingSetOf(recs, c.TrustLevels(), c.Guard.Anomaly.Block), nil
}
