package retrieval

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/airs-dev/airs/embeddings"
	"github.com/airs-dev/airs/scoring"
)

// benchRegistry returns n tool documents built from real descriptions: the
// Docker MCP registry, LiveMCPBench and StableToolBench's APIs when the
// reference data is present, else this package's fixtures. Past the real
// count, copies are made with variations (another server name, a name
// suffix, a qualifying phrase) so that no two documents are identical.
func benchRegistry(t testing.TB, n int) ([]embeddings.Doc, []string) {
	var base []embeddings.Doc
	var queries []string
	d := dataDir()
	mcp := filepath.Join(d, "tools", "docker_mcp_registry_tools.jsonl.gz")
	if _, err := os.Stat(mcp); err == nil {
		sets, err := Load([]string{mcp, filepath.Join(d, "retrieval", "stabletoolbench_queries.jsonl.gz")})
		if err != nil {
			t.Fatal(err)
		}
		// sets[0] is StableToolBench (api_list files come first); MCP tools
		// ride along as the registry of a queries-less set and are read here.
		recs, err := readRecords(mcp)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			doc, err := toolDoc(r)
			if err == nil {
				base = append(base, doc)
			}
		}
		base = append(base, liveMCP(t, filepath.Join(d, "tools", "livemcpbench_tools.json.gz"))...)
		for _, s := range sets {
			base = append(base, s.Docs...)
			for _, q := range s.Queries {
				queries = append(queries, q.Text)
			}
		}
	} else {
		sets, err := Load(fixtures)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range sets {
			base = append(base, s.Docs...)
			for _, q := range s.Queries {
				queries = append(queries, q.Text)
			}
		}
	}
	seen := map[string]bool{}
	uniq := base[:0]
	for _, d := range base {
		if !seen[d.ID] {
			seen[d.ID] = true
			uniq = append(uniq, d)
		}
	}
	base = uniq
	variants := []string{"for teams", "self-hosted edition", "legacy API", "with caching", "EU region", "beta"}
	out := make([]embeddings.Doc, 0, n)
	for i := 0; len(out) < n; i++ {
		d := base[i%len(base)]
		if r := i / len(base); r > 0 {
			v := variants[(r-1)%len(variants)]
			d.ID = fmt.Sprintf("%s#%d", d.ID, r)
			d.Name = fmt.Sprintf("%s_v%d", d.Name, r+1)
			d.Group = fmt.Sprintf("%s-%d", d.Group, r)
			d.Description = d.Description + " (" + v + ")"
		}
		d.Trust = i % 4
		if i%3 == 0 {
			d.Capabilities = []string{"Network(*)"}
		}
		out = append(out, d)
	}
	return out, queries
}

// liveMCP reads LiveMCPBench's one-document list of servers with tools.
func liveMCP(t testing.TB, path string) []embeddings.Doc {
	recs, err := readRecords(path)
	if err != nil {
		return nil
	}
	var out []embeddings.Doc
	for _, r := range recs {
		var s struct {
			Name  string `json:"name"`
			Tools map[string]struct {
				Tools []json.RawMessage `json:"tools"`
			} `json:"tools"`
		}
		if json.Unmarshal(r, &s) != nil {
			continue
		}
		keys := make([]string, 0, len(s.Tools))
		for k := range s.Tools {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			for _, tr := range s.Tools[k].Tools {
				var tool map[string]json.RawMessage
				if json.Unmarshal(tr, &tool) != nil {
					continue
				}
				tool["server"], _ = json.Marshal(k)
				b, _ := json.Marshal(tool)
				if d, err := toolDoc(b); err == nil {
					out = append(out, d)
				}
			}
		}
	}
	return out
}

// BenchmarkSelection measures selection without a model: embedding the
// request, the filtered hybrid search (top 10) and the composite scoring of
// the candidates. It reports the median (p50-ms) and p99 per selection.
// Sub-benchmarks name the embedder: emb=model (the trained tool model),
// emb=model+rerank (the trained model with the committed
// reranker over its first 50), emb=model+whole (every request searched
// whole: most of StableToolBench's requests are long enough to be searched
// part by part too, one BM25F pass per part), emb=ensemble (the model
// joined with a lexical half fitted on the registry; +whole as above),
// emb=blend (the model joined with the pretrained word vectors, the
// default; +whole as above) and emb=lexical.
func BenchmarkSelection(b *testing.B) {
	for _, emb := range []string{"model", "model+rerank", "model+whole", "ensemble", "ensemble+whole", "blend", "blend+whole", "lexical"} {
		for _, n := range []int{100, 1000, 10000} {
			b.Run(fmt.Sprintf("emb=%s/tools=%d", emb, n), func(b *testing.B) { benchSelection(b, emb, n) })
		}
	}
}

