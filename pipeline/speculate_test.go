package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airs-dev/airs/pipeline/audit"
)

// revocable is a policy whose one capability can be taken away.
type revocable struct{ held atomic.Bool }

func (p *revocable) CanReach(string, string) bool { return true }
func (p *revocable) Holds(caller string, c Capability) bool {
	return caller == "alice" && c.Kind == "ReadSpace" && p.held.Load()
}

// specEnv is an env with speculation on and one read-only idempotent tool,
// "look", whose handler counts its runs and answers with a fresh value
// each time (so a served cached result is told from a new run).
type specEnv struct {
	*env
	runs atomic.Int64
}

func newSpecEnv(t *testing.T, mod func(*Config)) *specEnv {
	t.Helper()
	se := &specEnv{}
	se.env = newEnv(t, func(c *Config) {
		c.Speculation = SpeculationConfig{Enabled: true}
		if mod != nil {
			mod(c)
		}
	})
	look := tool("look")
	look.ReadOnly = true
	look.Parameters = objSchema(`{"path":{"type":"string"},"n":{"type":"integer"}}`)
	se.register(t, "p", look, HandlerFunc(func(_ context.Context, p json.RawMessage, _ *Call) (json.RawMessage, error) {
		n := se.runs.Add(1)
		return json.Marshal(map[string]any{"run": n, "params": json.RawMessage(p)})
	}))
	return se
}

func (se *specEnv) speculate(t *testing.T, caller, params string) *Result {
	t.Helper()
	res, err := se.m.Speculate(context.Background(), Request{Tool: "look", Params: []byte(params), Caller: caller})
	if err != nil {
		t.Fatalf("speculate: %v", err)
	}
	return res
}

func (se *specEnv) real(caller, params string) (*Result, error) {
	return se.m.Call(context.Background(), Request{Tool: "look", Params: []byte(params), Caller: caller})
}

// A real call matching a speculative one is answered from its result
// without running the handler; the audit marks both and links them; the
// speculative run publishes no event; a result serves one call only.
func TestSpeculationHit(t *testing.T) {
	se := newSpecEnv(t, nil)
	sub := se.m.Subscribe(16)
	defer sub.Close()
	spec := se.speculate(t, "alice", `{"path":"a.txt","n":2}`)
	if se.runs.Load() != 1 || spec.Outcome != OutcomeOK {
		t.Fatalf("speculative run: runs %d, %+v", se.runs.Load(), spec)
	}
	// Same call, keys in another order and other spacing: same canonical params.
	res, err := se.real("alice", `{ "n":2, "path":"a.txt" }`)
	if err != nil {
		t.Fatal(err)
	}
	if se.runs.Load() != 1 || !res.SpeculativeHit || string(res.Output) != string(spec.Output) {
		t.Fatalf("real call not served from the speculation: runs %d, hit %v, %s vs %s", se.runs.Load(), res.SpeculativeHit, res.Output, spec.Output)
	}
	recs := se.audit.recs
	if len(recs) != 2 || !recs[0].Speculative || recs[0].CallID != spec.CallID || recs[1].Speculative ||
		!recs[1].SpeculativeHit || recs[1].SpeculationOf != spec.CallID {
		t.Fatalf("audit: %+v", recs)
	}
	if u, w := audit.Speculations(recs); !slices.Equal(u, []string{spec.CallID}) || len(w) != 0 {
		t.Fatalf("Speculations: used %v wasted %v", u, w)
	}
	select {
	case ev := <-sub.C:
		if ev.CallID != res.CallID {
			t.Fatalf("event for %s, want only the real call %s", ev.CallID, res.CallID)
		}
	default:
		t.Fatal("the real call published no event")
	}
	select {
	case ev := <-sub.C:
		t.Fatalf("a second event (the speculative run?): %+v", ev)
	default:
	}
	// Used once: the next identical call runs the handler.
	res2, _ := se.real("alice", `{"path":"a.txt","n":2}`)
	if se.runs.Load() != 2 || res2.SpeculativeHit {
		t.Fatalf("a cached result served twice: runs %d hit %v", se.runs.Load(), res2.SpeculativeHit)
	}
	st := se.m.SpeculationStats()
	if st.Started != 1 || st.Stored != 1 || st.Hits != 1 || st.Discards != 0 {
		t.Fatalf("stats %+v", st)
	}
	// Other params are another call.
	se.speculate(t, "alice", `{"path":"b.txt"}`)
	if res, _ := se.real("alice", `{"path":"a.txt"}`); res.SpeculativeHit {
		t.Fatal("served a speculation of other params")
	}
}

