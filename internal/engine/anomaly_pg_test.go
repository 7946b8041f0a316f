package engine

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/airs-dev/airs/config"
	"github.com/airs-dev/airs/guard"
	"github.com/airs-dev/airs/store/pg"
)

// With storage.guard: postgres two replicas' anomaly gates start with no
// model (the reduced mode, saying how to train one); a model stored once
// in the database is loaded by both without a restart (version polling),
// and a newer one replaces it on both.
func TestAnomalyModelsOnPostgresReloadByVersion(t *testing.T) {
	ctx := context.Background()
	dsn := pgTestDSN(t, "airs_engine_models_")
	t.Setenv("AIRS_TEST_PG_DSN", dsn)
	t.Setenv("AIRS_HOME", t.TempDir())
	cfg, err := config.Parse("airs.yaml", []byte("storage:\n  guard: postgres\n  dsn: ${AIRS_TEST_PG_DSN}\n"))
	if err != nil {
		t.Fatal(err)
	}
	old := AnomalyWatchInterval
	AnomalyWatchInterval = 20 * time.Millisecond
	defer func() { AnomalyWatchInterval = old }()
	shared, err := pg.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer shared.Close()
	// Replica A on the process's database, replica B on a pool of its own.
	a, b := StartAnomalyOn(cfg, shared, nil, true), StartAnomalyOn(cfg, nil, nil, true)
	defer a.Close()
	defer b.Close()
	for _, g := range []*AnomalyGate{a, b} {
		if !g.NoModel || !strings.Contains(g.Notice, "PostgreSQL") || !strings.Contains(g.Notice, "airs guard train") {
			t.Fatalf("no model yet: NoModel %v, notice %q", g.NoModel, g.Notice)
		}
	}
	store := shared.AnomalyModels()
	for _, seed := range []uint64{1, 2} {
		m := trainedModel(t, seed)
		body, err := m.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		if err := store.SaveModel(ctx, guard.SlotModel, m.Version(), body); err != nil {
			t.Fatal(err)
		}
		for i, g := range []*AnomalyGate{a, b} {
			deadline := time.Now().Add(10 * time.Second)
			for {
				if v, _ := g.Models.Versions(); v == m.Version() {
					break
				}
				if time.Now().After(deadline) {
					v, _ := g.Models.Versions()
					t.Fatalf("replica %d scores with %q, want the stored %s (seed %d)", i, v, m.Version(), seed)
				}
				time.Sleep(10 * time.Millisecond)
			}
		}
	}
}
