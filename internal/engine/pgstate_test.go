package engine_test

import (
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/airs-dev/airs/internal/engine"
	"github.com/airs-dev/airs/pipeline"
	"github.com/airs-dev/airs/store/pg/pgtest"
)

// pgDSN is pgtest.DSN: a database of its own on AIRS_PG_DSN's server, the
// test skipped without one.
func pgDSN(t *testing.T) string { return pgtest.DSN(t) }

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
		a.Ranker().Prefs().Accept("calculator")
	}
	b.Ranker().Prefs().Accept("calculator")
	b.Ranker().Prefs().Dismiss("compare")
	a.Ranker().Observe("compare", &pipeline.Result{Latency: time.Millisecond}, nil)
	b.Ranker().Observe("compare", &pipeline.Result{Latency: time.Millisecond}, errors.New("failed"))
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
	if got := c.Ranker().Prefs().Score("calculator"); got != 5.0/6 {
		t.Errorf("calculator preference %v, want 5/6 (both replicas' accepts)", got)
	}
	if got := c.Ranker().Prefs().Score("compare"); got != 1.0/3 {
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
