package session

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

const crashEnv = "AIRS_SESSION_CRASH_WRITER"

func TestMain(m *testing.M) {
	if path := os.Getenv(crashEnv); path != "" {
		crashWriter(path)
		return
	}
	os.Exit(m.Run())
}

// crashWriter runs in a child process: several goroutines record as fast as
// they can and print "ack ID" for every record Record acknowledged, until
// the parent kills the process.
func crashWriter(path string) {
	r, err := Open(path, Options{MaxBatch: 16})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	var mu sync.Mutex
	out := bufio.NewWriter(os.Stdout)
	round := os.Getenv(crashEnv + "_ROUND")
	perG := -1 // records per goroutine; -1: until killed
	if n := os.Getenv(crashEnv + "_N"); n != "" {
		fmt.Sscan(n, &perG)
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i != perG; i++ {
				rec := sample(i)
				rec.ID = fmt.Sprintf("r%s-g%d-%d", round, g, i)
				// Long lines make torn writes likelier.
				rec.RawOutput = strings.Repeat("x", 2000+i%3000)
				if _, err := r.Record(context.Background(), rec); err != nil {
					fmt.Fprintln(os.Stderr, err)
					os.Exit(4)
				}
				mu.Lock()
				fmt.Fprintf(out, "ack %s\n", rec.ID)
				out.Flush() // the ack leaves the process only after the record is on disk
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if err := r.Close(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(5)
	}
}

// TestCrashKeepsAcknowledgedRecords re-executes the test binary as a
// writer, kills it with SIGKILL mid-stream, and checks that every record it
// acknowledged is in the log after reopening (which also cuts any torn last
// line). Three rounds append to the same log.
//
// SIGKILL loses the process, not the kernel's page cache, so this test
// proves that nothing is acknowledged before it is written and that a torn
// tail is recovered; the fsync before each acknowledgment is what extends
// the guarantee to power loss.
func TestCrashKeepsAcknowledgedRecords(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test re-executes the binary")
	}
	path := filepath.Join(t.TempDir(), "crash.jsonl")
	acked := map[string]bool{}
	tornSeen := 0
	for round := range 3 {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), crashEnv+"="+path, fmt.Sprintf("%s_ROUND=%d", crashEnv, round))
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(stdout)
		n := 0
		deadline := time.Now().Add(5 * time.Second)
		killed := false
		for sc.Scan() {
			id, ok := strings.CutPrefix(sc.Text(), "ack ")
			if !ok {
				t.Fatalf("child wrote %q", sc.Text())
			}
			acked[id] = true
			n++
			// Kill at a different point each round, while writes are in flight.
			if !killed && (n >= 150+100*round || time.Now().After(deadline)) {
				if err := cmd.Process.Kill(); err != nil {
					t.Fatal(err)
				}
				killed = true
			}
		}
		err = cmd.Wait()
		if !killed {
			t.Fatalf("round %d: child exited by itself: %v\n%s", round, err, stderr.String())
		}
		if n < 100 {
			t.Fatalf("round %d: only %d acks before the kill", round, n)
		}
		// Reopen as the next recorder would: the torn tail, if any, is cut.
		r, err := Open(path, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if r.Recovered() > 0 {
			tornSeen++
		}
		r.Close()
		recs, err := ReadFile(path)
		if err != nil {
			t.Fatalf("round %d: log unreadable after crash: %v", round, err)
		}
		present := map[string]bool{}
		for _, rec := range recs {
			present[rec.ID] = true
		}
		missing := 0
		for id := range acked {
			if !present[id] {
				missing++
				if missing <= 5 {
					t.Errorf("round %d: acknowledged record %s lost", round, id)
				}
			}
		}
		if missing > 0 {
			t.Fatalf("round %d: %d of %d acknowledged records lost", round, missing, len(acked))
		}
		t.Logf("round %d: %d acked this round, %d records in the log, torn tail recovered: %v", round, n, len(recs), r.Recovered() > 0)
	}
	t.Logf("torn tails recovered in %d of 3 rounds", tornSeen)
}

// TestSeveralWriterProcesses runs three recorder processes on one log at
// once (as `airs serve` and `airs chat` on one AIRS_HOME) and SIGKILLs one
// mid-stream, twice. Every line must stay whole (the log reads back), every
// acknowledged record must be there exactly once, and the torn line a
// killed writer may leave is cut by the survivors before their next batch.
func TestSeveralWriterProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("re-executes the binary")
	}
	path := filepath.Join(t.TempDir(), "multi.jsonl")
	acked := map[string]bool{}
	var mu sync.Mutex
	for round := range 2 {
		var wg sync.WaitGroup
		for w := range 3 {
			kill := w == round
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), crashEnv+"="+path, fmt.Sprintf("%s_ROUND=%d.%d", crashEnv, round, w))
			if !kill {
				cmd.Env = append(cmd.Env, crashEnv+"_N=60")
			}
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			var stderr strings.Builder
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				sc := bufio.NewScanner(stdout)
				n := 0
				for sc.Scan() {
					id, _ := strings.CutPrefix(sc.Text(), "ack ")
					mu.Lock()
					acked[id] = true
					mu.Unlock()
					if n++; kill && n == 40 {
						_ = cmd.Process.Kill()
					}
				}
				err := cmd.Wait()
				if !kill && err != nil {
					t.Errorf("writer %d.%d: %v\n%s", round, w, err, stderr.String())
				}
			}()
		}
		wg.Wait()
	}
	recs, err := ReadFile(path)
	if err != nil {
		t.Fatalf("log unreadable after several writers: %v", err)
	}
	count := map[string]int{}
	for _, rec := range recs {
		count[rec.ID]++
	}
	for id, n := range count {
		if n != 1 {
			t.Errorf("record %s is in the log %d times", id, n)
		}
	}
	if want := 2 * 2 * 4 * 60; len(acked) < want {
		t.Fatalf("%d acknowledged, want at least %d", len(acked), want)
	}
	for id := range acked {
		if count[id] == 0 {
			t.Fatalf("acknowledged record %s lost", id)
		}
	}
	t.Logf("%d acknowledged, %d records in the log", len(acked), len(recs))
}
