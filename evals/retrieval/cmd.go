package retrieval

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"

	"github.com/airs-dev/airs/embeddings"
	"github.com/ollama/ollama/api"
)

// Main is `airs eval retrieval --data FILE… [--embedder lexical|ollama:MODEL]
// [--json]`; it returns the exit code. Files given after the flags are data
// files too, so `--data A B C` works.
func Main(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("airs eval retrieval", flag.ContinueOnError)
	// A bad flag is one line and a hint (the flag package would print the
	// whole usage after it); -h/--help prints the usage.
	fs.SetOutput(io.Discard)
	var data multi
	fs.Var(&data, "data", "data file (repeatable; further file arguments are data files too)")
	embedder := fs.String("embedder", "lexical", "lexical or ollama:MODEL")
	asJSON := fs.Bool("json", false, "one JSON line per dataset and method")
	quiet := fs.Bool("quiet", false, "no progress lines")
	reportDir := fs.String("report", "", "write retrieval.md with tables and PNG charts into this `dir`")
	printUsage := func(w io.Writer) {
		fmt.Fprintln(w, "usage: airs eval retrieval --data FILE… [--embedder lexical|ollama:MODEL] [--json] [--report DIR]")
		fs.SetOutput(w)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
	}
	fs.Usage = func() {}
	parse := func(args []string) int {
		err := fs.Parse(args)
		switch {
		case err == nil:
			return -1
		case errors.Is(err, flag.ErrHelp):
			printUsage(stdout)
			return 0
		}
		fmt.Fprintf(stderr, "airs eval retrieval: %v\nRun 'airs eval retrieval --help' for its flags.\n", err)
		return 2
	}
	if code := parse(args); code >= 0 {
		return code
	}
	// Allow "--data a b c" and flags after files.
	rest := fs.Args()
	for len(rest) > 0 {
		data = append(data, rest[0])
		if code := parse(rest[1:]); code >= 0 {
			return code
		}
		rest = fs.Args()
	}
	if len(data) == 0 {
		printUsage(stderr)
		return 2
	}
	// A missing file is most often the shared data not being here: say
	// where it comes from rather than only "no such file".
	for _, f := range data {
		if _, err := os.Stat(f); err != nil {
			fmt.Fprintf(stderr, "airs eval retrieval: %v\nhint: the retrieval sets are under $DATA_DIR/retrieval (metatool_tools.jsonl.gz with metatool_queries.jsonl.gz, stabletoolbench_queries.jsonl.gz; DATA_DIR is %q): set DATA_DIR to the shared data folder (make conformance uses ../shared/data) or pass the files' paths\n", err, os.Getenv("DATA_DIR"))
			return 2
		}
	}
	o := Options{Data: data, Embedder: *embedder, JSON: *asJSON, ReportDir: *reportDir}
	if !*quiet {
		o.Progress = stderr
	}
	if len(*embedder) > 7 && (*embedder)[:7] == "ollama:" {
		c, err := api.ClientFromEnvironment()
		if err != nil {
			fmt.Fprintln(stderr, "airs eval retrieval:", err)
			return 1
		}
		o.EmbedClient = ollamaAPI{c}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := Run(ctx, o, stdout); err != nil {
		fmt.Fprintln(stderr, "airs eval retrieval:", err)
		return 1
	}
	return 0
}

type multi []string

func (m *multi) String() string     { return fmt.Sprint([]string(*m)) }
func (m *multi) Set(s string) error { *m = append(*m, s); return nil }

// ollamaAPI adapts Ollama's own Go client to embeddings.EmbedClient (until
// internal/ollama provides one).
type ollamaAPI struct{ c *api.Client }

func (o ollamaAPI) Embed(ctx context.Context, model string, inputs []string) ([][]float32, error) {
	resp, err := o.c.Embed(ctx, &api.EmbedRequest{Model: model, Input: inputs})
	if err != nil {
		return nil, err
	}
	return resp.Embeddings, nil
}

var _ embeddings.EmbedClient = ollamaAPI{}
