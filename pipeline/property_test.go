package pipeline

// The Tool Manager's safety properties as property tests, over randomised
// registries, agents, grants, spaces and requests; each fails on a seeded
// bug:
//
//  1. a call never succeeds unless the caller holds every capability the tool
//     requires (and, the other way, is never denied when it does);
//  2. a provider that panics, hangs or returns garbage never changes the
//     caller's state or another call's outcome;
//  3. random timeouts, cancellations and a concurrent Close never deadlock
//     and leave no goroutine behind.
//
// Each property is a function of the system under test (a subject), so that
// the same property also runs against variants with a seeded bug: the
// *CatchesSeededBugs tests assert that the property reports a violation for
// each, i.e. that it could fail. Run longer with -rapid.checks=2000; a failing
// case is shrunk and saved under testdata/rapid for -rapid.failfile.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airs-dev/airs/pipeline/audit"
	"go.uber.org/goleak"
	"pgregory.net/rapid"
)

// system is what a property exercises: *Manager, or a variant of it.
type system interface {
	Call(ctx context.Context, req Request) (*Result, error)
	Cancel(callID string) bool
	Close() error
}

// subject builds the system under test for one generated world.
type subject struct {
	name string
	// policy turns the generated channels and grants into the AccessPolicy.
	policy func(channels map[string][]string, grants map[string][]Capability) AccessPolicy
	// wrap turns the Manager into the system (nil: the Manager itself).
	wrap func(*Manager) system
}

var manager = subject{name: "Manager", policy: staticPolicy}

func staticPolicy(channels map[string][]string, grants map[string][]Capability) AccessPolicy {
	return &StaticPolicy{Channels: channels, Capabilities: grants}
}

// build registers nothing itself: reg is the generated registry.
func (s subject) build(t *rapid.T, reg *Registry, channels map[string][]string, grants map[string][]Capability, mod func(*Config)) system {
	cfg := Config{Registry: reg, Policy: s.policy(channels, grants)}
	if mod != nil {
		mod(&cfg)
	}
	m, err := NewManager(cfg)
	if err != nil {
		t.Fatalf("NewManager: %v", err)
	}
	if s.wrap == nil {
		return m
	}
	return s.wrap(m)
}

// violation is how the properties fail, so that the seeded-bug tests can
// tell a caught bug from a broken harness.
const violation = "PROPERTY VIOLATED: "

// ---------------------------------------------------------------------------
// Property 1: capabilities.

var (
	propSpaces = []string{"docs", "notes", "secret"}
	propHosts  = []string{"api.example.org", "API.Example.ORG", "example.org", "evil-example.org", "x.api.example.org"}
	propAgents = []string{"ann", "bob", "cyd", "*"} // "*": the rule for callers not listed, and a caller in requests
	propProvs  = []string{"p0", "p1", "p2"}
)

// requiredCap draws what a tool may require; ref is the parameter a
// "$param" capability binds to.
func requiredCap(ref string) *rapid.Generator[Capability] {
	return rapid.OneOf(
		rapid.Just(Capability{Kind: "ReadSpace", Arg: "$" + ref}),
		rapid.Map(rapid.SampledFrom(propSpaces), func(s string) Capability { return Capability{Kind: "ReadSpace", Arg: s} }),
		rapid.Map(rapid.SampledFrom(append([]string{"*"}, propHosts...)), func(h string) Capability { return Capability{Kind: "Network", Arg: h} }),
		rapid.Just(Capability{Kind: "Exec"}),
	)
}

// heldCap draws what an agent may hold, wildcards included.
var heldCap = rapid.OneOf(
	rapid.Map(rapid.SampledFrom(append([]string{"*"}, propSpaces...)), func(s string) Capability { return Capability{Kind: "ReadSpace", Arg: s} }),
	rapid.Map(rapid.SampledFrom(append([]string{"*", "*.example.org", "*.api.example.org"}, propHosts...)),
		func(h string) Capability { return Capability{Kind: "Network", Arg: h} }),
	rapid.Just(Capability{Kind: "Exec"}),
)

