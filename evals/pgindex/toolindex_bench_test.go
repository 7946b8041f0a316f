package pgindex

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/airs-dev/airs/embeddings"
	"github.com/airs-dev/airs/evals/retrieval"
	"github.com/airs-dev/airs/store/pg/pgtest"
)

// BenchmarkToolIndexSearch is one Search (embed the query, BM25, dense,
// fusion) over StableToolBench's 2,090 RapidAPI tools with the index in
// memory and on PostgreSQL (dense list by pgvector), one query at a time.
func BenchmarkToolIndexSearch(b *testing.B) {
	path := filepath.Join(dataDir(), "retrieval", "stabletoolbench_queries.jsonl.gz")
	if _, err := os.Stat(path); err != nil {
		b.Skipf("reference data not found (set DATA_DIR): %v", err)
	}
	sets, err := retrieval.Load([]string{path})
	if err != nil {
		b.Fatal(err)
	}
	ds := sets[0]
	db := openTest(b, pgtest.DSN(b))
	for _, c := range []struct {
		name string
		o    embeddings.Options
	}{{"memory", embeddings.Options{}}, {"pgvector", embeddings.Options{Store: db.ToolIndex()}}} {
		b.Run(c.name, func(b *testing.B) {
			ix, _ := openIndex(b, ds.Docs, c.o)
			ctx := context.Background()
			i := 0
			for b.Loop() {
				if _, err := ix.Search(ctx, ds.Queries[i%len(ds.Queries)].Text, 10, embeddings.Filter{}); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}
