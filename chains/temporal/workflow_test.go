package temporal

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/airs-dev/airs/chains/temporal/internal/testtools"
)

// These tests run the workflow logic in the SDK's test environment (no
// server) with the real activities over a real pipeline.Manager.

func setup(t *testing.T) (*testsuite.TestWorkflowEnvironment, *Activities, string) {
	t.Helper()
	return setupCall(t, nil)
}

// setupCall registers wrap(a) as the call activity when wrap is not nil:
// the tests simulate a lost worker with it.
func setupCall(t *testing.T, wrap func(a *Activities) func(context.Context, CallRequest) (*CallResult, error)) (*testsuite.TestWorkflowEnvironment, *Activities, string) {
	t.Helper()
	dir := t.TempDir()
	m, cat, err := testtools.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close() })
	led, err := OpenLedger(filepath.Join(dir, "ledger"))
	if err != nil {
		t.Fatal(err)
	}
	a := &Activities{Executor: m, Catalog: cat, Ledger: led}
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	// The race detector on a busy 2-core machine can hold a coroutine past
	// the default 1 s deadlock detection.
	env.SetWorkerOptions(worker.Options{DeadlockDetectionTimeout: time.Minute})
	if wrap == nil {
		Register(env, a)
		return env, a, dir
	}
	env.RegisterWorkflowWithOptions(Workflow, workflow.RegisterOptions{Name: WorkflowName})
	env.RegisterActivityWithOptions(a.Prepare, activity.RegisterOptions{Name: PrepareActivityName})
	env.RegisterActivityWithOptions(a.Items, activity.RegisterOptions{Name: ItemsActivityName})
	env.RegisterActivityWithOptions(a.Output, activity.RegisterOptions{Name: OutputActivityName})
	env.RegisterActivityWithOptions(wrap(a), activity.RegisterOptions{Name: CallActivityName})
	return env, a, dir
}

