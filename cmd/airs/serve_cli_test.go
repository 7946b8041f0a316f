package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestCLIWhileServing: with one AIRS_HOME, `airs serve` under HTTP load,
// four `airs call` processes, an `airs run` and an `airs chat`, all at the
// same moment, write the audit log (and the session log: recording is on).
// Every call acknowledged to anyone — an HTTP 200 or a CLI exit 0 — must be
// in the log exactly once, and `airs audit verify` must find the chain
// intact. Real processes, a real socket, real files.
func TestCLIWhileServing(t *testing.T) {
	if testing.Short() {
		t.Skip("starts airs serve and CLI processes")
	}
	const token = "serve-cli-test-token"
	sum := sha256.Sum256([]byte(token))
	e := newEnv(t, `
http:
  tokens:
    - sha256: `+hex.EncodeToString(sum[:])+`
      agent: tester
recording:
  enabled: true
`)
	os.WriteFile(filepath.Join(e.dir, "p.yaml"), []byte(`pipeline: two-sums
steps:
  - id: a
    tool: calculator
    params: {expression: "1+2"}
  - id: b
    tool: calculator
    params: {expression: "3+4"}
`), 0o644)

	// A free port: bind :0, read the port, release it for the server.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()

	srv := exec.Command(airsBin, "--config", e.config, "serve", "--listen", addr, "--model", "none")
	srv.Env = append(os.Environ(), "AIRS_HOME="+e.home, "AIRS_CONFIG=", "HOME="+e.dir)
	var srvErr bytes.Buffer
	srv.Stderr = &srvErr
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	srvDone := make(chan struct{}) // closed when serve has exited; srvWaitErr is then set
	var srvWaitErr error
	go func() { srvWaitErr = srv.Wait(); close(srvDone) }()
	t.Cleanup(func() {
		srv.Process.Kill()
		<-srvDone
	})
	base := "http://" + addr
	client := &http.Client{Timeout: 30 * time.Second}
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := client.Get(base + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		select {
		case <-srvDone:
			t.Fatalf("airs serve exited: %v\n%s", srvWaitErr, srvErr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("airs serve did not answer /healthz within 60 s\n%s", srvErr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}

	var mu sync.Mutex
	acked := map[string]int{} // call ID → times acknowledged
	ack := func(id, who string) {
		mu.Lock()
		defer mu.Unlock()
		if id == "" {
			t.Errorf("%s acknowledged a call without an ID", who)
			return
		}
		acked[id]++
	}
	var wg sync.WaitGroup
	start := make(chan struct{})

	// HTTP load: 4 clients, 25 calls each.
	const httpClients, httpCalls = 4, 25
	for c := range httpClients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for i := range httpCalls {
				body := fmt.Sprintf(`{"tool":"calculator","arguments":{"expression":"%d*%d"}}`, c, i)
				req, _ := http.NewRequest("POST", base+"/v1/call", strings.NewReader(body))
				req.Header.Set("Authorization", "Bearer "+token)
				req.Header.Set("Content-Type", "application/json")
				resp, err := client.Do(req)
				if err != nil {
					t.Errorf("HTTP call: %v", err)
					return
				}
				var res struct {
					CallID  string `json:"call_id"`
					Outcome string `json:"outcome"`
				}
				err = json.NewDecoder(resp.Body).Decode(&res)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK || err != nil || res.Outcome != "ok" {
					t.Errorf("HTTP call: status %d, %v, %+v", resp.StatusCode, err, res)
					return
				}
				ack(res.CallID, "HTTP")
			}
		}()
	}

	// Four `airs call` processes at once, while the server is loaded.
	const cliCalls = 4
	cli := func(args ...string) ([]byte, error) {
		cmd := exec.Command(airsBin, append([]string{"--config", e.config}, args...)...)
		cmd.Env = append(os.Environ(), "AIRS_HOME="+e.home, "AIRS_CONFIG=", "HOME="+e.dir)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			return out, fmt.Errorf("airs %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
		}
		return out, nil
	}
	for i := range cliCalls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			out, err := cli("call", "calculator", "--json", "--args", fmt.Sprintf(`{"expression":"%d+1"}`, i))
			if err != nil {
				t.Error(err)
				return
			}
			var res struct {
				CallID  string `json:"call_id"`
				Outcome string `json:"outcome"`
			}
			if err := json.Unmarshal(out, &res); err != nil || res.Outcome != "ok" {
				t.Errorf("airs call --json printed %q (%v)", out, err)
				return
			}
			ack(res.CallID, "airs call")
		}()
	}
	// And an `airs chat` (input piped: one request, then the session ends).
	chatOK := false
	wg.Add(1)
	go func() {
		defer wg.Done()
		<-start
		cmd := exec.Command(airsBin, "--config", e.config, "chat", "--model", "none")
		cmd.Env = append(os.Environ(), "AIRS_HOME="+e.home, "AIRS_CONFIG=", "HOME="+e.dir)
		cmd.Stdin = strings.NewReader("calculate 6 * 7\n")
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "6 * 7 = 42") {
			t.Errorf("airs chat: %v\n%s", err, out)
			return
		}
		chatOK = true
	}()
	// And an `airs run` (the engine path: manager, index, recorder).
	runOK := false
	wg.Add(1)
	go func() {
		defer wg.Done()
		<-start
		if _, err := cli("run", filepath.Join(e.dir, "p.yaml")); err != nil {
			t.Error(err)
			return
		}
		runOK = true
	}()
	close(start)
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}

	// Stop the server cleanly so its last batch is closed, then verify.
	srv.Process.Signal(syscall.SIGTERM)
	select {
	case <-srvDone:
	case <-time.After(30 * time.Second):
		t.Fatal("airs serve did not exit within 30 s of SIGTERM")
	}
	if n := httpClients*httpCalls + cliCalls; len(acked) != n {
		t.Fatalf("%d distinct call IDs acknowledged, want %d", len(acked), n)
	}
	runSteps := 0
	if runOK {
		runSteps = 2
	}
	want := len(acked) + runSteps
	if chatOK {
		want++
	}
	r := e.run("audit", "verify")
	r.expect(t, 0, fmt.Sprintf("%d records, chain intact", want), "")

	f, err := os.Open(filepath.Join(e.home, "audit.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	inLog := map[string]int{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var rec struct {
			CallID string `json:"call_id"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatalf("audit line %q: %v", sc.Text(), err)
		}
		inLog[rec.CallID]++
	}
	for id := range acked {
		if inLog[id] != 1 {
			t.Errorf("acknowledged call %s is in the audit log %d times, want once", id, inLog[id])
		}
	}
	// Both processes kept recording sessions into the one log, whole lines.
	if b, err := os.ReadFile(filepath.Join(e.home, "sessions", "sessions.jsonl")); err == nil {
		for i, line := range bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n")) {
			if len(line) > 0 && !json.Valid(line) {
				t.Errorf("session log line %d is not JSON: %.80q", i+1, line)
			}
		}
	}
}

// TestEnginesStartTogether: several `airs run` processes started at once on
// a fresh AIRS_HOME all build the tool index, write the learned state and
// the audit log; none may fail on files another is writing (the index is
// opened and synced under its lock). Two rounds: a fresh home, then one
// with an index to read while others may rewrite it.
func TestEnginesStartTogether(t *testing.T) {
	if testing.Short() {
		t.Skip("starts several airs processes")
	}
	e := newEnv(t, "")
	os.WriteFile(filepath.Join(e.dir, "p.yaml"), []byte("pipeline: one\nsteps:\n  - id: a\n    tool: calculator\n    params: {expression: \"1+2\"}\n"), 0o644)
	const procs = 6
	for round := range 2 {
		var wg sync.WaitGroup
		for range procs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				cmd := exec.Command(airsBin, "--config", e.config, "run", filepath.Join(e.dir, "p.yaml"))
				cmd.Env = append(os.Environ(), "AIRS_HOME="+e.home, "AIRS_CONFIG=", "HOME="+e.dir)
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Errorf("round %d: airs run: %v\n%s", round, err, out)
				}
			}()
		}
		wg.Wait()
	}
	e.run("audit", "verify").expect(t, 0, fmt.Sprintf("%d records, chain intact", 2*procs), "")
}
