package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/airs-dev/airs/config"
	"github.com/airs-dev/airs/store/pg"
	"github.com/airs-dev/airs/store/pg/pgtest"
)

// pgTestDSN is pgtest.DSN: a database of its own on AIRS_PG_DSN's server, the
// test skipped without one.
func pgTestDSN(t *testing.T) string { return pgtest.DSN(t) }

// With storage.audit: postgres every airs process appends to a chain of
// its own in the database, `airs audit verify` and `tail` read it, tampering
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
	// Each process appended to a chain of its own.
	e.run("audit", "verify").expect(t, 0, strconv.Itoa(n+1)+" records in "+strconv.Itoa(n+1)+" chains, every chain intact", "")
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
	// Seq 3 is its chain's only record: its head no longer matches.
	e.run("audit", "verify").expect(t, 4, "BROKEN", "audit chain is broken at line "+strconv.Itoa(n+2))
	e.run("audit", "verify").expect(t, 4, "the chain head's hash is not its last record's", "")

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

// airs.yaml's default audit_gather is the store's: one figure measured,
// one default (BENCHMARKS.md, "Gathering batches in the audit writer").
func TestAuditGatherDefault(t *testing.T) {
	if config.DefaultAuditGather != pg.DefaultAuditGather {
		t.Fatalf("config.DefaultAuditGather %v, pg.DefaultAuditGather %v: keep them equal", config.DefaultAuditGather, pg.DefaultAuditGather)
	}
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

// startServe starts `airs serve` with its own AIRS_HOME and returns its
// base URL once /healthz answers.
func startServe(t *testing.T, e *env, home string) (string, *exec.Cmd) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	srv := exec.Command(airsBin, "--config", e.config, "serve", "--listen", addr, "--model", "none")
	srv.Env = append(os.Environ(), "AIRS_HOME="+home, "AIRS_CONFIG=", "HOME="+e.dir)
	var srvErr bytes.Buffer
	srv.Stderr = &srvErr
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = srv.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = srv.Process.Kill()
		<-done
	})
	base := "http://" + addr
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get(base + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return base, srv
			}
		}
		select {
		case <-done:
			t.Fatalf("airs serve exited:\n%s", srvErr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("airs serve did not answer /healthz within 60 s\n%s", srvErr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Two `airs serve` replicas, each with its own AIRS_HOME (as on two
// machines), on one database, HTTP load spread over both; one is killed
// with SIGKILL mid-load and its clients retry on the other. Every call
// acknowledged with a 200 is in the one chain exactly once, and
// `airs audit verify` finds it intact.
func TestServeReplicasOnPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("starts airs serve processes")
	}
	dsn := pgTestDSN(t)
	t.Setenv("AIRS_TEST_PG_DSN", dsn)
	const token = "replica-test-token"
	sum := sha256.Sum256([]byte(token))
	e := newEnv(t, "http:\n  tokens:\n    - sha256: "+hex.EncodeToString(sum[:])+"\n      agent: tester\n"+
		"storage:\n  audit: postgres\n  dsn: ${AIRS_TEST_PG_DSN}\n")
	base1, _ := startServe(t, e, filepath.Join(e.dir, "home1"))
	base2, srv2 := startServe(t, e, filepath.Join(e.dir, "home2"))

	client := &http.Client{Timeout: 30 * time.Second}
	call := func(base, expr string) (string, error) {
		body := `{"tool":"calculator","arguments":{"expression":"` + expr + `"}}`
		req, _ := http.NewRequest("POST", base+"/v1/call", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		var res struct {
			CallID  string `json:"call_id"`
			Outcome string `json:"outcome"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&res); err != nil || resp.StatusCode != http.StatusOK || res.Outcome != "ok" {
			return "", fmt.Errorf("status %d, %v, %+v", resp.StatusCode, err, res)
		}
		return res.CallID, nil
	}
	const clients, calls = 6, 30
	var mu sync.Mutex
	acked := map[string]int{}
	retried := 0
	var killOnce sync.Once
	var wg sync.WaitGroup
	for c := range clients {
		wg.Go(func() {
			for i := range calls {
				base := base1
				if c%2 == 1 {
					base = base2
				}
				if c == 1 && i == calls/2 {
					killOnce.Do(func() { _ = srv2.Process.Signal(syscall.SIGKILL) })
				}
				id, err := call(base, fmt.Sprintf("%d*%d", c, i))
				if err != nil && base == base2 {
					mu.Lock()
					retried++
					mu.Unlock()
					id, err = call(base1, fmt.Sprintf("%d*%d", c, i))
				}
				if err != nil {
					t.Errorf("client %d call %d: %v", c, i, err)
					return
				}
				mu.Lock()
				acked[id]++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(acked) != clients*calls {
		t.Fatalf("%d distinct acknowledged calls, want %d", len(acked), clients*calls)
	}
	if retried == 0 {
		t.Fatal("no call failed over: the kill came too late to test anything")
	}

	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT line FROM airs_audit ORDER BY seq`)
	if err != nil {
		t.Fatal(err)
	}
	lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	inLog := map[string]int{}
	for _, l := range lines {
		var r struct {
			CallID string `json:"call_id"`
		}
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatal(err)
		}
		inLog[r.CallID]++
	}
	for id := range acked {
		if inLog[id] != 1 {
			t.Fatalf("acknowledged call %s is in the audit log %d times", id, inLog[id])
		}
	}
	r := e.run("audit", "verify")
	r.expect(t, 0, "chain intact", "")
	t.Logf("%d acknowledged, %d in the audit log, %d failed over after the kill; %s", len(acked), len(lines), retried, strings.TrimSpace(r.stdout))
}
