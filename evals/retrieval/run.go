package retrieval

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/airs-dev/airs/evals/report"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/airs-dev/airs/embeddings"
)

// Options configure a benchmark run.
type Options struct {
	// Data are the files to load (see Load).
	Data []string
	// Embedder is "blend" (default, as in airs: the committed trained
	// tool model joined with the pretrained word vectors) or
	// "blend:OPTIONS" (newBlend), "model" (the tool model alone),
	// "model:FILE" (a model `airs train retrieval` wrote), "ensemble" or
	// "ensemble:OPTIONS" (the model joined with a lexical half fitted on
	// the pool: newEnsemble), "words[:OPTIONS]" (the word vectors alone),
	// "lexical" or "ollama:MODEL".
	Embedder string
	// HeldOutPool asks the split datasets' queries among their held-out
	// tools only (HeldOutPool).
	HeldOutPool bool
	// Split, when set, keeps only the queries of that part of the split
	// datasets (test: held-out queries; unseen: queries whose tools were
	// held out of training; dev; train); the tool pools stay whole.
	// Datasets that are not split (MCP tool lists, BFCL) keep their
	// queries for test and unseen.
	Split Part
	// EmbedClient talks to Ollama for "ollama:MODEL".
	EmbedClient embeddings.EmbedClient
	// JSON prints one line per dataset and method instead of a table.
	JSON bool
	// Progress receives progress: a bar on a terminal, plain lines
	// otherwise (nil: none).
	Progress io.Writer
	// ReportDir, when set, receives retrieval.md and its PNG charts.
	ReportDir string
	// Index and Lexical tune AIRS's retrieval (zero: defaults).
	Index   embeddings.Options
	Lexical embeddings.LexicalOptions
	// Workers searching in parallel (default GOMAXPROCS).
	Workers int
}

// Result is one dataset × method line.
type Result struct {
	Dataset  string  `json:"dataset"`
	Method   string  `json:"method"`
	N        int     `json:"n"`
	Acc1     float64 `json:"acc@1"`
	Recall5  float64 `json:"recall@5"`
	Recall10 float64 `json:"recall@10"`
	NDCG5    float64 `json:"ndcg@5"`
	NDCG10   float64 `json:"ndcg@10"`
}

func newResult(ds, method string, m Metrics) Result {
	r4 := func(x float64) float64 { return math.Round(x*1e4) / 1e4 }
	return Result{ds, method, m.N, r4(m.Acc1), r4(m.Recall5), r4(m.Recall10), r4(m.NDCG5), r4(m.NDCG10)}
}

// Method ranks tool IDs for a query.
type Method interface {
	Name() string
	Rank(ctx context.Context, query string, k int) ([]string, error)
}

// Run loads the data, evaluates AIRS's retrieval and plain BM25 on every
// dataset and writes the results to out.
func Run(ctx context.Context, o Options, out io.Writer) error {
	if len(o.Data) == 0 {
		return errors.New("retrieval: no data files")
	}
	sets, err := Load(o.Data)
	if err != nil {
		return err
	}
	var results []Result
	for _, ds := range sets {
		rs, err := Evaluate(ctx, ds, o)
		if err != nil {
			return fmt.Errorf("%s: %w", ds.Name, err)
		}
		results = append(results, rs...)
		if o.JSON {
			for _, r := range rs {
				b, _ := json.Marshal(r)
				fmt.Fprintf(out, "%s\n", b)
			}
		}
	}
	if !o.JSON {
		writeTable(out, results)
	}
	if o.ReportDir != "" {
		path, err := WriteReport(o.ReportDir, o, results)
		if err != nil {
			return err
		}
		progress(o.Progress, "report: %s", path)
	}
	return nil
}

