package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Two `airs serve` replicas on one PostgreSQL: a non-idempotent call made
// on replica 1 and retried on replica 2 with the same call_id is answered
// with the first attempt's outcome, "replayed": true, without running
// again; another caller's retry is 409 already_claimed.
func TestClaimsReplayOnPostgres(t *testing.T) {
	dsn := pgTestDSN(t)
	t.Setenv("AIRS_TEST_PG_DSN", dsn)
	hash := func(s string) string { h := sha256.Sum256([]byte(s)); return hex.EncodeToString(h[:]) }
	dir := t.TempDir()
	e := &env{t: t, dir: dir, config: filepath.Join(dir, "airs.yaml")}
	if err := os.WriteFile(e.config, []byte(`storage:
  audit: postgres
  dsn: ${AIRS_TEST_PG_DSN}
claims: {retention: 1h}
manifests: [./ledger.yaml]
agents:
  tester: {capabilities: []}
  bob: {capabilities: []}
http:
  tokens:
    - {sha256: `+hash("tok-t")+`, agent: tester}
    - {sha256: `+hash("tok-b")+`, agent: bob}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.dir, "ledger.yaml"), []byte(`provider: ledger
tools:
  - name: ledger_post
    version: 1.0.0
    description: Posts an entry to the ledger (not idempotent; test tool).
    handler: builtin.calculator
    parameters: {type: object, properties: {expression: {type: string}}, required: [expression]}
    trust: TL3
    latency_class: instant
    idempotent: false
`), 0o644); err != nil {
		t.Fatal(err)
	}
	var bases []string
	for r := range 2 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		srv := exec.Command(airsBin, "--config", e.config, "serve", "--listen", addr, "--model", "none")
		srv.Env = append(os.Environ(), "AIRS_HOME="+filepath.Join(e.dir, "home", string(rune('a'+r))), "AIRS_CONFIG=", "HOME="+e.dir)
		var logb syncBuffer
		srv.Stderr, srv.Stdout = &logb, &logb
		if err := srv.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = srv.Process.Kill(); _ = srv.Wait() })
		base := "http://" + addr
		deadline := time.Now().Add(60 * time.Second)
		for {
			if srv.ProcessState != nil {
				t.Fatalf("replica %d exited:\n%s", r, logb.String())
			}
			resp, err := http.Get(base + "/healthz")
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode == 200 {
					break
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("replica %d did not start:\n%s", r, logb.String())
			}
			time.Sleep(50 * time.Millisecond)
		}
		bases = append(bases, base)
	}
	call := func(base, token, id, expr string) (int, map[string]any) {
		t.Helper()
		body, _ := json.Marshal(map[string]any{"tool": "ledger_post", "call_id": id, "arguments": map[string]any{"expression": expr}})
		req, _ := http.NewRequest("POST", base+"/v1/call", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var out map[string]any
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatalf("%d: %s", resp.StatusCode, b)
		}
		if resp.StatusCode == http.StatusConflict && resp.Header.Get("Retry-After") != "" {
			out["retry_after"] = resp.Header.Get("Retry-After")
		}
		return resp.StatusCode, out
	}
	st, first := call(bases[0], "tok-t", "pay-1", "20 * 3")
	if st != 200 || first["replayed"] == true {
		t.Fatalf("first attempt: %d %v", st, first)
	}
	st, again := call(bases[1], "tok-t", "pay-1", "20 * 3")
	fo, _ := json.Marshal(first["output"])
	ao, _ := json.Marshal(again["output"])
	if st != 200 || again["replayed"] != true || string(fo) != string(ao) || again["outcome"] != "ok" {
		t.Fatalf("retry on replica 2: %d %v; want 200, replayed, output %s", st, again, fo)
	}
	st, other := call(bases[1], "tok-b", "pay-1", "20 * 3")
	if st != http.StatusConflict || other["error"] != "already_claimed" || other["output"] != nil {
		t.Errorf("another caller's retry: %d %v; want 409 already_claimed without the output", st, other)
	}
	// An error is replayed with its kind (provider_rejected: 422).
	if st, b := call(bases[0], "tok-t", "pay-2", "1/0"); st != http.StatusUnprocessableEntity {
		t.Fatalf("failing first attempt: %d %v", st, b)
	}
	st, rb := call(bases[1], "tok-t", "pay-2", "1/0")
	if st != http.StatusUnprocessableEntity || rb["error"] != "provider_rejected" || rb["replayed"] != true {
		t.Errorf("replayed error: %d %v; want 422 provider_rejected, replayed", st, rb)
	}
	// The audit log: each call ran once; the replays are marked.
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var ran, replays int
	if err := conn.QueryRow(context.Background(), `SELECT
		count(*) FILTER (WHERE (line::json)->>'replayed' IS NULL AND (line::json)->>'error' IS DISTINCT FROM 'already_claimed'),
		count(*) FILTER (WHERE (line::json)->>'replayed' = 'true')
		FROM airs_audit WHERE (line::json)->>'call_id' = 'pay-1'`).Scan(&ran, &replays); err != nil {
		t.Fatal(err)
	}
	if ran != 1 || replays != 1 {
		t.Errorf("audit records of pay-1: %d that ran (want 1), %d replays (want 1)", ran, replays)
	}
}
