package pgindex

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/airs-dev/airs/store/pg"
)

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
