// Command grammarbench is the grammar harness the scripts build on its own
// (a small binary without the service: conformance, peer-xgrammar,
// peer-toolcall). bench and suite take the flags of `airs grammar bench`
// and `airs grammar suite`; report and compare are the scripts' alone:
//
//	grammarbench bench   --data PATH... --vocab VOCAB [--sample N] [--limit N] [--json] [--out FILE] [--quiet]
//	grammarbench suite   [--dir DIR] [--markdown|--json]
//	grammarbench report  --bench BENCH.jsonl [--suite SUITE.jsonl] [--sampling S.json] [--out FILE]  (CONFORMANCE.md)
//	grammarbench compare --ours OURS.jsonl --peer PEER.jsonl                                       (side by side)
//
// The work is grammar/bench's; this file holds only flags and output, as
// cmd/airs does for `airs grammar` (compile is there alone).
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/airs-dev/airs/grammar/bench"
	"github.com/airs-dev/airs/grammar/bench/benchcli"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// errUsage marks a mistake in the invocation (exit 2), here as in the
// flags benchcli declares.
var errUsage = benchcli.ErrUsage

func run(argv []string, stdout, stderr io.Writer) int {
	cmds := map[string]func([]string, io.Writer, io.Writer) error{
		"bench": benchCmd, "suite": suiteCmd, "report": reportCmd, "compare": compareCmd,
	}
	if len(argv) == 0 || cmds[argv[0]] == nil {
		fmt.Fprintln(stderr, "usage: grammarbench bench|suite|report|compare [flags] (compile: airs grammar compile)")
		return 2
	}
	err := cmds[argv[0]](argv[1:], stdout, stderr)
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errUsage):
		fmt.Fprintf(stderr, "grammarbench %s: %v\nRun 'grammarbench %s --help' for its flags.\n", argv[0], err, argv[0])
		return 2
	}
	fmt.Fprintf(stderr, "grammarbench %s: %v\n", argv[0], err)
	return 1
}

func usagef(format string, v ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{errUsage}, v...)...)
}

// newFlags returns a FlagSet that prints its defaults on --help only.
func newFlags(name string, stdout io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("grammarbench "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() { fs.SetOutput(stdout); fs.PrintDefaults(); fs.SetOutput(io.Discard) }
	return fs
}

// parse parses flags wherever they appear (--data A B --vocab V) and
// returns the positional arguments.
func parse(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, usagef("%v", err)
		}
		if args = fs.Args(); len(args) == 0 {
			return pos, nil
		}
		pos, args = append(pos, args[0]), args[1:]
	}
}

func benchCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("bench", stdout)
	run := benchcli.Bench(fs)
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	return run(pos, stdout, stderr)
}

func suiteCmd(args []string, stdout, _ io.Writer) error {
	fs := newFlags("suite", stdout)
	run := benchcli.Suite(fs)
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	return run(pos, stdout)
}

func reportCmd(args []string, stdout, _ io.Writer) error {
	fs := newFlags("report", stdout)
	var in bench.ConformanceInputs
	fs.StringVar(&in.Bench, "bench", "", "the output of 'bench --json' (required)")
	fs.StringVar(&in.Suite, "suite", "", "the output of 'suite --json'")
	fs.StringVar(&in.Sampling, "sampling", "", "the sampling-compliance JSON (JSB_SAMPLING_OUT)")
	fs.StringVar(&in.Vocab, "vocab", "llama3", "the bench's vocabulary, for the heading")
	fs.StringVar(&in.Command, "command", "", "the bench's command line, quoted in the page")
	fs.StringVar(&in.Data, "data", "", "the bench's data directory: adds the per-keyword section (exact and refused forms)")
	outPath := fs.String("out", "", "write to this file instead of stdout")
	if pos, err := parse(fs, args); err != nil {
		return err
	} else if len(pos) > 0 {
		return usagef("unexpected argument %q", pos[0])
	}
	if in.Bench == "" {
		return usagef("--bench is required")
	}
	w := stdout
	if *outPath != "" {
		f, err := os.Create(*outPath)
		if err != nil {
			return err
		}
		defer f.Close()
		w = f
	}
	return bench.WriteConformance(w, in)
}

func compareCmd(args []string, stdout, _ io.Writer) error {
	fs := newFlags("compare", stdout)
	ours := fs.String("ours", "", "our 'bench --json' output")
	peer := fs.String("peer", "", "the peer's output (peer.mjs)")
	fs.Bool("markdown", false, "Markdown (the only output)")
	if pos, err := parse(fs, args); err != nil {
		return err
	} else if len(pos) > 0 {
		return usagef("unexpected argument %q", pos[0])
	}
	if *ours == "" || *peer == "" {
		return usagef("--ours and --peer are required")
	}
	return bench.Compare(stdout, *ours, *peer)
}
