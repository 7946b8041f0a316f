package chains

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airs-dev/airs/pipeline"
	"go.uber.org/goleak"
)

func TestRunReferencesAndOutput(t *testing.T) {
	x := stdExec()
	c := mustParse(t, `
pipeline: refs
inputs:
  n: {type: integer, default: 3}
  who: {type: string}
steps:
  - id: list
    tool: list
    params: {n: "{{input.n}}"}
  - id: shout
    tool: upper
    foreach: "{{steps.list.output.files}}"
    params: {text: "{{input.who}} got {{item.name}} ({{item.size}})"}
  - id: second
    tool: count
    params: {n: "{{steps.list.output.files[1].size}}"}
output:
  all: "{{steps.shout.output}}"
  second: "{{steps.second.output.n}}"
  first: "{{steps.shout.output[0].text}}"
`)
	res, err := Run(context.Background(), c, map[string]any{"who": "ann"}, opts(x))
	if err != nil {
		t.Fatal(err)
	}
	jsonEq(t, res.Output, `{
		"all": [{"text":"ANN GOT F0 (0)"},{"text":"ANN GOT F1 (1)"},{"text":"ANN GOT F2 (2)"}],
		"second": 1,
		"first": "ANN GOT F0 (0)"}`)
	// The whole-reference param kept its integer type on the wire.
	req, ok := x.requestFor(res.RunID + "/second")
	if !ok || string(req.Params) != `{"n":1}` {
		t.Errorf("second's params = %s", req.Params)
	}
	if got := len(res.Outputs()); got != 3 {
		t.Errorf("outputs: %d steps, want 3", got)
	}
}

func TestRunInputs(t *testing.T) {
	x := stdExec()
	c := mustParse(t, `
inputs:
  n: {type: integer}
  flag: {type: boolean, default: false}
steps:
  - id: a
    tool: echo
    params: {n: "{{input.n}}", flag: "{{input.flag}}"}
`)
	// Strings from a command line are parsed into the declared types.
	res, err := Run(context.Background(), c, map[string]any{"n": "42", "flag": "true"}, opts(x))
	if err != nil {
		t.Fatal(err)
	}
	jsonEq(t, res.Output, `{"n":42,"flag":true}`)
	for in, want := range map[string]string{
		`{}`:                    "input n: required",
		`{"n": "x"}`:            "input n: string given, integer wanted",
		`{"n": 1, "other": 2}`:  "input other: not declared",
		`{"n": 1.5}`:            "input n: number given, integer wanted",
		`{"n": 1, "flag": "z"}`: "input flag: string given, boolean wanted",
		`{"n": "NaN"}`:          "input n: string given, integer wanted",
		`{"n": "0x1p-2"}`:       "input n: string given, integer wanted",
		`{"n": "2.5"}`:          "input n: number given, integer wanted",
	} {
		var m map[string]any
		_ = json.Unmarshal([]byte(in), &m)
		_, err := Run(context.Background(), c, m, opts(x))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("input %s: err = %v, want %q", in, err, want)
		}
	}
}

