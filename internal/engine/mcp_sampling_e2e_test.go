//go:build e2e && unix

package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/airs-dev/airs/internal/settings"
	"github.com/airs-dev/airs/mcp/client/mcptest"
	"github.com/airs-dev/airs/pipeline"
)

// TestMCPSamplingOllamaE2E: a client-mode server's sampling request is
// answered by the real Ollama (the tiny random-weight model: the text means
// nothing; the reply arrives, names the model, and stops within the limit).
func TestMCPSamplingOllamaE2E(t *testing.T) {
	host, model := os.Getenv("OLLAMA_HOST"), os.Getenv("AIRS_E2E_MODEL")
	if host == "" {
		t.Skip("e2e: OLLAMA_HOST is not set; run `bash scripts/e2e.sh ./internal/engine/` (make e2e), which starts Ollama with the tiny model")
	}
	if model == "" {
		model = "airs-tiny"
	}
	t.Setenv("AIRS_HOME", "")
	dir := t.TempDir()
	argv := mcptest.Command()
	yaml := fmt.Sprintf("home: ./state\nollama:\n  host: %s\n  model: %q\nagents:\n  granted: {capabilities: [\"MCP(t)\"]}\nmcp:\n  servers:\n    t:\n      command: [%q, %q]\n      env: {%s: \"1\"}\n",
		host, model, argv[0], argv[1], mcptest.EnvServe)
	cfg := writeConfig(t, dir, yaml)
	policy := settings.Policy(cfg)
	reg, err := Registry(cfg, policy)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	m := StartMCP(ctx, cfg, reg, nil, "e2e")
	defer m.Close()
	mc := settings.ManagerConfig(cfg)
	mc.Registry, mc.Policy = reg, policy
	mgr, err := pipeline.NewManager(mc)
	if err != nil {
		t.Fatal(err)
	}
	defer mgr.Close()
	e, err := New(ctx, cfg, reg, mgr, policy, Options{Channel: "run", MCP: m, ProbeTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if e.model == nil {
		t.Fatalf("no model: %s", e.modelNotice)
	}
	res, err := e.Call(ctx, pipeline.Request{Tool: "t.sample", Params: []byte(`{"text":"say hi","max_tokens":8}`), Caller: "granted", Timeout: 2 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	var out struct{ Text, Model, Stop string }
	if err := json.Unmarshal(res.Output, &out); err != nil || out.Model == "" || (out.Stop != "endTurn" && out.Stop != "maxTokens") {
		t.Fatalf("sampling through Ollama: %v %s", err, res.Output)
	}
}