// WriteReport writes retrieval.md with the results table and PNG charts
// (NDCG@5 and Acc@1 per dataset, AIRS against BM25) into dir.
func WriteReport(dir string, o Options, results []Result) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	var datasets []string
	val := map[string]map[string]Result{}
	for _, r := range results {
		if val[r.Dataset] == nil {
			val[r.Dataset] = map[string]Result{}
			datasets = append(datasets, r.Dataset)
		}
		val[r.Dataset][r.Method] = r
	}
	series := func(method string, f func(Result) float64) report.Series {
		s := report.Series{Name: method}
		for _, d := range datasets {
			s.Values = append(s.Values, f(val[d][method]))
		}
		return s
	}
	ndcg := func(r Result) float64 { return r.NDCG5 }
	acc := func(r Result) float64 { return r.Acc1 }
	if err := report.AccuracyBarChart(filepath.Join(dir, "retrieval_ndcg5.png"), "NDCG@5", datasets, series("airs", ndcg), series("bm25", ndcg)); err != nil {
		return "", err
	}
	if err := report.AccuracyBarChart(filepath.Join(dir, "retrieval_acc1.png"), "Accuracy@1", datasets, series("airs", acc), series("bm25", acc)); err != nil {
		return "", err
	}
	t := report.Table{Header: []string{"dataset", "method", "n", "acc@1", "recall@5", "recall@10", "ndcg@5", "ndcg@10"}}
	for _, r := range results {
		f := func(x float64) string { return fmt.Sprintf("%.3f", x) }
		t.Rows = append(t.Rows, []string{r.Dataset, r.Method, fmt.Sprint(r.N), f(r.Acc1), f(r.Recall5), f(r.Recall10), f(r.NDCG5), f(r.NDCG10)})
	}
	emb := o.Embedder
	if emb == "" {
		emb = DefaultEmbedder
	}
	doc := report.Document{
		Title: "Tool retrieval: AIRS against BM25",
		Intro: fmt.Sprintf("`airs eval retrieval --embedder %s --data %s` — AIRS's hybrid retrieval (dense %s embeddings + field-weighted BM25, fused) against plain Okapi BM25 over each tool's whole text, on the same registry and queries.", emb, strings.Join(o.Data, " "), emb),
		Sections: []Section{{
			Title:   "Results",
			Tables:  []report.Table{t},
			Figures: []report.Figure{{Title: "NDCG@5", Path: "retrieval_ndcg5.png"}, {Title: "Accuracy@1", Path: "retrieval_acc1.png"}},
		}},
	}
	return doc.Write(dir, "retrieval.md")
}

// Section is report.Section (shorter to write here).
type Section = report.Section

// DefaultEmbedder is the embedder an empty spec names: airs's own default.
const DefaultEmbedder = "blend"

// NewEmbedder builds the embedder named by spec ("": DefaultEmbedder).
func NewEmbedder(spec string, c embeddings.EmbedClient, lo embeddings.LexicalOptions) (embeddings.Embedder, error) {
	switch {
	case spec == "model":
		return embeddings.DefaultModel()
	case strings.HasPrefix(spec, "model:"):
		return embeddings.LoadToolModel(strings.TrimPrefix(spec, "model:"))
	case spec == "lexical":
		return embeddings.NewLexical(lo), nil
	case spec == "ensemble" || strings.HasPrefix(spec, "ensemble:"):
		return newEnsemble(strings.TrimPrefix(strings.TrimPrefix(spec, "ensemble"), ":"), lo)
	case spec == "" || spec == "blend" || strings.HasPrefix(spec, "blend:"):
		return newBlend(strings.TrimPrefix(strings.TrimPrefix(spec, "blend"), ":"), lo)
	case spec == "words" || strings.HasPrefix(spec, "words:"):
		return newWords(strings.TrimPrefix(strings.TrimPrefix(spec, "words"), ":"))
	case strings.HasPrefix(spec, "ollama:"):
		model := strings.TrimPrefix(spec, "ollama:")
		if model == "" || c == nil {
			return nil, fmt.Errorf("retrieval: embedder %q needs a model and an Ollama client", spec)
		}
		return embeddings.NewOllama(c, model), nil
	}
	return nil, fmt.Errorf("retrieval: unknown embedder %q (model, model:FILE, ensemble, ensemble:OPTIONS, blend, blend:OPTIONS, words, lexical or ollama:MODEL)", spec)
}

// Evaluate runs both methods on one dataset.
func Evaluate(ctx context.Context, ds Dataset, o Options) ([]Result, error) {
	if o.Split != "" && o.Split != "all" {
		ds = FilterPart(ds, o.Split)
		if len(ds.Queries) == 0 {
			return nil, nil
		}
	}
	if o.HeldOutPool {
		if ds = HeldOutPool(ds); len(ds.Queries) == 0 {
			return nil, nil
		}
	}
	emb, err := NewEmbedder(o.Embedder, o.EmbedClient, o.Lexical)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	progress(o.Progress, "%s: indexing %d tools", ds.Name, len(ds.Docs))
	airs, err := NewAIRS(ctx, ds.Docs, emb, o.Index)
	if err != nil {
		return nil, err
	}
	progress(o.Progress, "%s: indexed in %s; %d queries", ds.Name, time.Since(start).Round(time.Millisecond), len(ds.Queries))
	methods := []Method{airs, NewPlainBM25(ds.Docs)}
	var out []Result
	for _, m := range methods {
		met, err := score(ctx, ds, m, o)
		if err != nil {
			return nil, err
		}
		out = append(out, newResult(ds.Name, m.Name(), met))
	}
	return out, nil
}