// nearCap draws a held capability close to a required one: the same, in
// another case, a wildcard that covers it, or one that just misses it ("*.d"
// for d itself, "*.example.org" for evil-example.org). Independent random
// grants would rarely land on these boundaries, which is where a matching
// bug lives.
func nearCap(r Capability) *rapid.Generator[Capability] {
	opts := []*rapid.Generator[Capability]{rapid.Just(r), rapid.Just(Capability{Kind: r.Kind, Arg: "*"}), heldCap}
	switch {
	case strings.HasPrefix(r.Arg, "$"):
		opts = append(opts, rapid.Map(rapid.SampledFrom(propSpaces), func(s string) Capability { return Capability{Kind: r.Kind, Arg: s} }))
	case r.Kind == "Network" && r.Arg != "*":
		lower := strings.ToLower(r.Arg)
		opts = append(opts,
			rapid.Just(Capability{Kind: "Network", Arg: strings.ToUpper(r.Arg)}),
			rapid.Just(Capability{Kind: "Network", Arg: "*." + lower}),
			rapid.Just(Capability{Kind: "Network", Arg: "*.example.org"}))
		if _, parent, ok := strings.Cut(lower, "."); ok {
			opts = append(opts, rapid.Just(Capability{Kind: "Network", Arg: "*." + parent}))
		}
	}
	return rapid.OneOf(opts...)
}

// capTool is one generated tool as the oracle knows it.
type capTool struct {
	provider, name, version string
	requires                []Capability
	migration               *capTool // for a 2.x: the migration tool from 1
}

// refCovers is the oracle's reading of Capability.Covers' documented rules,
// written independently of it: kinds equal; a held "*" covers all; a
// required "*" needs a held "*"; "*.d" covers names strictly under d;
// Network arguments are case-insensitive.
func refCovers(h, r Capability) bool {
	if h.Kind != r.Kind {
		return false
	}
	ha, ra := h.Arg, r.Arg
	if h.Kind == "Network" {
		ha, ra = strings.ToLower(ha), strings.ToLower(ra)
	}
	switch {
	case ha == "*":
		return true
	case ra == "*":
		return false
	case strings.HasPrefix(ha, "*."):
		return len(ra) > len(ha)-1 && strings.HasSuffix(ra, ha[1:])
	}
	return ha == ra
}

func refBind(c Capability, params map[string]any) Capability {
	if name, ok := strings.CutPrefix(c.Arg, "$"); ok {
		c.Arg, _ = params[name].(string)
	}
	return c
}

// refHolds: the caller's own grants and everyone's ("*").
func refHolds(grants map[string][]Capability, caller string, c Capability) bool {
	for _, who := range []string{caller, "*"} {
		for _, h := range grants[who] {
			if refCovers(h, c) {
				return true
			}
		}
	}
	return false
}

func refReach(channels map[string][]string, caller, provider string) bool {
	provs, ok := channels[caller]
	if !ok {
		provs = channels["*"]
	}
	for _, p := range provs {
		if p == "*" || p == provider {
			return true
		}
	}
	return false
}

// migrateFolder is the generated migration tools' mapping: {"folder": x}
// (old) → {"space": x} (new).
var migrateFolder = HandlerFunc(func(_ context.Context, p json.RawMessage, _ *Call) (json.RawMessage, error) {
	var old map[string]any
	if err := json.Unmarshal(p, &old); err != nil {
		return nil, err
	}
	out := map[string]any{}
	if f, ok := old["folder"]; ok {
		out["space"] = f
	}
	return json.Marshal(out)
})

var (
	newFormat = json.RawMessage(`{"type":"object","properties":{"space":{"type":"string"}},"additionalProperties":false}`)
	oldFormat = json.RawMessage(`{"type":"object","properties":{"folder":{"type":"string"}},"additionalProperties":false}`)
)

// capStats counts outcomes across checks, so that a test can tell the
// property was not vacuous (calls did succeed, migrated ones too, and some
// were denied).
type capStats struct{ ok, migrated, denied int }

