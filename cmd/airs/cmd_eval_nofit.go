package main

import (
	"fmt"
	"path/filepath"

	"github.com/airs-dev/airs/internal/engine"
)

// evalNoFit is `airs eval nofit`: the "no tool fits" measurement of
// no-LLM mode on a realistic and an off-topic request set (EVALS.md).
func evalNoFit(a *app, args []string) error {
	fs := a.flags()
	realistic := fs.String("realistic", filepath.Join("evals", "data", "realistic.txt"), "realistic requests, one a line as TOOL<TAB>request")
	offtopic := fs.String("offtopic", filepath.Join("evals", "data", "offtopic.txt"), "requests no tool serves, one a line")
	asJSON := fs.Bool("json", false, "print the figures, and every refused or answered request, as JSON")
	fs.Usage = func() {
		fmt.Fprint(a.stderr, `Usage:
  airs eval nofit [--realistic FILE] [--offtopic FILE] [--json]

Runs both request sets through no-LLM selection (nothing runs) with the
tools you may call, and prints: the share of realistic requests answered
"none" (goal <= 5%), the share of off-topic requests answered "none" (goal
>= 90%), the threshold in force (selection.min_coverage) and the one the
calibration rule gives on the realistic set (its 5th percentile of best
coverage). The defaults are the sets committed in evals/data (run from the
repository); EVALS.md, "No tool fits", has the figures for the builtins.

Flags:
`)
		fs.PrintDefaults()
	}
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("'eval nofit' takes no arguments, only --realistic, --offtopic and --json")
	}
	rs, err := engine.ReadRequests(*realistic)
	if err != nil {
		return err
	}
	os, err := engine.ReadRequests(*offtopic)
	if err != nil {
		return err
	}
	caller, err := a.caller()
	if err != nil {
		return err
	}
	e, closeAll, err := a.build(a.context(), engineSpec{Channel: "run", Model: "none"})
	if err != nil {
		return err
	}
	defer closeAll()
	f, err := e.MeasureNoFit(a.context(), caller, rs, os)
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(a.stdout, f)
	}
	fmt.Fprintf(a.stdout, "threshold (selection.min_coverage): %.2f; the rule gives %.2f on this realistic set\n", f.Threshold, f.Calibrated)
	fmt.Fprintf(a.stdout, "realistic: %d, answered none %d (%.1f%%; goal <= 5%%), right tool %d, tool fits but arguments missing %d, asked the user %d\n",
		f.Realistic, f.RealisticRefused, 100*f.RefusedRate, f.RealisticRight, f.RealisticNotRunnable, f.RealisticAsked)
	fmt.Fprintf(a.stdout, "off-topic: %d, answered none %d (%.1f%%; goal >= 90%%)\n", f.OffTopic, f.OffTopicNone, 100*f.NoneRate)
	for _, d := range f.Refused {
		fmt.Fprintf(a.stdout, "  refused (coverage %.2f, cosine %.3f): %s\n", d.Coverage, d.Similarity, d.Text)
	}
	for _, d := range f.Answered {
		fmt.Fprintf(a.stdout, "  answered %s (coverage %.2f, cosine %.3f): %s\n", d.Chosen, d.Coverage, d.Similarity, d.Text)
	}
	for _, d := range f.Asked {
		fmt.Fprintf(a.stdout, "  asked the user instead (no tool): %s\n    %s\n", d.Text, d.Error)
	}
	return nil
}
