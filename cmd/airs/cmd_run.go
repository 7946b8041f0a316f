package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/signal"
	"strings"

	"github.com/airs-dev/airs/chains"
	"github.com/airs-dev/airs/config"
)

var runCmd = &command{
	Name:    "run",
	Summary: "run a YAML pipeline (a DAG of tool calls) through the pipeline",
	Usage: `Usage:
  airs run FILE.yaml [--input NAME=VALUE]... [--timeout D] [--continue] [--json]
           [--engine inproc --gguf FILE | --engine inproc --model NAME]

Parses the pipeline, validates it before anything runs (acyclic, every
reference resolves to an earlier step, every tool exists and you may call
it, argument types fit), then runs independent steps in parallel. Errors
name the file, line and step. Ctrl-C cancels the run and prints the results
of the steps that finished.

A pipeline:

  pipeline: compare-pricing
  inputs: {left: {type: string}, right: {type: string}}
  steps:
    - id: a
      tool: pdf-extract
      params: {space: documents, path: "{{input.left}}"}
    - id: b
      tool: pdf-extract
      params: {space: documents, path: "{{input.right}}"}
    - id: diff
      tool: compare
      params: {left: "{{steps.a.output.text}}", right: "{{steps.b.output.text}}"}
  output: "{{steps.diff.output}}"

Values given with --input are JSON when they parse as JSON (numbers,
true, [..]), strings otherwise.

A pipeline names its tools, so no model chooses them; with --engine
inproc (a binary built with the inproc tag) the in-process model (--gguf
FILE, or --model NAME read from Ollama's store) answers the sampling
requests of the MCP servers its tools run on. Without it there is no
model: those requests are refused, as in no-LLM mode.

Examples:
  airs run chains/examples/compare-pricing.yaml --input left=a.pdf --input right=b.pdf
  airs run summarize.yaml --input folder=documents --json
`,
	Run: func(a *app, args []string) error {
		fs := a.flags()
		var inputs multiFlag
		fs.Var(&inputs, "input", "an input as NAME=VALUE (repeatable)")
		timeout := fs.Duration("timeout", 0, "budget for the whole run, at most 600s (default: the pipeline's own timeout:, else none; set a longer one there)")
		cont := fs.Bool("continue", false, "keep running independent steps after a failure (default: stop at the first)")
		asJSON := fs.Bool("json", false, "print the whole result (output, steps, trace) as JSON")
		model := fs.String("model", "", "with --engine inproc: the `model` pulled into Ollama that answers MCP sampling")
		ef := addEngineFlags(fs)
		pos, err := parseArgs(fs, args)
		if err != nil {
			return err
		}
		if len(pos) != 1 {
			return usagef("'run' takes one pipeline file")
		}
		if err := checkTimeout(fs, "timeout"); err != nil {
			return err
		}
		data, err := os.ReadFile(pos[0])
		if err != nil {
			return err
		}
		in := map[string]any{}
		for _, kv := range inputs {
			k, v, ok := strings.Cut(kv, "=")
			if !ok || k == "" {
				return usagef("--input %q: want NAME=VALUE", kv)
			}
			var jv any
			if json.Unmarshal([]byte(v), &jv) == nil {
				in[k] = jv
			} else {
				in[k] = v
			}
		}
		caller, err := a.caller()
		if err != nil {
			return err
		}
		if err := checkSpaceInput(pos[0], data, in, a.cfg); err != nil {
			return err
		}
		ctx, stop := signal.NotifyContext(a.context(), os.Interrupt)
		defer stop()
		if a.cfg.Chains.Engine == config.ChainsTemporal && (*ef.engine != "" || *ef.gguf != "" || *model != "") {
			// The chain runs on the workers (app.chainsRunner): their engines
			// answer sampling, not this process.
			return usagef("chains.engine is temporal: the chain runs on the workers ('airs worker'), so --engine, --gguf and --model do not apply")
		}
		// Only an explicit --engine inproc loads a model: model.engine in
		// airs.yaml does not make every pipeline run wait for a GGUF.
		spec := engineSpec{Channel: "run", Model: "none"}
		if *ef.engine == "" && (*ef.gguf != "" || *model != "") {
			return usagef("--gguf and --model need --engine inproc: 'run' uses no Ollama model")
		}
		if *ef.engine != "" {
			spec.Local, spec.LocalModel = &ef, *model
		}
		e, closeE, err := a.build(ctx, spec)
		if err != nil {
			return err
		}
		defer closeE()
		if *timeout > 0 {
			var cancel func()
			ctx, cancel = context.WithTimeout(ctx, *timeout)
			defer cancel()
		}
		res, runErr := e.RunPipeline(ctx, caller, pos[0], data, in, *cont)
		if res != nil {
			if *asJSON {
				enc := json.NewEncoder(a.stdout)
				enc.SetIndent("", "  ")
				_ = enc.Encode(res)
			} else {
				printRun(a, res)
			}
		}
		return runErr
	},
}

type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(s string) error { *m = append(*m, s); return nil }

// checkSpaceInput fails before anything runs when the pipeline's "space"
// input (given, or its default) names no configured space: otherwise the
// first step fails schema validation with "/space: value must be 'cwd'",
// which does not say that ~/Documents is missing or how to get documents.
// A pipeline that does not parse is left to RunPipeline to report.
func checkSpaceInput(file string, data []byte, in map[string]any, cfg *config.Config) error {
	c, err := chains.Parse(file, data)
	if err != nil || c.Inputs == nil {
		return nil
	}
	def, declared := c.Inputs["space"]
	if !declared {
		return nil
	}
	v, given := in["space"]
	if !given && def.HasDefault {
		v = def.Default
	}
	space, ok := v.(string)
	if !ok || space == "" {
		return nil
	}
	if _, ok := cfg.Spaces[space]; ok {
		return nil
	}
	return errors.New(documentsHint(space, cfg))
}
