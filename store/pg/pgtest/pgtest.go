// Package pgtest gives a test a PostgreSQL database of its own: the one
// setup every package whose tests need a real server (store/pg, the
// evals on pgvector, the engine, the CLI) shares.
//
// AIRS_PG_DSN names the server (`make e2e-pg` starts a throwaway one with
// scripts/pg.sh); without it the test skips, so a fresh clone's `make
// test` passes with no PostgreSQL.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"
)

// EnvDSN is the variable that names the test server.
const EnvDSN = "AIRS_PG_DSN"

// DSN creates a fresh database beside EnvDSN's own, dropped (connections
// and all) when the test ends, and returns its DSN. It skips the test when
// EnvDSN is not set.
func DSN(t testing.TB) string {
	t.Helper()
	base := os.Getenv(EnvDSN)
	if base == "" {
		t.Skip(EnvDSN + " is not set: run `make e2e-pg` (scripts/pg.sh starts a PostgreSQL for these tests)")
	}
	u, err := url.Parse(base)
	if err != nil || u.Scheme == "" {
		t.Fatalf("%s must be a postgres:// URL for the tests (they create databases beside its own): %v", EnvDSN, err)
	}
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatalf("connecting to %s: %v", EnvDSN, err)
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
