package pg

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/url"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"
)

// These tests need a real PostgreSQL: AIRS_PG_DSN names one (make e2e-pg
// starts a throwaway one with scripts/pg.sh). Each test gets a database
// of its own, dropped when it ends.

// testDSN creates a fresh database and returns its DSN.
func testDSN(t testing.TB) string {
	t.Helper()
	base := os.Getenv("AIRS_PG_DSN")
	if base == "" {
		t.Skip("AIRS_PG_DSN is not set: run `make e2e-pg` (scripts/pg.sh starts a PostgreSQL for these tests)")
	}
	u, err := url.Parse(base)
	if err != nil || u.Scheme == "" {
		t.Fatalf("AIRS_PG_DSN must be a postgres:// URL for the tests (they create databases beside its own): %v", err)
	}
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatalf("connecting to AIRS_PG_DSN: %v", err)
	}
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	name := "airs_test_" + hex.EncodeToString(rnd[:])
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		admin.Close(ctx)
		t.Fatalf("creating the test database: %v", err)
	}
	t.Cleanup(func() {
		_, _ = admin.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
		admin.Close(ctx)
	})
	u.Path = "/" + name
	return u.String()
}

func openTest(t testing.TB, dsn string) *DB {
	t.Helper()
	db, err := Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	return db
}

// The vector extension loads, so the tool index on pgvector can build on
// this database (issue 19's next step).
func TestVectorExtensionLoads(t *testing.T) {
	db := openTest(t, testDSN(t))
	ctx := context.Background()
	if _, err := db.pool.Exec(ctx, `CREATE EXTENSION IF NOT EXISTS vector`); err != nil {
		t.Fatalf("CREATE EXTENSION vector: %v (scripts/pg.sh builds and installs pgvector)", err)
	}
	var d float64
	if err := db.pool.QueryRow(ctx, `SELECT '[1,2,3]'::vector <-> '[1,2,5]'::vector`).Scan(&d); err != nil {
		t.Fatal(err)
	}
	if d != 2 {
		t.Fatalf("L2 distance of [1,2,3] and [1,2,5] = %v, want 2", d)
	}
}

func jsonUnmarshal(s string, v any) error { return json.Unmarshal([]byte(s), v) }
