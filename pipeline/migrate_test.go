package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// The running example: search 1.x took {"q", "folder"}; 2.x takes
// {"query", "space", "limit"} and declares a migration from 1.
var (
	searchV1Params = json.RawMessage(`{"type":"object","properties":{"q":{"type":"string","minLength":1},"folder":{"type":"string"}},"required":["q"],"additionalProperties":false}`)
	searchV2Params = json.RawMessage(`{"type":"object","properties":{"query":{"type":"string"},"space":{"type":"string"},"limit":{"type":"integer","minimum":1}},"required":["query","space","limit"],"additionalProperties":false}`)
)

// v1ToV2 maps old params to new ones, counting its runs.
func v1ToV2(runs *atomic.Int64) Handler {
	return HandlerFunc(func(_ context.Context, p json.RawMessage, _ *Call) (json.RawMessage, error) {
		runs.Add(1)
		var old struct{ Q, Folder string }
		if err := json.Unmarshal(p, &old); err != nil {
			return nil, err
		}
		if old.Folder == "" {
			old.Folder = "documents"
		}
		return json.Marshal(map[string]any{"query": old.Q, "space": old.Folder, "limit": 10})
	})
}

// migrationEnv registers the migration tool (with handler mig) and search
// 2.0.0 (an echo) under provider "p".
func migrationEnv(t *testing.T, mod func(*Config), mig Handler) *env {
	t.Helper()
	e := newEnv(t, mod)
	e.register(t, "p", Tool{Name: "search-v1-to-v2", Version: "1.0.0", Parameters: searchV1Params,
		Trust: TL2, LatencyClass: Fast, Idempotent: true}, mig)
	e.register(t, "p", Tool{Name: "search", Version: "2.0.0", Parameters: searchV2Params,
		CapabilityRequired: []Capability{{Kind: "ReadSpace", Arg: "$space"}},
		Trust:              TL2, LatencyClass: Fast, Idempotent: true,
		Migrations: []Migration{{From: "1", Tool: "search-v1-to-v2"}}}, echo)
	return e
}

func pinned(e *env, version, params string) (*Result, error) {
	return e.m.Call(context.Background(), Request{Tool: "search", Version: version, Params: []byte(params), Caller: "alice"})
}

func TestMigrationServesOldPins(t *testing.T) {
	var runs atomic.Int64
	e := migrationEnv(t, nil, v1ToV2(&runs))
	for i, pin := range []string{"1", "1.x", "v1", "1.4.2", "1.*"} {
		r, err := pinned(e, pin, `{"q":"cats","folder":"notes"}`)
		if err != nil {
			t.Fatalf("pin %s: %v", pin, err)
		}
		if string(r.Output) != `{"limit":10,"query":"cats","space":"notes"}` || r.Version != "2.0.0" || r.MigratedFrom != pin {
			t.Fatalf("pin %s: %+v %s", pin, r, r.Output)
		}
		rec := e.audit.last()
		if rec.Version != "2.0.0" || rec.MigratedFrom != pin || rec.Migration != "search-v1-to-v2@1.0.0" || rec.Outcome != "ok" {
			t.Fatalf("pin %s: audit record %+v", pin, rec)
		}
		if runs.Load() != int64(i+1) {
			t.Fatalf("pin %s: migration ran %d times in %d calls", pin, runs.Load(), i+1)
		}
	}

	// The current version and an unpinned call take new params as they are:
	// no migration, and old params are the caller's mistake.
	for _, pin := range []string{"", "2", "2.0.0"} {
		r, err := pinned(e, pin, `{"query":"cats","space":"notes","limit":3}`)
		if err != nil || r.MigratedFrom != "" || string(r.Output) != `{"query":"cats","space":"notes","limit":3}` {
			t.Fatalf("pin %q: %v %+v", pin, err, r)
		}
		if rec := e.audit.last(); rec.MigratedFrom != "" || rec.Migration != "" {
			t.Fatalf("pin %q: audit names a migration: %+v", pin, rec)
		}
		var sv *SchemaValidationFailed
		if _, err := pinned(e, pin, `{"q":"cats"}`); !errors.As(err, &sv) || sv.Migration != "" || sv.Tool != "search" {
			t.Fatalf("pin %q, old params: %v", pin, err)
		}
	}
	// A major with neither a version nor a migration is not found.
	if _, err := pinned(e, "3", `{}`); !errors.Is(err, ErrToolNotFound) {
		t.Fatalf("pin 3: %v", err)
	}
	if _, err := pinned(e, "0", `{"q":"x"}`); !errors.Is(err, ErrToolNotFound) {
		t.Fatalf("pin 0 (no migration from 0): %v", err)
	}
	if runs.Load() != 5 {
		t.Fatalf("migration ran %d times, want 5", runs.Load())
	}
}

