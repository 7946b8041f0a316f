package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/airs-dev/airs/store/pg"
)

// pgTestDSN creates a database of its own on AIRS_PG_DSN's server (make
// e2e-pg starts one) and returns its DSN; the test skips without one.
func pgTestDSN(t *testing.T) string {
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
	name := "airs_cli_" + hex.EncodeToString(rnd[:])
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

// With storage.audit: postgres every airs process appends to the
// database's one chain, `airs audit verify` and `tail` read it, tampering
// is exit 4, and no audit.jsonl is written.
func TestAuditOnPostgres(t *testing.T) {
	dsn := pgTestDSN(t)
	t.Setenv("AIRS_TEST_PG_DSN", dsn)
	e := newEnv(t, "storage:\n  audit: postgres\n  dsn: ${AIRS_TEST_PG_DSN}\n")
	const n = 8
	codes := make(chan int, n)
	for i := range n {
		go func() {
			cmd := exec.Command(airsBin, "--config", e.config, "call", "calculator", "--args", `{"expression": "`+strings.Repeat("1+", i)+`1"}`)
			cmd.Env = append(os.Environ(), "AIRS_HOME="+e.home, "AIRS_CONFIG=", "HOME="+e.dir)
			out, err := cmd.CombinedOutput()
			var ee *exec.ExitError
			switch {
			case err == nil:
				codes <- 0
			case errors.As(err, &ee):
				t.Logf("airs call: %s", out)
				codes <- ee.ExitCode()
			default:
				codes <- -1
			}
		}()
	}
	for range n {
		if c := <-codes; c != 0 {
			t.Fatalf("a concurrent call exited %d", c)
		}
	}
	e.run("call", "read-file", "--args", `{"space": "private", "path": "secret.txt"}`).expect(t, 14, "", "ReadSpace(private)")
	e.run("audit", "verify").expect(t, 0, strconv.Itoa(n+1)+" records, chain intact", "")
	e.run("audit", "tail", "-n", "2").expect(t, 0, "tool_capability_denied", "")
	if _, err := os.Stat(filepath.Join(e.home, "audit.jsonl")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("audit.jsonl was written with storage.audit: postgres (stat: %v)", err)
	}

	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `UPDATE airs_audit SET line = replace(line, '"caller":"tester"', '"caller":"nobody"') WHERE seq = 3`); err != nil {
		t.Fatal(err)
	}
	e.run("audit", "verify").expect(t, 4, "BROKEN", "audit chain is broken at line 4")

	// A database migrated by a newer airs: this one refuses to start.
	if _, err := conn.Exec(ctx, `INSERT INTO airs_schema (version, name) VALUES ($1, 'newer')`, pg.SchemaVersion()+1); err != nil {
		t.Fatal(err)
	}
	r := e.run("call", "calculator", "--args", `{"expression": "1"}`)
	if r.code == 0 || !strings.Contains(r.stderr, "schema version "+strconv.Itoa(pg.SchemaVersion()+1)) || strings.Contains(r.stdout, "result") {
		t.Fatalf("a call on a newer schema: exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
	t.Logf("refusal: %s", strings.TrimSpace(r.stderr))
}

// A DSN that reaches nothing is an error naming the database, without
// the password.
func TestAuditPostgresUnreachable(t *testing.T) {
	e := newEnv(t, "storage:\n  audit: postgres\n  dsn: postgres://airs:s3cret@127.0.0.1:1/airs?connect_timeout=2\n")
	r := e.run("audit", "verify")
	if r.code == 0 || !strings.Contains(r.stderr, "127.0.0.1:1/airs") || strings.Contains(r.stderr, "s3cret") {
		t.Fatalf("exit %d, stderr %s", r.code, r.stderr)
	}
}