func TestForeachGathersInOrder(t *testing.T) {
	x := stdExec()
	c := mustParse(t, `
inputs: {words: {description: "untyped, to test the run-time check"}}
steps:
  - id: up
    tool: upper
    foreach: "{{input.words}}"
    params: {text: "{{item.w}}", delay_ms: "{{item.d}}"}
`)
	// Later items finish first; the output is still in item order.
	var words []map[string]any
	var want []string
	for i := range 16 {
		w := fmt.Sprintf("w%02d", i)
		words = append(words, map[string]any{"w": w, "d": (16 - i) * 3})
		want = append(want, fmt.Sprintf(`{"text":"W%02d"}`, i))
	}
	o := opts(x)
	o.MaxParallel = 16
	res, err := Run(context.Background(), c, map[string]any{"words": words}, o)
	if err != nil {
		t.Fatal(err)
	}
	jsonEq(t, res.Output, "["+strings.Join(want, ",")+"]")
	// The trace has one entry per item plus the step's summary, and the
	// items really ran out of order.
	var ends []string
	for _, n := range res.Trace {
		if n.Item >= 0 {
			ends = append(ends, n.Node)
		}
	}
	if len(ends) != 16 {
		t.Fatalf("%d item nodes in the trace, want 16", len(ends))
	}
	slices.SortFunc(res.Trace, func(a, b NodeTrace) int { return a.End.Compare(b.End) })
	if first := res.Trace[0]; first.Node == "up[0]" {
		t.Errorf("up[0] ended first; the test wants items to finish out of order")
	}

	// An empty array gives an empty output without calling the tool.
	before := len(x.requests)
	res, err = Run(context.Background(), c, map[string]any{"words": []any{}}, o)
	if err != nil {
		t.Fatal(err)
	}
	jsonEq(t, res.Output, `[]`)
	if len(x.requests) != before {
		t.Errorf("empty foreach made %d calls", len(x.requests)-before)
	}

	// A foreach over something that turns out not to be an array fails.
	_, err = Run(context.Background(), c, map[string]any{"words": "nope"}, o)
	if err == nil || !strings.Contains(err.Error(), "{{input.words}} is string, not an array") {
		t.Errorf("err = %v", err)
	}
}

// parallelChain is k independent steps of d each.
func parallelChain(k int, d time.Duration) *Chain {
	c := &Chain{Name: fmt.Sprintf("par%d", k)}
	for i := range k {
		c.Steps = append(c.Steps, &Step{ID: fmt.Sprintf("s%d", i), Tool: "sleep",
			Params: MustTemplate(map[string]any{"ms": d.Milliseconds(), "tag": fmt.Sprint(i)})})
	}
	return c
}

func TestParallelSteps(t *testing.T) {
	const step = 100 * time.Millisecond
	for _, k := range []int{2, 8, 32} {
		t.Run(fmt.Sprint(k), func(t *testing.T) {
			x := stdExec()
			o := opts(x)
			o.MaxParallel = k
			start := time.Now()
			res, err := Run(context.Background(), parallelChain(k, step), nil, o)
			elapsed := time.Since(start)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Outputs()) != k {
				t.Fatalf("%d outputs, want %d", len(res.Outputs()), k)
			}
			// All k in flight at once is what parallel means (the executor
			// counts them); the time is logged, not judged: a loaded
			// machine stretches it.
			if x.peak != k {
				t.Errorf("peak concurrency %d, want %d", x.peak, k)
			}
			t.Logf("k=%d: %v (%.2f steps)", k, elapsed, float64(elapsed)/float64(step))
		})
	}
	// The bound holds: 8 steps two at a time take four rounds.
	x := stdExec()
	o := opts(x)
	o.MaxParallel = 2
	start := time.Now()
	if _, err := Run(context.Background(), parallelChain(8, 50*time.Millisecond), nil, o); err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el < 200*time.Millisecond {
		t.Errorf("8 steps of 50ms at most 2 at a time took %v (< 4 rounds)", el)
	}
	if x.peak > 2 {
		t.Errorf("peak concurrency %d with MaxParallel 2", x.peak)
	}
}

// blockTool registers "block": a tag starting with "fast" returns at once;
// any other signals started and waits for its context, then returns a
// partial output with the error.
func blockTool(x *testExec, started chan<- string) {
	x.add(pipeline.Tool{Name: "block",
		Parameters:   json.RawMessage(`{"type":"object","properties":{"tag":{"type":"string"}}}`),
		ReturnSchema: json.RawMessage(`{"type":"object","properties":{"tag":{"type":"string"}}}`),
	}, func(ctx context.Context, p json.RawMessage, c *pipeline.Call) (json.RawMessage, error) {
		var a struct{ Tag string }
		_ = json.Unmarshal(p, &a)
		if strings.HasPrefix(a.Tag, "fast") {
			return p, nil
		}
		started <- a.Tag
		<-ctx.Done()
		return json.RawMessage(`{"partial":true}`), ctx.Err()
	})
}

func TestCancelMidChainReturnsFinishedNodes(t *testing.T) {
	defer goleak.VerifyNone(t)
	x := stdExec()
	started := make(chan string, 16)
	blockTool(x, started)
	testCancelMidChain(t, x, opts(x), started)
}

