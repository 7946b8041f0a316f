// Package benchcli declares, once, the flags of the grammar harness's
// commands that two binaries offer: `airs grammar compile|bench|suite`
// (cmd/airs) and grammarbench (grammar/bench/cmd/grammarbench, the small
// binary the scripts build). It only declares flags on a FlagSet the caller
// owns; the caller parses, keeps its usage text and exit codes, and decides
// how to report a usage mistake (errors wrapping ErrUsage).
package benchcli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/airs-dev/airs/grammar"
	"github.com/airs-dev/airs/grammar/bench"
)

// ErrUsage wraps every mistake in the invocation a run reports.
var ErrUsage = errors.New("usage")

func usagef(format string, v ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrUsage}, v...)...)
}

// Options declares the grammar's options (--lenient, --strict,
// --declared-order), which every grammar command takes; call the result
// after parsing.
func Options(fs *flag.FlagSet) func() grammar.Options {
	lenient := fs.Bool("lenient", false, "loosen what the grammar cannot enforce exactly instead of failing (reported)")
	strict := fs.Bool("strict", false, "no property a schema does not declare, even where it would allow one")
	declared := fs.Bool("declared-order", false, "properties in their declared order (default: any order)")
	return func() grammar.Options {
		o := grammar.Options{Lenient: *lenient, Strict: *strict}
		if *declared {
			o.PropertyOrder = grammar.DeclaredOrder
		}
		return o
	}
}

// paths is a repeatable flag.
type paths []string

func (p *paths) String() string     { return fmt.Sprint([]string(*p)) }
func (p *paths) Set(s string) error { *p = append(*p, s); return nil }

// Bench declares the bench command's flags on fs. After the caller has
// parsed its arguments, run takes the positional ones (more data) and runs
// the bench: one JSON line per schema and the summary to stdout (or
// --out), progress to stderr (unless --quiet).
func Bench(fs *flag.FlagSet) (run func(pos []string, stdout, stderr io.Writer) error) {
	var data paths
	fs.Var(&data, "data", "JSONSchemaBench .jsonl(.gz) `path` or directory (repeatable; further arguments are data too)")
	vocab := fs.String("vocab", "", "vocabulary: llama3, qwen3, gemma3 (under $DATA_DIR/tokenizers) or a `path`")
	sample := fs.Int("sample", 0, "N schemas evenly spaced over all schemas sorted by id (as the XGrammar peer)")
	limit := fs.Int("limit", 0, "keep the first N schemas (after --sample)")
	asJSON := fs.Bool("json", false, "the summary is a JSON line (the last line)")
	timeout := fs.Duration("timeout", 10*time.Second, "per schema (compile and all walks)")
	outPath := fs.String("out", "", "write the lines to this `file` instead of stdout")
	quiet := fs.Bool("quiet", false, "no progress on stderr")
	opts := Options(fs)
	return func(pos []string, stdout, stderr io.Writer) error {
		data := append(data, pos...)
		if len(data) == 0 || *vocab == "" {
			return usagef("--data and --vocab are required")
		}
		if *sample < 0 || *limit < 0 {
			return usagef("--sample and --limit want a non-negative integer")
		}
		cfg := bench.BenchConfig{Data: data, Vocab: *vocab, Sample: *sample, Limit: *limit, Timeout: *timeout, Options: opts()}
		if !*quiet {
			cfg.Logf = func(format string, v ...any) { fmt.Fprintf(stderr, format, v...) }
		}
		out := stdout
		if *outPath != "" {
			f, err := os.Create(*outPath)
			if err != nil {
				return err
			}
			defer f.Close()
			out = f
		}
		return bench.WriteBench(out, cfg, *asJSON)
	}
}

// Suite declares the suite command's flags on fs; run takes the
// positional arguments (there must be none) and writes a Markdown table per
// keyword file to stdout, or one JSON line each with --json.
func Suite(fs *flag.FlagSet) (run func(pos []string, stdout io.Writer) error) {
	dir := fs.String("dir", bench.SuiteDir(), "the suite's tests/draft2020-12 `directory`")
	fs.Bool("markdown", false, "a Markdown table per keyword file (what is printed without --json)")
	asJSON := fs.Bool("json", false, "one JSON line per keyword file")
	timeout := fs.Duration("timeout", 10*time.Second, "per test group's compile")
	opts := Options(fs)
	return func(pos []string, stdout io.Writer) error {
		if len(pos) > 0 {
			return usagef("unexpected argument %q (the suite's directory is --dir)", pos[0])
		}
		res, err := bench.RunSuite(*dir, opts(), *timeout)
		if err != nil {
			return err
		}
		if *asJSON {
			return bench.WriteSuiteJSON(stdout, res)
		}
		bench.WriteSuiteMarkdown(stdout, res)
		return nil
	}
}
