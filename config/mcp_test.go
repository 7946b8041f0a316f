package config

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestMCPServers(t *testing.T) {
	home := isolate(t)
	file := write(t, filepath.Join(home, "airs.yaml"), `
mcp:
  servers:
    fs:
      command: [npx, -y, "@modelcontextprotocol/server-filesystem@2026.8.31", ~/Documents]
      requires: ["ReadSpace(documents)"]
      timeout: 30s
      restarts_per_minute: 0
    remote:
      url: https://mcp.example.org/mcp
      headers_from_env: {Authorization: REMOTE_TOKEN}
      prefix: rem
      max_tools: 50
`)
	c, err := Load(file)
	if err != nil {
		t.Fatal(err)
	}
	fs, rem := c.MCP.Servers["fs"], c.MCP.Servers["remote"]
	if len(fs.Command) != 4 || fs.Command[0] != "npx" || fs.Command[3] != filepath.Join(home, "Documents") {
		t.Errorf("fs command = %q", fs.Command)
	}
	if len(fs.Requires) != 1 || fs.Requires[0].String() != "ReadSpace(documents)" || fs.Timeout != 30*time.Second {
		t.Errorf("fs = %+v", fs)
	}
	if fs.RestartsPerMinute != 0 || fs.MaxTools != DefaultMCPMaxTools || fs.Grace != DefaultMCPGrace || fs.MaxMessageBytes != DefaultMCPMaxMessageBytes {
		t.Errorf("fs bounds = %+v", fs)
	}
	if rem.URL != "https://mcp.example.org/mcp" || rem.HeadersFromEnv["Authorization"] != "REMOTE_TOKEN" || rem.Prefix != "rem" || rem.MaxTools != 50 ||
		rem.RestartsPerMinute != DefaultMCPRestartsPerMinute {
		t.Errorf("remote = %+v", rem)
	}
}

func TestMCPServerProblems(t *testing.T) {
	home := isolate(t)
	file := write(t, filepath.Join(home, "airs.yaml"), `
mcp:
  servers:
    none: {}
    both: {command: [x], url: "http://h/mcp"}
    builtin: {command: [x]}
    a.b: {command: [x]}
    caps: {command: [x], requires: ["Read(("]}
    same1: {command: [x], prefix: p}
    same2: {command: [x], prefix: p}
    big: {command: [x], max_tools: 0, timeout: 20m}
    hdr: {command: [x], headers_from_env: {X: Y}}
`)
	_, err := Load(file)
	if err == nil {
		t.Fatal("no error")
	}
	msg := err.Error()
	for _, want := range []string{
		"mcp.servers.none: say how to reach it",
		"mcp.servers.both: has both command and url",
		"mcp.servers.builtin: the name must be",
		"mcp.servers.a.b: the name must be",
		"mcp.servers.caps: requires[0]",
		"like those of server same1",
		"mcp.servers.big: max_tools 0",
		"mcp.servers.big: timeout 20m0s",
		"mcp.servers.hdr: headers_from_env is for an HTTP server",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("missing %q in:\n%s", want, msg)
		}
	}
}

// TestMCPExampleParses uncomments the mcp section of Example: what the
// annotated file shows must be valid.
func TestMCPExampleParses(t *testing.T) {
	home := isolate(t)
	var lines []string
	in := false
	for _, l := range strings.Split(Example, "\n") {
		if l == "# mcp:" {
			in = true
		}
		if in && !strings.HasPrefix(l, "#") {
			break
		}
		if in {
			lines = append(lines, strings.TrimPrefix(l, "# "))
		}
	}
	if len(lines) < 10 {
		t.Fatalf("no mcp section in Example (%d lines)", len(lines))
	}
	c, err := Parse(filepath.Join(home, "airs.yaml"), []byte(strings.Join(lines, "\n")))
	if err != nil {
		t.Fatal(err)
	}
	if fs := c.MCP.Servers["fs"]; len(fs.Command) != 4 || fs.Prefix != "fs" || c.MCP.Servers["remote"].URL == "" {
		t.Fatalf("servers = %+v", c.MCP.Servers)
	}
}
