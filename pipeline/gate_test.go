package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"sync/atomic"
	"testing"
	"time"
)

// gateFunc adapts a function to IntentGate.
type gateFunc func(ctx context.Context, c IntentCheck) (IntentDecision, error)

func (f gateFunc) Gate(ctx context.Context, c IntentCheck) (IntentDecision, error) { return f(ctx, c) }

// The intent gate runs after every other check (a call that would fail
// anyway never reaches a person), sees the params the handler will see,
// holds or refuses a call without running it, and its decision is in the
// call's audit record whatever the outcome.
func TestIntentGate(t *testing.T) {
	var asked atomic.Int32
	seen := map[string]IntentCheck{}
	verdict := map[string]func(IntentCheck) (IntentDecision, error){
		"hold": func(c IntentCheck) (IntentDecision, error) {
			return IntentDecision{Decision: IntentRequired, Review: "cf-1"}, &IntentVerificationRequired{ID: "cf-1", Caller: c.Caller, Tool: c.Tool.Name}
		},
		"deny": func(IntentCheck) (IntentDecision, error) {
			return IntentDecision{Decision: IntentDenied, Review: "cf-2", Reviewer: "bob"}, &IntentMisaligned{Reason: "denied by bob"}
		},
		"allow": func(IntentCheck) (IntentDecision, error) {
			return IntentDecision{Decision: IntentApproved, Review: "cf-3", Reviewer: "bob"}, nil
		},
		"plain": func(IntentCheck) (IntentDecision, error) { return IntentDecision{}, nil },
		"oops":  func(IntentCheck) (IntentDecision, error) { return IntentDecision{}, errors.New("store unreadable") },
	}
	e := newEnv(t, func(c *Config) {
		c.Policy = &StaticPolicy{Channels: map[string][]string{"*": {"*"}},
			Capabilities: map[string][]Capability{"alice": {{Kind: "Write", Arg: "x"}}}}
		c.Gate = gateFunc(func(_ context.Context, c IntentCheck) (IntentDecision, error) {
			asked.Add(1)
			seen[c.Tool.Name] = c
			return verdict[c.Tool.Name](c)
		})
	})
	var ran atomic.Int32
	h := HandlerFunc(func(_ context.Context, p json.RawMessage, _ *Call) (json.RawMessage, error) {
		ran.Add(1)
		return json.RawMessage(`{}`), nil
	})
	for name := range verdict {
		tl := tool(name)
		tl.Destructive = true
		tl.Lenient = true
		tl.Parameters = objSchema(`{"n":{"type":"integer","default":7}}`)
		tl.CapabilityRequired = []Capability{{Kind: "Write", Arg: "x"}}
		e.register(t, "p", tl, h)
	}
	needy := tool("needy")
	needy.CapabilityRequired = []Capability{{Kind: "Write", Arg: "y"}}
	e.register(t, "p", needy, h)

	for _, tc := range []struct {
		tool, params string
		err          error
		ran          bool
		intent       string
	}{
		{"hold", `{}`, ErrIntentVerificationRequired, false, IntentRequired},
		{"deny", `{}`, ErrIntentMisaligned, false, IntentDenied},
		{"allow", `{"n":null}`, nil, true, IntentApproved},
		{"plain", `{}`, nil, true, ""},
		{"oops", `{}`, ErrIntentMisaligned, false, ""},
	} {
		before := ran.Load()
		res, err := e.call(tc.tool, tc.params)
		if !errors.Is(err, tc.err) || (err == nil) != (tc.err == nil) {
			t.Errorf("%s: err %v, want %v", tc.tool, err, tc.err)
		}
		if got := ran.Load() > before; got != tc.ran {
			t.Errorf("%s: handler ran %v, want %v", tc.tool, got, tc.ran)
		}
		rec := e.audit.last()
		if rec.CallID != res.CallID || rec.Intent != tc.intent {
			t.Errorf("%s: audit intent %q review %q, want %q", tc.tool, rec.Intent, rec.Review, tc.intent)
		}
		if tc.tool == "deny" && (rec.Review != "cf-2" || rec.Reviewer != "bob" || rec.Error != KindIntentMisaligned) {
			t.Errorf("deny: audit %+v", rec)
		}
	}
	if s := seen["allow"]; string(s.Params) != `{"n":7}` || s.Caller != "alice" || s.Provider != "p" {
		t.Errorf("the gate saw %s from %s/%s, want the params with the lenient defaults applied", s.Params, s.Caller, s.Provider)
	}

	// Calls that fail an earlier check never reach the gate.
	n := asked.Load()
	if _, err := e.call("hold", `{"n":"x"}`); !errors.Is(err, ErrSchemaValidationFailed) {
		t.Errorf("bad params: %v", err)
	}
	if _, err := e.call("needy", `{}`); !errors.Is(err, ErrToolCapabilityDenied) {
		t.Errorf("missing capability: %v", err)
	}
	if asked.Load() != n {
		t.Errorf("the gate was asked about %d calls that failed earlier checks", asked.Load()-n)
	}
}

