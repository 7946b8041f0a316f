package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/airs-dev/airs/guard/anomaly/traffic"
	"github.com/airs-dev/airs/pipeline/audit"
	"github.com/airs-dev/airs/store/pg"
)

// With storage.audit: postgres, `airs guard train` learns from the
// database's log (no audit.jsonl exists), and the next `airs call` warms
// the anomaly gate's per-caller history from it: tester's habitual
// calculator runs, while the same model with an empty history (a file
// log with nothing in it) holds that call as a tool new to the caller.
func TestGuardOnPostgres(t *testing.T) {
	dsn := pgTestDSN(t)
	t.Setenv("AIRS_TEST_PG_DSN", dsn)
	e := newEnv(t, "storage:\n  audit: postgres\n  dsn: ${AIRS_TEST_PG_DSN}\n")
	e.run("guard", "train").expect(t, 1, "", "PostgreSQL audit log")

	start := time.Now().UTC().Truncate(24*time.Hour).AddDate(0, 0, -15)
	var recs []audit.Record
	for _, c := range traffic.Normal(start, 14, 5) {
		recs = append(recs, audit.Record{Time: c.At, CallID: "t", Caller: c.Caller, Provider: "builtin", Tool: c.Tool,
			ParamsSHA256: strings.Repeat("0", 64), ParamsBytes: c.Size, Outcome: "ok"})
	}
	for h := 0; h < 15*24; h++ { // up to this hour: the history's last minutes too
		for k := 0; k < 2; k++ {
			at := start.Add(time.Duration(h)*time.Hour + time.Duration(k*20+h%17)*time.Minute)
			if at.After(time.Now()) {
				break
			}
			recs = append(recs, audit.Record{Time: at, CallID: "c", Caller: "tester", Provider: "builtin", Tool: "calculator",
				ParamsSHA256: strings.Repeat("0", 64), ParamsBytes: 20 + h%7, Outcome: "ok"})
		}
	}
	for i := 1; i < len(recs); i++ {
		for j := i; j > 0 && recs[j].Time.Before(recs[j-1].Time); j-- {
			recs[j], recs[j-1] = recs[j-1], recs[j]
		}
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

	r := e.run("guard", "train", "--json")
	r.expect(t, 0, `"version"`, "")
	var tr struct {
		Model          string
		Calls, Records int
	}
	if err := json.Unmarshal([]byte(r.stdout), &tr); err != nil || tr.Records != len(recs) || tr.Calls != len(recs) {
		t.Fatalf("train on PostgreSQL: %+v %v (want %d records)\n%s", tr, err, len(recs), r.stdout)
	}
	if tr.Model != filepath.Join(e.home, "guard", "anomaly.model") {
		t.Fatalf("model written to %s", tr.Model)
	}

	// The control: the same model, no history of its own. The model
	// trained on PostgreSQL's log knows the tools everyone uses: a call of
	// one runs, a tool nobody has called is held (the per-agent features
	// abstain with no history, the population's do not).
	ctl := newEnv(t, "guard:\n  anomaly:\n    model: "+tr.Model+"\n")
	ctl.run("call", "calculator", "--args", `{"expression":"1+2"}`).expect(t, 0, "3", "")
	ctl.run("call", "list-files", "--args", `{"space":"documents"}`).expect(t, 23, "", "intent verification required")

	// With the history read from PostgreSQL: the same.

	e.run("call", "calculator", "--args", `{"expression":"1+2"}`).expect(t, 0, "3", "")
	e.run("call", "list-files", "--args", `{"space":"documents"}`).expect(t, 23, "", "intent verification required")
}
