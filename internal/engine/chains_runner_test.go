package engine

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airs-dev/airs/chains"
	"github.com/airs-dev/airs/selector"
)

// recRunner is a ChainRunner that records each run and runs it in process
// (as a worker would, from the source alone).
type recRunner struct {
	e    *Engine
	mu   sync.Mutex
	runs []ChainRun
}

func (r *recRunner) RunChain(ctx context.Context, run ChainRun) (*chains.Result, error) {
	r.mu.Lock()
	r.runs = append(r.runs, run)
	r.mu.Unlock()
	var c *chains.Chain
	var err error
	if run.Format == "plan" {
		c, err = chains.ParsePlan(run.Source)
	} else {
		c, err = chains.Parse(run.Filename, run.Source)
	}
	if err != nil {
		return nil, err
	}
	return chains.Run(ctx, c, run.Input, chains.Options{Executor: r.e.Executor(), Catalog: r.e.toolCatalog(), Caller: run.Caller,
		OnFailure: run.OnFailure, Timeout: run.Timeout})
}

// With Options.Chains set, every chain goes to it — a DSL pipeline, a plan,
// a turn's plan — validated here first: an invalid chain never reaches it.
func TestChainsGoToTheChainRunner(t *testing.T) {
	e, _ := newTurnEngine(t)
	r := &recRunner{e: e}
	e.chainRunner = r

	src := "pipeline: p\ntimeout: 20s\nsteps:\n  - id: a\n    tool: calculator\n    params: {expression: \"1+2\"}\n"
	res, err := e.RunPipeline(context.Background(), "web", "p.yaml", []byte(src), nil, true)
	if err != nil || res == nil || string(res.Output) == "" {
		t.Fatalf("RunPipeline: %+v %v", res, err)
	}
	if len(r.runs) != 1 {
		t.Fatalf("runs %d, want 1", len(r.runs))
	}
	got := r.runs[0]
	if got.Format != "dsl" || got.Filename != "p.yaml" || got.Caller != "web" || got.Timeout != 20*time.Second ||
		got.OnFailure != chains.ContinueOnFailure || string(got.Source) != src {
		t.Errorf("run %+v", got)
	}

	// Invalid: the validation error, and the runner never sees it.
	_, err = e.RunPipeline(context.Background(), "web", "bad.yaml", []byte("pipeline: p\nsteps:\n  - id: a\n    tool: no-such-tool\n"), nil, false)
	if !errors.Is(err, chains.ErrInvalid) || len(r.runs) != 1 {
		t.Fatalf("invalid pipeline: %v, runs %d", err, len(r.runs))
	}

	// A plan.
	plan := `{"steps":[{"id":"s1","function":"calculator","arguments":{"expression":"2*3"}}]}`
	if res, err := e.RunPlan(context.Background(), "web", mustReadPlan(t, plan), false); err != nil || !strings.Contains(string(res.Output), "6") {
		t.Fatalf("RunPlan: %+v %v", res, err)
	}
	// The runner gets the plan as JSON that reads back to the same plan.
	if got := r.runs[len(r.runs)-1]; len(r.runs) != 2 || got.Format != "plan" || !reflect.DeepEqual(mustReadPlan(t, string(got.Source)), mustReadPlan(t, plan)) {
		t.Errorf("plan run %+v (source %s)", got, got.Source)
	}

	// A turn's plan (no-LLM mode, two parts).
	ui := &recUI{}
	tr, err := e.Turn(context.Background(), "web", "extract the text of quotes/acme-2024.pdf then summarize it", ui, TurnOptions{})
	if err != nil || tr.Run == nil || len(tr.Steps) != 2 || tr.Steps[1].Result == nil {
		t.Fatalf("turn: %v %+v\n%s", err, tr, ui)
	}
	if len(r.runs) != 3 || r.runs[2].Format != "plan" || r.runs[2].Caller != "web" {
		t.Errorf("the turn's plan did not go to the runner: %d runs", len(r.runs))
	}
	// The runner ran the calls (not through the turn's UI): the UI hears
	// of each from the result.
	if n := strings.Count(ui.String(), "running"); n != 2 || !strings.Contains(ui.String(), "result summarize") {
		t.Errorf("UI heard of %d calls, want 2:\n%s", n, ui)
	}
	if !strings.Contains(ui.String(), "runs on the chain workers") {
		t.Errorf("UI does not say where the plan runs:\n%s", ui)
	}
}

func mustReadPlan(t *testing.T, raw string) selector.Plan {
	t.Helper()
	p, err := selector.ReadPlan(json.RawMessage(raw))
	if err != nil {
		t.Fatal(err)
	}
	return p
}
