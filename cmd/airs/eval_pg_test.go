package main

import (
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airs-dev/airs/evals/replay"
	"github.com/airs-dev/airs/internal/engine"
	"github.com/airs-dev/airs/internal/settings"
)

// With storage.sessions: postgres the engine records into the database
// (no sessions.jsonl), and `airs eval replay` / `airs eval tune` without a
// file read it there; a database with no records says how to record some.
func TestEvalReplayOnPostgres(t *testing.T) {
	dsn := pgTestDSN(t)
	t.Setenv("AIRS_TEST_PG_DSN", dsn)
	const storage = "recording:\n  enabled: true\nstorage:\n  sessions: postgres\n  dsn: ${AIRS_TEST_PG_DSN}\n"
	empty := newEnv(t, storage)
	if out := empty.run("eval", "replay"); out.code != 2 || !strings.Contains(out.stderr, "no recorded sessions in the PostgreSQL session log") {
		t.Fatalf("replay of an empty database: exit %d: %s", out.code, out.stderr)
	}
	e := newEnv(t, storage)
	t.Setenv("AIRS_HOME", e.home)
	cfg, reg, m := assembleConfig(t, e.config)
	eng, err := engine.New(context.Background(), cfg, reg, m, settings.Policy(cfg), engine.Options{Channel: "chat", Model: "none"})
	if err != nil {
		t.Fatal(err)
	}
	replayDocs(t, e.docs)
	reqs := replay.BuiltinRequests(rand.New(rand.NewPCG(5, 5)), 40, "documents")
	if _, err := replay.Generate(context.Background(), replayService{eng}, "tester", reqs); err != nil {
		t.Fatal(err)
	}
	if p := eng.RecordingPath(); !strings.Contains(p, "PostgreSQL") {
		t.Fatalf("recorded to %s", p)
	}
	eng.Close()
	if _, err := os.Stat(filepath.Join(e.home, "sessions", "sessions.jsonl")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("sessions.jsonl written with storage.sessions: postgres (%v)", err)
	}
	out := e.run("eval", "replay", "--json")
	if out.code != 0 || !strings.Contains(out.stderr, "from the PostgreSQL session log") {
		t.Fatalf("replay exit %d: %s", out.code, out.stderr)
	}
	var def replay.MetricLine
	lines := strings.Split(strings.TrimSpace(out.stdout), "\n")
	if err := json.Unmarshal([]byte(lines[0]), &def); err != nil || def.N != len(reqs) {
		t.Fatalf("replay --json first line %q (%v): want %d requests", lines[0], err, len(reqs))
	}
	if tune := e.run("eval", "tune", "--json"); tune.code != 0 {
		t.Fatalf("tune exit %d: %s %s", tune.code, tune.stdout, tune.stderr)
	}
}
