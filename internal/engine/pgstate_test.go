package engine_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/airs-dev/airs/internal/engine"
	"github.com/airs-dev/airs/pipeline"
)

// pgDSN creates a database of its own on AIRS_PG_DSN's server (make e2e-pg
// starts one) and returns its DSN; the test skips without one.
func pgDSN(t *testing.T) string {
	t.Helper()
	base := os.Getenv("AIRS_PG_DSN")
	if base == "" {
		t.Skip("AIRS_PG_DSN is not set: run `make e2e-pg`")
	}
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatal(err)
	}
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	name := "airs_engine_" + hex.EncodeToString(rnd[:])
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = admin.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
		admin.Close(ctx)
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + name
	return u.String()
}

// Replicas on different machines (three AIRS_HOMEs) with storage.learned
// and storage.index on one PostgreSQL: what two of them learned, saved at
// the same moment, is what the third starts with — merged, as two
// processes on one AIRS_HOME merge through the file — and no learned.json
// is written anywhere.
func TestLearningOnPostgresMergesReplicas(t *testing.T) {
	t.Setenv("AIRS_TEST_PG_DSN", pgDSN(t))
	const yaml = "storage:\n  learned: postgres\n  index: postgres\n  dsn: ${AIRS_TEST_PG_DSN}\n"
	ea, eb, ec := newLearnEnv(t, yaml), newLearnEnv(t, yaml), newLearnEnv(t, yaml)
	a, b := ea.open(), eb.open()
	for range 3 {
		a.Ranker.Prefs().Accept("calculator")
	}
	b.Ranker.Prefs().Accept("calculator")
	b.Ranker.Prefs().Dismiss("compare")
	a.Ranker.Observe("compare", &pipeline.Result{Latency: time.Millisecond}, nil)
	b.Ranker.Observe("compare", &pipeline.Result{Latency: time.Millisecond}, errors.New("failed"))
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, e := range []*engine.Engine{a, b} {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = e.Close() }()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	c := ec.open()
	defer c.Close()
	if got := c.Ranker.Prefs().Score("calculator"); got != 5.0/6 {
		t.Errorf("calculator preference %v, want 5/6 (both replicas' accepts)", got)
	}
	if got := c.Ranker.Prefs().Score("compare"); got != 1.0/3 {
		t.Errorf("compare preference %v, want 1/3", got)
	}
	if rate := successRate(t, c, "compare"); rate != 0.5 {
		t.Errorf("compare success rate %v, want 0.5 (one call from each replica)", rate)
	}
	for _, le := range []*learnEnv{ea, eb, ec} {
		if _, err := os.Stat(filepath.Join(le.cfg.Home, engine.LearnedFile)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s exists with storage.learned: postgres (%v)", filepath.Join(le.cfg.Home, engine.LearnedFile), err)
		}
		if _, err := os.Stat(le.cfg.IndexDir()); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s exists with storage.index: postgres (%v)", le.cfg.IndexDir(), err)
		}
	}
}