func capabilityProperty(s subject, st *capStats) func(*rapid.T) {
	return func(t *rapid.T) {
		reg := NewRegistry(RegistryConfig{})
		world := map[pnKey]*capTool{}
		names := []string{"a", "b", "c"}
		for i, n := 0, rapid.IntRange(1, 6).Draw(t, "tools"); i < n; i++ {
			ct := &capTool{provider: rapid.SampledFrom(propProvs).Draw(t, "provider"), name: rapid.SampledFrom(names).Draw(t, "name"),
				version: "1.0.0", requires: rapid.SliceOfN(requiredCap("space"), 0, 3).Draw(t, "requires")}
			if world[pnKey{ct.provider, ct.name}] != nil {
				continue
			}
			if rapid.Bool().Draw(t, "major 2 with a migration") {
				ct.version = "2.0.0"
				ct.migration = &capTool{provider: ct.provider, name: ct.name + "-from-1", version: "1.0.0",
					requires: rapid.SliceOfN(requiredCap("folder"), 0, 2).Draw(t, "migration requires")}
				mt := Tool{Name: ct.migration.name, Version: "1.0.0", Parameters: oldFormat,
					CapabilityRequired: ct.migration.requires, Trust: TL2, LatencyClass: Fast, Idempotent: true}
				if err := reg.Register(ct.provider, mt, migrateFolder); err != nil {
					t.Fatalf("register migration: %v", err)
				}
			}
			tl := Tool{Name: ct.name, Version: ct.version, Parameters: newFormat, CapabilityRequired: ct.requires,
				Trust: TL2, LatencyClass: Fast, Idempotent: true}
			if ct.migration != nil {
				tl.Migrations = []Migration{{From: "1", Tool: ct.migration.name}}
			}
			if err := reg.Register(ct.provider, tl, echo); err != nil {
				t.Fatalf("register: %v", err)
			}
			world[pnKey{ct.provider, ct.name}] = ct
		}
		var required []Capability
		for _, ct := range world {
			required = append(required, ct.requires...)
			if ct.migration != nil {
				required = append(required, ct.migration.requires...)
			}
		}
		slices.SortFunc(required, func(a, b Capability) int { return strings.Compare(a.String(), b.String()) }) // map order is random; draws must not be
		channels, grants := map[string][]string{}, map[string][]Capability{}
		for _, a := range propAgents {
			if a == "*" || rapid.Bool().Draw(t, "listed "+a) {
				channels[a] = rapid.SliceOfN(rapid.SampledFrom(append([]string{"*"}, propProvs...)), 0, 3).Draw(t, "channels "+a)
			}
			grants[a] = rapid.SliceOfN(heldCap, 0, 2).Draw(t, "grants "+a)
			for _, r := range required {
				if rapid.IntRange(0, 2).Draw(t, "grant near "+r.String()) > 0 {
					grants[a] = append(grants[a], nearCap(r).Draw(t, "near "+r.String()))
				}
			}
		}
		sys := s.build(t, reg, channels, grants, nil)
		defer sys.Close()

		optSpace := rapid.OneOf(rapid.SampledFrom(append([]string{""}, propSpaces...)), rapid.Just("<absent>"))
		// Every caller (dan: unlisted) asks for every tool, pinned and not,
		// with a random space: the grants are random, the requests need not
		// be, and this way no grant goes untested.
		type ask struct{ caller, name, pin string }
		var asks []ask
		for _, caller := range append([]string{"dan"}, propAgents...) {
			for _, name := range names {
				for _, pin := range []string{"", "1"} {
					asks = append(asks, ask{caller, name, pin})
				}
			}
		}
		for _, a := range asks {
			caller, name, pin := a.caller, a.name, a.pin
			space := optSpace.Draw(t, "space")
			key := "space"
			if pin == "1" {
				key = "folder" // a caller pinned to 1 speaks the old format
			}
			params := map[string]any{}
			if space != "<absent>" {
				params[key] = space
			}
			body, _ := json.Marshal(params)
			res, err := sys.Call(context.Background(), Request{Tool: name, Version: pin, Params: body, Caller: caller})

			denied := errors.Is(err, ErrToolCapabilityDenied) || errors.Is(err, ErrChannelCapabilityDenied)
			if err != nil && !denied {
				continue // not found, invalid params: nothing to say about capabilities
			}
			ct := world[pnKey{res.Provider, name}]
			if ct == nil {
				t.Fatalf("%s%s called %s and got provider %q, which does not offer it", violation, caller, name, res.Provider)
			}
			// What the oracle says the caller needs: the channel, the
			// migration's capabilities on the old params, the tool's on
			// the params it runs with.
			var missing []string
			if !refReach(channels, caller, ct.provider) {
				missing = append(missing, "channel to "+ct.provider)
			}
			runParams := params
			if res.MigratedFrom != "" {
				for _, c := range ct.migration.requires {
					if c = refBind(c, params); !refHolds(grants, caller, c) {
						missing = append(missing, c.String()+" (migration)")
					}
				}
				runParams = map[string]any{}
				if f, ok := params["folder"]; ok {
					runParams["space"] = f
				}
			}
			for _, c := range ct.requires {
				if c = refBind(c, runParams); !refHolds(grants, caller, c) {
					missing = append(missing, c.String())
				}
			}
			switch {
			case err == nil && missing != nil:
				t.Fatalf("%s%s called %s@%s (%s, params %s) and it succeeded without %v\nchannels %v\ngrants %v",
					violation, caller, name, res.Version, res.Provider, body, missing, channels, grants)
			case denied && missing == nil:
				t.Fatalf("%s%s was denied %s@%s (%s, params %s) holding everything it needs: %v\nchannels %v\ngrants %v",
					violation, caller, name, res.Version, res.Provider, body, err, channels, grants)
			}
			if st != nil {
				switch {
				case denied:
					st.denied++
				case res.MigratedFrom != "":
					st.migrated++
					st.ok++
				default:
					st.ok++
				}
			}
		}
	}
}

