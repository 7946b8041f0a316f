package pgindex

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/airs-dev/airs/embeddings"
	"github.com/airs-dev/airs/evals/retrieval"
	"github.com/airs-dev/airs/store/pg/pgtest"
)

// fixtureSets are the retrieval fixtures committed with evals/retrieval:
// real tools (MetaTool plugins, RapidAPI endpoints with groups, BFCL
// functions) and their queries.
func fixtureSets(t *testing.T) []retrieval.Dataset {
	t.Helper()
	dir := filepath.Join("..", "..", "evals", "retrieval", "testdata")
	files, err := filepath.Glob(filepath.Join(dir, "*.jsonl*"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no retrieval fixtures in %s: %v", dir, err)
	}
	sets, err := retrieval.Load(files)
	if err != nil {
		t.Fatal(err)
	}
	return sets
}

func openIndex(t testing.TB, docs []embeddings.Doc, o embeddings.Options) (*embeddings.Index, embeddings.SyncStats) {
	t.Helper()
	ctx := context.Background()
	ix, err := embeddings.Open(ctx, embeddings.NewLexical(embeddings.LexicalOptions{}), o)
	if err != nil {
		t.Fatal(err)
	}
	st, err := ix.Sync(ctx, docs)
	if err != nil {
		t.Fatal(err)
	}
	return ix, st
}

// tieEps is how far apart two fused scores may be and still count as a
// tie: the dense cosines differ by float32 rounding (about 1e-7; pgvector
// sums the products in order, the in-memory scan in eight lanes), so
// documents tied that closely — in practice ones with a cosine of ~0, no
// word in common with the query — may come in either order.
const tieEps = 1e-6

// sameHits fails unless a and b rank the same documents in the same order
// with scores equal up to float32 rounding, except for near-ties (tieEps),
// which it counts.
func sameHits(t *testing.T, what string, a, b []embeddings.Hit) (ties int) {
	t.Helper()
	if len(a) != len(b) {
		t.Fatalf("%s: %d hits vs %d", what, len(a), len(b))
	}
	for i := range a {
		if a[i].ID != b[i].ID {
			if math.Abs(a[i].Fused-b[i].Fused) > tieEps {
				t.Fatalf("%s: hit %d is %+v in memory, %+v on PostgreSQL", what, i, a[i], b[i])
			}
			ties++
			continue
		}
		if a[i].DenseRank != b[i].DenseRank || a[i].BM25Rank != b[i].BM25Rank {
			if math.Abs(a[i].Dense-b[i].Dense) > tieEps {
				t.Fatalf("%s: hit %d is %+v in memory, %+v on PostgreSQL", what, i, a[i], b[i])
			}
			ties++
		}
		if math.Abs(a[i].Dense-b[i].Dense) > 1e-5 || math.Abs(a[i].Fused-b[i].Fused) > 1e-5 || a[i].BM25 != b[i].BM25 {
			t.Fatalf("%s: hit %d scores %+v in memory, %+v on PostgreSQL", what, i, a[i], b[i])
		}
	}
	return ties
}

// The index on PostgreSQL ranks as the embedded one does, with the dense
// list computed by pgvector, on every fixture set (groups included: the
// StableToolBench fixture has RapidAPI tools grouped by API).
func TestToolIndexPGMatchesEmbedded(t *testing.T) {
	dsn := pgtest.DSN(t)
	db := openTest(t, dsn)
	ctx := context.Background()
	for _, ds := range fixtureSets(t) {
		mem, _ := openIndex(t, ds.Docs, embeddings.Options{})
		pgix, st := openIndex(t, ds.Docs, embeddings.Options{Store: db.ToolIndex()})
		if st.Embedded != len(ds.Docs) {
			t.Fatalf("%s: embedded %d of %d", ds.Name, st.Embedded, len(ds.Docs))
		}
		groups := 0
		if err := queryRow(t, dsn, `SELECT count(*) FROM airs_tool_groups`).Scan(&groups); err != nil {
			t.Fatal(err)
		}
		ties, exact := 0, 0
		for _, q := range ds.Queries {
			a, err := mem.Search(ctx, q.Text, 10, embeddings.Filter{})
			if err != nil {
				t.Fatal(err)
			}
			b, err := pgix.Search(ctx, q.Text, 10, embeddings.Filter{})
			if err != nil {
				t.Fatal(err)
			}
			n := sameHits(t, ds.Name+": "+q.Text, a, b)
			ties += n
			if n == 0 {
				exact++
			}
		}
		t.Logf("%s: %d tools, %d groups; %d of %d queries ranked identically, %d near-tie swaps (|Δ| < %g)",
			ds.Name, len(ds.Docs), groups, exact, len(ds.Queries), ties, tieEps)
	}
}

// Filters are applied before either list is cut, in the database too.
func TestToolIndexPGFilter(t *testing.T) {
	db := openTest(t, pgtest.DSN(t))
	ctx := context.Background()
	ds := fixtureSets(t)[0]
	docs := append([]embeddings.Doc(nil), ds.Docs...)
	for i := range docs {
		docs[i].Trust = i % 3
	}
	mem, _ := openIndex(t, docs, embeddings.Options{})
	pgix, _ := openIndex(t, docs, embeddings.Options{Store: db.ToolIndex()})
	ids := []string{docs[1].ID, docs[4].ID, docs[7].ID, docs[len(docs)-1].ID}
	for _, f := range []embeddings.Filter{{MinTrust: 2}, {IDs: ids}, {IDs: []string{}}} {
		for _, q := range ds.Queries[:min(20, len(ds.Queries))] {
			a, _ := mem.Search(ctx, q.Text, 5, f)
			b, err := pgix.Search(ctx, q.Text, 5, f)
			if err != nil {
				t.Fatal(err)
			}
			sameHits(t, fmt.Sprintf("%+v %s", f, q.Text), a, b)
			for _, h := range b {
				d, _ := pgix.Doc(h.ID)
				if d.Trust < f.MinTrust {
					t.Fatalf("filter %+v let %s (trust %d) through", f, h.ID, d.Trust)
				}
			}
		}
	}
}

// A second replica opening the same database uses the stored vectors and
// basis (nothing re-embedded, no refit) and ranks identically; a change
// one replica syncs is what the other finds after its own Sync.
func TestToolIndexPGReplicas(t *testing.T) {
	dsn := pgtest.DSN(t)
	a, b := openTest(t, dsn), openTest(t, dsn)
	ctx := context.Background()
	ds := fixtureSets(t)[0]
	ixA, _ := openIndex(t, ds.Docs, embeddings.Options{Store: a.ToolIndex()})
	ixB, err := embeddings.Open(ctx, embeddings.NewLexical(embeddings.LexicalOptions{}), embeddings.Options{Store: b.ToolIndex()})
	if err != nil {
		t.Fatal(err)
	}
	if ixB.Len() != len(ds.Docs) {
		t.Fatalf("replica B opened %d tools, want %d", ixB.Len(), len(ds.Docs))
	}
	st, err := ixB.Sync(ctx, ds.Docs)
	if err != nil {
		t.Fatal(err)
	}
	if st.Embedded != 0 || st.Refitted || st.Unchanged != len(ds.Docs) {
		t.Fatalf("replica B's Sync of the same registry: %+v, want nothing embedded", st)
	}
	if ixA.Embedder().ID() != ixB.Embedder().ID() {
		t.Fatalf("replicas embed with %s and %s", ixA.Embedder().ID(), ixB.Embedder().ID())
	}
	for _, q := range ds.Queries[:min(30, len(ds.Queries))] {
		ha, _ := ixA.Search(ctx, q.Text, 10, embeddings.Filter{})
		hb, err := ixB.Search(ctx, q.Text, 10, embeddings.Filter{})
		if err != nil {
			t.Fatal(err)
		}
		sameHits(t, q.Text, ha, hb)
	}

	// A drops one tool and renames another's description.
	docs := append([]embeddings.Doc(nil), ds.Docs[1:]...)
	docs[0].Description = "Translates Klingon poetry into Esperanto haiku"
	if _, err := ixA.Sync(ctx, docs); err != nil {
		t.Fatal(err)
	}
	st, err = ixB.Sync(ctx, docs)
	if err != nil {
		t.Fatal(err)
	}
	if st.Embedded != 0 {
		t.Fatalf("replica B re-embedded %d tools A had already stored: %+v", st.Embedded, st)
	}
	if _, ok := ixB.Doc(ds.Docs[0].ID); ok {
		t.Fatalf("replica B still holds %s, removed by A", ds.Docs[0].ID)
	}
	if d, _ := ixB.Doc(docs[0].ID); d.Description != docs[0].Description {
		t.Fatalf("replica B has %q for %s, want A's change", d.Description, docs[0].ID)
	}
	h, err := ixB.Search(ctx, "klingon poetry as esperanto haiku", 1, embeddings.Filter{})
	if err != nil || len(h) == 0 || h[0].ID != docs[0].ID {
		t.Fatalf("replica B's search for the changed tool: %+v %v, want %s first", h, err, docs[0].ID)
	}
}

// dataDir is the shared reference data ($DATA_DIR, else ../shared/data
// beside the repository).
func dataDir() string {
	if d := os.Getenv("DATA_DIR"); d != "" {
		return d
	}
	return filepath.Join("..", "..", "..", "shared", "data")
}

// TestToolIndexPGRetrievalEval runs the retrieval evaluation EVALS.md
// reports (airs eval retrieval: MetaTool, StableToolBench, BFCL) with the
// index embedded and on PostgreSQL + pgvector, and reports both figures and
// every query whose top 10 differs. It needs the reference data and
// AIRS_PG_EVAL=1 (minutes: each query is a database round trip).
func TestToolIndexPGRetrievalEval(t *testing.T) {
	d := dataDir()
	if _, err := os.Stat(filepath.Join(d, "retrieval", "metatool_tools.jsonl.gz")); err != nil {
		t.Skipf("reference data not found at %q (set DATA_DIR): %v", d, err)
	}
	if os.Getenv("AIRS_PG_EVAL") == "" {
		t.Skip("the full retrieval evaluation on both backends takes minutes: set AIRS_PG_EVAL=1")
	}
	db := openTest(t, pgtest.DSN(t))
	bfcl, _ := filepath.Glob(filepath.Join(d, "bfcl", "*.jsonl.gz"))
	runs := [][]string{
		{filepath.Join(d, "retrieval", "metatool_tools.jsonl.gz"), filepath.Join(d, "retrieval", "metatool_queries.jsonl.gz")},
		{filepath.Join(d, "retrieval", "stabletoolbench_queries.jsonl.gz")},
		bfcl,
	}
	ctx := context.Background()
	for _, files := range runs {
		sets, err := retrieval.Load(files)
		if err != nil {
			t.Fatal(err)
		}
		for _, ds := range sets {
			var res [2]retrieval.Result
			var ranked [2][][]string
			var took [2]time.Duration
			for b, o := range []embeddings.Options{{}, {Store: db.ToolIndex()}} {
				m, err := retrieval.NewAIRS(ctx, ds.Docs, embeddings.NewLexical(embeddings.LexicalOptions{}), o)
				if err != nil {
					t.Fatal(err)
				}
				start := time.Now()
				res[b], ranked[b], err = retrieval.EvaluateMethod(ctx, ds, m)
				if err != nil {
					t.Fatal(err)
				}
				took[b] = time.Since(start)
			}
			differ := 0
			for i := range ranked[0] {
				if strings.Join(ranked[0][i], "\x00") != strings.Join(ranked[1][i], "\x00") {
					differ++
					if differ <= 5 {
						t.Logf("%s: query %q: embedded %v, pg %v", ds.Name, ds.Queries[i].Text, ranked[0][i], ranked[1][i])
					}
				}
			}
			t.Logf("%s: %d tools, %d queries; embedded %+v (%s); pgvector %+v (%s); top-10 lists that differ: %d",
				ds.Name, len(ds.Docs), len(ds.Queries), res[0], took[0].Round(time.Millisecond), res[1], took[1].Round(time.Millisecond), differ)
			r0, r1 := res[0], res[1]
			r0.Method, r1.Method = "", ""
			if r0 != r1 {
				t.Errorf("%s: the retrieval figures differ: embedded %+v, pgvector %+v", ds.Name, res[0], res[1])
			}
		}
	}
}

// When another replica refits the basis (the registry changed past the
// refit fraction), a replica that has not synced since keeps ranking from
// its own vectors — consistent with its own basis — instead of comparing
// its queries with vectors of another basis; its next Sync takes the new
// index without embedding anything.
func TestToolIndexPGStaleReplicaFallsBack(t *testing.T) {
	dsn := pgtest.DSN(t)
	a, b := openTest(t, dsn), openTest(t, dsn)
	ctx := context.Background()
	sets := fixtureSets(t)
	// The same tools, a third of them described anew: a refit, vectors of
	// the same dimension under another basis (so only the embedder check
	// can tell them apart).
	old := sets[0]
	next := retrieval.Dataset{Name: old.Name, Queries: old.Queries, Docs: append([]embeddings.Doc(nil), old.Docs...)}
	for i := 0; i < len(next.Docs); i += 3 {
		next.Docs[i].Description = "Utility number " + fmt.Sprint(i) + ": " + next.Docs[(i+1)%len(next.Docs)].Description
	}
	ixA, _ := openIndex(t, old.Docs, embeddings.Options{Store: a.ToolIndex()})
	ixB, _ := openIndex(t, old.Docs, embeddings.Options{Store: b.ToolIndex()})
	ref, _ := openIndex(t, old.Docs, embeddings.Options{})
	st, err := ixA.Sync(ctx, next.Docs)
	if err != nil || !st.Refitted {
		t.Fatalf("replica A's Sync of another registry: %+v %v, want a refit", st, err)
	}
	if ixA.Embedder().ID() == ixB.Embedder().ID() || ixA.Embedder().Dim() != ixB.Embedder().Dim() {
		t.Fatalf("embedders %s (dim %d) and %s (dim %d): want another basis of the same dimension",
			ixA.Embedder().ID(), ixA.Embedder().Dim(), ixB.Embedder().ID(), ixB.Embedder().Dim())
	}
	for _, q := range old.Queries {
		want, _ := ref.Search(ctx, q.Text, 10, embeddings.Filter{})
		got, err := ixB.Search(ctx, q.Text, 10, embeddings.Filter{})
		if err != nil {
			t.Fatal(err)
		}
		sameHits(t, "stale replica: "+q.Text, want, got)
	}
	st, err = ixB.Sync(ctx, next.Docs)
	if err != nil || st.Embedded != 0 || st.Refitted {
		t.Fatalf("replica B's Sync after A's refit: %+v %v, want nothing embedded", st, err)
	}
	for _, q := range next.Queries {
		ha, _ := ixA.Search(ctx, q.Text, 10, embeddings.Filter{})
		hb, err := ixB.Search(ctx, q.Text, 10, embeddings.Filter{})
		if err != nil {
			t.Fatal(err)
		}
		sameHits(t, "after B's Sync: "+q.Text, ha, hb)
	}
}