// A person's thinking time at the gate is not the call's: a tool with a
// short budget, asked about by a gate whose person answers only after that
// budget would have run out, still runs and succeeds, its latency without
// the wait; the gate's question gets a context the budget does not end.
func TestPersonWaitIsOutsideTheBudget(t *testing.T) {
	const budget = 100 * time.Millisecond
	var waited time.Duration
	e := newEnv(t, func(c *Config) {
		c.Gate = gateFunc(func(ctx context.Context, c IntentCheck) (IntentDecision, error) {
			c.Person.Await(ctx, func(ctx context.Context) {
				t0 := time.Now()
				select { // the person answers once the budget would have run out
				case <-time.After(budget):
				case <-ctx.Done():
					t.Errorf("the question's context ended: %v", ctx.Err())
				}
				waited = time.Since(t0)
			})
			return IntentDecision{Decision: IntentApproved, Review: "cf-1", Reviewer: "bob"}, nil
		})
	})
	ran := false
	tl := tool("wipe")
	tl.Destructive = true
	e.register(t, "p", tl, HandlerFunc(func(ctx context.Context, _ json.RawMessage, _ *Call) (json.RawMessage, error) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		ran = true
		return json.RawMessage(`{}`), nil
	}))
	res, err := e.m.Call(context.Background(), Request{Tool: "wipe", Params: []byte(`{}`), Caller: "alice", Timeout: budget})
	if err != nil || !ran || res.Outcome != OutcomeOK {
		t.Fatalf("a call approved after its budget would have run out: %v (ran %v)", err, ran)
	}
	if res.Latency >= waited {
		t.Errorf("latency %v counts the person's %v", res.Latency, waited)
	}
	if rec := e.audit.last(); rec.Intent != IntentApproved || rec.Reviewer != "bob" || time.Duration(rec.LatencyNs) >= waited {
		t.Errorf("audit: %+v", rec)
	}
}

// Manager.Cancel reaches a question a person has not answered yet.
func TestCancelReachesThePersonsQuestion(t *testing.T) {
	asking := make(chan struct{})
	e := newEnv(t, func(c *Config) {
		c.Gate = gateFunc(func(ctx context.Context, c IntentCheck) (IntentDecision, error) {
			var ended error
			c.Person.Await(ctx, func(ctx context.Context) {
				close(asking)
				<-ctx.Done()
				ended = ctx.Err()
			})
			return IntentDecision{Decision: IntentRequired, Review: "cf-1"}, &IntentVerificationRequired{ID: "cf-1", Caller: c.Caller, Tool: c.Tool.Name, Reason: ended.Error()}
		})
	})
	tl := tool("wipe")
	tl.Destructive = true
	e.register(t, "p", tl, echo)
	go func() {
		<-asking
		e.m.Cancel("c-1")
	}()
	_, err := e.m.Call(context.Background(), Request{CallID: "c-1", Tool: "wipe", Params: []byte(`{}`), Caller: "alice"})
	if !errors.Is(err, ErrCancelled) {
		t.Fatalf("cancelled while the person was asked: %v", err)
	}
}