func benchSelection(b *testing.B, emb string, n int) {
	{
		{
			docs, queries := benchRegistry(b, n)
			ctx := context.Background()
			var o embeddings.Options
			if base, ok := strings.CutSuffix(emb, "+whole"); ok {
				emb = base
				o.Parts.Off = true
			}
			if base, ok := strings.CutSuffix(emb, "+rerank"); ok {
				emb = base
				if o.Reranker = embeddings.CommittedReranker(); o.Reranker == nil {
					b.Skip("no committed reranker")
				}
			}
			e, err := NewEmbedder(emb, nil, embeddings.LexicalOptions{})
			if err != nil {
				b.Fatal(err)
			}
			ix, err := embeddings.Open(ctx, e, o)
			if err != nil {
				b.Fatal(err)
			}
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			start := time.Now()
			c0, _ := threadCPU()
			if _, err := ix.Sync(ctx, docs); err != nil {
				b.Fatal(err)
			}
			c1, _ := threadCPU()
			b.Logf("%d tools indexed in %s wall, %s CPU of this thread (dim %d)", n, time.Since(start).Round(time.Millisecond), (c1 - c0).Round(time.Millisecond), ix.Embedder().Dim())
			stats := scoring.NewStats(50)
			for i, d := range docs {
				stats.Record(d.ID, i%7 != 0, time.Duration(5+i%40)*time.Millisecond)
			}
			sc := scoring.Scorer{Weights: scoring.DefaultWeights, Stats: stats, Prefs: scoring.NewPreferences()}
			filter := embeddings.Filter{CheckCapabilities: true, Capabilities: []string{"Network(*)"}, MinTrust: 1}
			durs := make([]time.Duration, 0, b.N)
			cpus := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				t0 := time.Now()
				u0, _ := threadCPU()
				hits, err := ix.Search(ctx, queries[i%len(queries)], 10, filter)
				if err != nil {
					b.Fatal(err)
				}
				cands := make([]scoring.Candidate, len(hits))
				for j, h := range hits {
					d, _ := ix.Doc(h.ID)
					cands[j] = scoring.Candidate{Tool: h.ID, Similarity: h.Fused, Trust: d.Trust}
				}
				if len(sc.Score(cands)) != len(hits) {
					b.Fatal("scores lost")
				}
				durs = append(durs, time.Since(t0))
				u1, _ := threadCPU()
				cpus = append(cpus, u1-u0)
			}
			b.StopTimer()
			sort.Slice(durs, func(i, j int) bool { return durs[i] < durs[j] })
			sort.Slice(cpus, func(i, j int) bool { return cpus[i] < cpus[j] })
			ms := func(d time.Duration) float64 { return float64(d) / 1e6 }
			b.ReportMetric(ms(durs[len(durs)/2]), "p50-ms")
			b.ReportMetric(ms(durs[len(durs)*99/100]), "p99-ms")
			// CPU time of the searching thread (with -cpu 1 the dense scan
			// stays on it): the cost of a query whatever the machine's load.
			if cpus[len(cpus)-1] > 0 {
				b.ReportMetric(ms(cpus[len(cpus)/2]), "p50-cpu-ms")
				b.ReportMetric(ms(cpus[len(cpus)*99/100]), "p99-cpu-ms")
			}
		}
	}
}

// BenchmarkModelLoad measures decoding the committed tool model (what the
// first index of a process pays once) and reports its in-memory size.
func BenchmarkModelLoad(b *testing.B) {
	var m *embeddings.ToolModel
	for i := 0; i < b.N; i++ {
		var err error
		if m, err = embeddings.ReadDefaultModel(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(m.MemoryBytes())/(1<<20), "MiB")
}
