package pg

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/airs-dev/airs/store/pg/pgtest"
)

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
// this database.
func TestVectorExtensionLoads(t *testing.T) {
	db := openTest(t, pgtest.DSN(t))
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