// testCancelMidChain runs a chain, cancels it once two calls are blocked
// and three have finished, and checks that the result holds exactly the
// finished steps. x registered "block" with started; o says which executor
// runs the calls (x itself, or a Manager over x's tools).
func testCancelMidChain(t *testing.T, x *testExec, o Options, started chan string) {
	c := mustParse(t, `
inputs:
  tags: {type: array, default: [fast0, slow1, fast2]}
steps:
  - id: a
    tool: upper
    params: {text: a}
  - id: b            # blocks until cancelled
    tool: block
    params: {tag: "{{steps.a.output.text}}"}
  - id: c
    tool: upper
    params: {text: c}
  - id: d            # waits for b: never starts
    tool: upper
    params: {text: "{{steps.b.output.tag}}"}
  - id: items        # after c; item 1 blocks, 0 and 2 finish
    tool: block
    foreach: "{{input.tags}}"
    params: {tag: "{{item}}"}
    needs: c
`)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	okNodes := map[string]bool{}
	allOK := make(chan struct{})
	o.OnNode = func(n NodeTrace) {
		mu.Lock()
		defer mu.Unlock()
		if n.Outcome == pipeline.OutcomeOK {
			okNodes[n.Node] = true
		}
		if okNodes["a"] && okNodes["c"] && okNodes["items[0]"] && okNodes["items[2]"] && allOK != nil {
			close(allOK)
			allOK = nil
		}
	}
	go func() {
		// Cancel once b and items[1] are in flight and the others finished.
		seen := map[string]bool{}
		for !seen["A"] || !seen["slow1"] {
			seen[<-started] = true
		}
		mu.Lock()
		wait := allOK
		mu.Unlock()
		if wait != nil {
			<-wait
		}
		cancel()
	}()
	start := time.Now()
	res, err := Run(ctx, c, nil, o)
	if el := time.Since(start); el > 2*time.Second {
		t.Errorf("Run took %v after cancellation", el)
	}
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if res == nil {
		t.Fatal("no result")
	}
	var got []string
	for id := range res.Outputs() {
		got = append(got, id)
	}
	slices.Sort(got)
	if !slices.Equal(got, []string{"a", "c"}) {
		t.Errorf("finished steps %v, want [a c]", got)
	}
	jsonEq(t, res.Outputs()["c"], `{"text":"C"}`)
	for id, want := range map[string]StepStatus{"a": StatusOK, "b": StatusCancelled, "c": StatusOK, "d": StatusSkipped, "items": StatusCancelled} {
		if st := res.Steps[id].Status; st != want {
			t.Errorf("step %s: %s, want %s (%s)", id, st, want, res.Steps[id].Error)
		}
		if id != "a" && id != "c" && res.Steps[id].Output != nil {
			t.Errorf("step %s has output %s", id, res.Steps[id].Output)
		}
	}
	if res.Output != nil {
		t.Errorf("chain output %s after cancellation", res.Output)
	}
	// The in-flight calls were cancelled by id too.
	if o.Executor == Executor(x) {
		for _, id := range []string{res.RunID + "/b", res.RunID + "/items[1]"} {
			if !slices.Contains(x.cancels, id) {
				t.Errorf("Executor.Cancel(%s) not called; cancels: %v", id, x.cancels)
			}
		}
	}
	// The trace has every node with its outcome.
	outcomes := map[string]pipeline.Outcome{}
	for _, n := range res.Trace {
		outcomes[n.Node] = n.Outcome
	}
	for node, want := range map[string]pipeline.Outcome{
		"a": pipeline.OutcomeOK, "b": pipeline.OutcomeCancelled, "c": pipeline.OutcomeOK, "d": OutcomeSkipped,
		"items": pipeline.OutcomeCancelled, "items[0]": pipeline.OutcomeOK, "items[1]": pipeline.OutcomeCancelled, "items[2]": pipeline.OutcomeOK,
	} {
		if outcomes[node] != want {
			t.Errorf("trace %s: %q, want %q", node, outcomes[node], want)
		}
	}
	if len(res.Trace) != 8 {
		t.Errorf("trace has %d nodes, want 8: %+v", len(res.Trace), res.Trace)
	}
}