func TestPropertyCapabilities(t *testing.T) {
	var st capStats
	rapid.Check(t, capabilityProperty(manager, &st))
	t.Logf("%+v", st)
	if st.ok == 0 || st.migrated == 0 || st.denied == 0 {
		t.Fatalf("the generated calls do not exercise the property: %+v", st)
	}
}

// Seeded bugs for property 1: a Covers that forgets the dot of "*.d" (so
// "*.example.org" covers evil-example.org), a policy that answers from
// everyone's grants, and a result cache shared across callers.
func TestPropertyCapabilitiesCatchesSeededBugs(t *testing.T) {
	for _, s := range []subject{
		{name: "wildcard without its dot", policy: func(ch map[string][]string, g map[string][]Capability) AccessPolicy {
			return &brokenPolicy{StaticPolicy{Channels: ch, Capabilities: g}, func(h, r Capability) bool {
				if d, ok := strings.CutPrefix(h.Arg, "*."); ok && h.Kind == r.Kind {
					return strings.HasSuffix(strings.ToLower(r.Arg), strings.ToLower(d))
				}
				return h.Covers(r)
			}, false}
		}},
		{name: "grants of every caller", policy: func(ch map[string][]string, g map[string][]Capability) AccessPolicy {
			return &brokenPolicy{StaticPolicy{Channels: ch, Capabilities: g}, Capability.Covers, true}
		}},
		{name: "result cache shared across callers", policy: staticPolicy, wrap: func(m *Manager) system {
			return &cachingSystem{Manager: m, cache: map[string]*Result{}}
		}},
	} {
		t.Run(s.name, func(t *testing.T) { expectViolation(t, capabilityProperty(s, nil)) })
	}
}

// brokenPolicy is StaticPolicy with a seeded bug: another covers function,
// or (anyCaller) every caller's grants counted for everyone.
type brokenPolicy struct {
	StaticPolicy
	covers    func(held, req Capability) bool
	anyCaller bool
}

func (p *brokenPolicy) Holds(caller string, req Capability) bool {
	for who, hs := range p.Capabilities {
		if who != caller && who != "*" && !p.anyCaller {
			continue
		}
		for _, h := range hs {
			if p.covers(h, req) {
				return true
			}
		}
	}
	return false
}

// cachingSystem answers a repeated (tool, version, params) from a cache
// that ignores who asks: the bug a "memoise idempotent calls" layer makes.
type cachingSystem struct {
	*Manager
	mu    sync.Mutex
	cache map[string]*Result
}

func (c *cachingSystem) Call(ctx context.Context, req Request) (*Result, error) {
	key := req.Tool + "@" + req.Version + ":" + string(req.Params)
	c.mu.Lock()
	r, ok := c.cache[key]
	c.mu.Unlock()
	if ok {
		return r, nil
	}
	r, err := c.Manager.Call(ctx, req)
	if err == nil {
		c.mu.Lock()
		c.cache[key] = r
		c.mu.Unlock()
	}
	return r, err
}

// ---------------------------------------------------------------------------
// Property 2: misbehaving providers are contained.

// badBehaviours are what a bad provider does, by name.
var badBehaviours = []string{"panic", "hang", "hang ignoring its context", "not JSON", "breaks its return schema",
	"scribbles on its params", "scribbles late", "error"}

// badHandler returns the handler for a behaviour; stop ends the late
// scribblers and hangs of a check that has already answered.
func badHandler(behaviour string, linger time.Duration) HandlerFunc {
	return func(ctx context.Context, p json.RawMessage, _ *Call) (json.RawMessage, error) {
		switch behaviour {
		case "panic":
			panic("bad provider")
		case "hang":
			<-ctx.Done()
			return nil, ctx.Err()
		case "hang ignoring its context":
			<-ctx.Done()
			time.Sleep(linger)
			return json.RawMessage(`{"late":true}`), nil
		case "not JSON":
			return json.RawMessage(`{"a":`), nil
		case "breaks its return schema":
			return json.RawMessage(`[1,2,3]`), nil
		case "scribbles on its params":
			for i := range p {
				p[i] = 'x'
			}
			return json.RawMessage(`{}`), nil
		case "scribbles late":
			<-ctx.Done()
			time.Sleep(linger)
			for i := range p {
				p[i] = 'y'
			}
			return nil, ctx.Err()
		}
		return nil, errors.New("bad provider failed")
	}
}

