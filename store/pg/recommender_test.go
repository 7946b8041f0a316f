package pg

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/airs-dev/airs/pipeline"
	"github.com/airs-dev/airs/pipeline/builtin"
	"github.com/airs-dev/airs/recommender"
	"github.com/airs-dev/airs/selector"
	"github.com/airs-dev/airs/store/pg/pgtest"
)

type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) Now() time.Time          { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *testClock) Advance(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

// recWorld is the real built-in tools over one space alice may read.
type recWorld struct {
	cat   *selector.RegistryCatalog
	m     *pipeline.Manager
	clock *testClock
}

func newRecWorld(t *testing.T) *recWorld {
	t.Helper()
	reg := pipeline.NewRegistry(pipeline.RegistryConfig{})
	pol := &pipeline.StaticPolicy{
		Channels:     map[string][]string{"*": {"*"}},
		Capabilities: map[string][]pipeline.Capability{"alice": {{Kind: "ReadSpace", Arg: "documents"}}},
	}
	if err := builtin.Register(reg, builtin.Options{Spaces: map[string]string{"documents": t.TempDir()}, Policy: pol}); err != nil {
		t.Fatal(err)
	}
	m, err := pipeline.NewManager(pipeline.Config{Registry: reg, Policy: pol})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return &recWorld{cat: &selector.RegistryCatalog{Registry: reg, Policy: pol}, m: m,
		clock: &testClock{t: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)}}
}

func (w *recWorld) replica(t *testing.T, db *DB) *recommender.Recommender {
	t.Helper()
	r, err := recommender.New(recommender.Config{Catalog: w.cat, Validate: w.m.Validate, Spaces: []string{"documents"},
		Store: db.RecommenderStore(), Now: w.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	r.Known("alice")
	return r
}

// pdfFor is the pdf-extract recommendation for path, nil when none.
func pdfFor(recs []recommender.Recommendation, path string) *recommender.Recommendation {
	for i := range recs {
		var args map[string]any
		if recs[i].Tool == "pdf-extract" && json.Unmarshal(recs[i].Arguments, &args) == nil && args["path"] == path {
			return &recs[i]
		}
	}
	return nil
}

// Two replicas' recommenders on one database: each answer is committed
// before Dismiss returns; what replica A learned (three dismissals of
// pdf-extract for PDFs in documents: suppressed there) replica B applies at
// its next sweep, and a third replica starting later loads it (snapshot
// and the answers after it). A task set on A reaches B at its sweep.
func TestRecommenderStoreReplicasCatchUp(t *testing.T) {
	dsn := pgtest.DSN(t)
	dbA, dbB, dbC := openTest(t, dsn), openTest(t, dsn), openTest(t, dsn)
	w := newRecWorld(t)
	a, b := w.replica(t, dbA), w.replica(t, dbB)
	ctx := context.Background()
	rows := func() int {
		var n int
		if err := dbB.pool.QueryRow(ctx, `SELECT count(*) FROM airs_rec_feedback`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	for i, name := range []string{"a.pdf", "b.pdf", "c.pdf"} {
		a.ObserveFile(recommender.FileEvent{Space: "documents", Rel: name, Op: "create"})
		rec := pdfFor(a.List("alice"), name)
		if rec == nil {
			t.Fatalf("round %d: replica A recommends nothing for %s", i, name)
		}
		if err := a.Dismiss("alice", rec.ID); err != nil {
			t.Fatal(err)
		}
		if n := rows(); n != i+1 {
			t.Fatalf("after %d dismissals another pool sees %d answers: not committed before Dismiss returned", i+1, n)
		}
		w.clock.Advance(2 * time.Hour) // past the cooldown
	}
	a.ObserveFile(recommender.FileEvent{Space: "documents", Rel: "d.pdf", Op: "create"})
	if pdfFor(a.List("alice"), "d.pdf") != nil {
		t.Fatal("three dismissals did not suppress pdf-extract on replica A itself: the test proves nothing")
	}
	// B has not caught up yet: it still recommends (the control).
	b.ObserveFile(recommender.FileEvent{Space: "documents", Rel: "e.pdf", Op: "create"})
	if pdfFor(b.List("alice"), "e.pdf") == nil {
		t.Fatal("replica B suppressed before catching up: the test proves nothing")
	}
	w.clock.Advance(time.Hour) // e.pdf's recommendation expires at the sweep (ignored)
	b.Sweep()
	b.ObserveFile(recommender.FileEvent{Space: "documents", Rel: "f.pdf", Op: "create"})
	if rec := pdfFor(b.List("alice"), "f.pdf"); rec != nil {
		t.Fatalf("replica B still recommends %+v after its sweep: A's dismissals not applied", rec)
	}

	if err := a.SetTask("alice", "list the files in documents"); err != nil {
		t.Fatal(err)
	}
	b.Sweep()
	if got := b.Task("alice"); got != "list the files in documents" {
		t.Fatalf("replica B's task %q after its sweep, want A's", got)
	}
	if err := a.Close(); err != nil { // a snapshot, then more answers after it
		t.Fatal(err)
	}
	var pos int64
	if err := dbB.pool.QueryRow(ctx, `SELECT pos FROM airs_rec_snapshot`).Scan(&pos); err != nil || pos < 3 {
		t.Fatalf("snapshot at %d (%v), want one including the 3 dismissals", pos, err)
	}
	c := w.replica(t, dbC)
	c.ObserveFile(recommender.FileEvent{Space: "documents", Rel: "g.pdf", Op: "create"})
	if rec := pdfFor(c.List("alice"), "g.pdf"); rec != nil {
		t.Fatalf("a replica started later recommends %+v: the shared learning did not load", rec)
	}
	if got := c.Task("alice"); got != "list the files in documents" {
		t.Fatalf("replica C's task %q", got)
	}
	// A lagging replica's snapshot does not move the kept one back.
	if err := dbB.RecommenderStore().SaveSnapshot(ctx, 1, []byte(`{"version":1}`)); err != nil {
		t.Fatal(err)
	}
	var after int64
	if err := dbB.pool.QueryRow(ctx, `SELECT pos FROM airs_rec_snapshot`).Scan(&after); err != nil || after != pos {
		t.Fatalf("snapshot moved from %d to %d", pos, after)
	}
	// airs task on the store, without a running recommender.
	tasks := recommender.OpenTasksIn(dbC.RecommenderStore())
	if err := tasks.Set("alice", ""); err != nil {
		t.Fatal(err)
	}
	if got, err := tasks.Get("alice"); err != nil || got != "" {
		t.Fatalf("cleared task %q, %v", got, err)
	}
	b.Sweep()
	if got := b.Task("alice"); got != "" {
		t.Fatalf("replica B kept the cleared task %q", got)
	}
}
