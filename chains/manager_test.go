package chains

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/airs-dev/airs/pipeline"
	"go.uber.org/goleak"
)

// managerFor registers x's tools in a real pipeline.Registry under
// provider "test" and returns Options running through a real Manager.
func managerFor(t *testing.T, x *testExec, policy pipeline.AccessPolicy) (Options, *pipeline.Manager) {
	t.Helper()
	reg := pipeline.NewRegistry(pipeline.RegistryConfig{})
	for _, tt := range x.tools {
		if tt.h == nil {
			continue
		}
		tool := tt.tool
		tool.Version = "1.0.0"
		tool.LatencyClass = pipeline.Fast
		if err := reg.Register("test", tool, tt.h); err != nil {
			t.Fatal(err)
		}
	}
	m, err := pipeline.NewManager(pipeline.Config{Registry: reg, Policy: policy})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close() })
	return Options{Executor: m, Catalog: RegistryCatalog{Registry: reg, Policy: policy}, Caller: "alice", MaxParallel: 8}, m
}

func TestManagerRunsChain(t *testing.T) {
	x := stdExec()
	o, _ := managerFor(t, x, nil)
	c := mustParse(t, `
steps:
  - id: list
    tool: list
    params: {n: 3}
  - id: up
    tool: upper
    foreach: "{{steps.list.output.files}}"
    params: {text: "{{item.name}}"}
  - id: all
    tool: upper
    params: {text: '{{steps.up.output[*].text | join "+"}}'}
output: "{{steps.all.output.text}}"
`)
	res, err := Run(context.Background(), c, nil, o)
	if err != nil {
		t.Fatal(err)
	}
	jsonEq(t, res.Output, `"F0+F1+F2"`)
	for _, n := range res.Trace {
		if n.Outcome != pipeline.OutcomeOK || n.Latency <= 0 {
			t.Errorf("node %+v", n)
		}
	}
}

func TestManagerParallelSteps(t *testing.T) {
	const step = 100 * time.Millisecond
	for _, k := range []int{2, 8, 32} {
		x := stdExec()
		o, _ := managerFor(t, x, nil)
		o.MaxParallel = k
		start := time.Now()
		if _, err := Run(context.Background(), parallelChain(k, step), nil, o); err != nil {
			t.Fatal(err)
		}
		if el := time.Since(start); el > 3*step {
			t.Errorf("k=%d through the Manager: %v (> 3 steps)", k, el)
		}
	}
}

func TestManagerCancelMidChain(t *testing.T) {
	x := stdExec()
	started := make(chan string, 16)
	blockTool(x, started)
	o, m := managerFor(t, x, nil)
	testCancelMidChain(t, x, o, started)
	if n := m.InFlight(); n != 0 {
		t.Errorf("%d calls still in flight in the Manager", n)
	}
	_ = m.Close()
	goleak.VerifyNone(t)
}

func TestManagerCapabilities(t *testing.T) {
	x := stdExec()
	policy := &pipeline.StaticPolicy{
		Channels:     map[string][]string{"alice": {"test"}, "root": {"test"}},
		Capabilities: map[string][]pipeline.Capability{"root": {{Kind: "Admin", Arg: "*"}}},
	}
	o, _ := managerFor(t, x, policy)
	c := mustParse(t, "steps:\n  - id: s\n    tool: secret\n  - id: e\n    tool: nope\n")
	err := c.Validate(o.Catalog, "alice")
	if err == nil || !strings.Contains(err.Error(), "test.yaml:2: step s: tool secret: missing capability: Admin(*)") ||
		!strings.Contains(err.Error(), "test.yaml:4: step e: tool nope: tool not found: nope") {
		t.Errorf("alice: %v", err)
	}
	if !errors.Is(err, pipeline.ErrToolCapabilityDenied) {
		t.Errorf("the pipeline error kind is lost: %v", err)
	}
	// root holds the capability; eve reaches no provider at all.
	c = mustParse(t, "steps:\n  - id: s\n    tool: secret\n")
	o.Caller = "root"
	res, err := Run(context.Background(), c, nil, o)
	if err != nil {
		t.Fatal(err)
	}
	jsonEq(t, res.Output, `"s3cr3t"`)
	if err := c.Validate(o.Catalog, "eve"); err == nil || !strings.Contains(err.Error(), `caller "eve" may not reach provider "test"`) {
		t.Errorf("eve: %v", err)
	}
}

func TestManagerFailureAndTimeout(t *testing.T) {
	x := stdExec()
	o, _ := managerFor(t, x, nil)
	c := mustParse(t, `
on_failure: continue
steps:
  - id: bad
    tool: fail
  - id: slow
    tool: sleep
    params: {ms: 400}
  - id: after
    tool: echo
    params: {x: "{{steps.slow.output}}"}
`)
	o.Timeout = 300 * time.Millisecond
	res, err := Run(context.Background(), c, nil, o)
	if err == nil {
		t.Fatal("no error")
	}
	var kinds []string
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		var se *StepError
		if !errors.As(e, &se) {
			t.Fatalf("%T %v", e, e)
		}
		kinds = append(kinds, fmt.Sprintf("%s:%s:%s", se.Step, se.Outcome, pipeline.KindOf(se.Err)))
	}
	// slow's share is 300ms/2: the Manager times it out; bad's handler
	// error keeps its pipeline kind.
	want := []string{"bad:error:" + pipeline.KindProviderRejected, "slow:timeout:" + pipeline.KindTimeout}
	if strings.Join(kinds, " ") != strings.Join(want, " ") {
		t.Errorf("failures %v, want %v", kinds, want)
	}
	if res.Steps["after"].Status != StatusSkipped {
		t.Errorf("after: %s", res.Steps["after"].Status)
	}
}