// goodHandler answers {"n": n, "by": tool} after a short pause that honours
// its context, so that good and bad calls overlap.
func goodHandler(pause time.Duration) HandlerFunc {
	return func(ctx context.Context, p json.RawMessage, c *Call) (json.RawMessage, error) {
		select {
		case <-time.After(pause):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		var in struct{ N int }
		if err := json.Unmarshal(p, &in); err != nil {
			return nil, err
		}
		return json.Marshal(map[string]any{"n": in.N, "by": c.Tool})
	}
}

func isolationProperty(s subject) func(*rapid.T) {
	return func(t *rapid.T) {
		reg := NewRegistry(RegistryConfig{})
		nGood := rapid.IntRange(1, 3).Draw(t, "good tools")
		for i := range nGood {
			tl := Tool{Name: fmt.Sprintf("good%d", i), Version: "1.0.0", Parameters: objSchema(`{"n":{"type":"integer"}}`, "n"),
				ReturnSchema: json.RawMessage(`{"type":"object"}`), Trust: TL2, LatencyClass: Fast, Idempotent: true}
			pause := time.Duration(rapid.IntRange(0, 8).Draw(t, "good pause ms")) * time.Millisecond
			if err := reg.Register(fmt.Sprintf("good-provider%d", i%2), tl, goodHandler(pause)); err != nil {
				t.Fatal(err)
			}
		}
		behaviours := rapid.SliceOfN(rapid.SampledFrom(badBehaviours), 1, 4).Draw(t, "bad tools")
		for i, b := range behaviours {
			tl := Tool{Name: fmt.Sprintf("bad%d", i), Version: "1.0.0", Parameters: objSchema(`{}`),
				Trust: TL0, LatencyClass: Fast, Idempotent: true}
			if b == "breaks its return schema" || rapid.Bool().Draw(t, "return schema") {
				tl.ReturnSchema = json.RawMessage(`{"type":"object"}`)
			}
			linger := time.Duration(rapid.IntRange(1, 15).Draw(t, "linger ms")) * time.Millisecond
			if err := reg.Register(fmt.Sprintf("bad-provider%d", i%2), tl, badHandler(b, linger)); err != nil {
				t.Fatal(err)
			}
		}
		audit := &memAudit{}
		sys := s.build(t, reg, map[string][]string{"*": {"*"}}, nil, func(c *Config) {
			c.Policy, c.Audit = AllowAll{}, audit
			c.CancelGrace = 2 * time.Millisecond
		})

		// Each agent runs its calls in order; agents run at once.
		type call struct {
			req  Request
			sent []byte // a copy of the params, to compare after
			good bool
			res  *Result
			err  error
		}
		var agents [][]*call
		id := 0
		for a, n := 0, rapid.IntRange(1, 4).Draw(t, "agents"); a < n; a++ {
			var seq []*call
			for j, k := 0, rapid.IntRange(1, 5).Draw(t, "calls"); j < k; j++ {
				c := &call{good: rapid.Bool().Draw(t, "good call")}
				c.req = Request{CallID: fmt.Sprintf("c%d", id), Caller: fmt.Sprintf("agent%d", a)}
				id++
				if c.good {
					c.req.Tool = fmt.Sprintf("good%d", rapid.IntRange(0, nGood-1).Draw(t, "good tool"))
					c.req.Params = fmt.Appendf(nil, `{"n":%d}`, rapid.IntRange(0, 1000).Draw(t, "n"))
				} else {
					c.req.Tool = fmt.Sprintf("bad%d", rapid.IntRange(0, len(behaviours)-1).Draw(t, "bad tool"))
					c.req.Params = []byte(`{"pad":"` + strings.Repeat("p", rapid.IntRange(0, 40).Draw(t, "pad")) + `"}`)
					c.req.Timeout = time.Duration(rapid.IntRange(2, 25).Draw(t, "bad timeout ms")) * time.Millisecond
				}
				c.sent = append([]byte(nil), c.req.Params...)
				seq = append(seq, c)
			}
			agents = append(agents, seq)
		}
		var wg sync.WaitGroup
		for _, seq := range agents {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for _, c := range seq {
					c.res, c.err = sys.Call(context.Background(), c.req)
				}
			}()
		}
		wg.Wait()
		sys.Close() // waits for stragglers, so late scribbles have happened

		for _, seq := range agents {
			for _, c := range seq {
				if string(c.req.Params) != string(c.sent) {
					t.Fatalf("%s%s's params to %s were changed by the provider: sent %s, now %s", violation, c.req.Caller, c.req.Tool, c.sent, c.req.Params)
				}
				if c.good {
					want := fmt.Sprintf(`{"by":%q,"n":%s}`, c.req.Tool, strings.TrimSuffix(strings.TrimPrefix(string(c.sent), `{"n":`), "}"))
					if c.err != nil || c.res == nil || string(c.res.Output) != want {
						t.Fatalf("%sa good call %s %s by %s went wrong next to bad providers: %v, output %s (want %s)",
							violation, c.req.CallID, c.req.Tool, c.req.Caller, c.err, resultOutput(c.res), want)
					}
				} else if c.err == nil && !json.Valid(c.res.Output) && len(c.res.Output) > 0 {
					t.Fatalf("%s%s answered ok with output that is not JSON: %q", violation, c.req.Tool, c.res.Output)
				}
				sum := sha256.Sum256(c.sent)
				if rec, ok := audit.byCallID(c.req.CallID); !ok || rec.ParamsSHA256 != hex.EncodeToString(sum[:]) {
					t.Fatalf("%sthe audit record of %s (%s) does not hash the params its caller sent: %+v", violation, c.req.CallID, c.req.Tool, rec)
				}
			}
		}
	}
}

