package pgindex

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/airs-dev/airs/store/pg"
)

// testDSN creates a fresh database beside AIRS_PG_DSN's (make e2e-pg starts
// a throwaway PostgreSQL) and returns its DSN; it is dropped when the test
// ends.
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

func openTest(t testing.TB, dsn string) *pg.DB {
	t.Helper()
	db, err := pg.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	return db
}

// queryRow runs one query on a connection of its own (store/pg keeps its
// pool to itself).
func queryRow(t testing.TB, dsn, sql string) pgx.Row {
	t.Helper()
	ctx := context.Background()
	c, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(ctx) })
	return c.QueryRow(ctx, sql)
}
