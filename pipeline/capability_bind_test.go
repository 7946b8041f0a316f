package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
)

func TestCapabilityBoundToParam(t *testing.T) {
	reg := NewRegistry(RegistryConfig{})
	h := HandlerFunc(func(context.Context, json.RawMessage, *Call) (json.RawMessage, error) {
		return json.RawMessage(`{}`), nil
	})
	tool := Tool{Name: "ls", Version: "1", Idempotent: true,
		Parameters:         json.RawMessage(`{"type":"object","properties":{"space":{"type":"string"}},"required":["space"]}`),
		CapabilityRequired: []Capability{{Kind: "ReadSpace", Arg: "$space"}}}
	if err := reg.Register("p", tool, h); err != nil {
		t.Fatal(err)
	}
	m, err := NewManager(Config{Registry: reg, Policy: &StaticPolicy{
		Channels:     map[string][]string{"*": {"*"}},
		Capabilities: map[string][]Capability{"alice": {{Kind: "ReadSpace", Arg: "docs"}}, "root": {{Kind: "ReadSpace", Arg: "*"}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	call := func(caller, params string) error {
		_, err := m.Call(context.Background(), Request{Tool: "ls", Params: []byte(params), Caller: caller})
		return err
	}
	if err := call("alice", `{"space":"docs"}`); err != nil {
		t.Errorf("alice reads docs: %v", err)
	}
	var denied *ToolCapabilityDenied
	if err := call("alice", `{"space":"secrets"}`); !errors.As(err, &denied) || denied.Required[0].String() != "ReadSpace(secrets)" {
		t.Errorf("alice reads secrets: %v", err)
	}
	if err := call("root", `{"space":"secrets"}`); err != nil {
		t.Errorf("root reads secrets: %v", err)
	}
	// A missing argument binds to "": denied unless "*" is held, and the
	// schema rejects it either way.
	if err := call("alice", `{}`); !errors.As(err, &denied) {
		t.Errorf("alice without space: %v", err)
	}
	if err := call("root", `{}`); !errors.Is(err, ErrSchemaValidationFailed) {
		t.Errorf("root without space: %v", err)
	}
	if c := (Capability{Kind: "Network", Arg: "$host"}).Bind(map[string]any{"host": 3}); c.Arg != "" {
		t.Errorf("non-string binds to %q", c.Arg)
	}
}