func score(ctx context.Context, ds Dataset, m Method, o Options) (Metrics, error) {
	workers := o.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	ranked := make([][]string, len(ds.Queries))
	errs := make([]error, workers)
	var next int64
	var mu sync.Mutex
	var wg sync.WaitGroup
	// A bar on a terminal, plain progress lines otherwise.
	var bar *report.Progress
	if o.Progress != nil {
		bar = report.NewProgress(o.Progress, ds.Name+"/"+m.Name(), len(ds.Queries))
	} else {
		bar = report.NewProgress(io.Discard, "", len(ds.Queries))
	}
	defer bar.Done()
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for {
				mu.Lock()
				i := next
				next++
				mu.Unlock()
				if int(i) >= len(ds.Queries) || ctx.Err() != nil {
					return
				}
				r, err := m.Rank(ctx, ds.Queries[i].Text, 10)
				if err != nil {
					errs[w] = err
					return
				}
				ranked[i] = r
				bar.Add(1)
			}
		}(w)
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return Metrics{}, err
		}
	}
	if err := ctx.Err(); err != nil {
		return Metrics{}, err
	}
	var acc accumulator
	for i, q := range ds.Queries {
		acc.add(ranked[i], q.Gold)
	}
	return acc.result(), nil
}

func progress(w io.Writer, format string, args ...any) {
	if w != nil {
		fmt.Fprintf(w, format+"\n", args...)
	}
}

func writeTable(out io.Writer, rs []Result) {
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "dataset\tmethod\tn\tacc@1\trecall@5\trecall@10\tndcg@5\tndcg@10\t")
	for _, r := range rs {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t\n", r.Dataset, r.Method, r.N, r.Acc1, r.Recall5, r.Recall10, r.NDCG5, r.NDCG10)
	}
	tw.Flush()
}

// AIRS is the hybrid retrieval of the embeddings package.
type AIRS struct{ ix *embeddings.Index }

// NewAIRS indexes docs in memory.
func NewAIRS(ctx context.Context, docs []embeddings.Doc, emb embeddings.Embedder, o embeddings.Options) (*AIRS, error) {
	o.Dir = ""
	ix, err := embeddings.Open(ctx, emb, o)
	if err != nil {
		return nil, err
	}
	if _, err := ix.Sync(ctx, docs); err != nil {
		return nil, err
	}
	return &AIRS{ix}, nil
}

func (a *AIRS) Name() string { return "airs" }

func (a *AIRS) Rank(ctx context.Context, q string, k int) ([]string, error) {
	hits, err := a.ix.Search(ctx, q, k, embeddings.Filter{})
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(hits))
	for i, h := range hits {
		ids[i] = h.ID
	}
	return ids, nil
}

// PlainBM25 is the baseline: Okapi BM25 (k1 1.2, b 0.75) over each tool's
// whole text (Doc.Text) with the same analyser (identifier splitting, stop
// words, light stemming), no field weights, no groups, no dense part.
type PlainBM25 struct {
	bm  *embeddings.BM25
	ids []string
}

// NewPlainBM25 indexes docs.
func NewPlainBM25(docs []embeddings.Doc) *PlainBM25 {
	wt := make([]embeddings.WeightedTerms, len(docs))
	ids := make([]string, len(docs))
	for i := range docs {
		wt[i] = embeddings.WeightedTerms{Terms: embeddings.Terms(docs[i].Text())}
		ids[i] = docs[i].ID
	}
	return &PlainBM25{embeddings.NewBM25(wt, 1.2, 0.75), ids}
}

func (p *PlainBM25) Name() string { return "bm25" }

func (p *PlainBM25) Rank(_ context.Context, q string, k int) ([]string, error) {
	res := p.bm.Search(embeddings.Terms(q), k, nil)
	ids := make([]string, len(res))
	for i, r := range res {
		ids[i] = p.ids[r.Doc]
	}
	return ids, nil
}