// Cancelling before anything runs starts nothing.
func TestCancelBeforeStart(t *testing.T) {
	x := stdExec()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, err := Run(ctx, parallelChain(4, time.Second), nil, opts(x))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
	if len(x.requests) != 0 || len(res.Outputs()) != 0 {
		t.Errorf("%d calls made, %d outputs", len(x.requests), len(res.Outputs()))
	}
	for _, n := range res.Trace {
		if n.Outcome != OutcomeSkipped || !strings.Contains(n.Error, "run cancelled") {
			t.Errorf("node %s: %s %s", n.Node, n.Outcome, n.Error)
		}
	}
}

func TestStopOnFirstFailure(t *testing.T) {
	defer goleak.VerifyNone(t)
	x := stdExec()
	started := make(chan string, 4)
	blockTool(x, started)
	// "late-fail" fails once the blocking step is in flight.
	x.add(pipeline.Tool{Name: "late-fail"}, func(ctx context.Context, p json.RawMessage, c *pipeline.Call) (json.RawMessage, error) {
		<-started
		return nil, errors.New("disk on fire")
	})
	c := mustParse(t, `
steps:
  - id: bad
    tool: late-fail
  - id: slow
    tool: block
    params: {tag: slow}
  - id: after-slow
    tool: upper
    params: {text: "{{steps.slow.output.tag}}"}
  - id: after-bad
    tool: upper
    params: {text: "{{steps.bad.output}}"}
`)
	res, err := Run(context.Background(), c, nil, opts(x))
	var se *StepError
	if !errors.As(err, &se) || se.Step != "bad" || se.Outcome != pipeline.OutcomeError || !strings.Contains(err.Error(), "disk on fire") {
		t.Fatalf("err = %v, want bad's StepError", err)
	}
	want := map[string]StepStatus{"bad": StatusFailed, "slow": StatusCancelled, "after-slow": StatusSkipped, "after-bad": StatusSkipped}
	for id, st := range want {
		if got := res.Steps[id]; got.Status != st {
			t.Errorf("%s: %s (%s), want %s", id, got.Status, got.Error, st)
		}
	}
	if msg := res.Steps["after-slow"].Error; !strings.Contains(msg, "chain stopped after step bad failed") {
		t.Errorf("after-slow's reason: %q", msg)
	}
	if !slices.Contains(x.cancels, res.RunID+"/slow") {
		t.Errorf("slow was not cancelled through the executor: %v", x.cancels)
	}
}

func TestContinueOnFailure(t *testing.T) {
	defer goleak.VerifyNone(t)
	x := stdExec()
	c := mustParse(t, `
on_failure: continue
steps:
  - id: bad
    tool: fail
  - id: good
    tool: upper
    params: {text: ok, delay_ms: 30}
  - id: after-bad
    tool: upper
    params: {text: "{{steps.bad.output}}"}
  - id: after-after
    tool: echo
    params: {x: "{{steps.after-bad.output}}"}
  - id: after-good
    tool: upper
    params: {text: "{{steps.good.output.text}}!"}
output: "{{steps.after-good.output.text}}"
`)
	res, err := Run(context.Background(), c, nil, opts(x))
	var se *StepError
	if !errors.As(err, &se) || se.Step != "bad" {
		t.Fatalf("err = %v, want bad's StepError", err)
	}
	want := map[string]StepStatus{"bad": StatusFailed, "good": StatusOK, "after-bad": StatusSkipped, "after-after": StatusSkipped, "after-good": StatusOK}
	for id, st := range want {
		if got := res.Steps[id]; got.Status != st {
			t.Errorf("%s: %s (%s), want %s", id, got.Status, got.Error, st)
		}
	}
	if msg := res.Steps["after-bad"].Error; msg != "not started: dependency bad failed" {
		t.Errorf("after-bad's reason: %q", msg)
	}
	if msg := res.Steps["after-after"].Error; msg != "not started: dependency after-bad skipped" {
		t.Errorf("after-after's reason: %q", msg)
	}
	jsonEq(t, res.Output, `"OK!"`)

	// Options override the chain's policy.
	o := opts(x)
	o.OnFailure = StopOnFailure
	res, _ = Run(context.Background(), c, nil, o)
	if st := res.Steps["after-good"].Status; st == StatusOK {
		t.Errorf("with StopOnFailure, after-good ran")
	}
}

