package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// kindCase provokes one error kind through a real Manager.
type kindCase struct {
	kind     string
	sentinel error
	outcome  Outcome
	run      func(t *testing.T) (*Result, error, *env)
	check    func(t *testing.T, err error) // errors.As and the details
}

func kindCases() []kindCase {
	return []kindCase{
		{KindToolNotFound, ErrToolNotFound, OutcomeError, func(t *testing.T) (*Result, error, *env) {
			e := newEnv(t, nil)
			r, err := e.call("nope", `{}`)
			return r, err, e
		}, func(t *testing.T, err error) {
			var x *ToolNotFound
			if !errors.As(err, &x) || x.Tool != "nope" {
				t.Fatalf("%v", err)
			}
		}},
		{KindToolDeprecated, ErrToolDeprecated, OutcomeError, func(t *testing.T) (*Result, error, *env) {
			e := newEnv(t, nil)
			tl := tool("old")
			tl.Deprecation = &Deprecation{Sunset: e.clock.Now().Add(-time.Hour), Replacement: "new"}
			e.register(t, "p", tl, echo)
			r, err := e.call("old", `{}`)
			return r, err, e
		}, func(t *testing.T, err error) {
			var x *ToolDeprecated
			if !errors.As(err, &x) || x.Replacement != "new" || !strings.Contains(err.Error(), "use new") {
				t.Fatalf("%v", err)
			}
		}},
		{KindChannelCapabilityDenied, ErrChannelCapabilityDenied, OutcomeError, func(t *testing.T) (*Result, error, *env) {
			e := newEnv(t, func(c *Config) {
				c.Policy = &StaticPolicy{Channels: map[string][]string{"alice": {"other"}}}
			})
			e.register(t, "p", tool("t"), echo)
			r, err := e.call("t", `{}`)
			return r, err, e
		}, func(t *testing.T, err error) {
			var x *ChannelCapabilityDenied
			if !errors.As(err, &x) || x.Caller != "alice" || x.Provider != "p" {
				t.Fatalf("%v", err)
			}
		}},
		{KindIntentMisaligned, ErrIntentMisaligned, OutcomeError, func(t *testing.T) (*Result, error, *env) {
			e := newEnv(t, func(c *Config) {
				c.Intent = IntentVerifierFunc(func(ctx context.Context, c IntentCheck) error {
					return fmt.Errorf("user asked to read, not delete")
				})
			})
			tl := tool("delete")
			tl.Idempotent = false
			tl.Destructive = true
			e.register(t, "p", tl, echo)
			r, err := e.call("delete", `{}`)
			return r, err, e
		}, func(t *testing.T, err error) {
			var x *IntentMisaligned
			if !errors.As(err, &x) || x.Reason != "user asked to read, not delete" {
				t.Fatalf("%v", err)
			}
		}},
		{KindToolCapabilityDenied, ErrToolCapabilityDenied, OutcomeError, func(t *testing.T) (*Result, error, *env) {
			e := newEnv(t, func(c *Config) {
				c.Policy = &StaticPolicy{Channels: map[string][]string{"*": {"*"}},
					Capabilities: map[string][]Capability{"alice": {{Kind: "ReadSpace", Arg: "documents"}}}}
			})
			tl := tool("mail")
			tl.CapabilityRequired = []Capability{{Kind: "ReadSpace", Arg: "documents"}, {Kind: "Network", Arg: "smtp.example.org"}}
			e.register(t, "p", tl, echo)
			r, err := e.call("mail", `{}`)
			return r, err, e
		}, func(t *testing.T, err error) {
			var x *ToolCapabilityDenied
			if !errors.As(err, &x) || len(x.Required) != 1 || x.Required[0].String() != "Network(smtp.example.org)" {
				t.Fatalf("%v", err)
			}
		}},
		{KindSchemaValidationFailed, ErrSchemaValidationFailed, OutcomeError, func(t *testing.T) (*Result, error, *env) {
			e := newEnv(t, nil)
			tl := tool("s")
			tl.Parameters = objSchema(`{"n":{"type":"integer","minimum":1},"tags":{"type":"array","items":{"type":"string"}}}`, "name")
			e.register(t, "p", tl, echo)
			r, err := e.call("s", `{"n":0,"tags":["a",2]}`)
			return r, err, e
		}, func(t *testing.T, err error) {
			var x *SchemaValidationFailed
			if !errors.As(err, &x) {
				t.Fatalf("%v", err)
			}
			ptrs := map[string]bool{}
			for _, fe := range x.Errors {
				ptrs[fe.Pointer] = true
				if fe.Message == "" {
					t.Errorf("empty message at %q", fe.Pointer)
				}
			}
			// every error, each with its pointer: missing "name" at the root,
			// n below minimum, tags/1 not a string.
			for _, p := range []string{"", "/n", "/tags/1"} {
				if !ptrs[p] {
					t.Errorf("no error at %q in %+v", p, x.Errors)
				}
			}
		}},
		{KindPayloadTooLarge, ErrPayloadTooLarge, OutcomeError, func(t *testing.T) (*Result, error, *env) {
			e := newEnv(t, func(c *Config) { c.MaxPayload = 16 })
			e.register(t, "p", tool("t"), echo)
			r, err := e.call("t", `{"x":"0123456789abcdef"}`)
			return r, err, e
		}, func(t *testing.T, err error) {
			var x *PayloadTooLarge
			if !errors.As(err, &x) || x.Max != 16 || x.Actual != 24 {
				t.Fatalf("%v", err)
			}
		}},
		{KindTimeout, ErrTimeout, OutcomeTimeout, func(t *testing.T) (*Result, error, *env) {
			e := newEnv(t, nil)
			e.register(t, "p", tool("slow"), HandlerFunc(func(ctx context.Context, _ json.RawMessage, _ *Call) (json.RawMessage, error) {
				<-ctx.Done()
				return nil, ctx.Err()
			}))
			r, err := e.m.Call(context.Background(), Request{Tool: "slow", Caller: "alice", Timeout: 20 * time.Millisecond})
			return r, err, e
		}, func(t *testing.T, err error) {
			var x *Timeout
			if !errors.As(err, &x) || x.Budget != 20*time.Millisecond {
				t.Fatalf("%v", err)
			}
		}},
		{KindProviderUnavailable, ErrProviderUnavailable, OutcomeError, func(t *testing.T) (*Result, error, *env) {
			e := newEnv(t, nil)
			e.register(t, "gone", tool("t"), echo)
			e.reg.SetLiveness("gone", func() bool { return false })
			r, err := e.call("t", `{}`)
			return r, err, e
		}, func(t *testing.T, err error) {
			var x *ProviderUnavailable
			if !errors.As(err, &x) || x.Reason != ReasonProviderDead || x.Provider != "gone" {
				t.Fatalf("%v", err)
			}
		}},
		{KindProviderCrashed, ErrProviderCrashed, OutcomeError, func(t *testing.T) (*Result, error, *env) {
			e := newEnv(t, nil)
			e.register(t, "p", tool("boom"), HandlerFunc(func(context.Context, json.RawMessage, *Call) (json.RawMessage, error) {
				var m map[string]int
				m["x"] = 1 // nil map write: a real runtime panic
				return nil, nil
			}))
			r, err := e.call("boom", `{}`)
			return r, err, e
		}, func(t *testing.T, err error) {
			var x *ProviderCrashed
			if !errors.As(err, &x) || !strings.Contains(x.Panic, "nil map") || len(x.Stack) == 0 {
				t.Fatalf("%v", err)
			}
		}},
		{KindProviderRejected, ErrProviderRejected, OutcomeError, func(t *testing.T) (*Result, error, *env) {
			e := newEnv(t, nil)
			e.register(t, "p", tool("read"), HandlerFunc(func(context.Context, json.RawMessage, *Call) (json.RawMessage, error) {
				return nil, Reject("not_found", "no such file: a.txt")
			}))
			r, err := e.call("read", `{}`)
			return r, err, e
		}, func(t *testing.T, err error) {
			var x *ProviderRejected
			if !errors.As(err, &x) || x.Code != "not_found" || x.Message != "no such file: a.txt" {
				t.Fatalf("%v", err)
			}
		}},
		{KindRateLimited, ErrRateLimited, OutcomeError, func(t *testing.T) (*Result, error, *env) {
			e := newEnv(t, func(c *Config) { c.RateLimit = RateLimit{PerSecond: 2, Burst: 1} })
			e.register(t, "p", tool("t"), echo)
			if _, err := e.call("t", `{}`); err != nil {
				t.Fatal(err)
			}
			r, err := e.call("t", `{}`)
			return r, err, e
		}, func(t *testing.T, err error) {
			var x *RateLimited
			if !errors.As(err, &x) || x.RetryAfterMs != 500 {
				t.Fatalf("want retry after 500ms at 2/s: %v", err)
			}
		}},
		{KindCancelled, ErrCancelled, OutcomeCancelled, func(t *testing.T) (*Result, error, *env) {
			e := newEnv(t, nil)
			started := make(chan struct{})
			e.register(t, "p", tool("stream"), HandlerFunc(func(ctx context.Context, _ json.RawMessage, _ *Call) (json.RawMessage, error) {
				close(started)
				<-ctx.Done()
				return json.RawMessage(`{"partial":[1,2]}`), ctx.Err()
			}))
			go func() {
				<-started
				if !e.m.Cancel("c-1") {
					t.Error("Cancel did not find the call")
				}
			}()
			r, err := e.m.Call(context.Background(), Request{CallID: "c-1", Tool: "stream", Caller: "alice"})
			if string(r.Output) != `{"partial":[1,2]}` {
				t.Errorf("partial output not delivered: %q", r.Output)
			}
			return r, err, e
		}, func(t *testing.T, err error) {
			var x *Cancelled
			if !errors.As(err, &x) || x.CallID != "c-1" {
				t.Fatalf("%v", err)
			}
		}},
		{KindIntentVerificationRequired, ErrIntentVerificationRequired, OutcomeError, func(t *testing.T) (*Result, error, *env) {
			e := newEnv(t, func(c *Config) {
				c.Gate = gateFunc(func(_ context.Context, c IntentCheck) (IntentDecision, error) {
					return IntentDecision{Decision: IntentRequired, Review: "cf-9"},
						&IntentVerificationRequired{ID: "cf-9", Caller: c.Caller, Tool: c.Tool.Name}
				})
			})
			tl := tool("erase")
			tl.Destructive = true
			e.register(t, "p", tl, echo)
			r, err := e.call("erase", `{}`)
			return r, err, e
		}, func(t *testing.T, err error) {
			var x *IntentVerificationRequired
			if !errors.As(err, &x) || x.ID != "cf-9" || x.Caller != "alice" || x.Tool != "erase" {
				t.Fatalf("%v", err)
			}
		}},
		{KindWouldTimeout, ErrWouldTimeout, OutcomeError, func(t *testing.T) (*Result, error, *env) {
			e := newEnv(t, func(c *Config) { c.Latency = LatencyConfig{MinSamples: 8, WouldTimeoutMinSamples: 8} })
			var ran atomic.Int64
			e.register(t, "p", tool("slow"), HandlerFunc(func(context.Context, json.RawMessage, *Call) (json.RawMessage, error) {
				ran.Add(1)
				return json.RawMessage(`{}`), nil
			}))
			// A history of 60 ms calls, far above the 10 ms budget below.
			ent := e.reg.candidates("slow", "")[0]
			for range 32 {
				trainHistory(e, ent, 0, 60*time.Millisecond)
			}
			e.m.lat.models["slow"].model.Refit()
			before := ran.Load()
			r, err := e.m.Call(context.Background(), Request{Tool: "slow", Params: []byte(`{}`), Caller: "alice", Timeout: 10 * time.Millisecond})
			if ran.Load() != before {
				t.Error("the handler ran: WouldTimeout must answer before dispatch")
			}
			return r, err, e
		}, func(t *testing.T, err error) {
			var x *WouldTimeout
			if !errors.As(err, &x) || x.Tool != "slow" || x.Provider != "p" || x.Predicted < 30*time.Millisecond ||
				x.AtLeast > x.Predicted || x.AtLeast <= x.Remaining || x.Budget != 10*time.Millisecond {
				t.Fatalf("%+v", err)
			}
		}},
		{KindAlreadyClaimed, ErrAlreadyClaimed, OutcomeError, func(t *testing.T) (*Result, error, *env) {
			claims := NewMemoryClaims()
			e := newEnv(t, func(c *Config) { c.Claims = claims })
			var ran atomic.Int64
			tl := tool("pay")
			tl.Idempotent = false
			e.register(t, "p", tl, HandlerFunc(func(context.Context, json.RawMessage, *Call) (json.RawMessage, error) {
				ran.Add(1)
				return json.RawMessage(`{}`), nil
			}))
			// An earlier attempt claimed c-7 and has not finished (its
			// replica died mid-call, say).
			if earlier, err := claims.Claim(context.Background(), "c-7", "alice", "pay"); earlier != nil || err != nil {
				t.Fatal(earlier, err)
			}
			r, err := e.m.Call(context.Background(), Request{CallID: "c-7", Tool: "pay", Params: []byte(`{}`), Caller: "alice"})
			if ran.Load() != 0 {
				t.Errorf("the handler ran %d times for a claimed call id, want 0", ran.Load())
			}
			return r, err, e
		}, func(t *testing.T, err error) {
			var x *AlreadyClaimed
			if !errors.As(err, &x) || x.CallID != "c-7" || x.Tool != "pay" || x.RetryAfterMs < 1000 {
				t.Fatalf("%+v", err)
			}
		}},
	}
}

