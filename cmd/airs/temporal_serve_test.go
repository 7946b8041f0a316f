package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// temporalEnv is an airs installation whose chains run on Temporal (a real
// server: scripts/temporal.sh sets AIRS_TEMPORAL_ADDRESS), with worker and
// serve processes, each replica with its own AIRS_HOME (its own audit log).
type temporalEnv struct {
	t           *testing.T
	bin         string
	dir         string
	config      string // chains.engine temporal
	embedded    string // the same installation with chains in process
	queue       string
	token       string
	procs       []*exec.Cmd
	homes       []string
	serveBase   string
	serveHome   string
	serveClient *http.Client
}

func newTemporalEnv(t *testing.T) *temporalEnv {
	t.Helper()
	addr := os.Getenv("AIRS_TEMPORAL_ADDRESS")
	if addr == "" {
		t.Skip("AIRS_TEMPORAL_ADDRESS not set: run `make e2e-temporal`")
	}
	te := &temporalEnv{t: t, bin: buildChatBin(t), dir: t.TempDir(), token: "temporal-serve-token",
		queue: fmt.Sprintf("airs-serve-%d", time.Now().UnixNano()), serveClient: &http.Client{Timeout: 2 * time.Minute}}
	sum := sha256.Sum256([]byte(te.token))
	base := `
agents:
  tester: {capabilities: []}
cli:
  users: {"*": tester}
http:
  tokens:
    - sha256: ` + hex.EncodeToString(sum[:]) + `
      agent: tester
`
	te.config = filepath.Join(te.dir, "airs.yaml")
	te.embedded = filepath.Join(te.dir, "embedded.yaml")
	chains := "chains: {engine: temporal, address: '" + addr + "', task_queue: " + te.queue +
		", heartbeat_timeout: 2s, ledger_dir: " + filepath.Join(te.dir, "ledger") + "}\n"
	if err := os.WriteFile(te.config, []byte(base+chains), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(te.embedded, []byte(base), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, p := range te.procs {
			_ = p.Process.Kill()
			_ = p.Wait()
		}
	})
	return te
}

func (te *temporalEnv) env(config, home string) []string {
	return append(os.Environ(), "AIRS_CONFIG="+config, "AIRS_HOME="+home, "HOME="+te.dir)
}

