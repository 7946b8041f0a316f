package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airs-dev/airs/internal/engine"
	"github.com/airs-dev/airs/pipeline"
	"github.com/airs-dev/airs/selector"
	"github.com/airs-dev/airs/session"
	"github.com/airs-dev/airs/store/pg"
)

type quietUI struct{}

func (quietUI) Selected(*selector.Selection, *pipeline.Tool)                 {}
func (quietUI) Confirm(context.Context, pipeline.Tool, json.RawMessage) bool { return false }
func (quietUI) Running(string)                                               {}
func (quietUI) Result(*pipeline.Result, error)                               {}
func (quietUI) Note(string)                                                  {}
func (quietUI) Token(string) error                                           { return nil }

// Two replicas (two AIRS_HOMEs) recording with storage.sessions: postgres:
// each turn's record is in the database when Turn returns (another pool
// reads it), feedback given on the other replica lands in the same log,
// and no sessions.jsonl is written.
func TestSessionsOnPostgresFromTwoReplicas(t *testing.T) {
	dsn := pgDSN(t)
	t.Setenv("AIRS_TEST_PG_DSN", dsn)
	const yaml = "recording:\n  enabled: true\nstorage:\n  sessions: postgres\n  dsn: ${AIRS_TEST_PG_DSN}\n"
	ea, eb := newLearnEnv(t, yaml), newLearnEnv(t, yaml)
	a, b := ea.open(), eb.open()
	defer a.Close()
	defer b.Close()
	if p := a.RecordingPath(); !strings.Contains(p, "PostgreSQL") {
		t.Fatalf("recorder writes to %q", p)
	}
	ctx := context.Background()
	reader, err := pg.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	var turns []*engine.TurnResult
	for i, e := range []*engine.Engine{a, b} {
		tr, err := e.Turn(ctx, "tester", "compute 2+3", quietUI{}, engine.TurnOptions{Session: "s"})
		if err != nil {
			t.Fatal(err)
		}
		if tr.RecordErr != nil || tr.RecordID == "" {
			t.Fatalf("replica %d: record %q, %v", i, tr.RecordID, tr.RecordErr)
		}
		if n, err := reader.SessionLog().Count(ctx); err != nil || n != int64(i+1) {
			t.Fatalf("after replica %d's turn the database holds %d records (%v): not committed before the turn returned", i, n, err)
		}
		turns = append(turns, tr)
	}
	// The answer to A's turn comes through B (another connection).
	if err := b.Feedback(ctx, turns[0], session.Accepted); err != nil {
		t.Fatal(err)
	}
	recs, err := reader.SessionLog().ReadAll(ctx)
	if err != nil {
		t.Fatal(err)
	}
	reqs, orphans := session.Merge(recs)
	if len(reqs) != 2 || orphans != 0 || reqs[0].ID != turns[0].RecordID || reqs[0].Feedback == nil ||
		reqs[0].Feedback.Verdict != session.Accepted || reqs[1].Feedback != nil || reqs[0].Request != "compute 2+3" {
		t.Fatalf("merged log: %+v (orphans %d)", reqs, orphans)
	}
	for _, le := range []*learnEnv{ea, eb} {
		if _, err := os.Stat(filepath.Join(le.cfg.Home, "sessions", "sessions.jsonl")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("sessions.jsonl written with storage.sessions: postgres (%v)", err)
		}
	}
}
