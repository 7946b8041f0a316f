package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/airs-dev/airs/chains"

	"github.com/airs-dev/airs/model/inproc"

	"github.com/airs-dev/airs/grammar"
	"github.com/airs-dev/airs/internal/engine"
	"github.com/airs-dev/airs/selector"
)

var selectCmd = &command{
	Name:    "select",
	Summary: "show which tool call AIRS would make for a request, without running it",
	Usage: `Usage:
  airs select [--model MODEL | --model none] [--engine ollama|inproc] [--gguf FILE] [--json] TEXT...

Prints the decision AIRS makes for a request in plain words — the tool and
its arguments, or "none" when no tool fits — and runs nothing. It is the
decision airs chat and POST /v1/select make, for the tools you may call.

Without a model (no-LLM mode), a tool is proposed only when its
description uses at least selection.min_coverage of the request's words
(airs.yaml; the calibrated default is in 'airs help config'); "none" names
the closest tool with its coverage and its raw cosine similarity (not
normalised). A tool that fits but whose arguments the request does not
give is shown with what is missing. A request that names files no space
you can read holds is an error that lists them.

--json prints the whole selection: mode, function, arguments, validation,
every candidate's score components (similarity is the raw cosine,
coverage the share of the request's words the tool's text uses), and the
threshold in force.

--engine inproc decodes in process: the GGUF is loaded through llama.cpp
and every token is drawn under AIRS's own token mask, forced bytes
appended without sampling (fast-forward); --json then adds the
generation's token counts and times ("inproc"). The model is --gguf FILE,
or --model NAME, a model already pulled into Ollama whose GGUF is read
from Ollama's store ($OLLAMA_MODELS or ~/.ollama/models; Ollama need not
run). It needs a binary built with the inproc tag (make inproc); any
other binary says so and exits 1.

Exit status: 0 with a decision (a tool or none), 1 when selection failed
(missing files, no callable tool, a model error).

Examples:
  airs select list the pdf files in my documents
  airs select --json "what's 2 * (3 + 4)?"
  airs select --model none tell me a joke about cats
  airs select --engine inproc --model qwen3:4b --json "what's 2 * (3 + 4)?"
`,
	Run: runSelect,
}

var planCmd = &command{
	Name:    "plan",
	Summary: "show the plan (steps of tool calls) AIRS would make for a request; --run runs it",
	Usage: `Usage:
  airs plan [--model MODEL | --model none] [--engine ollama|inproc] [--gguf FILE] [--json]
            [--run [--timeout D] [--continue]] TEXT...

Prints the plan AIRS makes for a request that may need several tools —
each step's tool and arguments, with references to earlier steps' outputs
— and runs nothing. It is the plan POST /v1/plan makes. With a model the
plan is generated under a grammar (valid by construction); in no-LLM mode
it is the one-step plan of 'airs select' (no steps when no tool fits or
the request lacks the tool's arguments), and the notice says why.

A plan whose steps, or (no-LLM mode) whose request, name files no space
you can read holds is an error that lists them.

With --run the plan then runs as a chain, each call through the pipeline,
printed as 'airs run' prints a pipeline's run; under chains.engine:
temporal it runs as a workflow on the workers ('airs worker'). A failed
step exits with its error's code.

Exit status: 0 with a plan (possibly empty), 1 when planning failed; with
--run, a failed step's code (as 'airs run').

Examples:
  airs plan compare the pricing in quote-2023.pdf and quote-2024.pdf
  airs plan --json --model qwen3:0.6b "find the PDFs, then summarize the newest"
`,
	Run: runPlan,
}