func TestMigrationNotUsedWhileOldVersionRegistered(t *testing.T) {
	var runs atomic.Int64
	e := migrationEnv(t, nil, v1ToV2(&runs))
	old := Tool{Name: "search", Version: "1.5.0", Parameters: searchV1Params, Trust: TL2, LatencyClass: Fast, Idempotent: true}
	e.register(t, "p", old, echo)
	for _, pin := range []string{"1", "1.x", "1.5"} {
		r, err := pinned(e, pin, `{"q":"cats"}`)
		if err != nil || r.Version != "1.5.0" || r.MigratedFrom != "" || string(r.Output) != `{"q":"cats"}` {
			t.Fatalf("pin %s: %v %+v", pin, err, r)
		}
	}
	// "1.4" names no registered 1.4.x: the migration from major 1 serves it.
	if r, err := pinned(e, "1.4", `{"q":"cats"}`); err != nil || r.Version != "2.0.0" || r.MigratedFrom != "1.4" {
		t.Fatalf("pin 1.4: %v %+v", err, r)
	}
	if runs.Load() != 1 {
		t.Fatalf("migration ran %d times, want 1", runs.Load())
	}
}

func TestMigrationInvalidOutputNamesMigration(t *testing.T) {
	cases := map[string]HandlerFunc{
		"wrong params": func(context.Context, json.RawMessage, *Call) (json.RawMessage, error) {
			return json.RawMessage(`{"query":"cats","limit":0}`), nil // no space, limit < 1
		},
		"not JSON": func(context.Context, json.RawMessage, *Call) (json.RawMessage, error) {
			return json.RawMessage(`{"query":`), nil
		},
	}
	for name, h := range cases {
		t.Run(name, func(t *testing.T) {
			var ran atomic.Bool
			e := migrationEnv(t, nil, h)
			e.register(t, "p", Tool{Name: "search", Version: "2.1.0", Parameters: searchV2Params, Trust: TL2,
				LatencyClass: Fast, Migrations: []Migration{{From: "1.x", Tool: "search-v1-to-v2", Version: "1.0.0"}}},
				HandlerFunc(func(context.Context, json.RawMessage, *Call) (json.RawMessage, error) {
					ran.Store(true)
					return json.RawMessage(`{}`), nil
				}))
			r, err := pinned(e, "1", `{"q":"cats"}`)
			var sv *SchemaValidationFailed
			if !errors.As(err, &sv) || sv.Output || sv.Tool != "search" || sv.Migration != "search-v1-to-v2@1.0.0" {
				t.Fatalf("want SchemaValidationFailed naming the migration, got %v", err)
			}
			if !strings.Contains(err.Error(), "made by migration search-v1-to-v2@1.0.0") || !strings.Contains(Hint(err), "migration") {
				t.Fatalf("message %q, hint %q", err, Hint(err))
			}
			if ran.Load() {
				t.Fatal("the new version ran on invalid migrated params")
			}
			if r.Version != "2.1.0" || r.MigratedFrom != "1" || r.ErrorKind != KindSchemaValidationFailed {
				t.Fatalf("result %+v", r)
			}
			if rec := e.audit.last(); rec.Error != KindSchemaValidationFailed || rec.Migration != "search-v1-to-v2@1.0.0" || rec.Version != "2.1.0" {
				t.Fatalf("audit %+v", rec)
			}
		})
	}
}