func resultOutput(r *Result) string {
	if r == nil {
		return "<no result>"
	}
	return string(r.Output)
}

func TestPropertyBadProvidersAreContained(t *testing.T) {
	rapid.Check(t, isolationProperty(manager))
}

// Seeded bugs for property 2: a layer that aborts every call once one fails
// (one shared context), and a breaker keyed by caller instead of provider.
func TestPropertyBadProvidersCatchesSeededBugs(t *testing.T) {
	for _, s := range []subject{
		{name: "one failure cancels everyone", policy: staticPolicy, wrap: func(m *Manager) system {
			ctx, cancel := context.WithCancel(context.Background())
			return &batchAbort{Manager: m, ctx: ctx, cancel: cancel}
		}},
		{name: "breaker keyed by caller", policy: staticPolicy, wrap: func(m *Manager) system {
			return &callerBreaker{Manager: m, tripped: map[string]bool{}}
		}},
	} {
		t.Run(s.name, func(t *testing.T) { expectViolation(t, isolationProperty(s)) })
	}
}

type batchAbort struct {
	*Manager
	ctx    context.Context
	cancel context.CancelFunc
}

func (b *batchAbort) Call(ctx context.Context, req Request) (*Result, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(b.ctx, cancel) // the batch's end is every call's end
	defer stop()
	r, err := b.Manager.Call(ctx, req)
	if errors.Is(err, ErrProviderCrashed) || errors.Is(err, ErrTimeout) {
		b.cancel()
	}
	return r, err
}

type callerBreaker struct {
	*Manager
	mu      sync.Mutex
	tripped map[string]bool
}

func (c *callerBreaker) Call(ctx context.Context, req Request) (*Result, error) {
	c.mu.Lock()
	open := c.tripped[req.Caller]
	c.mu.Unlock()
	if open {
		return &Result{CallID: req.CallID, Outcome: OutcomeError}, &ProviderUnavailable{Tool: req.Tool, Reason: ReasonCircuitOpen}
	}
	r, err := c.Manager.Call(ctx, req)
	if errors.Is(err, ErrProviderCrashed) {
		c.mu.Lock()
		c.tripped[req.Caller] = true
		c.mu.Unlock()
	}
	return r, err
}

// ---------------------------------------------------------------------------
// Property 3: no deadlock, no leak.