// A foreach item failing fails the step; with continue, the other items
// still run and the step's dependents are skipped.
func TestForeachItemFailure(t *testing.T) {
	x := stdExec()
	c := mustParse(t, `
on_failure: continue
inputs: {ns: {type: array}}
steps:
  - id: each
    tool: count
    foreach: "{{input.ns}}"
    params: {n: "{{item}}"}
  - id: after
    tool: echo
    params: {x: "{{steps.each.output}}"}
`)
	res, err := Run(context.Background(), c, map[string]any{"ns": []any{1, "two", 3}}, opts(x))
	var se *StepError
	if !errors.As(err, &se) || se.Node != "each[1]" || !strings.Contains(err.Error(), "invalid params") {
		t.Fatalf("err = %v", err)
	}
	if res.Steps["each"].Status != StatusFailed || res.Steps["after"].Status != StatusSkipped {
		t.Errorf("each %s, after %s", res.Steps["each"].Status, res.Steps["after"].Status)
	}
	n := 0
	for _, tr := range res.Trace {
		if tr.Step == "each" && tr.Item >= 0 && tr.Outcome == pipeline.OutcomeOK {
			n++
		}
	}
	if n != 2 {
		t.Errorf("%d items succeeded, want 2", n)
	}
}

func TestBudgetSharing(t *testing.T) {
	x := stdExec()
	c := mustParse(t, `
timeout: 3s
steps:
  - id: s1
    tool: sleep
    params: {ms: 100}
  - id: s2
    tool: sleep
    params: {ms: 100, tag: "{{steps.s1.output.tag}}"}
  - id: s3
    tool: sleep
    params: {ms: 100, tag: "{{steps.s2.output.tag}}"}
  - id: side
    tool: sleep
    params: {ms: 10}
  - id: capped
    tool: sleep
    timeout: 200ms
    params: {ms: 10}
`)
	res, err := Run(context.Background(), c, nil, opts(x))
	if err != nil {
		t.Fatal(err)
	}
	budget := map[string]time.Duration{}
	started := map[string]time.Time{}
	var first time.Time
	for _, n := range res.Trace {
		req, ok := x.requestFor(n.CallID)
		if !ok {
			t.Fatalf("no request for %s", n.CallID)
		}
		if req.Timeout != n.Budget {
			t.Errorf("%s: request timeout %v, trace budget %v", n.Node, req.Timeout, n.Budget)
		}
		budget[n.Node], started[n.Node] = req.Timeout, n.Start
		if first.IsZero() || n.Start.Before(first) {
			first = n.Start
		}
	}
	// s1 starts with 3s left on a 3-deep path: a third. s2 starts after s1
	// with half of what is left; s3 with all of it; side and capped are
	// not on a longer path, so they may use everything (capped up to its
	// own timeout). What is left is read from the trace (the run started
	// just before its first node), so a slow machine changes the
	// expectation, not the verdict.
	near := func(node string, share func(left time.Duration) time.Duration) {
		want := share(3*time.Second - started[node].Sub(first))
		if d := budget[node] - want; d > 10*time.Millisecond || d < -100*time.Millisecond {
			t.Errorf("%s: budget %v, want ≈ %v", node, budget[node], want)
		}
	}
	near("s1", func(left time.Duration) time.Duration { return left / 3 })
	near("s2", func(left time.Duration) time.Duration { return left / 2 })
	near("s3", func(left time.Duration) time.Duration { return left })
	near("side", func(left time.Duration) time.Duration { return left })
	near("capped", func(time.Duration) time.Duration { return 200 * time.Millisecond })

	// A share above the Manager's maximum asks for the maximum (more would
	// get the latency-class default instead).
	c.Timeout = time.Hour
	res, err = Run(context.Background(), c, nil, opts(x))
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range res.Trace {
		if n.Node == "side" {
			if req, _ := x.requestFor(n.CallID); req.Timeout != pipeline.MaxTimeout || n.Budget < 59*time.Minute {
				t.Errorf("side with an hour: request timeout %v, budget %v", req.Timeout, n.Budget)
			}
		}
	}

	// Without any budget, calls get the step's timeout or the tool default (0).
	c.Timeout = 0
	res, err = Run(context.Background(), c, nil, opts(x))
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range res.Trace {
		want := time.Duration(0)
		if n.Node == "capped" {
			want = 200 * time.Millisecond
		}
		if req, _ := x.requestFor(n.CallID); req.Timeout > want || req.Timeout < want-50*time.Millisecond {
			t.Errorf("%s without budget: timeout %v, want %v", n.Node, req.Timeout, want)
		}
	}
}

