package retrieval

import (
	"context"
	"testing"

	"github.com/airs-dev/airs/embeddings"
)

// TestFitRerankerFinalWholeOnly: a reranker fitted over the blend's final
// list for requests searched whole is marked so, fitted only on those
// requests, and scores a set of requests searched part by part exactly as
// the fused list (they are left in their order).
func TestFitRerankerFinalWholeOnly(t *testing.T) {
	sets, err := Load([]string{fixtures[0], fixtures[1], fixtures[2]})
	if err != nil {
		t.Fatal(err)
	}
	var mt, long Dataset
	for _, ds := range sets {
		if ds.Name == "metatool" {
			mt = ds
		}
		if ds.Name == "stabletoolbench" {
			long = Dataset{Name: "long", Docs: ds.Docs}
			for _, q := range ds.Queries {
				if embeddings.RequestParts(q.Text, embeddings.PartsOptions{}) != nil {
					long.Queries = append(long.Queries, q)
				}
			}
		}
	}
	if len(mt.Queries) == 0 || len(long.Queries) < 3 {
		t.Fatalf("fixtures: %d MetaTool requests, %d long StableToolBench ones", len(mt.Queries), len(long.Queries))
	}
	emb, err := NewEmbedder("blend", nil, embeddings.LexicalOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r, rep, err := FitReranker(context.Background(), emb, []Dataset{mt, long}, RerankOptions{Depth: 10, Final: true, WholeOnly: true, L2s: []float64{10}, Folds: 3})
	if err != nil {
		t.Fatal(err)
	}
	if !r.Final || !r.WholeOnly || r.Embedder != emb.ID() || r.Depth != 10 {
		t.Errorf("reranker final %v, whole-only %v, over %s, depth %d", r.Final, r.WholeOnly, r.Embedder, r.Depth)
	}
	for _, s := range rep.Sets {
		if s.Set == "long" && s.Reranked != s.Fused {
			t.Errorf("requests searched part by part scored %.4f re-ranked, %.4f fused: want them left alone", s.Reranked, s.Fused)
		}
	}
	if d, _ := r.Train["data"].(string); d != "dev and unseen-dev of metatool and stabletoolbench, metatool, long" {
		t.Errorf("training record names %q", d)
	}
}
