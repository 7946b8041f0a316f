package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/airs-dev/airs/grammar/bench"
	"github.com/airs-dev/airs/grammar/bench/benchcli"
)

var grammarCmd = &command{
	Name:    "grammar",
	Summary: "compile JSON Schemas to grammars; benchmark the engine on public data",
	Usage: `Usage:
  airs grammar compile SCHEMA.json | --tools TOOLS.json [--allow-none] [--export gbnf|json-schema]
  airs grammar bench --data PATH... --vocab VOCAB [--sample N] [--limit N] [--json] [--timeout DUR] [--out FILE] [--quiet]
  airs grammar suite [--dir DIR] [--markdown|--json] [--timeout DUR]
  (each also takes --lenient, --strict, --declared-order: the grammar's options;
  the default is faithful to the schema, properties in any order)

compile   compiles a schema (or a tool-call grammar over TOOLS.json) and prints
          its compile time and what the grammar enforces, or exports it as GBNF
          (llama.cpp) or as the JSON Schema Ollama's format accepts; what had
          to be loosened goes to stderr. TOOLS.json: a JSON array (or
          {"tools":[...]}) of {"name","parameters"}, OpenAI-style
          {"type":"function","function":{...}} or MCP-style {"name","inputSchema"}.
bench     MaskBench-style: for each schema of a JSONSchemaBench file (or a
          directory of them; a path that does not exist is looked up under
          $DATA_DIR), compile; walk every valid instance token by token
          through the matcher checking each token is in the mask; check every
          invalid instance is rejected. One JSON line per schema, then a
          summary (a JSON line with --json). Further arguments are data too.
          VOCAB is llama3, qwen3, gemma3 (under $DATA_DIR/tokenizers) or a path to
          a .vocab.jsonl.gz, a tokenizer.json or a GGUF file.
suite     the JSON Schema Test Suite (draft 2020-12) through the grammar: per
          keyword file, valid instances accepted and invalid ones rejected
          (--dir defaults to $DATA_DIR/json-schema-test-suite/tests/draft2020-12).

Examples:
  airs grammar compile params.json --export gbnf
  airs grammar compile --tools tools.json --allow-none
  airs grammar bench --data ../shared/data/jsonschemabench --vocab llama3 --sample 300 --json
  airs grammar suite --markdown > suite.md
`,
	Run: func(a *app, args []string) error {
		if len(args) == 0 {
			return usagef("'grammar' needs a subcommand: compile, bench or suite")
		}
		switch args[0] {
		case "bench":
			return grammarBench(a, args[1:])
		case "suite":
			return grammarSuite(a, args[1:])
		case "compile":
			return grammarCompile(a, args[1:])
		case "-h", "--help", "help":
			printCommandUsage(a.stdout, a.cmd, nil)
			return nil
		default:
			return usagef("unknown 'grammar' subcommand %q (want compile, bench or suite)", args[0])
		}
	},
}

func grammarBench(a *app, args []string) error {
	fs := a.flags()
	run := benchcli.Bench(fs)
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	err = benchUsage(run(pos, a.stdout, a.stderr))
	if err != nil && strings.Contains(err.Error(), "DATA_DIR") {
		// The data is missing: say where it comes from.
		return fmt.Errorf("%w\n%s", err, dataOrigin)
	}
	return err
}

func grammarSuite(a *app, args []string) error {
	fs := a.flags()
	run := benchcli.Suite(fs)
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	return benchUsage(run(pos, a.stdout))
}

// benchUsage turns benchcli's usage mistakes into airs's (exit 2, the hint
// to --help).
func benchUsage(err error) error {
	if errors.Is(err, benchcli.ErrUsage) {
		return usagef("%s", strings.TrimPrefix(err.Error(), benchcli.ErrUsage.Error()+": "))
	}
	return err
}

func grammarCompile(a *app, args []string) error {
	fs := a.flags()
	toolsPath := fs.String("tools", "", "compile the tool-call grammar over the tools in this `file` instead of one schema")
	exp := fs.String("export", "", "print the grammar as gbnf (llama.cpp) or json-schema (Ollama's format)")
	allowNone := fs.Bool("allow-none", false, "with --tools: the model may call no tool")
	opts := benchcli.Options(fs)
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 1 || (len(pos) == 0) == (*toolsPath == "") {
		return usagef("give one SCHEMA.json or --tools TOOLS.json")
	}
	if *exp != "" && *exp != "gbnf" && *exp != "json-schema" {
		return usagef("--export %q: want gbnf or json-schema", *exp)
	}
	req := bench.CompileRequest{Export: *exp, AllowNone: *allowNone, Options: opts()}
	if *toolsPath != "" {
		b, err := os.ReadFile(*toolsPath)
		if err != nil {
			return err
		}
		if req.Tools, err = bench.ReadTools(b); err != nil {
			return fmt.Errorf("%s: %w", *toolsPath, err)
		}
	} else if req.Schema, err = os.ReadFile(pos[0]); err != nil {
		return err
	}
	c, err := bench.Compile(req)
	if err != nil {
		return err
	}
	writeCompiled(a.stdout, req, c)
	for _, l := range c.Loosened {
		fmt.Fprintf(a.stderr, "loosened: %s at %q: %s\n", l.Keyword, l.Pointer, l.Msg)
	}
	return nil
}

// writeCompiled prints the export, or the compile time and what the
// grammar enforces.
func writeCompiled(w io.Writer, req bench.CompileRequest, c *bench.Compiled) {
	ms := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e6 }
	switch {
	case c.Grammar == nil:
		fmt.Fprint(w, c.Exported)
	case req.Tools != nil:
		// A request waits for the lowering and the root; a tool's automata
		// are built once its name is chosen.
		fmt.Fprintf(w, "compiled in %.3f ms (%d tools lowered, root built; each tool's automata wait for its name): all tools built in %.3f ms more\n",
			ms(c.CompileTime), len(req.Tools), ms(c.BuildTime))
		fmt.Fprintf(w, "%s\n", c.Grammar.Stats())
	default:
		fmt.Fprintf(w, "compiled in %.3f ms: %s\n", ms(c.CompileTime), c.Grammar.Stats())
	}
}