// decisionFlags parses select's and plan's common flags and builds the engine.
func decisionSetup(a *app, name string, fs *flag.FlagSet, args []string) (*engine.Engine, func(), string, string, bool, error) {
	model := fs.String("model", "", "the `model` that makes the decision (Ollama's; with --engine inproc, one pulled into Ollama, read from its store), or none for the no-LLM mode (default: ollama.model in airs.yaml)")
	ef := addEngineFlags(fs)
	asJSON := fs.Bool("json", false, "print the whole decision as JSON")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return nil, nil, "", "", false, err
	}
	if _, err := a.config(); err != nil {
		return nil, nil, "", "", false, err
	}
	text := strings.TrimSpace(strings.Join(pos, " "))
	if text == "" {
		return nil, nil, "", "", false, usagef("'%s' needs the request, e.g. airs %s list the pdf files in my documents", name, name)
	}
	caller, err := a.caller()
	if err != nil {
		return nil, nil, "", "", false, err
	}
	e, closeAll, err := a.build(a.context(), engineSpec{Channel: name, Model: *model, Local: &ef, LocalModel: *model})
	if err != nil {
		return nil, nil, "", "", false, err
	}
	return e, closeAll, caller, text, *asJSON, nil
}

// selectJSON is the selection with the threshold it was held to.
type selectJSON struct {
	*selector.Selection
	MinCoverage float64 `json:"min_coverage"`
	// Inproc is the in-process engine's last generation (--engine inproc).
	Inproc *inproc.Result `json:"inproc,omitempty"`
}

// withChoices: when several files fit the request equally well, --json
// prints them as a structured field ({"error":"ambiguous","phrase",
// "choices":[{"space","path"}]}) so a program can ask its user which one;
// the command still fails, since nothing was guessed.
func withChoices(a *app, asJSON bool, err error) error {
	var amb *selector.AmbiguousError
	if asJSON && errors.As(err, &amb) {
		if werr := writeJSON(a.stdout, map[string]any{
			"error": "ambiguous", "message": err.Error(), "phrase": amb.Phrase, "choices": amb.Choices,
		}); werr != nil {
			return werr
		}
	}
	return err
}

func runSelect(a *app, args []string) error {
	e, closeAll, caller, text, asJSON, err := decisionSetup(a, "select", a.flags(), args)
	if err != nil {
		return err
	}
	defer closeAll()
	sel, err := e.Select(a.context(), caller, text)
	if err != nil {
		return withChoices(a, asJSON, err)
	}
	if asJSON {
		out := selectJSON{Selection: sel, MinCoverage: e.NoFitThreshold()}
		if a.inproc != nil {
			out.Inproc = a.inproc.Last()
		}
		return writeJSON(a.stdout, out)
	}
	printDecision(a, e, sel.Function, sel.Arguments, sel.Validation, sel.Candidates, sel.Mode)
	if sel.Mode == selector.ModeNoLLM && sel.Notice != selector.NoLLMNotice {
		fmt.Fprintf(a.stdout, "note: %s\n", strings.TrimPrefix(sel.Notice, selector.NoLLMNotice+"; "))
	}
	return nil
}

func runPlan(a *app, args []string) error {
	fs := a.flags()
	run := fs.Bool("run", false, "run the plan after printing it, each call through the pipeline (on the chain workers under chains.engine: temporal)")
	timeout := fs.Duration("timeout", 0, "with --run: budget for the whole run, at most 600s (default: none)")
	cont := fs.Bool("continue", false, "with --run: keep running independent steps after a failure (default: stop at the first)")
	e, closeAll, caller, text, asJSON, err := decisionSetup(a, "plan", fs, args)
	if err != nil {
		return err
	}
	defer closeAll()
	if err := checkTimeout(fs, "timeout"); err != nil {
		return err
	}
	if !*run && (*timeout != 0 || *cont) {
		return usagef("--timeout and --continue apply to --run")
	}
	pr, err := e.Plan(a.context(), caller, text)
	if err != nil {
		return withChoices(a, asJSON, err)
	}
	if asJSON && !*run {
		return writeJSON(a.stdout, struct {
			*selector.PlanResult
			MinCoverage float64 `json:"min_coverage"`
		}{pr, e.NoFitThreshold()})
	}
	if *run {
		return runPlanned(a, e, caller, pr, *timeout, *cont, asJSON)
	}
	plan := pr.Plan
	mode := "no-LLM mode"
	if pr.Mode == selector.ModeModel {
		mode = "model " + e.ModelName()
	}
	if len(plan.Steps) == 0 {
		fmt.Fprintf(a.stdout, "plan (%s): no steps\n", mode)
		printBest(a, e, pr.Candidates)
	} else {
		fmt.Fprintf(a.stdout, "plan (%s): %d step(s)\n", mode, len(plan.Steps))
		for _, st := range plan.Steps {
			fmt.Fprintf(a.stdout, "  %s  %s %s\n", st.ID, st.Function, compactArgs(st.Arguments))
		}
	}
	if pr.Mode == selector.ModeNoLLM && pr.Notice != selector.NoLLMNotice && pr.Notice != "" {
		fmt.Fprintf(a.stdout, "note: %s\n", strings.TrimPrefix(pr.Notice, selector.NoLLMNotice+"; "))
	}
	return nil
}

