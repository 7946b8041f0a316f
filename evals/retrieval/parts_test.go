package retrieval_test

import (
	"context"
	"testing"

	"github.com/airs-dev/airs/embeddings"
	"github.com/airs-dev/airs/evals/retrieval"
)

// TestPartsOnMCPBenchDev holds the reason for searching a request by its
// parts: on MCP-Bench's development half (long requests, several tools of
// several servers each; committed, no DATA_DIR needed) among its own 257
// tools, the default index ranks the requests' tools better with parts
// than whole, and no worse at the first place.
func TestPartsOnMCPBenchDev(t *testing.T) {
	sets, err := retrieval.Load([]string{"data/mcp_bench_tools.jsonl.gz", "data/mcp_bench_dev_queries.jsonl.gz"})
	if err != nil {
		t.Fatal(err)
	}
	ds := sets[0]
	m, err := embeddings.DefaultModel()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	score := func(p embeddings.PartsOptions) retrieval.Result {
		a, err := retrieval.NewAIRS(ctx, ds.Docs, m, embeddings.Options{Parts: p})
		if err != nil {
			t.Fatal(err)
		}
		r, _, err := retrieval.EvaluateMethod(ctx, ds, a)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	whole, parts := score(embeddings.PartsOptions{Off: true}), score(embeddings.PartsOptions{})
	t.Logf("%d requests, %d tools: NDCG@10 whole %.4f, parts %.4f; acc@1 %.4f, %.4f; recall@10 %.4f, %.4f",
		len(ds.Queries), len(ds.Docs), whole.NDCG10, parts.NDCG10, whole.Acc1, parts.Acc1, whole.Recall10, parts.Recall10)
	if parts.NDCG10 < whole.NDCG10+0.02 {
		t.Errorf("NDCG@10 with parts %.4f, whole %.4f: want at least 2 points better", parts.NDCG10, whole.NDCG10)
	}
	if parts.Acc1 < whole.Acc1 {
		t.Errorf("acc@1 with parts %.4f, whole %.4f", parts.Acc1, whole.Acc1)
	}
}