func demoRequest(t *testing.T, input map[string]any) RunRequest {
	t.Helper()
	src, err := os.ReadFile("testdata/durable.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return RunRequest{Source: string(src), Filename: "testdata/durable.yaml", Input: input, Caller: testtools.Caller, RunID: "run-1"}
}

func count(t *testing.T, dir, name string) int {
	t.Helper()
	n, err := testtools.Count(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func result(t *testing.T, env *testsuite.TestWorkflowEnvironment) *RunResult {
	t.Helper()
	if !env.IsWorkflowCompleted() {
		t.Fatal("workflow did not complete")
	}
	if err := env.GetWorkflowError(); err != nil {
		t.Fatalf("workflow error: %v", err)
	}
	var res RunResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	return &res
}

func TestWorkflowRunsEveryCallOnceThroughThePipeline(t *testing.T) {
	env, _, dir := setup(t)
	var mu sync.Mutex
	ids := map[string]int{}
	env.SetOnActivityCompletedListener(func(info *activity.Info, _ converter.EncodedValue, err error) {
		if info.ActivityType.Name == CallActivityName {
			mu.Lock()
			ids[info.ActivityID]++
			mu.Unlock()
		}
	})
	env.ExecuteWorkflow(WorkflowName, demoRequest(t, map[string]any{"n": 4}))
	res := result(t, env)
	if res.Error != "" {
		t.Fatalf("chain error: %s", res.Error)
	}
	var out struct {
		ARuns int      `json:"a_runs"`
		Each  []string `json:"each"`
		W     string   `json:"w"`
	}
	if err := json.Unmarshal(res.Output, &out); err != nil {
		t.Fatalf("output %s: %v", res.Output, err)
	}
	if out.ARuns != 1 || strings.Join(out.Each, ",") != "each-p0,each-p1,each-p2,each-p3" || out.W != "w" {
		t.Errorf("output = %s", res.Output)
	}
	for _, n := range []string{"a", "b", "each-p0", "each-p1", "each-p2", "each-p3", "w"} {
		if s, d := count(t, dir, n+".start"), count(t, dir, n+".done"); s != 1 || d != 1 {
			t.Errorf("%s: started %d, done %d; want 1, 1", n, s, d)
		}
	}
	// The activity ids are the idempotency keys, one per call.
	want := []string{"run-1/a", "run-1/b", "run-1/parts", "run-1/each[0]", "run-1/each[3]", "run-1/w"}
	for _, k := range want {
		if ids[k] != 1 {
			t.Errorf("activity %s completed %d times, want 1 (all: %v)", k, ids[k], ids)
		}
	}
	for id, st := range res.Steps {
		if st.Status != "ok" {
			t.Errorf("step %s: %s %s", id, st.Status, st.Error)
		}
	}
}

// A worker lost after an idempotent call ran (simulated: the activity runs,
// then reports a heartbeat timeout) gets the call retried.
func TestIdempotentCallRetriedAfterLostWorker(t *testing.T) {
	var lostOnce atomic.Bool
	env, _, dir := setupCall(t, func(a *Activities) func(context.Context, CallRequest) (*CallResult, error) {
		return func(ctx context.Context, cr CallRequest) (*CallResult, error) {
			out, err := a.Call(ctx, cr)
			if cr.Step == 1 && lostOnce.CompareAndSwap(false, true) {
				return nil, temporal.NewHeartbeatTimeoutError()
			}
			return out, err
		}
	})
	env.ExecuteWorkflow(WorkflowName, demoRequest(t, nil))
	res := result(t, env)
	if res.Error != "" {
		t.Fatalf("chain error: %s", res.Error)
	}
	if s := count(t, dir, "b.start"); s != 2 {
		t.Errorf("b started %d times, want 2 (one lost, one retried)", s)
	}
	if s := count(t, dir, "a.start"); s != 1 {
		t.Errorf("a started %d times, want 1", s)
	}
}

// A non-idempotent call whose worker is lost is reported and never
// repeated.
func TestNonIdempotentCallInterruptedIsReportedNotRepeated(t *testing.T) {
	var calls atomic.Int32
	env, _, dir := setupCall(t, func(a *Activities) func(context.Context, CallRequest) (*CallResult, error) {
		return func(ctx context.Context, cr CallRequest) (*CallResult, error) {
			if cr.Step == 4 {
				calls.Add(1)
				_, _ = a.Call(ctx, cr)
				return nil, temporal.NewHeartbeatTimeoutError()
			}
			return a.Call(ctx, cr)
		}
	})
	env.ExecuteWorkflow(WorkflowName, demoRequest(t, nil))
	res := result(t, env)
	if calls.Load() != 1 || count(t, dir, "w.start") != 1 {
		t.Errorf("w attempted %d times, started %d; want 1, 1", calls.Load(), count(t, dir, "w.start"))
	}
	if len(res.Interrupted) != 1 || res.Interrupted[0] != "run-1/w" {
		t.Errorf("interrupted = %v, want [run-1/w]", res.Interrupted)
	}
	if !strings.Contains(res.Error, "not idempotent") || !strings.Contains(res.Error, "does not repeat") {
		t.Errorf("error = %q", res.Error)
	}
	if st := res.Steps["w"]; st == nil || st.Status != "failed" {
		t.Errorf("step w = %+v", st)
	}
	if st := res.Steps["each"]; st == nil || st.Status != "ok" {
		t.Errorf("step each = %+v", st)
	}
}

// A tool's own failure is its answer: not retried, dependents skipped.
func TestToolFailureNotRetriedDependentsSkipped(t *testing.T) {
	env, _, dir := setup(t)
	req := RunRequest{Caller: testtools.Caller, RunID: "run-f", Source: `pipeline: f
steps:
  - id: a
    tool: slow_step
    params: {name: a, ms: 1}
  - id: boom
    tool: fail
    needs: [a]
  - id: after
    tool: slow_step
    needs: [boom]
    params: {name: after, ms: 1}
`}
	var attempts atomic.Int32
	env.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, _ converter.EncodedValues) {
		if info.ActivityID == "run-f/boom" {
			attempts.Add(1)
		}
	})
	env.ExecuteWorkflow(WorkflowName, req)
	res := result(t, env)
	if attempts.Load() != 1 {
		t.Errorf("boom attempted %d times, want 1", attempts.Load())
	}
	if !strings.Contains(res.Error, "fail: as asked") {
		t.Errorf("error = %q", res.Error)
	}
	if st := res.Steps["after"]; st == nil || st.Status != "skipped" || count(t, dir, "after.start") != 0 {
		t.Errorf("after = %+v", st)
	}
}

// An invalid chain fails the workflow with the validation message.
func TestInvalidChainFailsWorkflow(t *testing.T) {
	env, _, _ := setup(t)
	env.ExecuteWorkflow(WorkflowName, RunRequest{Caller: testtools.Caller, Source: "pipeline: x\nsteps:\n  - id: a\n    tool: no_such_tool\n"})
	err := env.GetWorkflowError()
	if err == nil || !strings.Contains(err.Error(), "no_such_tool") {
		t.Fatalf("err = %v", err)
	}
}

// The activity side refuses a non-idempotent key it saw start before, and
// any second attempt of one.
func TestCallRefusesStartedNonIdempotentKey(t *testing.T) {
	_, a, dir := setup(t)
	var s testsuite.WorkflowTestSuite
	aenv := s.NewTestActivityEnvironment()
	aenv.RegisterActivityWithOptions(a.Call, activity.RegisterOptions{Name: CallActivityName})
	req := demoRequest(t, nil)
	if _, err := a.Ledger.Start("run-1/w", "pid-of-a-dead-worker"); err != nil {
		t.Fatal(err)
	}
	_, err := aenv.ExecuteActivity(CallActivityName, CallRequest{Run: req, Step: 4, Item: -1,
		Outputs: map[string]json.RawMessage{"each": json.RawMessage(`[]`)}})
	if err == nil || !strings.Contains(err.Error(), "not repeated") || !strings.Contains(err.Error(), "pid-of-a-dead-worker") {
		t.Fatalf("err = %v", err)
	}
	if count(t, dir, "w.start") != 0 {
		t.Error("the refused call ran")
	}
}
