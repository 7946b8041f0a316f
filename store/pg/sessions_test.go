package pg

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/airs-dev/airs/session"
	"github.com/airs-dev/airs/store/pg/pgtest"
)

// Two replicas (two pools, two Recorders) record at once into one
// database: every acknowledged record is there once, in an order where
// each feedback record follows its request, both replicas read the same
// log, and the lines are the file format's bytes (5.0 stays 5.0, a
// redacted value stays redacted).
func TestSessionLogReplicasShareOneLog(t *testing.T) {
	dsn := pgtest.DSN(t)
	dbs := []*DB{openTest(t, dsn), openTest(t, dsn)}
	recs := make([]*session.Recorder, 2)
	for i, db := range dbs {
		recs[i] = session.OpenSink(db.SessionLog(), "test", session.Options{Redact: []string{"password"}})
	}
	ctx := context.Background()
	const perReplica = 60
	var wg sync.WaitGroup
	errs := make(chan error, 2*perReplica)
	for i, r := range recs {
		for j := range perReplica {
			wg.Add(1)
			go func() {
				defer wg.Done()
				id, err := r.Record(ctx, session.Record{Session: fmt.Sprintf("s%d", i), Channel: "serve", Caller: "alice",
					Request: fmt.Sprintf("request %d of replica %d", j, i),
					Call:    &session.Call{Tool: "t", Arguments: map[string]any{"n": json.Number("5.0"), "password": "hunter2"}}})
				if err != nil {
					errs <- err
					return
				}
				// Feedback from the other replica, as a client answering
				// through another load-balanced connection.
				if err := recs[1-i].Feedback(ctx, id, session.Feedback{Verdict: session.Accepted}); err != nil {
					errs <- err
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for _, r := range recs {
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
	}
	var logs [2][]session.Record
	for i, db := range dbs {
		all, err := db.SessionLog().ReadAll(ctx)
		if err != nil {
			t.Fatal(err)
		}
		logs[i] = all
	}
	if len(logs[0]) != 4*perReplica || len(logs[1]) != len(logs[0]) {
		t.Fatalf("replicas read %d and %d records, want %d each", len(logs[0]), len(logs[1]), 4*perReplica)
	}
	for k := range logs[0] {
		if logs[0][k].ID != logs[1][k].ID {
			t.Fatalf("record %d: the replicas read %s and %s: not one log order", k, logs[0][k].ID, logs[1][k].ID)
		}
	}
	reqs, orphans := session.Merge(logs[0])
	if len(reqs) != 2*perReplica || orphans != 0 {
		t.Fatalf("Merge: %d requests, %d orphan feedback records; want %d and 0 (feedback after its request)", len(reqs), orphans, 2*perReplica)
	}
	for _, r := range reqs {
		if r.Feedback == nil || r.Feedback.Verdict != session.Accepted {
			t.Fatalf("request %s lost its feedback: %+v", r.ID, r.Feedback)
		}
		if n := r.Call.Arguments["n"]; n != json.Number("5.0") || r.Call.Arguments["password"] != "[redacted]" {
			t.Fatalf("arguments %v: want n 5.0 as written and the password redacted", r.Call.Arguments)
		}
	}
	var line string
	if err := dbs[0].pool.QueryRow(ctx, `SELECT line FROM airs_sessions WHERE kind = 'request' LIMIT 1`).Scan(&line); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(line, `"n":5.0`) || !strings.HasSuffix(line, "}\n") || strings.Contains(line, "hunter2") {
		t.Fatalf("stored line %q: want the file log's line", line)
	}
	tail, err := dbs[1].SessionLog().Tail(ctx, 3)
	if err != nil || len(tail) != 3 || tail[2].ID != logs[0][len(logs[0])-1].ID {
		t.Fatalf("Tail(3) = %d records (%v), want the last 3 in order", len(tail), err)
	}
}

// A record is acknowledged only after its commit: once Record returns,
// another pool sees it; and a failing database fails the records of that
// batch without making the next ones fail.
func TestSessionLogAcknowledgesAfterCommit(t *testing.T) {
	dsn := pgtest.DSN(t)
	a, b := openTest(t, dsn), openTest(t, dsn)
	r := session.OpenSink(a.SessionLog(), "test", session.Options{})
	defer r.Close()
	ctx := context.Background()
	for i := range 5 {
		id, err := r.Record(ctx, session.Record{Request: "hello"})
		if err != nil {
			t.Fatal(err)
		}
		var n int
		if err := b.pool.QueryRow(ctx, `SELECT count(*) FROM airs_sessions WHERE id = $1`, id).Scan(&n); err != nil || n != 1 {
			t.Fatalf("record %d acknowledged but %d rows seen from another pool (%v)", i, n, err)
		}
	}
	// The table gone: the batch fails, unacknowledged.
	if _, err := b.pool.Exec(ctx, `ALTER TABLE airs_sessions RENAME TO airs_sessions_away`); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Record(ctx, session.Record{Request: "lost"}); err == nil {
		t.Fatal("a record the database did not take was acknowledged")
	}
	if _, err := b.pool.Exec(ctx, `ALTER TABLE airs_sessions_away RENAME TO airs_sessions`); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Record(ctx, session.Record{Request: "back"}); err != nil {
		t.Fatalf("after the database came back: %v (a sink error must not be sticky)", err)
	}
	if n, err := b.SessionLog().Count(ctx); err != nil || n != 6 {
		t.Fatalf("%d records (%v), want the 5 and the one after the outage", n, err)
	}
}