// start runs `airs ARGS` as a replica with its own home and waits until its
// stderr has ready.
func (te *temporalEnv) start(name, ready string, args ...string) (*exec.Cmd, string) {
	t := te.t
	t.Helper()
	home := filepath.Join(te.dir, "home-"+name)
	logPath := filepath.Join(te.dir, name+".log")
	logf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(te.bin, args...)
	cmd.Env, cmd.Dir, cmd.Stderr, cmd.Stdout = te.env(te.config, home), te.dir, logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	te.procs = append(te.procs, cmd)
	te.homes = append(te.homes, home)
	deadline := time.Now().Add(90 * time.Second)
	for {
		b, _ := os.ReadFile(logPath)
		if strings.Contains(string(b), ready) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not print %q within 90 s:\n%s", name, ready, b)
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("%s: pid %d", name, cmd.Process.Pid)
	return cmd, home
}

func (te *temporalEnv) worker(name string) *exec.Cmd {
	cmd, _ := te.start(name, "polling task queue", "worker")
	return cmd
}

func (te *temporalEnv) serve() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		te.t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	_, te.serveHome = te.start("serve", "serving on", "serve", "--listen", addr, "--model", "none")
	te.serveBase = "http://" + addr
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get(te.serveBase + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		if time.Now().After(deadline) {
			te.t.Fatalf("airs serve did not answer /healthz")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// post sends a pipeline to /v1/pipelines/run.
func (te *temporalEnv) post(yaml string, timeoutMs int) (int, map[string]any) {
	te.t.Helper()
	body, _ := json.Marshal(map[string]any{"yaml": yaml, "timeout_ms": timeoutMs})
	req, _ := http.NewRequest("POST", te.serveBase+"/v1/pipelines/run", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+te.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := te.serveClient.Do(req)
	if err != nil {
		te.t.Fatalf("POST /v1/pipelines/run: %v", err)
	}
	defer resp.Body.Close()
	var out map[string]any
	b, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(b, &out); err != nil {
		te.t.Fatalf("%d: %v: %s", resp.StatusCode, err, b)
	}
	return resp.StatusCode, out
}

// run runs a CLI command against config (temporal or embedded) with its own
// home; it returns stdout, stderr and the exit code.
func (te *temporalEnv) run(config string, args ...string) (string, string, int) {
	te.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, te.bin, args...)
	cmd.Env, cmd.Dir = te.env(config, filepath.Join(te.dir, "home-cli")), te.dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		te.t.Fatal(err)
	}
	return stdout.String(), stderr.String(), code
}

// okRecords counts, over every replica's audit log, the records of each
// call id with outcome ok.
func (te *temporalEnv) okRecords() map[string]int {
	n := map[string]int{}
	for _, h := range te.homes {
		b, err := os.ReadFile(filepath.Join(h, "audit.jsonl"))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			var r struct {
				CallID  string `json:"call_id"`
				Outcome string `json:"outcome"`
			}
			if json.Unmarshal([]byte(line), &r) == nil && r.Outcome == "ok" {
				n[r.CallID]++
			}
		}
	}
	return n
}

const twoSums = `pipeline: two-sums
steps:
  - id: a
    tool: calculator
    params: {expression: "1+2"}
  - id: b
    tool: calculator
    params: {expression: "{{steps.a.output.text}} * 4"}
output: "{{steps.b.output.result}}"
`

// TestTemporalServeAndPlan: under chains.engine temporal, POST
// /v1/pipelines/run on `airs serve` and `airs plan --run` run their chains
// as workflows on an `airs worker` process, with the result and the errors
// the embedded runner gives (compared with `airs run` on the same
// installation with chains in process); the request's budget is the
// workflow's; a worker killed with SIGKILL mid-chain is taken over by
// another and the finished step is not run again.
func TestTemporalServeAndPlan(t *testing.T) {
	te := newTemporalEnv(t)
	workerA := te.worker("worker-a")
	te.serve()

	// The result: the shape chains.Run gives.
	status, res := te.post(twoSums, 0)
	if status != 200 || res["output"] != 12.0 || !strings.HasPrefix(fmt.Sprint(res["run_id"]), "chain-") {
		t.Fatalf("POST /v1/pipelines/run on Temporal: %d %v", status, res)
	}
	steps, _ := res["steps"].(map[string]any)
	trace, _ := res["trace"].([]any)
	if len(steps) != 2 || len(trace) != 2 || res["chain"] != "two-sums" {
		t.Errorf("steps/trace: %v", res)
	}
	if b, _ := steps["b"].(map[string]any); b["status"] != "ok" {
		t.Errorf("step b: %v", steps["b"])
	}
	for _, n := range trace {
		if n, _ := n.(map[string]any); n["outcome"] != "ok" || !strings.HasPrefix(fmt.Sprint(n["call_id"]), fmt.Sprint(res["run_id"])+"/") {
			t.Errorf("trace node %v", n)
		}
	}
	// The same pipeline in process: the same output and keys.
	os.WriteFile(filepath.Join(te.dir, "two.yaml"), []byte(twoSums), 0o644)
	out, stderr, code := te.run(te.embedded, "run", "two.yaml", "--json")
	var emb map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &emb) != nil || emb["output"] != 12.0 {
		t.Fatalf("embedded airs run: %d %s %s", code, out, stderr)
	}
	for k := range emb {
		if _, ok := res[k]; !ok {
			t.Errorf("key %q in the embedded result, not in Temporal's", k)
		}
	}

	// A failing step: the same error kind, HTTP status and exit code.
	failing := "pipeline: div\nsteps:\n  - id: z\n    tool: calculator\n    params: {expression: \"1/0\"}\n"
	status, body := te.post(failing, 0)
	if status != http.StatusUnprocessableEntity || body["error"] != "provider_rejected" || !strings.Contains(fmt.Sprint(body["message"]), "step z") {
		t.Errorf("failing step on Temporal: %d %v; want 422 provider_rejected", status, body)
	}
	if p, _ := body["partial"].(map[string]any); p == nil || p["steps"] == nil {
		t.Errorf("failing step: no partial result: %v", body)
	}
	os.WriteFile(filepath.Join(te.dir, "div.yaml"), []byte(failing), 0o644)
	_, embErr, embCode := te.run(te.embedded, "run", "div.yaml")
	_, tErr, tCode := te.run(te.config, "run", "div.yaml")
	if embCode == 0 || tCode != embCode || !strings.Contains(tErr, "on Temporal") {
		t.Errorf("exit codes: embedded %d, temporal %d (want equal, not 0)\nembedded: %s\ntemporal: %s", embCode, tCode, embErr, tErr)
	}
	// An invalid pipeline is refused before anything starts: 422 as in process.
	status, body = te.post("pipeline: x\nsteps:\n  - id: a\n    tool: no-such-tool\n", 0)
	if status != http.StatusUnprocessableEntity && status != http.StatusNotFound {
		t.Errorf("invalid pipeline: %d %v", status, body)
	}

	// The request's budget is the chain's: a step slower than it times out (504).
	t0 := time.Now()
	status, body = te.post("pipeline: slow\nsteps:\n  - id: s\n    tool: slow\n    params: {seconds: 30}\n", 1500)
	if status != http.StatusGatewayTimeout || body["error"] != "timeout" || time.Since(t0) > 20*time.Second {
		t.Errorf("budget: %d %v after %v; want 504 timeout within the budget", status, body, time.Since(t0))
	}

	// airs plan --run: the plan runs on the worker.
	out, stderr, code = te.run(te.config, "plan", "--run", "--model", "none", "what's 2 * (3 + 4)?")
	if code != 0 || !strings.Contains(out, "14") || !strings.Contains(stderr, "on Temporal") {
		t.Errorf("airs plan --run on Temporal: exit %d\nstdout: %s\nstderr: %s", code, out, stderr)
	}

	// A chat turn's plan (no-LLM mode, two parts) over serve's /v1/chat:
	// its calls run on the worker (its audit log has them).
	beforeChat := te.okRecords()
	creq, _ := http.NewRequest("POST", te.serveBase+"/v1/chat", strings.NewReader(`{"text":"what's 2 * (3 + 4), then what's 5 * 6"}`))
	creq.Header.Set("Authorization", "Bearer "+te.token)
	creq.Header.Set("Content-Type", "application/json")
	cresp, err := te.serveClient.Do(creq)
	if err != nil {
		t.Fatal(err)
	}
	events, _ := io.ReadAll(cresp.Body)
	cresp.Body.Close()
	if !strings.Contains(string(events), "runs on the chain workers") || !strings.Contains(string(events), `"result":14`) || !strings.Contains(string(events), `"result":30`) {
		t.Errorf("chat plan over serve: %s", events)
	}
	var chatCalls []string
	for id := range te.okRecords() {
		if beforeChat[id] == 0 && (strings.HasSuffix(id, "/s1") || strings.HasSuffix(id, "/s2")) {
			chatCalls = append(chatCalls, id)
		}
	}
	if len(chatCalls) != 2 {
		t.Errorf("the chat plan's calls in the workers' audit logs: %v, want s1 and s2", chatCalls)
	}

	// Worker A is killed mid-chain: step a (1 s) has finished, b (6 s)
	// runs; worker B takes the chain over, b is retried (idempotent), a is
	// not run again.
	slowChain := `pipeline: slow-two
steps:
  - id: a
    tool: slow
    params: {seconds: 1}
  - id: b
    tool: slow
    params: {seconds: 6}
    needs: [a]
output: "{{steps.b.output.ticks}}"
`
	type answer struct {
		status int
		body   map[string]any
	}
	before := map[string]bool{} // two-sums has a step a too
	for id := range te.okRecords() {
		before[id] = true
	}
	done := make(chan answer, 1)
	go func() {
		s, b := te.post(slowChain, 0)
		done <- answer{s, b}
	}()
	deadline := time.Now().Add(60 * time.Second)
	var aID string
	for aID == "" {
		for id := range te.okRecords() {
			if strings.HasSuffix(id, "/a") && strings.HasPrefix(id, "chain-") && !before[id] {
				aID = id
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("step a never finished on worker A")
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(1500 * time.Millisecond) // b is running on A
	if err := workerA.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = workerA.Wait()
	t.Log("worker A killed (SIGKILL) while step b ran")
	te.worker("worker-b")
	var got answer
	select {
	case got = <-done:
	case <-time.After(90 * time.Second):
		t.Fatal("the chain did not finish after worker A was killed")
	}
	if got.status != 200 {
		t.Fatalf("after the kill: %d %v", got.status, got.body)
	}
	runID := strings.TrimSuffix(aID, "/a")
	if got.body["run_id"] != runID {
		t.Errorf("run id %v, want %s", got.body["run_id"], runID)
	}
	counts := te.okRecords()
	if counts[runID+"/a"] != 1 || counts[runID+"/b"] != 1 {
		t.Errorf("ok records: a %d, b %d; want each exactly once (a finished before the kill, b finished on B)", counts[runID+"/a"], counts[runID+"/b"])
	}
	line, _ := json.Marshal(map[string]any{"chain_resumed": got.status == 200, "step_a_runs": counts[runID+"/a"], "step_b_ok_runs": counts[runID+"/b"]})
	fmt.Println(string(line))
}

// TestTemporalUnreachable: a clear error (what to start) when the Temporal
// server cannot be reached, and when no worker polls the queue.
func TestTemporalUnreachable(t *testing.T) {
	te := newTemporalEnv(t)
	os.WriteFile(filepath.Join(te.dir, "two.yaml"), []byte(twoSums), 0o644)
	// No worker on this queue.
	_, stderr, code := te.run(te.config, "run", "two.yaml")
	if code != 18 || !strings.Contains(stderr, "no airs worker polls task queue "+te.queue) || !strings.Contains(stderr, "airs worker") {
		t.Errorf("no worker: exit %d: %s; want 18 (provider_unavailable) naming the queue", code, stderr)
	}
	// No server at the address.
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	dead := ln.Addr().String()
	ln.Close()
	cfg, _ := os.ReadFile(te.config)
	bad := filepath.Join(te.dir, "dead.yaml")
	os.WriteFile(bad, []byte(strings.Replace(string(cfg), os.Getenv("AIRS_TEMPORAL_ADDRESS"), dead, 1)), 0o644)
	t0 := time.Now()
	_, stderr, code = te.run(bad, "run", "two.yaml")
	if code != 18 || !strings.Contains(stderr, dead) || !strings.Contains(stderr, "scripts/temporal.sh") {
		t.Errorf("unreachable: exit %d after %v: %s; want 18 naming %s and what to start", code, time.Since(t0), stderr, dead)
	}
}
