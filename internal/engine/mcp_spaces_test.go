//go:build unix

package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airs-dev/airs/internal/settings"
	"github.com/airs-dev/airs/mcp/client/mcptest"
	"github.com/airs-dev/airs/pipeline"
)

// TestMCPResourcesAsASpace: a server's resources are the space mcp-NAME
// of list-files and read-file, through the pipeline, granted by
// ReadSpace(mcp-NAME) with MCP(NAME) and the server's requires; a server
// that did not start has its space unavailable, not missing.
func TestMCPResourcesAsASpace(t *testing.T) {
	t.Setenv("AIRS_HOME", "")
	dir := t.TempDir()
	argv := mcptest.Command()
	yaml := fmt.Sprintf(`home: ./state
spaces: {documents: ./docs}
agents:
  granted: {capabilities: ["MCP(t)", "ReadSpace(mcp-t)", "ReadSpace(documents)"]}
  nospace: {capabilities: ["MCP(t)", "ReadSpace(documents)"]}
  norequires: {capabilities: ["MCP(t)", "ReadSpace(mcp-t)"]}
  all: {capabilities: ["ReadSpace(*)", "MCP(*)"]}
mcp:
  servers:
    t:
      command: [%q, %q]
      env: {%s: "1"}
      requires: ["ReadSpace(documents)"]
    broken:
      command: [%q]
`, argv[0], argv[1], mcptest.EnvServe, filepath.Join(dir, "no-such-server"))
	os.Mkdir(filepath.Join(dir, "docs"), 0o755)
	cfg := writeConfig(t, dir, yaml)
	policy := settings.Policy(cfg)
	spaces := NewMCPSpaces(cfg)
	reg, err := RegistryMCP(cfg, policy, spaces)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	mcp := StartMCP(ctx, cfg, reg, nil, "test")
	defer mcp.Close()
	spaces.Bind(mcp)
	mc := settings.ManagerConfig(cfg)
	mc.Registry, mc.Policy = reg, policy
	m, err := pipeline.NewManager(mc)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	call := func(caller, tool, params string) (json.RawMessage, error) {
		r, err := m.Call(ctx, pipeline.Request{Tool: tool, Params: []byte(params), Caller: caller})
		return r.Output, err
	}

	// The schema offers the spaces (the grammar can only emit those).
	tool, _ := reg.Get("builtin", "read-file", "")
	if !strings.Contains(string(tool.Tool.Parameters), `"mcp-t"`) || !strings.Contains(string(tool.Tool.Parameters), `"mcp-broken"`) {
		t.Fatalf("read-file's space enum: %s", tool.Tool.Parameters)
	}
	out, err := call("granted", "list-files", `{"space":"mcp-t"}`)
	if err != nil || !strings.Contains(string(out), `"path":"mcptest://greeting","name":"greeting"`) {
		t.Fatalf("list-files: %v %s", err, out)
	}
	for _, p := range []string{"mcptest://greeting", "greeting"} {
		out, err = call("granted", "read-file", `{"space":"mcp-t","path":"`+p+`"}`)
		if err != nil || !strings.Contains(string(out), `"text":"hello from mcptest"`) {
			t.Fatalf("read-file %s: %v %s", p, err, out)
		}
	}
	if _, err = call("granted", "read-file", `{"space":"mcp-t","path":"nothing"}`); pipeline.KindOf(err) != pipeline.KindProviderRejected || !strings.Contains(err.Error(), `no resource named "nothing"`) {
		t.Fatalf("unknown name: %v", err)
	}
	// The grant: ReadSpace(mcp-t), and the server's own (its requires).
	for caller, lacks := range map[string]string{"nospace": "ReadSpace(mcp-t)", "norequires": "ReadSpace(documents)"} {
		_, err := call(caller, "read-file", `{"space":"mcp-t","path":"greeting"}`)
		if pipeline.KindOf(err) != pipeline.KindToolCapabilityDenied || !strings.Contains(err.Error(), lacks) {
			t.Fatalf("%s: %v (want it to lack %s)", caller, err, lacks)
		}
	}
	// A server that did not start: its space says so.
	if _, err = call("all", "list-files", `{"space":"mcp-broken"}`); pipeline.KindOf(err) != pipeline.KindProviderUnavailable || !strings.Contains(err.Error(), "mcp server broken is not connected") {
		t.Fatalf("broken: %v", err)
	}
}
