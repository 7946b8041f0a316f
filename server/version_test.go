package server

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"testing"

	"github.com/airs-dev/airs/pipeline"
)

// A caller pinned to an old major version over HTTP is migrated: the answer
// names both versions (seed 003, pipeline/migrate.go).
func TestCallPinnedVersionIsMigrated(t *testing.T) {
	reg := pipeline.NewRegistry(pipeline.RegistryConfig{})
	echo := pipeline.HandlerFunc(func(_ context.Context, p json.RawMessage, _ *pipeline.Call) (json.RawMessage, error) { return p, nil })
	rename := pipeline.HandlerFunc(func(_ context.Context, p json.RawMessage, _ *pipeline.Call) (json.RawMessage, error) {
		var old struct{ N int }
		if err := json.Unmarshal(p, &old); err != nil {
			return nil, err
		}
		return json.Marshal(map[string]int{"count": old.N})
	})
	for _, r := range []struct {
		tool pipeline.Tool
		h    pipeline.Handler
	}{
		{pipeline.Tool{Name: "count-v1-to-v2", Version: "1.0.0", Parameters: json.RawMessage(schema), LatencyClass: pipeline.Fast}, rename},
		{pipeline.Tool{Name: "count", Version: "2.0.0", LatencyClass: pipeline.Fast,
			Parameters: json.RawMessage(`{"type":"object","properties":{"count":{"type":"integer"}},"required":["count"],"additionalProperties":false}`),
			Migrations: []pipeline.Migration{{From: "1", Tool: "count-v1-to-v2"}}}, echo},
	} {
		if err := reg.Register("test", r.tool, r.h); err != nil {
			t.Fatal(err)
		}
	}
	m, err := pipeline.NewManager(pipeline.Config{Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	s := New(&testBackend{m}, Config{Tokens: []Token{{HashToken("tok"), "alice"}}, MaxBody: 4096})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, l) }()
	defer func() { cancel(); <-done }()
	base := "http://" + l.Addr().String()

	resp, body := post(t, base+"/v1/call", "tok", `{"tool":"count","version":"1","arguments":{"n":3}}`)
	out, _ := json.Marshal(body["output"])
	if resp.StatusCode != http.StatusOK || body["version"] != "2.0.0" || body["migrated_from"] != "1" || string(out) != `{"count":3}` {
		t.Fatalf("%d %v", resp.StatusCode, body)
	}
	// Unpinned, the old format is the caller's mistake.
	if resp, body := post(t, base+"/v1/call", "tok", `{"tool":"count","arguments":{"n":3}}`); resp.StatusCode == http.StatusOK {
		t.Fatalf("old params without a pin: %d %v", resp.StatusCode, body)
	}
}
