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
      pass_env: [GITHUB_TOKEN]
      tools: {write_file: {effect: destructive}, read_file: {effect: read}}
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
	if len(fs.PassEnv) != 1 || fs.PassEnv[0] != "GITHUB_TOKEN" || fs.ToolEffects["write_file"] != "destructive" || fs.ToolEffects["read_file"] != "read" {
		t.Errorf("fs pass_env, tools = %q, %v", fs.PassEnv, fs.ToolEffects)
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
    eff: {command: [x], tools: {rm: {effect: harmless}}, pass_env: ["A B"]}
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
		`mcp.servers.eff: tools.rm.effect "harmless": want one of read, write, destructive`,
		`mcp.servers.eff: pass_env[0] "A B": want the name of an environment variable`,
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

// TestMCPSampling: mcp.sampling is every server's default, a server's
// sampling: keys override it key by key, and bad values are errors at
// their line.
func TestMCPSampling(t *testing.T) {
	home := isolate(t)
	file := write(t, filepath.Join(home, "airs.yaml"), `
mcp:
  sampling: {max_tokens: 256}
  servers:
    a: {command: [x]}
    b: {command: [x], sampling: {enabled: false}}
    c: {command: [x], sampling: {timeout: 5s, max_tokens: 4096}}
agents:
  r: {capabilities: ["ReadSpace(mcp-a)"]}
`)
	c, err := Load(file)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]MCPSampling{
		"a": {Enabled: true, MaxTokens: 256, Timeout: DefaultMCPSampleTimeout},
		"b": {Enabled: false, MaxTokens: 256, Timeout: DefaultMCPSampleTimeout},
		"c": {Enabled: true, MaxTokens: 4096, Timeout: 5 * time.Second},
	}
	for n, w := range want {
		if got := c.MCP.Servers[n].Sampling; got != w {
			t.Errorf("%s: sampling = %+v, want %+v", n, got, w)
		}
	}
	if d, _ := Load(write(t, filepath.Join(home, "b.yaml"), "mcp:\n  servers:\n    a: {command: [x]}\n")); d.MCP.Servers["a"].Sampling != DefaultMCPSampling {
		t.Errorf("default sampling = %+v", d.MCP.Servers["a"].Sampling)
	}

	file = write(t, filepath.Join(home, "bad.yaml"), `
spaces: {mcp-s: /tmp}
mcp:
  sampling: {max_tokens: 0}
  servers:
    s:
      command: [x]
      sampling:
        timeout: 20m
        max_tokens: 100000
`)
	_, err = Load(file)
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{
		"bad.yaml:4: mcp.sampling.max_tokens 0: want 1 to 32768",
		"mcp.servers.s.sampling.timeout 20m0s: want a duration above 0 and at most 10m0s",
		"mcp.servers.s.sampling.max_tokens 100000",
		`bad.yaml:2: space name "mcp-s": names starting with mcp- are MCP servers' resources`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("missing %q in:\n%s", want, err)
		}
	}
	_, err = Load(write(t, filepath.Join(home, "type.yaml"), "mcp:\n  sampling: {enabled: maybe}\n"))
	if err == nil || !strings.Contains(err.Error(), "type.yaml:2: wrong type: `maybe` is a string, want true or false") {
		t.Errorf("enabled: maybe: %v", err)
	}
}