func TestMigrationValidatesOldParamsFirst(t *testing.T) {
	var runs atomic.Int64
	e := migrationEnv(t, nil, v1ToV2(&runs))
	var sv *SchemaValidationFailed
	_, err := pinned(e, "1", `{"q":"","extra":1}`)
	if !errors.As(err, &sv) || sv.Tool != "search-v1-to-v2" || sv.Migration != "" || len(sv.Errors) != 2 {
		t.Fatalf("want the old format's two violations, got %v", err)
	}
	if runs.Load() != 0 {
		t.Fatal("the migration ran on params its own schema rejects")
	}
}

// The new version's capabilities bind to the migrated params: a caller who
// may read "notes" but not "secret" is judged on the space the migration
// produced, under the old parameter's name.
func TestMigrationCapabilitiesBindMigratedParams(t *testing.T) {
	var runs atomic.Int64
	pol := &StaticPolicy{Channels: map[string][]string{"*": {"*"}},
		Capabilities: map[string][]Capability{"alice": {{Kind: "ReadSpace", Arg: "notes"}}}}
	e := migrationEnv(t, func(c *Config) { c.Policy = pol }, v1ToV2(&runs))
	if _, err := pinned(e, "1", `{"q":"x","folder":"notes"}`); err != nil {
		t.Fatal(err)
	}
	var denied *ToolCapabilityDenied
	_, err := pinned(e, "1", `{"q":"x","folder":"secret"}`)
	if !errors.As(err, &denied) || denied.Required[0] != (Capability{Kind: "ReadSpace", Arg: "secret"}) {
		t.Fatalf("want ReadSpace(secret) denied, got %v", err)
	}
	// Default folder → documents, which alice does not hold either.
	if _, err := pinned(e, "1", `{"q":"x"}`); !errors.As(err, &denied) || denied.Required[0].Arg != "documents" {
		t.Fatalf("want ReadSpace(documents) denied, got %v", err)
	}

	// The migration tool's own requirements are checked before it runs.
	e.register(t, "p", Tool{Name: "search-v1-to-v2", Version: "1.0.0", Parameters: searchV1Params, Trust: TL2,
		LatencyClass: Fast, CapabilityRequired: []Capability{{Kind: "Migrate", Arg: "search"}}}, v1ToV2(&runs))
	before := runs.Load()
	if _, err := pinned(e, "1", `{"q":"x","folder":"notes"}`); !errors.As(err, &denied) || denied.Required[0].Kind != "Migrate" {
		t.Fatalf("want Migrate(search) denied, got %v", err)
	}
	// And level 1 before that: a caller who may not reach the provider runs
	// none of its code.
	pol.Channels = map[string][]string{"alice": {"other"}}
	if _, err := pinned(e, "1", `{"q":"x","folder":"notes"}`); !errors.Is(err, ErrChannelCapabilityDenied) {
		t.Fatalf("want channel denied, got %v", err)
	}
	if runs.Load() != before {
		t.Fatal("the migration ran for a caller lacking its capabilities or channel")
	}
}

