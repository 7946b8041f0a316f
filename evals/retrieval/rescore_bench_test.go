package retrieval

import (
	"context"
	"fmt"
	"runtime"
	"sort"
	"testing"
	"time"

	"github.com/airs-dev/airs/embeddings"
)

// BenchmarkBlendRescoring measures what re-scoring the blend's first
// candidates adds to a search over the registry (10,000 tools): the plain
// blend (emb=blend), the word-by-word soft match over its first 30
// (emb=blend+soft: blend:soft=0.2), and a final-list reranker over its
// first 30 with the blend's features (emb=blend+final: the parts'
// cosines, the soft match's recall and precision and the per-field BM25
// features; the weights do not change the cost). It reports the median
// and p99 CPU time of the searching thread per search and, once, the CPU
// of the first search (which builds the per-tool words or field indexes).
func BenchmarkBlendRescoring(b *testing.B) {
	for _, v := range []string{"blend", "blend+soft", "blend+final"} {
		b.Run(fmt.Sprintf("emb=%s/tools=10000", v), func(b *testing.B) { benchRescoring(b, v, 10000) })
	}
}

func benchRescoring(b *testing.B, variant string, n int) {
	docs, queries := benchRegistry(b, n)
	ctx := context.Background()
	spec := "blend"
	if variant == "blend+soft" {
		spec = "blend:soft=0.2"
	}
	e, err := NewEmbedder(spec, nil, embeddings.LexicalOptions{})
	if err != nil {
		b.Fatal(err)
	}
	var o embeddings.Options
	if variant == "blend+final" {
		nf := len(embeddings.RerankFeatures)
		o.Reranker = &embeddings.Reranker{Version: 1, Embedder: e.ID(), Depth: 30, Final: true, WholeOnly: true,
			Features: embeddings.RerankFeatures, Mean: make([]float64, nf), Scale: make([]float64, nf), Weights: make([]float64, nf)}
		for i := range o.Reranker.Scale {
			o.Reranker.Scale[i], o.Reranker.Weights[i] = 1, 0.01
		}
	}
	ix, err := embeddings.Open(ctx, e, o)
	if err != nil {
		b.Fatal(err)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if _, err := ix.Sync(ctx, docs); err != nil {
		b.Fatal(err)
	}
	c0, _ := threadCPU()
	if _, err := ix.Search(ctx, queries[0], 10, embeddings.Filter{}); err != nil {
		b.Fatal(err)
	}
	c1, _ := threadCPU()
	b.Logf("%s: first search %s CPU (builds what the re-scoring reads)", variant, (c1 - c0).Round(time.Millisecond))
	cpus := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		u0, _ := threadCPU()
		if _, err := ix.Search(ctx, queries[i%len(queries)], 10, embeddings.Filter{}); err != nil {
			b.Fatal(err)
		}
		u1, _ := threadCPU()
		cpus = append(cpus, u1-u0)
	}
	b.StopTimer()
	sort.Slice(cpus, func(i, j int) bool { return cpus[i] < cpus[j] })
	if cpus[len(cpus)-1] > 0 {
		ms := func(d time.Duration) float64 { return float64(d) / 1e6 }
		b.ReportMetric(ms(cpus[len(cpus)/2]), "p50-cpu-ms")
		b.ReportMetric(ms(cpus[len(cpus)*99/100]), "p99-cpu-ms")
	}
}
