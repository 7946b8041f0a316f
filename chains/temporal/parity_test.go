package temporal

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/airs-dev/airs/chains"
	"github.com/airs-dev/airs/chains/temporal/internal/testtools"
	"github.com/airs-dev/airs/pipeline"
)

// runBoth runs src as a workflow (the SDK's test environment, the real
// activities) and with chains.Run over the same kind of pipeline, and
// returns both results and errors.
func runBoth(t *testing.T, src string, timeout time.Duration) (*chains.Result, error, *chains.Result, error) {
	t.Helper()
	env, _, _ := setup(t)
	env.ExecuteWorkflow(WorkflowName, RunRequest{Caller: testtools.Caller, RunID: "run-p", Source: src, Timeout: timeout})
	res := result(t, env)

	m, cat, err := testtools.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close() })
	c, err := chains.Parse("chain.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	want, wantErr := chains.Run(context.Background(), c, nil, chains.Options{Executor: m, Catalog: cat, Caller: testtools.Caller, RunID: "run-p", Timeout: timeout})
	return res.Result(), res.Err(), want, wantErr
}

func nodes(r *chains.Result) []string {
	var out []string
	for _, n := range r.Trace {
		out = append(out, n.Node+":"+string(n.Outcome)+":"+n.CallID)
	}
	slices.Sort(out)
	return out
}

func statuses(r *chains.Result) map[string]chains.StepStatus {
	out := map[string]chains.StepStatus{}
	for id, s := range r.Steps {
		out[id] = s.Status
	}
	return out
}

// A chain with a failing step gives, on Temporal, the result and the error
// chains.Run gives: the same steps, trace nodes, error text and kind.
func TestWorkflowResultAndErrorAsChainsRun(t *testing.T) {
	src := `pipeline: f
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
`
	got, gotErr, want, wantErr := runBoth(t, src, 0)
	if gotErr == nil || wantErr == nil || gotErr.Error() != wantErr.Error() {
		t.Fatalf("errors differ:\n temporal: %v\n chains.Run: %v", gotErr, wantErr)
	}
	if pipeline.KindOf(gotErr) != pipeline.KindOf(wantErr) || pipeline.ExitCode(gotErr) != pipeline.ExitCode(wantErr) {
		t.Errorf("kinds: %s vs %s", pipeline.KindOf(gotErr), pipeline.KindOf(wantErr))
	}
	var gse, wse *chains.StepError
	if !errors.As(gotErr, &gse) || !errors.As(wantErr, &wse) || *gse != (chains.StepError{Step: wse.Step, Node: wse.Node, Outcome: wse.Outcome, Err: gse.Err}) {
		t.Errorf("step errors: %+v vs %+v", gse, wse)
	}
	if g, w := statuses(got), statuses(want); !maps(g, w) {
		t.Errorf("statuses: %v vs %v", g, w)
	}
	if g, w := nodes(got), nodes(want); !slices.Equal(g, w) {
		t.Errorf("trace nodes:\n temporal: %v\n chains.Run: %v", g, w)
	}
	if got.Chain != want.Chain || got.RunID != want.RunID || string(got.Steps["a"].Output) == "" {
		t.Errorf("result: %+v vs %+v", got, want)
	}
}

// The chain's budget is the workflow's: a call still running when it ends
// fails with the pipeline's timeout, as in chains.Run.
func TestWorkflowBudget(t *testing.T) {
	src := `pipeline: slow
steps:
  - id: s
    tool: slow_step
    params: {name: s, ms: 20000}
`
	t0 := time.Now()
	_, gotErr, _, wantErr := runBoth(t, src, 500*time.Millisecond)
	if !errors.Is(gotErr, pipeline.ErrTimeout) || pipeline.KindOf(gotErr) != pipeline.KindOf(wantErr) {
		t.Fatalf("budget: temporal %v (kind %s), chains.Run %v (kind %s)", gotErr, pipeline.KindOf(gotErr), wantErr, pipeline.KindOf(wantErr))
	}
	if d := time.Since(t0); d > 10*time.Second {
		t.Errorf("took %v: the budget did not stop the call", d)
	}
}

func maps[K comparable, V comparable](a, b map[K]V) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}