// Only tools that are both read-only and idempotent run speculatively;
// the others are refused before any stage, nothing runs, nothing is
// audited.
func TestSpeculationRefusesOtherTools(t *testing.T) {
	se := newSpecEnv(t, nil)
	var ran atomic.Int64
	h := HandlerFunc(func(context.Context, json.RawMessage, *Call) (json.RawMessage, error) {
		ran.Add(1)
		return json.RawMessage(`{}`), nil
	})
	writer := tool("writer") // idempotent, not read-only
	notIdem := tool("clock") // read-only, not idempotent
	notIdem.ReadOnly, notIdem.Idempotent = true, false
	destr := tool("wipe")
	destr.Destructive, destr.Idempotent = true, true
	for _, tl := range []Tool{writer, notIdem, destr} {
		se.register(t, "p", tl, h)
	}
	for _, name := range []string{"writer", "clock", "wipe", "nonesuch"} {
		_, err := se.m.Call(context.Background(), Request{Tool: name, Params: []byte(`{}`), Caller: "alice", Speculative: true})
		if !errors.Is(err, ErrNotSpeculable) {
			t.Errorf("%s: %v, want ErrNotSpeculable", name, err)
		}
	}
	if ran.Load() != 0 || len(se.audit.recs) != 0 {
		t.Fatalf("refused speculations ran %d handlers, %d audit records", ran.Load(), len(se.audit.recs))
	}
	// A second provider of "look" that is not read-only makes the tool
	// unsafe to guess at, whichever provider lookup would pick.
	w := tool("look")
	w.Version = "1.0.1"
	se.register(t, "q", w, h)
	if _, err := se.m.Speculate(context.Background(), Request{Tool: "look", Params: []byte(`{}`), Caller: "alice"}); !errors.Is(err, ErrNotSpeculable) {
		t.Fatalf("mixed providers: %v", err)
	}
}

// The cache is consulted only after the real call's capability checks: a
// capability revoked after the speculation refuses the real call, which
// is never served the cached result.
func TestSpeculationRevokedCapabilityIsNotServed(t *testing.T) {
	pol := &revocable{}
	pol.held.Store(true)
	se := newSpecEnv(t, func(c *Config) { c.Policy = pol })
	reader := tool("reader")
	reader.ReadOnly = true
	reader.CapabilityRequired = []Capability{{Kind: "ReadSpace", Arg: "docs"}}
	se.register(t, "p", reader, HandlerFunc(func(context.Context, json.RawMessage, *Call) (json.RawMessage, error) {
		se.runs.Add(1)
		return json.RawMessage(`{"secret":1}`), nil
	}))
	req := Request{Tool: "reader", Params: []byte(`{}`), Caller: "alice"}
	if _, err := se.m.Speculate(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	pol.held.Store(false)
	res, err := se.m.Call(context.Background(), req)
	var denied *ToolCapabilityDenied
	if !errors.As(err, &denied) || res.SpeculativeHit || len(res.Output) != 0 {
		t.Fatalf("revoked capability: err %v, hit %v, output %s", err, res.SpeculativeHit, res.Output)
	}
	if st := se.m.SpeculationStats(); st.Hits != 0 {
		t.Fatalf("stats %+v", st)
	}
	// And a speculation the caller may not make fails as the call would.
	if _, err := se.m.Speculate(context.Background(), Request{Tool: "reader", Params: []byte(`{"x":1}`), Caller: "alice"}); !errors.As(err, &denied) {
		t.Fatalf("speculation without the capability: %v", err)
	}
	if se.runs.Load() != 1 {
		t.Fatalf("handler runs %d, want 1", se.runs.Load())
	}
}

// Nobody is served another caller's speculation.
func TestSpeculationKeyedByCaller(t *testing.T) {
	se := newSpecEnv(t, nil)
	se.speculate(t, "alice", `{"path":"a"}`)
	if res, _ := se.real("bob", `{"path":"a"}`); res.SpeculativeHit || se.runs.Load() != 2 {
		t.Fatalf("bob served alice's speculation (runs %d)", se.runs.Load())
	}
	if res, _ := se.real("alice", `{"path":"a"}`); !res.SpeculativeHit {
		t.Fatal("alice not served her own")
	}
}

// A result past its TTL is discarded, counted as wasted work.
func TestSpeculationExpires(t *testing.T) {
	se := newSpecEnv(t, func(c *Config) { c.Speculation.TTL = 5 * time.Second })
	se.speculate(t, "alice", `{"path":"a"}`)
	se.clock.Advance(5 * time.Second)
	if res, _ := se.real("alice", `{"path":"a"}`); res.SpeculativeHit || se.runs.Load() != 2 {
		t.Fatalf("served an expired speculation (runs %d)", se.runs.Load())
	}
	se.speculate(t, "alice", `{"path":"b"}`)
	se.clock.Advance(4 * time.Second)
	if res, _ := se.real("alice", `{"path":"b"}`); !res.SpeculativeHit {
		t.Fatal("a result within its TTL was not served")
	}
	if st := se.m.SpeculationStats(); st.Discards != 1 || st.Hits != 1 || st.Wasted <= 0 || st.Saved <= 0 {
		t.Fatalf("stats %+v", st)
	}
}

// Any call of a tool that is not read-only invalidates every cached
// result, including one whose speculation ran while the write was in
// flight.
func TestSpeculationInvalidatedByWrites(t *testing.T) {
	se := newSpecEnv(t, nil)
	release := make(chan struct{})
	started := make(chan struct{}, 1)
	se.register(t, "p", tool("write"), HandlerFunc(func(ctx context.Context, _ json.RawMessage, _ *Call) (json.RawMessage, error) {
		select {
		case started <- struct{}{}:
		default:
		}
		select {
		case <-release:
		case <-ctx.Done():
		}
		return json.RawMessage(`{}`), nil
	}))
	close(release)
	se.speculate(t, "alice", `{"path":"a"}`)
	if _, err := se.m.Call(context.Background(), Request{Tool: "write", Params: []byte(`{}`), Caller: "bob"}); err != nil {
		t.Fatal(err)
	}
	if res, _ := se.real("alice", `{"path":"a"}`); res.SpeculativeHit {
		t.Fatal("served a speculation made before a write")
	}
	<-started

	// A write in flight while the speculation runs: its end invalidates;
	// and one made before the write is not served while it runs.
	se.speculate(t, "alice", `{"path":"e"}`)
	release = make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		se.m.Call(context.Background(), Request{Tool: "write", Params: []byte(`{}`), Caller: "bob"})
	}()
	<-started
	if res, _ := se.real("alice", `{"path":"e"}`); res.SpeculativeHit {
		t.Fatal("served a speculation from before a write in flight")
	}
	se.speculate(t, "alice", `{"path":"c"}`)
	close(release)
	<-done
	if res, _ := se.real("alice", `{"path":"c"}`); res.SpeculativeHit {
		t.Fatal("served a speculation that overlapped a write")
	}
	// Reads do not invalidate.
	se.speculate(t, "alice", `{"path":"d"}`)
	se.real("bob", `{"path":"x"}`)
	if res, _ := se.real("alice", `{"path":"d"}`); !res.SpeculativeHit {
		t.Fatal("a read invalidated the cache")
	}
}