func TestMigrationFailuresAreContained(t *testing.T) {
	cases := []struct {
		name string
		h    func(release chan struct{}) HandlerFunc
		want error
	}{
		{"panic", func(chan struct{}) HandlerFunc {
			return func(context.Context, json.RawMessage, *Call) (json.RawMessage, error) { panic("boom") }
		}, ErrProviderCrashed},
		{"error", func(chan struct{}) HandlerFunc {
			return func(context.Context, json.RawMessage, *Call) (json.RawMessage, error) {
				return nil, errors.New("cannot map")
			}
		}, ErrProviderRejected},
		{"hang past its context", func(release chan struct{}) HandlerFunc {
			return func(context.Context, json.RawMessage, *Call) (json.RawMessage, error) {
				<-release
				return json.RawMessage(`{}`), nil
			}
		}, ErrTimeout},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			release := make(chan struct{})
			e := migrationEnv(t, nil, c.h(release))
			// Cleanups run last-in first-out: the hung handler is released
			// before Close (registered by newEnv) waits for it.
			t.Cleanup(func() { close(release) })
			t0 := time.Now()
			r, err := e.m.Call(context.Background(), Request{Tool: "search", Version: "1", Params: []byte(`{"q":"x"}`),
				Caller: "alice", Timeout: 50 * time.Millisecond})
			if !errors.Is(err, c.want) {
				t.Fatalf("want %v, got %v", c.want, err)
			}
			if el := time.Since(t0); el > 2*time.Second {
				t.Fatalf("answered after %v", el)
			}
			if r.MigratedFrom != "1" || e.audit.last().Migration != "search-v1-to-v2@1.0.0" {
				t.Fatalf("result %+v, audit %+v", r, e.audit.last())
			}
			if c.want == ErrProviderRejected && !strings.Contains(err.Error(), "search-v1-to-v2@1.0.0: cannot map") {
				t.Fatalf("message %q does not name the migration", err)
			}
		})
	}
}

func TestMigrationToolGone(t *testing.T) {
	var runs atomic.Int64
	e := migrationEnv(t, nil, v1ToV2(&runs))
	e.reg.Deregister("p", "search-v1-to-v2", "")
	_, err := pinned(e, "1", `{"q":"x"}`)
	var nf *ToolNotFound
	if !errors.As(err, &nf) || nf.Tool != "search-v1-to-v2" || nf.Provider != "p" {
		t.Fatalf("want the migration tool not found, got %v", err)
	}
}

func TestRegisterChecksMigrations(t *testing.T) {
	r := NewRegistry(RegistryConfig{})
	if err := r.Register("p", tool("m"), echo); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		version string
		migs    []Migration
		want    string
	}{
		{"2.0.0", []Migration{{From: "2", Tool: "m"}}, "not older"},
		{"2.0.0", []Migration{{From: "3", Tool: "m"}}, "not older"},
		{"2.0.0", []Migration{{From: "1.2", Tool: "m"}}, "want an old major"},
		{"2.0.0", []Migration{{From: "one", Tool: "m"}}, "want an old major"},
		{"2.0.0", []Migration{{From: "1", Tool: "nope"}}, "register the migration tool first"},
		{"2.0.0", []Migration{{From: "1", Tool: "m", Version: "9"}}, "register the migration tool first"},
		{"2.0.0", []Migration{{From: "1", Tool: "t"}}, "another tool"},
		{"3.0.0", []Migration{{From: "1", Tool: "m"}, {From: "v1.x", Tool: "m"}}, "two migrations"},
		{"latest", []Migration{{From: "1", Tool: "m"}}, "no numeric major"},
	} {
		tl := tool("t")
		tl.Version, tl.Migrations = c.version, c.migs
		err := r.Register("p", tl, echo)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %+v: want %q, got %v", c.version, c.migs, c.want, err)
		}
	}
	// Another provider's migration tool does not count.
	tl := tool("t")
	tl.Version, tl.Migrations = "2.0.0", []Migration{{From: "1", Tool: "m"}}
	if err := r.Register("q", tl, echo); err == nil {
		t.Error("a migration tool of another provider was accepted")
	}
	if err := r.Register("p", tl, echo); err != nil {
		t.Fatal(err)
	}
}

