package retrieval

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/airs-dev/airs/embeddings"
)

// TestLearnFromUseMeasured plays an installation whose tools are
// MetaTool's (then StableToolBench's) and whose recorded, labelled
// requests are the dev queries (never trained on by the model) in file
// order: the adapter is trained on the earlier 70%, the latest 30% are
// scored base against adapted, and the held-out test and unseen splits
// are scored with and without the adapter (the base eval must not get
// worse). Nothing of the test or unseen parts is trained on.
//
//	go test -run TestLearnFromUseMeasured -v ./evals/retrieval/
func TestLearnFromUseMeasured(t *testing.T) {
	d := dataDir()
	files := []string{
		filepath.Join(d, "retrieval", "metatool_tools.jsonl.gz"),
		filepath.Join(d, "retrieval", "metatool_queries.jsonl.gz"),
		filepath.Join(d, "retrieval", "stabletoolbench_queries.jsonl.gz"),
	}
	if _, err := os.Stat(files[0]); err != nil {
		t.Skipf("reference data not found at %q (set DATA_DIR): %v", d, err)
	}
	if testing.Short() {
		t.Skip("indexes the reference data: not in -short")
	}
	sets, err := Load(files)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, ds := range sets {
		emb, err := NewEmbedder("model", nil, embeddings.LexicalOptions{})
		if err != nil {
			t.Fatal(err)
		}
		airs, err := NewAIRS(ctx, ds.Docs, emb, embeddings.Options{})
		if err != nil {
			t.Fatal(err)
		}
		var exs []embeddings.AdapterExample
		for _, q := range FilterPart(ds, PartDev).Queries {
			for _, g := range q.Gold {
				exs = append(exs, embeddings.AdapterExample{Query: q.Text, Tool: g})
			}
		}
		ad, rep, err := LearnFromUse(ctx, airs.ix, exs, 0.3, embeddings.AdapterOptions{})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: dev requests %d to learn, latest %d held out: top-1 %.3f -> %.3f, recall@5 %.3f -> %.3f; adapter %d words, %d weights",
			ds.Name, rep.Train, rep.HeldOut, rep.Base.Top1, rep.Adapted.Top1, rep.Base.RecallAt5, rep.Adapted.RecallAt5, rep.Terms, rep.Weights)
		if rep.Adapted.Top1 < rep.Base.Top1 {
			t.Errorf("%s: the adapter lowers held-out top-1 %.3f -> %.3f", ds.Name, rep.Base.Top1, rep.Adapted.Top1)
		}
		for _, part := range []Part{PartTest, PartUnseen} {
			sub := FilterPart(ds, part)
			airs.ix.SetAdapter(nil)
			base, err := score(ctx, sub, airs, Options{})
			if err != nil {
				t.Fatal(err)
			}
			airs.ix.SetAdapter(ad)
			adapted, err := score(ctx, sub, airs, Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s/%s (n %d): NDCG@10 %.4f -> %.4f, recall@5 %.4f -> %.4f, acc@1 %.4f -> %.4f (base -> with the adapter)",
				ds.Name, part, len(sub.Queries), base.NDCG10, adapted.NDCG10, base.Recall5, adapted.Recall5, base.Acc1, adapted.Acc1)
			if adapted.NDCG10 < base.NDCG10-0.005 {
				t.Errorf("%s/%s: the adapter lowers the base eval's NDCG@10 %.4f -> %.4f", ds.Name, part, base.NDCG10, adapted.NDCG10)
			}
		}
	}
}