// The budget: off, per minute per caller, concurrent speculations, idle
// bound on real calls in flight, one speculation of a call at a time.
func TestSpeculationBudget(t *testing.T) {
	off := newEnv(t, nil)
	look := tool("look")
	look.ReadOnly = true
	off.register(t, "p", look, echo)
	if _, err := off.m.Speculate(context.Background(), Request{Tool: "look", Caller: "alice"}); !errors.Is(err, ErrSpeculationBudget) {
		t.Fatalf("disabled: %v", err)
	}
	if res, _ := off.m.Call(context.Background(), Request{Tool: "look", Caller: "alice"}); res.SpeculativeHit {
		t.Fatal("disabled, yet a hit")
	}

	se := newSpecEnv(t, func(c *Config) { c.Speculation.PerMinute = 2 })
	se.speculate(t, "alice", `{"n":1}`)
	if _, err := se.m.Speculate(context.Background(), Request{Tool: "look", Params: []byte(`{"n":1}`), Caller: "alice"}); !errors.Is(err, ErrSpeculationBudget) {
		t.Fatalf("a cached call speculated again: %v", err)
	}
	se.speculate(t, "alice", `{"n":2}`)
	if _, err := se.m.Speculate(context.Background(), Request{Tool: "look", Params: []byte(`{"n":3}`), Caller: "alice"}); !errors.Is(err, ErrSpeculationBudget) {
		t.Fatalf("third in a minute: %v", err)
	}
	se.speculate(t, "bob", `{"n":3}`) // per caller
	se.clock.Advance(time.Minute)
	se.speculate(t, "alice", `{"n":3}`)

	// MaxInflight and IdleBelow, with handlers that block.
	gate := make(chan struct{})
	in := make(chan struct{}, 8)
	b := newEnv(t, func(c *Config) { c.Speculation = SpeculationConfig{Enabled: true, MaxInflight: 1, IdleBelow: 1} })
	slow := tool("slow")
	slow.ReadOnly = true
	slow.Parameters = objSchema(`{"n":{"type":"integer"}}`)
	b.register(t, "p", slow, HandlerFunc(func(ctx context.Context, p json.RawMessage, _ *Call) (json.RawMessage, error) {
		in <- struct{}{}
		select {
		case <-gate:
		case <-ctx.Done():
		}
		return p, nil
	}))
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		b.m.Speculate(context.Background(), Request{Tool: "slow", Params: []byte(`{"n":1}`), Caller: "alice"})
	}()
	<-in
	if _, err := b.m.Speculate(context.Background(), Request{Tool: "slow", Params: []byte(`{"n":2}`), Caller: "bob"}); !errors.Is(err, ErrSpeculationBudget) {
		t.Fatalf("over MaxInflight: %v", err)
	}
	close(gate)
	wg.Wait()
	gate = make(chan struct{})
	wg.Add(1)
	go func() { // a real call in flight: not idle
		defer wg.Done()
		b.m.Call(context.Background(), Request{Tool: "slow", Params: []byte(`{"n":9}`), Caller: "carol"})
	}()
	<-in
	if _, err := b.m.Speculate(context.Background(), Request{Tool: "slow", Params: []byte(`{"n":3}`), Caller: "bob"}); !errors.Is(err, ErrSpeculationBudget) {
		t.Fatalf("with a real call in flight: %v", err)
	}
	close(gate)
	wg.Wait()
	if _, err := b.m.Speculate(context.Background(), Request{Tool: "slow", Params: []byte(`{"n":3}`), Caller: "bob"}); err != nil {
		t.Fatalf("idle again: %v", err)
	}
}

