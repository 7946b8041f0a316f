package main

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
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

// bigCompareArgs writes compare's costliest parameters at its largest
// accepted size (two 500 KB texts of short lines over a small alphabet:
// Myers' worst case) to a file and returns the file's path and its bytes.
// A handler that ignored its context would run such a compare for minutes
// whatever its timeout.
func bigCompareArgs(t *testing.T, dir string) (string, []byte) {
	t.Helper()
	r := rand.New(rand.NewPCG(1, 2))
	text := func() string {
		var sb strings.Builder
		for sb.Len() < 500_000-2 {
			sb.WriteByte(byte('a' + r.IntN(3)))
			sb.WriteByte('\n')
		}
		return sb.String()
	}
	b, err := json.Marshal(map[string]string{"a": text(), "b": text()})
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "compare-args.json")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p, b
}

// exitWithin waits for cmd to exit and returns how long that took from
// since, failing the test (after killing the process) if it takes longer
// than limit plus a second.
func exitWithin(t *testing.T, cmd *exec.Cmd, since time.Time, limit time.Duration) (time.Duration, error) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return time.Since(since), err
	case <-time.After(limit + time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatalf("still running %v after the signal (limit %v)", limit+time.Second, limit)
		return 0, nil
	}
}

// `airs call` exits within 300 ms of SIGINT, even in the middle of the
// costliest compare: the signal cancels the call, the handler stops, and
// closing the Manager (which waits for handlers) does not wait long. The
// signal comes when
// the process has used 60 to 250 ms of CPU (from /proc): start-up
// and decoding take about the first 100, the diff the rest, whatever the
// machine's load does to the wall clock.
func TestCallExitsSoonAfterSIGINT(t *testing.T) {
	e := newEnv(t, "max_payload: 8388608\n")
	args, _ := bigCompareArgs(t, e.dir)
	if r := e.run("call", "calculator", "--args", `{"expression": "1+1"}`); r.code != 0 { // audit log, home: made
		t.Fatalf("warm-up call: %+v", r)
	}
	const limit = 300 * time.Millisecond
	interrupted := 0
	for _, at := range []time.Duration{60 * time.Millisecond, 120 * time.Millisecond, 160 * time.Millisecond, 200 * time.Millisecond, 250 * time.Millisecond} {
		cmd := exec.Command(airsBin, "--config", e.config, "call", "compare", "--args", "@"+args, "--timeout", "60s")
		cmd.Env = append(os.Environ(), "AIRS_HOME="+e.home, "AIRS_CONFIG=", "HOME="+e.dir)
		var stderr strings.Builder
		cmd.Stderr, cmd.Stdout = &stderr, io.Discard
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		var atSignal time.Duration
		for {
			cpu, ok := procCPU(t, cmd.Process.Pid)
			if !ok || cpu >= at {
				atSignal = cpu
				break
			}
			time.Sleep(2 * time.Millisecond)
		}
		sent := time.Now()
		if err := cmd.Process.Signal(os.Interrupt); err != nil {
			cmd.Wait()
			t.Logf("SIGINT at %v of CPU: the call had already ended (%v)", at, err)
			continue
		}
		took, err := exitWithin(t, cmd, sent, limit)
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		}
		// The CPU the process used after the signal: its total at exit
		// (rusage) minus what /proc said when it was sent. A handler that
		// ran on to its end would add a few hundred ms, whatever the wall
		// clock of a loaded machine says.
		ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
		after := time.Duration(ru.Utime.Nano()+ru.Stime.Nano()) - atSignal
		t.Logf("SIGINT at %v of CPU: exit %d after %v and %v more CPU; stderr %q", atSignal, code, took, after, firstLine(stderr.String()))
		if took > limit {
			t.Errorf("SIGINT at %v of CPU: airs call exited %v after it, want ≤ %v", at, took, limit)
		}
		if code == 22 && after > 100*time.Millisecond {
			t.Errorf("SIGINT at %v of CPU: the process used %v more CPU after it: the work went on", at, after)
		}
		switch code {
		case 22:
			interrupted++
		case 0, -1: // done first, or killed before the handler was set
		default:
			t.Errorf("SIGINT at %v of CPU: exit %d, stderr:\n%s", at, code, stderr.String())
		}
	}
	if interrupted == 0 {
		t.Error("no SIGINT landed during a call (exit 22): the test did not test anything")
	}
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// procCPU is a process's CPU time so far (user + system) from
// /proc/PID/stat, in clock ticks of 10 ms.
func procCPU(t *testing.T, pid int) (time.Duration, bool) {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, false
	}
	// The command name (field 2) is in parentheses and may hold spaces.
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	if f[0] == "Z" { // exited, not yet waited for: its CPU time no longer grows
		return 0, false
	}
	var utime, stime int64
	fmt.Sscan(f[11], &utime) // field 14
	fmt.Sscan(f[12], &stime) // field 15
	return time.Duration(utime+stime) * 10 * time.Millisecond, true
}