// noDeadlockProperty runs random calls (handlers that finish, honour their
// context, ignore it for a while, return partial output or panic; some
// through a migration), random timeouts, cancellations by call id and by
// context, and a Close at a random moment. Everything must be answered
// within deadline, and after Close no goroutine may be left.
func noDeadlockProperty(s subject, deadline time.Duration) func(*rapid.T) {
	return func(t *rapid.T) {
		before := goleak.IgnoreCurrent()
		reg := NewRegistry(RegistryConfig{})
		kinds := []string{"quick", "honours its context", "ignores its context", "partial output", "panics"}
		nTools := rapid.IntRange(1, 4).Draw(t, "tools")
		for i := range nTools {
			kind := rapid.SampledFrom(kinds).Draw(t, "kind")
			d := time.Duration(rapid.IntRange(0, 20).Draw(t, "work ms")) * time.Millisecond
			h := HandlerFunc(func(ctx context.Context, p json.RawMessage, _ *Call) (json.RawMessage, error) {
				switch kind {
				case "panics":
					panic("boom")
				case "ignores its context":
					time.Sleep(d)
					return json.RawMessage(`{}`), nil
				}
				select {
				case <-time.After(d):
					return json.RawMessage(`{}`), nil
				case <-ctx.Done():
					if kind == "partial output" {
						return json.RawMessage(`{"partial":true}`), ctx.Err()
					}
					return nil, ctx.Err()
				}
			})
			name := fmt.Sprintf("t%d", i)
			if err := reg.Register("p", Tool{Name: name + "-from-1", Version: "1.0.0", Parameters: objSchema(`{}`),
				Trust: TL2, LatencyClass: Fast}, h); err != nil {
				t.Fatal(err)
			}
			if err := reg.Register("p", Tool{Name: name, Version: "2.0.0", Parameters: objSchema(`{}`), Trust: TL2,
				LatencyClass: Fast, Migrations: []Migration{{From: "1", Tool: name + "-from-1"}}}, h); err != nil {
				t.Fatal(err)
			}
		}
		sys := s.build(t, reg, nil, nil, func(c *Config) {
			c.Policy = AllowAll{}
			c.Audit = &memAudit{}
			c.CancelGrace = time.Duration(rapid.IntRange(1, 10).Draw(t, "grace ms")) * time.Millisecond
		})

		type plan struct {
			req      Request
			cancelBy string // "", "id", "context"
			after    time.Duration
		}
		var plans []plan
		for i, n := 0, rapid.IntRange(1, 10).Draw(t, "calls"); i < n; i++ {
			p := plan{req: Request{CallID: fmt.Sprintf("c%d", rapid.IntRange(0, 5).Draw(t, "call id")), Caller: "a",
				Tool:    fmt.Sprintf("t%d", rapid.IntRange(0, nTools-1).Draw(t, "tool")),
				Version: rapid.SampledFrom([]string{"", "1"}).Draw(t, "pin"),
				Timeout: time.Duration(rapid.IntRange(0, 30).Draw(t, "timeout ms")) * time.Millisecond}}
			p.cancelBy = rapid.SampledFrom([]string{"", "id", "context"}).Draw(t, "cancel by")
			p.after = time.Duration(rapid.IntRange(0, 20).Draw(t, "cancel after ms")) * time.Millisecond
			plans = append(plans, p)
		}
		closeAfter := time.Duration(rapid.IntRange(-1, 30).Draw(t, "close after ms (-1: at the end)")) * time.Millisecond

		done := make(chan struct{})
		go func() {
			defer close(done)
			var wg sync.WaitGroup
			for _, p := range plans {
				ctx, cancel := context.WithCancel(context.Background())
				wg.Add(2)
				go func() {
					defer wg.Done()
					defer cancel()
					sys.Call(ctx, p.req)
				}()
				go func() {
					defer wg.Done()
					if p.cancelBy == "" {
						return
					}
					time.Sleep(p.after)
					if p.cancelBy == "id" {
						sys.Cancel(p.req.CallID)
					} else {
						cancel()
					}
				}()
			}
			if closeAfter >= 0 {
				time.Sleep(closeAfter)
				sys.Close()
			}
			wg.Wait()
			sys.Close()
		}()
		select {
		case <-done:
		case <-time.After(deadline):
			buf := make([]byte, 1<<20)
			buf = buf[:runtime.Stack(buf, true)]
			t.Fatalf("%snot done after %v (deadlock?); goroutines:\n%s", violation, deadline, buf)
		}
		if err := goleak.Find(before); err != nil {
			t.Fatalf("%sgoroutines left after Close: %v", violation, err)
		}
	}
}

func TestPropertyNoDeadlock(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	// Generous: a check takes tens of milliseconds; the deadline only has
	// to be finite and beyond any scheduling delay of a loaded 2-core box.
	rapid.Check(t, noDeadlockProperty(manager, 10*time.Second))
}

// Seeded bugs for property 3: a Cancel that waits for the call to end while
// holding the lock the call needs to finish, and a forwarding goroutine left
// blocked when its caller gives up.
func TestPropertyNoDeadlockCatchesSeededBugs(t *testing.T) {
	release := make(chan struct{})
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	defer close(release) // frees what the bugs left stuck, before the leak check
	for _, s := range []subject{
		{name: "Cancel waits under the call's lock", policy: staticPolicy, wrap: func(m *Manager) system {
			return &lockedCancel{Manager: m, calls: map[string]chan struct{}{}, release: release}
		}},
		{name: "goroutine left on cancellation", policy: staticPolicy, wrap: func(m *Manager) system {
			return &forwarder{Manager: m, release: release}
		}},
	} {
		// A deadlock in the seeded bug is permanent: a short deadline finds it.
		t.Run(s.name, func(t *testing.T) { expectViolation(t, noDeadlockProperty(s, 300*time.Millisecond)) })
	}
}

type lockedCancel struct {
	*Manager
	mu      sync.Mutex
	calls   map[string]chan struct{}
	release chan struct{}
}