// A step that overruns its share times out, and the chain stops there.
func TestBudgetExhausted(t *testing.T) {
	x := stdExec()
	c := mustParse(t, `
steps:
  - id: s1
    tool: sleep
    params: {ms: 250}
  - id: s2
    tool: sleep
    params: {ms: 10, tag: "{{steps.s1.output.tag}}"}
`)
	o := opts(x)
	o.Timeout = 300 * time.Millisecond
	start := time.Now()
	res, err := Run(context.Background(), c, nil, o)
	var se *StepError
	if !errors.As(err, &se) || se.Step != "s1" || se.Outcome != pipeline.OutcomeTimeout {
		t.Fatalf("err = %v, want s1 timeout", err)
	}
	if el := time.Since(start); el > 280*time.Millisecond {
		t.Errorf("took %v; s1's share was 150ms", el)
	}
	if b := res.Trace[0].Budget; res.Trace[0].Node != "s1" || b > 150*time.Millisecond || b < 120*time.Millisecond {
		t.Errorf("s1's budget %v, want ≈ 150ms (300ms over 2 levels)", b)
	}
	if res.Steps["s2"].Status != StatusSkipped {
		t.Errorf("s2: %s", res.Steps["s2"].Status)
	}
}

func TestTrace(t *testing.T) {
	x := stdExec()
	c := mustParse(t, `
steps:
  - id: l
    tool: list
    params: {n: 2}
  - id: u
    tool: upper
    foreach: "{{steps.l.output.files}}"
    params: {text: "{{item.name}}", delay_ms: 5}
`)
	var streamed []string
	o := opts(x)
	o.RunID = "run1"
	o.OnNode = func(n NodeTrace) { streamed = append(streamed, n.Node) }
	res, err := Run(context.Background(), c, nil, o)
	if err != nil {
		t.Fatal(err)
	}
	if res.RunID != "run1" || len(res.Trace) != 4 || len(streamed) != 4 {
		t.Fatalf("run %s, trace %d nodes, streamed %v", res.RunID, len(res.Trace), streamed)
	}
	for _, n := range res.Trace {
		if n.Start.IsZero() || n.End.Before(n.Start) || n.Latency <= 0 || n.Outcome != pipeline.OutcomeOK || n.Tool == "" {
			t.Errorf("bad trace node %+v", n)
		}
		if n.Item >= 0 && n.CallID != "run1/"+n.Node {
			t.Errorf("node %s has call id %s", n.Node, n.CallID)
		}
	}
	if res.Trace[0].Node != "l" {
		t.Errorf("trace not in start order: %v", res.Trace)
	}
	raw, err := json.Marshal(res)
	if err != nil || !strings.Contains(string(raw), `"node":"u[1]"`) {
		t.Errorf("result JSON: %s %v", raw, err)
	}
}

func TestRunRejectsInvalidChains(t *testing.T) {
	x := stdExec()
	c := mustParse(t, "steps: [{id: a, tool: nope}]")
	if _, err := Run(context.Background(), c, nil, opts(x)); err == nil || !strings.Contains(err.Error(), "unknown tool") {
		t.Errorf("err = %v", err)
	}
	if len(x.requests) != 0 {
		t.Error("an invalid chain made calls")
	}
	if _, err := Run(context.Background(), c, nil, Options{Catalog: x}); err == nil {
		t.Error("no executor accepted")
	}
}
