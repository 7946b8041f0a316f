package main

import (
	"github.com/airs-dev/airs/grammar/bench"
)

var grammarCmd = &command{
	Name:    "grammar",
	Summary: "compile JSON Schemas to grammars; benchmark the engine on public data",
	Usage: `Usage:
  airs grammar compile SCHEMA.json [--tools TOOLS.json] [--export gbnf|json-schema]
  airs grammar bench --data PATH... --vocab VOCAB [--sample N] [--limit N] [--json]
  airs grammar suite [--dir DIR] [--markdown]

compile   compiles a schema (or a tool-call grammar over TOOLS.json) and prints
          what the grammar enforces, or exports it as GBNF or as the JSON Schema
          Ollama's format accepts (saying what had to be loosened).
bench     MaskBench-style: for each schema of a JSONSchemaBench file (or a
          directory of them), compile; walk every valid instance token by token
          through the matcher checking each token is in the mask; check every
          invalid instance is rejected. One JSON line per schema, then a summary.
          VOCAB is llama3, qwen3, gemma3 (under $DATA_DIR/tokenizers) or a path to
          a .vocab.jsonl.gz, a tokenizer.json or a GGUF file.
suite     the JSON Schema Test Suite (draft 2020-12) through the grammar: per
          keyword file, valid instances accepted and invalid ones rejected.

Examples:
  airs grammar compile params.json --export gbnf
  airs grammar bench --data ../shared/data/jsonschemabench --vocab llama3 --sample 300 --json
  airs grammar suite --markdown > suite.md
`,
	Run: func(a *app, args []string) error {
		if len(args) == 0 {
			return usagef("'grammar' needs a subcommand: compile, bench or suite")
		}
		var code int
		switch args[0] {
		case "bench":
			code = bench.Main(args[1:], a.stdout, a.stderr)
		case "suite":
			code = bench.SuiteMain(args[1:], a.stdout, a.stderr)
		case "compile":
			code = bench.CompileMain(args[1:], a.stdout, a.stderr)
		case "-h", "--help", "help":
			printCommandUsage(a.stdout, a.cmd, nil)
			return nil
		default:
			return usagef("unknown 'grammar' subcommand %q (want compile, bench or suite)", args[0])
		}
		if code != 0 {
			return &exitError{code: code}
		}
		return nil
	},
}
