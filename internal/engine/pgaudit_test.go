package engine

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/airs-dev/airs/config"
	"github.com/airs-dev/airs/pipeline/audit"
	"github.com/airs-dev/airs/store/pg"
)

// With storage.audit: postgres the recommender's readers of the audit log
// read the database: a caller's recent calls (airs recommend) are its last
// ten non-speculative calls of the hour there, and the history it trains
// on is the log's tail, oldest first.
func TestRecommenderReadsThePostgresAuditLog(t *testing.T) {
	ctx := context.Background()
	dsn := pgTestDSN(t, "airs_engine_audit_")

	db, err := pg.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	log := db.AuditLog()
	now := time.Now().UTC()
	add := func(at time.Time, caller, tool string, spec bool) {
		r := audit.Record{Time: at, CallID: "c", Caller: caller, Provider: "builtin", Tool: tool,
			ParamsSHA256: strings.Repeat("0", 64), Outcome: "ok", Speculative: spec}
		if err := log.Append(&r); err != nil {
			t.Fatal(err)
		}
	}
	add(now.Add(-2*time.Hour), "alice", "too-old", false)
	for i := range 12 {
		add(now.Add(time.Duration(i-30)*time.Minute), "alice", "tool-"+string(rune('a'+i)), false)
	}
	add(now.Add(-time.Minute), "bob", "bobs-tool", false)
	add(now, "alice", "speculated", true)
	log.Close()
	db.Close()

	e := &Engine{cfg: &config.Config{Storage: config.Storage{Audit: config.StoragePostgres, DSN: dsn}}}
	defer e.closePG()
	if !auditOnPG(e.cfg) {
		t.Fatal("auditOnPG is false with storage.audit: postgres")
	}
	tail := e.pgAuditTail(historyRecords)
	if len(tail) != 15 || tail[0].Tool != "too-old" || tail[14].Tool != "speculated" {
		t.Fatalf("the tail: %d records, first %+v", len(tail), tail[0])
	}
	recent := recentCallsOf(tail, "alice", now.Add(-time.Hour))
	if len(recent) != 10 || recent[0].Tool != "tool-c" || recent[9].Tool != "tool-l" {
		t.Fatalf("alice's recent calls: %+v, want tool-c … tool-l", recent)
	}
	for _, c := range recent {
		if c.Caller != "alice" || c.Tool == "speculated" || c.Tool == "too-old" {
			t.Fatalf("recent calls hold %+v", c)
		}
	}
}

// pgTestDSN creates a database of its own (named prefix + random hex) on
// AIRS_PG_DSN's server (make e2e-pg starts one), dropped when the test
// ends, and returns its DSN; the test skips without a server.
func pgTestDSN(t *testing.T, prefix string) string {
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
	name := prefix + hex.EncodeToString(rnd[:])
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