// runPlanned is `airs plan --run`: the plan runs as a chain (in process, or
// on the workers under chains.engine: temporal), printed as `airs run`
// prints a pipeline's run; with --json, {"plan": …, "run": …}.
func runPlanned(a *app, e *engine.Engine, caller string, pr *selector.PlanResult, timeout time.Duration, cont, asJSON bool) error {
	plan := pr.Plan
	if len(plan.Steps) == 0 {
		if asJSON {
			return writeJSON(a.stdout, map[string]any{"plan": pr})
		}
		fmt.Fprintln(a.stdout, "plan: no steps, nothing to run")
		printBest(a, e, pr.Candidates)
		return nil
	}
	ctx, stop := signal.NotifyContext(a.context(), os.Interrupt)
	defer stop()
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	res, runErr := e.RunPlan(ctx, caller, pr.Plan, cont)
	if asJSON {
		_ = writeJSON(a.stdout, map[string]any{"plan": pr, "run": res})
		return runErr
	}
	fmt.Fprintf(a.stdout, "plan: %d step(s)\n", len(plan.Steps))
	printRun(a, res)
	return runErr
}

// printRun prints a chain's trace on stderr and its output on stdout.
func printRun(a *app, res *chains.Result) {
	if res == nil {
		return
	}
	for _, t := range res.Trace {
		status := string(t.Outcome)
		if t.Error != "" {
			status += ": " + t.Error
		}
		fmt.Fprintf(a.stderr, "  %-24s %-14s %8s  %s\n", t.Node, t.Tool, t.Latency.Round(time.Millisecond), status)
	}
	if len(res.Output) > 0 {
		var v any
		if json.Unmarshal(res.Output, &v) == nil {
			b, _ := json.MarshalIndent(v, "", "  ")
			fmt.Fprintln(a.stdout, string(b))
		}
	}
}

// printDecision prints a selection in one or two lines.
func printDecision(a *app, e *engine.Engine, fn string, args json.RawMessage, validation string, cands []selector.Candidate, mode selector.Mode) {
	by := "no-LLM mode"
	if mode == selector.ModeModel {
		by = "model " + e.ModelName()
	}
	if fn == grammar.NoneTool {
		fmt.Fprintf(a.stdout, "none: no tool fits (%s)\n", by)
		printBest(a, e, cands)
		return
	}
	fmt.Fprintf(a.stdout, "tool: %s %s (%s)\n", fn, compactArgs(args), by)
	for _, c := range cands {
		if c.Name == fn {
			fmt.Fprintf(a.stdout, "  similarity %.3f (raw cosine), coverage %.2f (threshold %.2f)\n", c.Score["similarity"], c.Score["coverage"], e.NoFitThreshold())
			break
		}
	}
	if validation != "ok" {
		fmt.Fprintf(a.stdout, "  not runnable: %s\n", validation)
	}
}

// printBest names the candidate closest to the request.
func printBest(a *app, e *engine.Engine, cands []selector.Candidate) {
	if len(cands) == 0 {
		return
	}
	best := cands[0]
	for _, c := range cands {
		if c.Score["coverage"] > best.Score["coverage"] || c.Score["coverage"] == best.Score["coverage"] && c.Score["similarity"] > best.Score["similarity"] {
			best = c
		}
	}
	fmt.Fprintf(a.stdout, "  closest: %s, similarity %.3f (raw cosine), coverage %.2f (threshold %.2f)\n",
		best.Name, best.Score["similarity"], best.Score["coverage"], e.NoFitThreshold())
}

func compactArgs(raw json.RawMessage) string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return string(raw)
	}
	b, _ := json.Marshal(v)
	return string(b)
}