func TestPinMatches(t *testing.T) {
	for _, c := range []struct {
		pin, v string
		want   bool
	}{
		{"1", "1.0.0", true}, {"1", "1", true}, {"1.x", "1.9.3", true}, {"v1", "1.2", true}, {"1", "v1.2", true},
		{"1.2", "1.2.7", true}, {"1.2", "1.20.0", false}, {"1", "10.0.0", false}, {"1", "2.0.0", false},
		{"1.2.3", "1.2.3", true}, {"1.2.3", "1.2", false}, {"1.*", "1.0", true}, {"01", "1.0", true},
		{"1.0", "1.0.0-beta", true}, {"1.0.0", "1.0.0-beta", false},
	} {
		if got := pinMatches(c.pin, c.v); got != c.want {
			t.Errorf("pinMatches(%q, %q) = %v", c.pin, c.v, got)
		}
	}
	// An exact match wins over a higher version under the same prefix.
	e := newEnv(t, nil)
	for _, v := range []string{"1.2", "1.2.9"} {
		tl := tool("t")
		tl.Version = v
		e.register(t, "p", tl, echo)
	}
	for pin, want := range map[string]string{"1.2": "1.2", "1": "1.2.9", "1.2.x": "1.2.9"} {
		if r, err := e.m.Call(context.Background(), Request{Tool: "t", Version: pin, Caller: "a"}); err != nil || r.Version != want {
			t.Errorf("pin %s: %v %+v, want %s", pin, err, r, want)
		}
		if got, ok := e.reg.Get("p", "t", pin); !ok || got.Tool.Version != want {
			t.Errorf("Get pin %s: %+v", pin, got)
		}
	}
}

const migrationManifest = `provider: p
tools:
  - name: search
    version: 2.0.0
    handler: test.echo
    parameters: {type: object, properties: {query: {type: string}, space: {type: string}, limit: {type: integer}}, required: [query, space, limit]}
    migrations:
      - {from: "1", tool: search-v1-to-v2, version: 1.0.0}
  - name: search-v1-to-v2
    version: 1.0.0
    handler: test.v1to2
    parameters: {type: object, properties: {q: {type: string}, folder: {type: string}}, required: [q]}
`

func TestManifestMigrations(t *testing.T) {
	var runs atomic.Int64
	handlers := HandlerMap{"test.echo": echo, "test.v1to2": v1ToV2(&runs)}
	for _, isJSON := range []bool{false, true} {
		src := []byte(migrationManifest)
		if isJSON {
			// The same manifest in JSON: the key means the same there.
			y, err := ParseManifest(src, false)
			if err != nil {
				t.Fatal(err)
			}
			var tools []map[string]any
			for _, mt := range y.Tools {
				b, _ := json.Marshal(mt.Tool)
				var m map[string]any
				json.Unmarshal(b, &m)
				m["handler"] = mt.Handler
				delete(m, "trust")
				delete(m, "latency_class")
				tools = append(tools, m)
			}
			src, _ = json.Marshal(map[string]any{"provider": "p", "tools": tools})
		}
		man, err := ParseManifest(src, isJSON)
		if err != nil {
			t.Fatalf("json=%v: %v", isJSON, err)
		}
		if got := man.Tools[0].Tool.Migrations; len(got) != 1 || got[0] != (Migration{From: "1", Tool: "search-v1-to-v2", Version: "1.0.0"}) {
			t.Fatalf("json=%v: migrations %+v", isJSON, got)
		}
		e := newEnv(t, nil)
		// The migration tool comes after the version using it in the file.
		if err := man.Register(e.reg, handlers.Resolve); err != nil {
			t.Fatalf("json=%v: %v", isJSON, err)
		}
		r, err := pinned(e, "1", `{"q":"cats"}`)
		if err != nil || r.MigratedFrom != "1" || string(r.Output) != `{"limit":10,"query":"cats","space":"documents"}` {
			t.Fatalf("json=%v: %v %+v", isJSON, err, r)
		}
	}

	// A migration naming a tool nowhere to be found registers nothing.
	bad := strings.Replace(migrationManifest, "tool: search-v1-to-v2,", "tool: search-v0,", 1)
	man, err := ParseManifest([]byte(bad), false)
	if err != nil {
		t.Fatal(err)
	}
	reg := NewRegistry(RegistryConfig{})
	if err := man.Register(reg, handlers.Resolve); err == nil || !strings.Contains(err.Error(), "search-v0") {
		t.Fatalf("want an error naming search-v0, got %v", err)
	}
	if n := len(reg.List()); n != 0 {
		t.Fatalf("%d tools registered from a broken manifest", n)
	}
	if _, err := ParseManifest([]byte(strings.Replace(migrationManifest, `from: "1", `, "", 1)), false); err == nil {
		t.Fatal("a migration without from was accepted")
	}
}