// TestErrorKinds provokes each of the 16 kinds through the real pipeline and
// checks errors.Is/As, Kind, the outcome, the audit record, ExitCode and Hint.
func TestErrorKinds(t *testing.T) {
	cases := kindCases()
	if len(cases) != 16 || len(Kinds()) != 16 {
		t.Fatalf("want 16 kinds, have %d cases and %d kinds", len(cases), len(Kinds()))
	}
	codes := map[int]string{}
	for i, c := range cases {
		if Kinds()[i] != c.kind {
			t.Fatalf("case %d is %s, Kinds() says %s", i, c.kind, Kinds()[i])
		}
		t.Run(c.kind, func(t *testing.T) {
			res, err, e := c.run(t)
			if err == nil {
				t.Fatal("no error")
			}
			if !errors.Is(err, c.sentinel) {
				t.Fatalf("errors.Is(%v, %v) = false", err, c.sentinel)
			}
			for _, other := range cases {
				if other.kind != c.kind && errors.Is(err, other.sentinel) {
					t.Errorf("%v also matches %s", err, other.kind)
				}
			}
			c.check(t, err)
			if KindOf(err) != c.kind || res.ErrorKind != c.kind || res.Outcome != c.outcome {
				t.Errorf("KindOf=%s result kind=%s outcome=%s", KindOf(err), res.ErrorKind, res.Outcome)
			}
			if rec := e.audit.last(); rec.Error != c.kind || rec.Outcome != string(c.outcome) || rec.CallID != res.CallID {
				t.Errorf("audit record %+v", rec)
			}
			code := ExitCode(err)
			if code < 10 || code > 25 || codes[code] != "" {
				t.Errorf("exit code %d (taken by %q)", code, codes[code])
			}
			codes[code] = c.kind
			if h := Hint(err); h == "" || strings.Contains(h, "\n") {
				t.Errorf("hint %q", h)
			}
			if ExitCode(fmt.Errorf("wrapped: %w", err)) != code {
				t.Error("ExitCode must see through wrapping")
			}
		})
	}
	if ExitCode(nil) != 0 || ExitCode(errors.New("disk on fire")) != 1 || Hint(nil) != "" {
		t.Error("ExitCode/Hint of nil or a foreign error")
	}
}

func TestProviderUnavailableCircuitOpen(t *testing.T) {
	e := newEnv(t, func(c *Config) {
		c.Breaker = BreakerConfig{Failures: 2, Window: time.Minute, Cooldown: 10 * time.Second}
	})
	e.register(t, "p", tool("flaky"), HandlerFunc(func(context.Context, json.RawMessage, *Call) (json.RawMessage, error) {
		panic("flaky")
	}))
	for range 2 {
		if _, err := e.call("flaky", `{}`); !errors.Is(err, ErrProviderCrashed) {
			t.Fatal(err)
		}
	}
	_, err := e.call("flaky", `{}`)
	var pu *ProviderUnavailable
	if !errors.As(err, &pu) || pu.Reason != ReasonCircuitOpen || pu.RetryAfter != 10*time.Second {
		t.Fatalf("want circuit open, got %v", err)
	}
}
