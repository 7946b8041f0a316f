package pg

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/airs-dev/airs/store/pg/pgtest"
)

func TestLoadMigrationsWantsContiguousVersions(t *testing.T) {
	good := fstest.MapFS{
		"migrations/0001_a.sql": {Data: []byte("SELECT 1")},
		"migrations/0002_b.sql": {Data: []byte("SELECT 2")},
	}
	ms, err := loadMigrations(good)
	if err != nil || len(ms) != 2 || ms[1].version != 2 || ms[1].name != "b" {
		t.Fatalf("loadMigrations = %+v, %v", ms, err)
	}
	gap := fstest.MapFS{
		"migrations/0001_a.sql": {Data: []byte("SELECT 1")},
		"migrations/0003_c.sql": {Data: []byte("SELECT 3")},
	}
	if _, err := loadMigrations(gap); err == nil || !strings.Contains(err.Error(), "0002_WHAT.sql") {
		t.Fatalf("a gap in the versions: err = %v, want one naming 0002_WHAT.sql", err)
	}
	if SchemaVersion() < 1 {
		t.Fatal("no embedded migrations")
	}
}

func testPool(t *testing.T, dsn string) *pgxpool.Pool {
	t.Helper()
	pool, err := pgxpool.New(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

func schemaVersions(t *testing.T, pool *pgxpool.Pool) []int {
	t.Helper()
	rows, err := pool.Query(context.Background(), `SELECT version FROM airs_schema ORDER BY version`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var vs []int
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
		vs = append(vs, v)
	}
	return vs
}

// Replicas starting together migrate once: the advisory lock serialises
// them and the later ones find the schema current.
func TestMigrateConcurrentStartsApplyOnce(t *testing.T) {
	dsn := pgtest.DSN(t)
	var wg sync.WaitGroup
	errs := make([]error, 6)
	for i := range errs {
		wg.Go(func() {
			db, err := Open(context.Background(), dsn)
			if err == nil {
				db.Close()
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("start %d: %v", i, err)
		}
	}
	vs := schemaVersions(t, testPool(t, dsn))
	if len(vs) != SchemaVersion() || vs[len(vs)-1] != SchemaVersion() {
		t.Fatalf("airs_schema versions %v, want 1..%d once each", vs, SchemaVersion())
	}
}

// A binary whose newest migration is older than the database's refuses
// to start, and says which versions and what to do.
func TestOpenRefusesNewerSchema(t *testing.T) {
	dsn := pgtest.DSN(t)
	db := openTest(t, dsn)
	newer := SchemaVersion() + 1
	if _, err := db.pool.Exec(context.Background(), `INSERT INTO airs_schema (version, name) VALUES ($1, 'from_the_future')`, newer); err != nil {
		t.Fatal(err)
	}
	_, err := Open(context.Background(), dsn)
	if !errors.Is(err, ErrSchemaNewer) {
		t.Fatalf("Open on a newer schema: err = %v, want ErrSchemaNewer", err)
	}
	for _, want := range []string{"version " + strconv.Itoa(newer), "up to " + strconv.Itoa(SchemaVersion()), "never an older one"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}

// A later binary applies only what is new; a failing migration leaves the
// schema as it was (one transaction).
func TestMigrateUpgradesAndRollsBackAFailure(t *testing.T) {
	dsn := pgtest.DSN(t)
	pool := testPool(t, dsn)
	ctx := context.Background()
	v1 := []migration{{1, "one", `CREATE TABLE m_one (x int); INSERT INTO m_one VALUES (1)`}}
	if err := migrate(ctx, pool, v1); err != nil {
		t.Fatal(err)
	}
	v2 := append(v1, migration{2, "two", `CREATE TABLE m_two (x int)`})
	if err := migrate(ctx, pool, v2); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM m_one`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("migration 1 ran again or not at all: %d rows, %v", n, err)
	}
	bad := append(v2, migration{3, "three", `CREATE TABLE m_three (x int)`}, migration{4, "four", `SELECT no_such_column FROM m_two`})
	err := migrate(ctx, pool, bad)
	if err == nil || !strings.Contains(err.Error(), "0004_four") {
		t.Fatalf("a failing migration: err = %v, want one naming 0004_four", err)
	}
	if vs := schemaVersions(t, pool); len(vs) != 2 {
		t.Fatalf("after a failed migration the versions are %v, want [1 2]", vs)
	}
	var exists bool
	if err := pool.QueryRow(ctx, `SELECT to_regclass('m_three') IS NOT NULL`).Scan(&exists); err != nil || exists {
		t.Fatalf("migration 3 of the failed run was kept (exists=%v, %v)", exists, err)
	}
}
