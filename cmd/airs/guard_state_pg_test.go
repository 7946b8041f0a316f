package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/airs-dev/airs/guard/anomaly/traffic"
	"github.com/airs-dev/airs/pipeline/audit"
	"github.com/airs-dev/airs/store/pg"
)

// Two replicas (two AIRS_HOMEs) with storage.guard: postgres: a delete
// held on replica A is approved with `airs review approve` on replica B
// and then runs on A; `airs guard train` on A stores the model in the
// database, and B's gate is on with that version — no reviews.json and no
// model file in either home.
func TestGuardStateOnPostgresAcrossReplicas(t *testing.T) {
	dsn := pgTestDSN(t)
	t.Setenv("AIRS_TEST_PG_DSN", dsn)
	const yaml = "storage:\n  audit: postgres\n  guard: postgres\n  dsn: ${AIRS_TEST_PG_DSN}\n"
	a, b := guardEnv(t, yaml), guardEnv(t, yaml)
	del := `{"space":"documents","path":"a.txt"}`
	r := a.run("call", "delete-file", "--args", del)
	r.expect(t, 23, "", "intent verification required")
	id := confirmationID.FindString(r.stderr)
	if id == "" {
		t.Fatalf("no confirmation id:\n%s", r.stderr)
	}
	b.run("review", "--json").expect(t, 0, id, "")
	b.run("review", "approve", id).expect(t, 0, id+" approved", "")
	a.run("call", "delete-file", "--args", del).expect(t, 0, `"deleted": true`, "")
	if a.exists("a.txt") {
		t.Fatal("the delete approved on replica B left the file on A")
	}
	a.run("review", "approve", id).expect(t, 1, "", "already decided")

	start := time.Now().UTC().Truncate(24*time.Hour).AddDate(0, 0, -8)
	var recs []audit.Record
	for _, c := range traffic.Normal(start, 7, 5) {
		recs = append(recs, audit.Record{Time: c.At, CallID: "t", Caller: c.Caller, Provider: "builtin", Tool: c.Tool,
			ParamsSHA256: strings.Repeat("0", 64), ParamsBytes: c.Size, Outcome: "ok"})
	}
	ctx := context.Background()
	db, err := pg.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	log := db.AuditLog()
	for i := range recs {
		if err := log.Append(&recs[i]); err != nil {
			t.Fatal(err)
		}
	}
	log.Close()
	db.Close()

	tr := a.run("guard", "train", "--json")
	tr.expect(t, 0, `"version"`, "")
	var trained struct{ Model, Version string }
	if err := json.Unmarshal([]byte(tr.stdout), &trained); err != nil || !strings.Contains(trained.Model, "PostgreSQL") || trained.Version == "" {
		t.Fatalf("guard train: %+v %v\n%s", trained, err, tr.stdout)
	}
	st := b.run("guard", "status", "--json")
	st.expect(t, 0, "", "")
	var status struct{ Mode, Version string }
	if err := json.Unmarshal([]byte(st.stdout), &status); err != nil || status.Mode != "on" || status.Version != trained.Version {
		t.Fatalf("replica B's gate: %+v %v, want on with version %s\n%s%s", status, err, trained.Version, st.stdout, st.stderr)
	}
	for _, e := range []*env{a, b} {
		for _, f := range []string{"reviews.json", "anomaly.model"} {
			if _, err := os.Stat(filepath.Join(e.home, "guard", f)); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("%s exists with storage.guard: postgres (%v)", filepath.Join(e.home, "guard", f), err)
			}
		}
	}
}