func (l *lockedCancel) Call(ctx context.Context, req Request) (*Result, error) {
	ended := make(chan struct{})
	l.mu.Lock()
	l.calls[req.CallID] = ended
	l.mu.Unlock()
	r, err := l.Manager.Call(ctx, req)
	l.mu.Lock() // blocks while a Cancel waits for this very call
	if l.calls[req.CallID] == ended {
		delete(l.calls, req.CallID)
	}
	close(ended)
	l.mu.Unlock()
	return r, err
}

func (l *lockedCancel) Cancel(id string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	ok := l.Manager.Cancel(id)
	if ended := l.calls[id]; ended != nil {
		select { // "cancel returns once the call has ended"
		case <-ended:
		case <-l.release:
		}
	}
	return ok
}

// forwarder runs each call in a goroutine and gives up on it when the
// caller's context ends, leaving the goroutine blocked on an unbuffered send
// nobody will receive: the classic leak on cancellation.
type forwarder struct {
	*Manager
	release chan struct{}
}

func (f *forwarder) Call(ctx context.Context, req Request) (*Result, error) {
	type answer struct {
		r   *Result
		err error
	}
	ch := make(chan answer)
	go func() {
		r, err := f.Manager.Call(ctx, req)
		select {
		case ch <- answer{r, err}:
		case <-f.release:
		}
	}()
	select {
	case a := <-ch:
		return a.r, a.err
	case <-ctx.Done():
		return &Result{CallID: req.CallID, Outcome: OutcomeCancelled}, &Cancelled{CallID: req.CallID}
	}
}

// ---------------------------------------------------------------------------
// The harness for seeded bugs.

// expectViolation runs prop under rapid with a recorder for a TB and fails
// the test unless the property reported a violation: the property could
// fail, on this bug. Fail files are not written (the failure is expected),
// and shrinking is kept short. Up to 1000 cases are tried: rapid stops at
// the first violation (most bugs fall within ten), and a bug that only one
// check in thirty meets (the wildcard one) must not make the test flaky.
func expectViolation(t *testing.T, prop func(*rapid.T)) {
	t.Helper()
	for name, v := range map[string]string{"rapid.nofailfile": "true", "rapid.shrinktime": "300ms", "rapid.checks": "1000"} {
		f := flag.Lookup(name)
		if f == nil {
			t.Fatalf("rapid flag %s not registered", name)
		}
		old := f.Value.String()
		if err := f.Value.Set(v); err != nil {
			t.Fatal(err)
		}
		defer f.Value.Set(old)
	}
	rec := &recorder{name: t.Name()}
	rapid.Check(rec, prop)
	if !rec.Failed() {
		t.Fatalf("the property did not catch the seeded bug; log:\n%s", rec.log())
	}
	if !strings.Contains(rec.log(), violation) {
		t.Fatalf("the property failed, but not by a violation (a broken harness?):\n%s", rec.log())
	}
	first, _, _ := strings.Cut(rec.log()[strings.Index(rec.log(), violation):], "\n")
	t.Logf("caught: %s", first)
}

// recorder is a rapid.TB that records instead of failing the test.
type recorder struct {
	name   string
	mu     sync.Mutex
	failed bool
	lines  []string
}

func (r *recorder) Helper()      {}
func (r *recorder) Name() string { return r.name }
func (r *recorder) add(fail bool, s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failed = r.failed || fail
	r.lines = append(r.lines, s)
}
func (r *recorder) log() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.lines, "\n")
}
func (r *recorder) Logf(format string, args ...any) { r.add(false, fmt.Sprintf(format, args...)) }
func (r *recorder) Log(args ...any)                 { r.add(false, fmt.Sprint(args...)) }
func (r *recorder) Skipf(format string, args ...any) {
	r.add(true, "skipped: "+fmt.Sprintf(format, args...))
}
func (r *recorder) Skip(args ...any)                  { r.add(true, "skipped: "+fmt.Sprint(args...)) }
func (r *recorder) SkipNow()                          { r.add(true, "skipped") }
func (r *recorder) Errorf(format string, args ...any) { r.add(true, fmt.Sprintf(format, args...)) }
func (r *recorder) Error(args ...any)                 { r.add(true, fmt.Sprint(args...)) }
func (r *recorder) Fatalf(format string, args ...any) { r.add(true, fmt.Sprintf(format, args...)) }
func (r *recorder) Fatal(args ...any)                 { r.add(true, fmt.Sprint(args...)) }
func (r *recorder) FailNow()                          { r.add(true, "FailNow") }
func (r *recorder) Fail()                             { r.add(true, "Fail") }
func (r *recorder) Failed() bool                      { r.mu.Lock(); defer r.mu.Unlock(); return r.failed }

func (a *memAudit) byCallID(id string) (audit.Record, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, r := range a.recs {
		if r.CallID == id {
			return r, true
		}
	}
	return audit.Record{}, false
}
