package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestLoadManifestYAMLAndJSON(t *testing.T) {
	y, err := LoadManifest("testdata/tools.yaml")
	if err != nil {
		t.Fatal(err)
	}
	j, err := LoadManifest("testdata/tools.json")
	if err != nil {
		t.Fatal(err)
	}
	g := y.Tools[0].Tool
	if y.Provider != "local" || len(y.Tools) != 2 || g.Name != "greet" || g.Version != "1.2.0" || g.Trust != TL3 ||
		g.LatencyClass != Instant || !g.Idempotent || !g.Lenient || len(g.CapabilityRequired) != 2 ||
		g.CapabilityRequired[1] != (Capability{Kind: "Network", Arg: "*"}) || len(g.ReturnSchema) == 0 {
		t.Fatalf("yaml: %+v", y.Tools[0])
	}
	old := y.Tools[1].Tool
	if old.Version != "1.0" || old.Trust != TL0 || old.LatencyClass != LongRunning || old.Deprecation == nil ||
		!old.Deprecation.Sunset.Equal(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)) || old.Deprecation.Replacement != "greet" {
		t.Fatalf("yaml deprecated tool: %+v", old)
	}
	if jt := j.Tools[0].Tool; j.Provider != "remote" || jt.Trust != TL1 || jt.LatencyClass != Slow || jt.CapabilityRequired[0].Arg != "api.example.org" {
		t.Fatalf("json: %+v", j.Tools[0])
	}

	e := newEnv(t, nil)
	handlers := HandlerMap{"test.echo": echo}
	if err := y.Register(e.reg, handlers.Resolve); err != nil {
		t.Fatal(err)
	}
	if err := j.Register(e.reg, handlers.Resolve); err != nil {
		t.Fatal(err)
	}
	// TL3 local beats TL1 remote; lenient default applies; pattern checked.
	r, err := e.call("greet", `{"name":"Ada","times":null}`)
	if err != nil || r.Provider != "local" || string(r.Output) != `{"name":"Ada","times":1}` {
		t.Fatalf("%v %+v", err, r)
	}
	if _, err := e.call("greet", `{"name":"ada"}`); !errors.Is(err, ErrSchemaValidationFailed) {
		t.Fatal(err)
	}
	if _, err := e.call("old-greet", `{}`); !errors.Is(err, ErrToolDeprecated) {
		t.Fatal(err)
	}
	r, err = e.m.Call(context.Background(), Request{Tool: "greet", Provider: "remote", Caller: "a", Params: []byte(`{"name":"x"}`)})
	if err != nil || r.Provider != "remote" || r.Version != "2.0.0" {
		t.Fatalf("explicit provider: %v %+v", err, r)
	}
}

func TestManifestErrors(t *testing.T) {
	m, _ := LoadManifest("testdata/tools.yaml")
	r := NewRegistry(RegistryConfig{})
	if err := m.Register(r, HandlerMap{}.Resolve); err == nil || len(r.List()) != 0 {
		t.Fatalf("unknown handler id must fail and register nothing: %v", err)
	}
	dir := t.TempDir()
	for name, body := range map[string]string{
		"typo.yaml":      "provider: p\ntools:\n  - name: t\n    handler: h\n    idempotant: true\n",
		"nohandler.yaml": "provider: p\ntools:\n  - name: t\n",
		"noprov.yaml":    "tools: []\n",
		"trust.yaml":     "provider: p\ntools:\n  - {name: t, handler: h, trust: TL9}\n",
		"sunset.yaml":    "provider: p\ntools:\n  - {name: t, handler: h, deprecation: {sunset: soon}}\n",
		"bad.json":       `{"provider": "p", "tools": [`,
	} {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(body), 0o644)
		if _, err := LoadManifest(p); err == nil {
			t.Errorf("%s accepted", name)
		}
	}
}

// read_only and destructive come from the manifest; both at once is refused.
func TestManifestReadOnlyDestructive(t *testing.T) {
	m, err := ParseManifest([]byte(`provider: p
tools:
  - {name: rm, version: "1.0.0", handler: h.rm, parameters: {type: object}, destructive: true}
  - {name: cat, version: "1.0.0", handler: h.cat, parameters: {type: object}, read_only: true, idempotent: true}
`), false)
	if err != nil {
		t.Fatal(err)
	}
	if rm, cat := m.Tools[0].Tool, m.Tools[1].Tool; !rm.Destructive || rm.ReadOnly || !cat.ReadOnly || cat.Destructive {
		t.Fatalf("rm %+v cat %+v", rm, cat)
	}
	_, err = ParseManifest([]byte(`provider: p
tools:
  - {name: x, version: "1.0.0", handler: h.x, parameters: {type: object}, read_only: true, destructive: true}
`), false)
	if err == nil || !strings.Contains(err.Error(), "read_only and destructive") {
		t.Fatalf("both: %v", err)
	}
	reg := NewRegistry(RegistryConfig{})
	if err := reg.Register("p", Tool{Name: "x", Version: "1", Parameters: json.RawMessage(`{"type":"object"}`), ReadOnly: true, Destructive: true}, echo); err == nil {
		t.Fatal("Register took a tool that is read-only and destructive")
	}
}
