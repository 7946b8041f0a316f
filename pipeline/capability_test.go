package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"sync/atomic"
	"testing"
	"time"
)

func TestParseCapability(t *testing.T) {
	for in, want := range map[string]Capability{
		"ReadSpace(documents)": {Kind: "ReadSpace", Arg: "documents"},
		" Network( * ) ":       {Kind: "Network", Arg: "*"},
		"Shell":                {Kind: "Shell"},
	} {
		got, err := ParseCapability(in)
		if err != nil || got != want {
			t.Errorf("%q: %+v %v", in, got, err)
		}
	}
	for _, bad := range []string{"", "(x)", "Net(x", "Net)"} {
		if _, err := ParseCapability(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	var c []Capability
	if err := json.Unmarshal([]byte(`["Network(a.b)", {"kind":"ReadSpace","arg":"docs"}]`), &c); err != nil || c[0].Arg != "a.b" || c[1].Kind != "ReadSpace" {
		t.Fatalf("%+v %v", c, err)
	}
}

// TestCapabilityCovers documents the matching rules.
func TestCapabilityCovers(t *testing.T) {
	cap := func(s string) Capability { c, _ := ParseCapability(s); return c }
	for _, tc := range []struct {
		held, req string
		want      bool
	}{
		{"Network(smtp.example.org)", "Network(smtp.example.org)", true},
		{"Network(SMTP.example.org)", "Network(smtp.example.org)", true}, // host names are case-insensitive
		{"Network(*)", "Network(smtp.example.org)", true},                // wildcard: any host
		{"Network(*)", "Network(*)", true},
		{"Network(smtp.example.org)", "Network(*)", false}, // one host never grants all
		{"Network(*.example.org)", "Network(smtp.example.org)", true},
		{"Network(*.example.org)", "Network(a.b.example.org)", true},
		{"Network(*.example.org)", "Network(example.org)", false},
		{"Network(*.example.org)", "Network(badexample.org)", false},
		{"Network(*)", "ReadSpace(documents)", false}, // kinds must match
		{"ReadSpace(*)", "ReadSpace(documents)", true},
		{"ReadSpace(Documents)", "ReadSpace(documents)", false}, // only Network folds case
		{"ReadSpace(documents)", "ReadSpace(photos)", false},
	} {
		if got := cap(tc.held).Covers(cap(tc.req)); got != tc.want {
			t.Errorf("%s covers %s = %v, want %v", tc.held, tc.req, got, tc.want)
		}
	}
}

// Level 1: the caller may reach the provider (channel access).
func TestCapabilityLevel1Channel(t *testing.T) {
	pol := &StaticPolicy{Channels: map[string][]string{"alice": {"local"}, "*": {"public"}}}
	e := newEnv(t, func(c *Config) { c.Policy = pol })
	e.register(t, "local", tool("a"), echo)
	e.register(t, "public", tool("b"), echo)
	if _, err := e.call("a", `{}`); err != nil {
		t.Fatalf("alice→local: %v", err)
	}
	if _, err := e.call("b", `{}`); !errors.Is(err, ErrChannelCapabilityDenied) {
		t.Fatalf("alice→public must be denied (alice's own rule replaces *): %v", err)
	}
	_, err := e.m.Call(context.Background(), Request{Tool: "b", Caller: "bob"})
	if err != nil {
		t.Fatalf("bob→public via *: %v", err)
	}
	_, err = e.m.Call(context.Background(), Request{Tool: "a", Caller: "bob"})
	if !errors.Is(err, ErrChannelCapabilityDenied) {
		t.Fatalf("bob→local: %v", err)
	}
}

// Level 2: synchronous for destructive tools (the handler never runs),
// asynchronous for the others, a tool that is merely not idempotent
// included (the call goes ahead, the misalignment is
// counted), skipped without a verifier.
func TestCapabilityLevel2Intent(t *testing.T) {
	var checked atomic.Int32
	verifier := IntentVerifierFunc(func(ctx context.Context, c IntentCheck) error {
		checked.Add(1)
		if c.Intent != "read my notes" {
			t.Errorf("intent %q not passed", c.Intent)
		}
		return &IntentMisaligned{Reason: "not what was asked"}
	})
	e := newEnv(t, func(c *Config) { c.Intent = verifier })
	var ran atomic.Int32
	h := HandlerFunc(func(context.Context, json.RawMessage, *Call) (json.RawMessage, error) {
		ran.Add(1)
		return json.RawMessage(`{}`), nil
	})
	destructive := tool("delete")
	destructive.Idempotent = false
	destructive.Destructive = true
	e.register(t, "p", destructive, h)
	e.register(t, "p", tool("read"), h)
	appendOnly := tool("append") // not idempotent, not destructive: asynchronous
	appendOnly.Idempotent = false
	e.register(t, "p", appendOnly, h)
	call := func(name string) error {
		_, err := e.m.Call(context.Background(), Request{Tool: name, Caller: "alice", Intent: "read my notes"})
		return err
	}
	if err := call("delete"); !errors.Is(err, ErrIntentMisaligned) || ran.Load() != 0 {
		t.Fatalf("sync: err %v, handler ran %d times", err, ran.Load())
	}
	if err := call("read"); err != nil || ran.Load() != 1 {
		t.Fatalf("async: err %v, ran %d", err, ran.Load())
	}
	if err := call("append"); err != nil || ran.Load() != 2 {
		t.Fatalf("async (not idempotent, not destructive): err %v, ran %d", err, ran.Load())
	}
	deadline := time.Now().Add(5 * time.Second)
	for e.m.Metrics().IntentAsync.Misaligned != 2 {
		if time.Now().After(deadline) {
			t.Fatalf("async check not counted: %+v", e.m.Metrics().IntentAsync)
		}
		time.Sleep(time.Millisecond)
	}
	if checked.Load() != 3 {
		t.Fatalf("verifier ran %d times", checked.Load())
	}

	// No verifier: level 2 is skipped.
	e2 := newEnv(t, nil)
	e2.register(t, "p", destructive, h)
	if _, err := e2.call("delete", `{}`); err != nil {
		t.Fatal(err)
	}
}

// Level 3: the caller holds the tool's required capabilities.
func TestCapabilityLevel3Required(t *testing.T) {
	pol := &StaticPolicy{
		Channels: map[string][]string{"*": {"*"}},
		Capabilities: map[string][]Capability{
			"alice": {{Kind: "Network", Arg: "*"}},
			"*":     {{Kind: "ReadSpace", Arg: "public"}},
		},
	}
	e := newEnv(t, func(c *Config) { c.Policy = pol })
	mail := tool("mail")
	mail.CapabilityRequired = []Capability{{Kind: "Network", Arg: "smtp.example.org"}, {Kind: "ReadSpace", Arg: "public"}}
	e.register(t, "p", mail, echo)
	if _, err := e.call("mail", `{}`); err != nil {
		t.Fatalf("alice holds Network(*) and everyone ReadSpace(public): %v", err)
	}
	_, err := e.m.Call(context.Background(), Request{Tool: "mail", Caller: "bob"})
	var td *ToolCapabilityDenied
	if !errors.As(err, &td) || len(td.Required) != 1 || td.Required[0] != (Capability{Kind: "Network", Arg: "smtp.example.org"}) {
		t.Fatalf("bob: %v", err)
	}
}

// Level 1 narrows the choice before ranking: with two providers of a tool,
// a caller allowed only the lower-trust one is served by it, not refused
// because the higher-trust one ranks first; a caller who may reach neither
// is refused naming the best-ranked; a caller who may reach both gets the
// higher-trust one.
func TestRankingAmongReachableProviders(t *testing.T) {
	pol := &StaticPolicy{Channels: map[string][]string{"alice": {"*"}, "bob": {"community"}, "carol": {"elsewhere"}}}
	e := newEnv(t, func(c *Config) { c.Policy = pol })
	sys, com := tool("search"), tool("search")
	sys.Trust, com.Trust = TL3, TL0
	e.register(t, "system", sys, echo)
	e.register(t, "community", com, echo)
	call := func(caller, provider string) (*Result, error) {
		return e.m.Call(t.Context(), Request{Tool: "search", Caller: caller, Provider: provider})
	}
	if r, err := call("bob", ""); err != nil || r.Provider != "community" {
		t.Fatalf("bob (community only): %v, provider %q", err, r.Provider)
	}
	// Naming a provider one may not reach is a preference passed over, as a
	// degraded one's is.
	if r, err := call("bob", "system"); err != nil || r.Provider != "community" {
		t.Fatalf("bob preferring system: %v, provider %q", err, r.Provider)
	}
	if r, err := call("alice", ""); err != nil || r.Provider != "system" {
		t.Fatalf("alice (any): %v, provider %q", err, r.Provider)
	}
	var denied *ChannelCapabilityDenied
	if _, err := call("carol", ""); !errors.As(err, &denied) || denied.Provider != "system" || denied.Caller != "carol" {
		t.Fatalf("carol (neither): %v", err)
	}
	// The audit record names the provider the caller was refused, as it
	// did when the refusal came after ranking.
	if got := e.audit.last(); got.Provider != "system" || got.Error != KindChannelCapabilityDenied {
		t.Fatalf("audit record: provider %q, error %q", got.Provider, got.Error)
	}
}
