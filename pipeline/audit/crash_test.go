package audit

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

const childEnv = "AIRS_AUDIT_CRASH_CHILD"

// TestCrashChild is the writer process of TestKill9LosesNothing: it appends
// from several goroutines and prints "ack ID" only after Append returned,
// i.e. after the record is durable. It does nothing in a normal test run.
func TestCrashChild(t *testing.T) {
	path := os.Getenv(childEnv)
	if path == "" {
		t.Skip("helper process for TestKill9LosesNothing")
	}
	run := os.Getenv(childEnv + "_RUN")
	l, err := Open(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, "open:", err)
		os.Exit(3)
	}
	var mu sync.Mutex
	deadline := time.Now().Add(10 * time.Second) // never outlive a dead parent for long
	perG := -1                                   // records per goroutine; -1: until killed
	if n := os.Getenv(childEnv + "_N"); n != "" {
		fmt.Sscan(n, &perG)
	}
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; time.Now().Before(deadline) && i != perG; i++ {
				id := fmt.Sprintf("r%s-g%d-%d", run, g, i)
				r := &Record{Time: time.Now(), CallID: id, Caller: "crash", Tool: "t", Outcome: "ok", ParamsSHA256: "x"}
				if err := l.Append(r); err != nil {
					fmt.Fprintln(os.Stderr, "append:", err)
					os.Exit(4)
				}
				mu.Lock()
				// One write(2) per line: a pipe write under PIPE_BUF is atomic,
				// so the parent never sees half an ack.
				os.Stdout.WriteString("ack " + id + "\n")
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if err := l.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "close:", err)
		os.Exit(5)
	}
	os.Exit(0)
}

// TestKill9LosesNothing kills a writing process with SIGKILL many times, at
// random moments (some before it could acknowledge anything, most in the
// middle of a stream of group commits), and checks that every acknowledged
// record is in the log and that the chain verifies across all restarts.
func TestKill9LosesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns 25 processes")
	}
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	acked := map[string]bool{}
	const runs = 25
	for run := 0; run < runs; run++ {
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), childEnv+"="+path, fmt.Sprintf("%s_RUN=%d", childEnv, run))
		cmd.Stderr = os.Stderr
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(out)
		var lines []string
		if run%5 == 0 {
			// Kill at a random moment, possibly during Open's recovery.
			time.Sleep(time.Duration(rand.IntN(30)) * time.Millisecond)
		} else {
			// Wait for the stream to start, then kill in the middle of it.
			if sc.Scan() {
				lines = append(lines, sc.Text())
			}
			time.Sleep(time.Duration(1+rand.IntN(40)) * time.Millisecond)
		}
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		for sc.Scan() {
			lines = append(lines, sc.Text())
		}
		err = cmd.Wait()
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() {
			t.Fatalf("run %d: child ended by itself (%v): it must be killed while writing", run, err)
		}
		for _, l := range lines {
			if id, ok := strings.CutPrefix(l, "ack "); ok {
				acked[id] = true
			}
		}
	}
	if len(acked) < 50 {
		t.Fatalf("only %d acknowledged records across %d runs: the test did not exercise the log", len(acked), runs)
	}
	rep, err := Verify(path)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() {
		t.Fatalf("chain broken after kill -9: %v", rep.Break)
	}
	recs, err := Tail(path, rep.Records+1)
	if err != nil {
		t.Fatal(err)
	}
	inLog := make(map[string]bool, len(recs))
	for _, r := range recs {
		inLog[r.CallID] = true
	}
	missing := 0
	for id := range acked {
		if !inLog[id] {
			missing++
			if missing < 5 {
				t.Errorf("acknowledged record %s is not in the log", id)
			}
		}
	}
	if missing > 0 {
		t.Fatalf("%d of %d acknowledged records lost", missing, len(acked))
	}
	// The log must still be writable: Open recovers whatever the last kill left.
	l, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Append(rec(1)); err != nil {
		t.Fatal(err)
	}
	l.Close()
	if rep2, _ := Verify(path); !rep2.OK() || rep2.Records != rep.Records+1 {
		t.Fatalf("after reopen: %+v", rep2)
	}
	t.Logf("%d runs, %d acknowledged, %d records in log (unacknowledged extras are fine)", runs, len(acked), rep.Records)
}

// TestSeveralWriterProcesses runs four writer processes on one log at once
// (as `airs serve` and CLI commands do), SIGKILLs some of them in the
// middle of their streams while the others go on, and restarts them. Every
// acknowledged record must be in the log exactly once, and the chain must
// verify across all of it: the kills leave torn tails that the surviving
// writers repair under the lock.
func TestSeveralWriterProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns 12 processes")
	}
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	acked := map[string]int{}
	var mu sync.Mutex
	kills := 0
	for round := range 3 {
		var wg sync.WaitGroup
		for w := range 4 {
			kill := (w+round)%2 == 0 // two of the four die each round
			cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
			cmd.Env = append(os.Environ(), childEnv+"="+path, fmt.Sprintf("%s_RUN=%d.%d", childEnv, round, w))
			if !kill {
				cmd.Env = append(cmd.Env, childEnv+"_N=150")
			}
			cmd.Stderr = os.Stderr
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				sc := bufio.NewScanner(out)
				var lines []string
				if kill {
					if sc.Scan() {
						lines = append(lines, sc.Text())
					}
					time.Sleep(time.Duration(5+rand.IntN(60)) * time.Millisecond)
					_ = cmd.Process.Signal(syscall.SIGKILL)
				}
				for sc.Scan() {
					lines = append(lines, sc.Text())
				}
				err := cmd.Wait()
				mu.Lock()
				defer mu.Unlock()
				if kill {
					if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
						kills++
					}
				} else if err != nil {
					t.Errorf("writer %d.%d failed: %v", round, w, err)
				}
				for _, l := range lines {
					if id, ok := strings.CutPrefix(l, "ack "); ok {
						acked[id]++
					}
				}
			}()
		}
		wg.Wait()
	}
	if kills < 3 {
		t.Fatalf("only %d writers were killed mid-stream: the test did not exercise crashes", kills)
	}
	rep, err := Verify(path)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() {
		t.Fatalf("chain broken with several writers: %v", rep.Break)
	}
	recs, err := Tail(path, rep.Records+1)
	if err != nil {
		t.Fatal(err)
	}
	inLog := make(map[string]int, len(recs))
	for _, r := range recs {
		inLog[r.CallID]++
	}
	for id, n := range inLog {
		if n != 1 {
			t.Errorf("record %s is in the log %d times", id, n)
		}
	}
	if min := 6 * 8 * 150; len(acked) < min { // the six writers left alone ack all of theirs
		t.Fatalf("%d acknowledged records, want at least %d", len(acked), min)
	}
	missing := 0
	for id := range acked {
		if inLog[id] == 0 {
			missing++
			if missing < 5 {
				t.Errorf("acknowledged record %s is not in the log", id)
			}
		}
	}
	if missing > 0 {
		t.Fatalf("%d of %d acknowledged records lost", missing, len(acked))
	}
	t.Logf("%d writers killed, %d acknowledged, %d records in log", kills, len(acked), rep.Records)
}
