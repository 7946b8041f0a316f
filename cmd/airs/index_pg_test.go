package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/jackc/pgx/v5"
)

// With storage.index: postgres, `airs select` ranks from the tool index in
// the database: the built-in tools are stored there (with the lexical
// basis), nothing is written under $AIRS_HOME/index, a second process
// embeds nothing new, and the decision is the one the embedded index makes.
func TestToolIndexOnPostgres(t *testing.T) {
	dsn := pgTestDSN(t)
	t.Setenv("AIRS_TEST_PG_DSN", dsn)
	file := newEnv(t, "")
	want := file.run("select", "--model", "none", "--json", "list the pdf files in my documents")
	if want.code != 0 {
		t.Fatalf("airs select (files): %d %s", want.code, want.stderr)
	}
	e := newEnv(t, "storage:\n  index: postgres\n  dsn: ${AIRS_TEST_PG_DSN}\n")
	for range 2 {
		got := e.run("select", "--model", "none", "--json", "list the pdf files in my documents")
		if got.code != 0 {
			t.Fatalf("airs select (postgres): %d %s", got.code, got.stderr)
		}
		var a, b struct {
			Function  string          `json:"function"`
			Arguments json.RawMessage `json:"arguments"`
		}
		if err := json.Unmarshal([]byte(want.stdout), &a); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(got.stdout), &b); err != nil {
			t.Fatal(err)
		}
		if a.Function == "" || a.Function != b.Function || string(a.Arguments) != string(b.Arguments) {
			t.Fatalf("embedded index chose %s %s, PostgreSQL's %s %s", a.Function, a.Arguments, b.Function, b.Arguments)
		}
	}
	if _, err := os.Stat(filepath.Join(e.home, "index")); !os.IsNotExist(err) {
		t.Fatalf("$AIRS_HOME/index exists with storage.index: postgres (%v)", err)
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var tools int
	var gen int64
	var embedder string
	if err := conn.QueryRow(ctx, `SELECT (SELECT count(*) FROM airs_tools), generation, embedder FROM airs_tool_index`).Scan(&tools, &gen, &embedder); err != nil {
		t.Fatal(err)
	}
	// The first process stored the tools; the second found them unchanged
	// and wrote nothing (generation counts the index's Saves).
	if tools == 0 || embedder == "" || gen != 1 {
		t.Fatalf("airs_tools holds %d tools (embedder %q), generation %d: want the tools, saved once", tools, embedder, gen)
	}
	t.Logf("%d tools in airs_tools, embedder %s, generation %d", tools, embedder, gen)
}