// `airs serve` exits within its drain timeout after SIGTERM while timed-out
// work is pending: compare calls of the costliest input answered 504 after
// 200 ms leave nothing running (the server's CPU time, from /proc, stands
// still from 100 ms after the answers), and SIGTERM then ends the process
// well within --drain, where handlers that ignored their context would run
// on for seconds and the server wait for them on its way out.
func TestServeExitsWithinDrainAfterTimeouts(t *testing.T) {
	const token = "test-token-cancel"
	sum := sha256.Sum256([]byte(token))
	e := newEnv(t, fmt.Sprintf("max_payload: 8388608\nhttp:\n  tokens:\n    - sha256: %s\n      agent: tester\n", hex.EncodeToString(sum[:])))
	_, body := bigCompareArgs(t, e.dir)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()

	const drain = 2 * time.Second
	cmd := exec.Command(airsBin, "--config", e.config, "serve", "--listen", addr, "--model", "none", "--drain", drain.String())
	cmd.Env = append(os.Environ(), "AIRS_HOME="+e.home, "AIRS_CONFIG=", "HOME="+e.dir)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	var logs strings.Builder
	var logMu sync.Mutex
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stderr)
		once := sync.OnceFunc(func() { close(ready) })
		for sc.Scan() {
			logMu.Lock()
			logs.WriteString(sc.Text() + "\n")
			logMu.Unlock()
			if strings.Contains(sc.Text(), "serving on") {
				once()
			}
		}
	}()
	for end := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		// "serving on" may come before the listener is bound: wait for both.
		select {
		case <-ready:
		default:
			if time.Now().After(end) {
				t.Fatal("airs serve did not start")
			}
			continue
		}
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			break
		}
		if time.Now().After(end) {
			t.Fatal("airs serve did not listen")
		}
	}

	call := strings.Replace(string(body), "{", `{"tool": "compare", "timeout_ms": 200, "arguments": {`, 1) + "}"
	var wg sync.WaitGroup
	codes := make([]int, 4)
	for i := range codes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest("POST", "http://"+addr+"/v1/call", strings.NewReader(call))
			req.Header.Set("Authorization", "Bearer "+token)
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			codes[i] = resp.StatusCode
		}()
	}
	wg.Wait()
	answered := time.Now()
	for _, c := range codes {
		if c != http.StatusGatewayTimeout && c != http.StatusOK {
			logMu.Lock()
			t.Fatalf("status %d, want 504 (or 200 on a fast machine); server log:\n%s", c, logs.String())
		}
	}
	time.Sleep(time.Until(answered.Add(100 * time.Millisecond)))
	c0, ok0 := procCPU(t, cmd.Process.Pid)
	time.Sleep(500 * time.Millisecond)
	c1, ok1 := procCPU(t, cmd.Process.Pid)
	if ok0 && ok1 {
		t.Logf("answers %v; server CPU grew %v in the 500 ms from 100 ms after the answers", codes, c1-c0)
		if c1-c0 > 100*time.Millisecond { // 10 ms ticks; a running compare adds ~500
			t.Errorf("the server used %v of CPU after the calls timed out: their handlers are still running", c1-c0)
		}
	}

	sent := time.Now()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	took, err := exitWithin(t, cmd, sent, drain)
	logMu.Lock()
	defer logMu.Unlock()
	t.Logf("exit after %v (%v)", took, err)
	if took > drain {
		t.Errorf("airs serve exited %v after SIGTERM, beyond its %v drain; log:\n%s", took, drain, logs.String())
	}
	if err != nil {
		t.Errorf("airs serve after SIGTERM: %v; log:\n%s", err, logs.String())
	}
}
