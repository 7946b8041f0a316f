package config

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestMCPServe: mcp.serve.tool_search is off unless asked for, the search
// limit has a default and bounds, and a bad limit is an error at its line.
func TestMCPServe(t *testing.T) {
	home := isolate(t)
	c, err := Load(write(t, filepath.Join(home, "none.yaml"), "mcp:\n  servers: {}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if c.MCP.Serve != (MCPServe{SearchLimit: DefaultMCPSearchLimit}) {
		t.Errorf("default mcp.serve = %+v", c.MCP.Serve)
	}
	c, err = Load(write(t, filepath.Join(home, "on.yaml"), "mcp:\n  serve: {tool_search: true, search_limit: 8}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if c.MCP.Serve != (MCPServe{ToolSearch: true, SearchLimit: 8}) {
		t.Errorf("mcp.serve = %+v", c.MCP.Serve)
	}
	_, err = Load(write(t, filepath.Join(home, "bad.yaml"), "mcp:\n  serve:\n    tool_search: true\n    search_limit: 500\n"))
	if err == nil || !strings.Contains(err.Error(), "bad.yaml:4: mcp.serve.search_limit: 500: want 1 to 50") {
		t.Errorf("search_limit 500: %v", err)
	}
	_, err = Load(write(t, filepath.Join(home, "typo.yaml"), "mcp:\n  serve: {tool_serch: true}\n"))
	if err == nil {
		t.Error("a misspelt key of mcp.serve is accepted")
	}
}