// A speculative call takes no rate-limit token and asks no intent gate
// or verifier; the real call it answers does both.
func TestSpeculationIsNotTheCallersCall(t *testing.T) {
	var gated, verified atomic.Int64
	se := newSpecEnv(t, func(c *Config) {
		c.RateLimit = RateLimit{PerSecond: 0.001, Burst: 1}
		c.Gate = gateFunc(func(context.Context, IntentCheck) (IntentDecision, error) {
			gated.Add(1)
			return IntentDecision{}, nil
		})
		c.Intent = IntentVerifierFunc(func(context.Context, IntentCheck) error { verified.Add(1); return nil })
	})
	se.speculate(t, "alice", `{"n":1}`)
	se.clock.Advance(time.Second)
	se.speculate(t, "alice", `{"n":2}`)
	if gated.Load() != 0 {
		t.Fatalf("the gate was asked about speculative calls: %d", gated.Load())
	}
	res, err := se.real("alice", `{"n":1}`)
	if err != nil || !res.SpeculativeHit {
		t.Fatalf("real call after speculations: %v hit %v (did speculation take its token?)", err, res.SpeculativeHit)
	}
	if gated.Load() != 1 {
		t.Fatalf("the real call was not gated: %d", gated.Load())
	}
	deadline := time.Now().Add(2 * time.Second)
	for verified.Load() != 1 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if verified.Load() != 1 {
		t.Fatalf("intent checks: %d, want 1 (the real call's)", verified.Load())
	}
}

// The counters reach /metrics when speculation is on, and only then.
func TestSpeculationPrometheus(t *testing.T) {
	se := newSpecEnv(t, nil)
	se.speculate(t, "alice", `{"n":1}`)
	se.real("alice", `{"n":1}`)
	var b strings.Builder
	if err := se.m.WriteSpeculationPrometheus(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`airs_speculation_total{result="started"} 1`, `airs_speculation_total{result="hit"} 1`,
		`airs_speculation_total{result="discarded"} 0`, `airs_speculation_handler_seconds_total{kind="saved"} `} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("missing %q in\n%s", want, b.String())
		}
	}
	off := newEnv(t, nil)
	b.Reset()
	off.m.WriteSpeculationPrometheus(&b)
	if b.Len() != 0 {
		t.Fatalf("speculation off, yet metrics: %s", b.String())
	}
}

// failingAudit refuses every record.
type failingAudit struct{}

func (failingAudit) Append(*audit.Record) error { return errors.New("disk full") }

// A speculation whose audit record is not durable is not cached: nothing
// is served that the log does not show.
func TestSpeculationNeedsItsAuditRecord(t *testing.T) {
	se := newSpecEnv(t, func(c *Config) { c.Audit = failingAudit{} })
	if _, err := se.m.Speculate(context.Background(), Request{Tool: "look", Params: []byte(`{}`), Caller: "alice"}); err == nil {
		t.Fatal("speculation with no durable audit record succeeded")
	}
	if st := se.m.SpeculationStats(); st.Stored != 0 || st.Failed != 1 {
		t.Fatalf("stats %+v", st)
	}
}
