package retrieval

import (
	"context"
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
	fs.SetOutput(stderr)
	var data multi
	fs.Var(&data, "data", "data file (repeatable; further file arguments are data files too)")
	embedder := fs.String("embedder", "lexical", "lexical or ollama:MODEL")
	asJSON := fs.Bool("json", false, "one JSON line per dataset and method")
	quiet := fs.Bool("quiet", false, "no progress lines")
	reportDir := fs.String("report", "", "write retrieval.md with tables and PNG charts into this `dir`")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: airs eval retrieval --data FILE… [--embedder lexical|ollama:MODEL] [--json] [--report DIR]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	// Allow "--data a b c" and flags after files.
	rest := fs.Args()
	for len(rest) > 0 {
		data = append(data, rest[0])
		if err := fs.Parse(rest[1:]); err != nil {
			return 2
		}
		rest = fs.Args()
	}
	if len(data) == 0 {
		fs.Usage()
		return 2
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
