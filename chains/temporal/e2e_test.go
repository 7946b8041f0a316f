package temporal

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/airs-dev/airs/chains/temporal/internal/testtools"
)

// TestE2EChainSurvivesKilledWorkers runs against a real Temporal server
// (scripts/temporal.sh starts a dev server and sets AIRS_TEMPORAL_ADDRESS;
// `make e2e-temporal`). Worker process A runs the chain of
// testdata/durable.yaml; it is killed with SIGKILL while idempotent step b
// runs; worker B takes the chain over, runs the foreach items in parallel,
// and is killed while the non-idempotent step w runs; worker C finishes the
// chain, which reports w as interrupted instead of repeating it. Every
// step that had finished ran exactly once.
func TestE2EChainSurvivesKilledWorkers(t *testing.T) {
	addr := os.Getenv("AIRS_TEMPORAL_ADDRESS")
	if addr == "" {
		t.Skip("AIRS_TEMPORAL_ADDRESS not set: run `make e2e-temporal` (scripts/temporal.sh starts a Temporal dev server)")
	}
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "testworker")
	if out, err := exec.Command("go", "build", "-o", bin, "./internal/testworker").CombinedOutput(); err != nil {
		t.Fatalf("build testworker: %v\n%s", err, out)
	}
	counts, ledger := filepath.Join(tmp, "counts"), filepath.Join(tmp, "ledger")
	if err := os.MkdirAll(counts, 0o755); err != nil {
		t.Fatal(err)
	}
	queue := fmt.Sprintf("airs-e2e-%d", time.Now().UnixNano())

	c, err := Dial(addr, "default", nil)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	defer c.Close()

	startWorker := func(name string) *exec.Cmd {
		t.Helper()
		cmd := exec.Command(bin, "-address", addr, "-queue", queue, "-dir", counts, "-ledger", ledger)
		logf, err := os.Create(filepath.Join(tmp, name+".log"))
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stderr = logf
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait(); logf.Close() })
		line, err := bufio.NewReader(stdout).ReadString('\n')
		if strings.TrimSpace(line) != "ready" {
			b, _ := os.ReadFile(logf.Name())
			t.Fatalf("worker %s did not start (%q, %v):\n%s", name, line, err, b)
		}
		t.Logf("worker %s: pid %d", name, cmd.Process.Pid)
		return cmd
	}
	kill := func(name string, cmd *exec.Cmd) {
		t.Helper()
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		_ = cmd.Wait()
		t.Logf("worker %s killed (SIGKILL)", name)
	}
	n := func(name string) int {
		v, err := testtools.Count(filepath.Join(counts, name))
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(90 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s", what)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}

	req := demoRequest(t, map[string]any{"ms": 1500, "n": 3, "wms": 6000})
	req.RunID = "e2e-" + queue
	req.HeartbeatTimeout = 2 * time.Second
	a := startWorker("A")
	run, err := Start(context.Background(), c, queue, req)
	if err != nil {
		t.Fatal(err)
	}

	// Kill A while b runs: a has finished, b has started and not finished.
	waitFor("step b to start on A", func() bool { return n("a.done") == 1 && n("b.start") == 1 })
	// startsAt[step] is how often each finished step had started when a
	// worker was killed; a finished step must never start again.
	startsAt := map[string]int{}
	snapshot := func(steps ...string) {
		for _, s := range steps {
			if n(s+".done") != 1 {
				t.Fatalf("%s not finished at the kill", s)
			}
			startsAt[s] = n(s + ".start")
		}
	}
	snapshot("a")
	kill("A", a)
	b := startWorker("B")

	// Kill B while the non-idempotent w runs.
	waitFor("step w to start on B", func() bool { return n("w.start") == 1 })
	snapshot("a", "b", "each-p0", "each-p1", "each-p2")
	kill("B", b)
	startWorker("C")

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var res RunResult
	if err := run.Get(ctx, &res); err != nil {
		t.Fatalf("chain: %v", err)
	}
	raw, _ := json.MarshalIndent(res, "", "  ")
	t.Logf("result: %s", raw)

	// No step that had finished before a kill started again after it; the
	// steps that finished on A and B each ran exactly once to its end.
	repeated := 0
	for s, before := range startsAt {
		if got := n(s + ".start"); got != before {
			repeated++
			t.Errorf("%s started %d times after it had finished (%d before)", s, got-before, before)
		}
		if n(s+".done") != 1 {
			t.Errorf("%s finished %d times", s, n(s+".done"))
		}
	}
	for _, s := range []string{"a", "each-p0", "each-p1", "each-p2"} {
		if n(s+".start") != 1 {
			t.Errorf("%s started %d times, want 1", s, n(s+".start"))
		}
	}
	// b was interrupted by A's death and is idempotent: retried once.
	if n("b.start") != 2 || n("b.done") != 1 {
		t.Errorf("b: started %d, done %d; want 2, 1 (retried after A was lost)", n("b.start"), n("b.done"))
	}
	// w is not idempotent: started once, never repeated, reported.
	if n("w.start") != 1 || n("w.done") != 0 {
		t.Errorf("w: started %d, done %d; want 1, 0", n("w.start"), n("w.done"))
	}
	wKey := req.RunID + "/w"
	reported := slices.Equal(res.Interrupted, []string{wKey}) && strings.Contains(res.Error, "not idempotent") &&
		res.Steps["w"] != nil && res.Steps["w"].Status == "failed"
	if !reported {
		t.Errorf("w not reported as interrupted: interrupted=%v error=%q", res.Interrupted, res.Error)
	}
	for _, s := range []string{"a", "b", "parts", "each"} {
		if st := res.Steps[s]; st == nil || st.Status != "ok" {
			t.Errorf("step %s: %+v", s, st)
		}
	}
	// The foreach items ran in parallel: each started before any finished.
	parallel := lastTime(t, counts, []string{"each-p0", "each-p1", "each-p2"}, ".start").Before(
		firstTime(t, counts, []string{"each-p0", "each-p1", "each-p2"}, ".done"))
	if !parallel {
		t.Error("foreach items did not overlap")
	}
	// b started again on another process than the first time.
	pids := linePIDs(t, filepath.Join(counts, "b.start"))
	resumed := len(pids) == 2 && pids[0] != pids[1] && res.Steps["each"] != nil && res.Steps["each"].Status == "ok"
	if !resumed {
		t.Errorf("b ran on pids %v", pids)
	}
	line, _ := json.Marshal(map[string]any{
		"chain_resumed": resumed && !t.Failed(), "steps_repeated": repeated,
		"non_idempotent_interrupted_reported": reported, "non_idempotent_repeated": n("w.start") - 1,
		"foreach_parallel": parallel, "workers_killed": 2,
	})
	fmt.Println(string(line))
}

func lineTimes(t *testing.T, path string) []time.Time {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []time.Time
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.Fields(l)
		if len(f) != 2 {
			t.Fatalf("%s: bad line %q", path, l)
		}
		tm, err := time.Parse(time.RFC3339Nano, f[1])
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, tm)
	}
	return out
}

func linePIDs(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		out = append(out, strings.Fields(l)[0])
	}
	return out
}

func lastTime(t *testing.T, dir string, names []string, ext string) time.Time {
	var last time.Time
	for _, n := range names {
		for _, tm := range lineTimes(t, filepath.Join(dir, n+ext)) {
			if tm.After(last) {
				last = tm
			}
		}
	}
	return last
}

func firstTime(t *testing.T, dir string, names []string, ext string) time.Time {
	var first time.Time
	for _, n := range names {
		for _, tm := range lineTimes(t, filepath.Join(dir, n+ext)) {
			if first.IsZero() || tm.Before(first) {
				first = tm
			}
		}
	}
	return first
}
