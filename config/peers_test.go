package config

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestPeers(t *testing.T) {
	home := isolate(t)
	file := write(t, filepath.Join(home, "airs.yaml"), `
agents:
  alice: {capabilities: ["Network(*)"]}
  bob: {capabilities: []}
peers:
  - {name: lab, url: "http://10.0.0.2:7777/mcp", token: "${LAB_TOKEN}", grant: [alice], timeout: 30s}
  - {name: gpu, url: "https://gpu.example/mcp", token: $GPU_TOKEN}
`)
	c, err := Load(file)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Peers) != 2 {
		t.Fatalf("peers = %+v", c.Peers)
	}
	lab, gpu := c.Peers[0], c.Peers[1]
	if lab.Name != "lab" || lab.URL != "http://10.0.0.2:7777/mcp" || lab.TokenEnv != "LAB_TOKEN" || lab.Timeout != 30*time.Second {
		t.Errorf("lab = %+v", lab)
	}
	if gpu.TokenEnv != "GPU_TOKEN" || len(gpu.Grant) != 0 {
		t.Errorf("gpu = %+v", gpu)
	}
	if !slices.Contains(c.Agents["alice"].Capabilities, PeerCapability("lab")) {
		t.Error("alice, granted lab, does not hold MCP(peer.lab)")
	}
	if slices.Contains(c.Agents["alice"].Capabilities, PeerCapability("gpu")) || slices.Contains(c.Agents["bob"].Capabilities, PeerCapability("lab")) {
		t.Error("a peer's capability is held without a grant")
	}
}

func TestPeerProblems(t *testing.T) {
	home := isolate(t)
	file := write(t, filepath.Join(home, "airs.yaml"), `
agents:
  alice: {capabilities: []}
mcp:
  servers:
    peer: {url: "http://h/mcp"}
peers:
  - {name: "a.b", url: "http://h/mcp", token: "${T}"}
  - {name: lit, url: "http://h/mcp", token: "s3cret"}
  - {name: notoken, url: "http://h/mcp"}
  - {name: badurl, url: "h:7777", token: "${T}"}
  - {name: who, url: "http://h/mcp", token: "${T}", grant: [mallory]}
  - {name: who, url: "http://h/mcp", token: "${T}"}
`)
	_, err := Load(file)
	if err == nil {
		t.Fatal("no error")
	}
	msg := err.Error()
	for _, want := range []string{
		"mcp.servers.peer: its tools would be named peer.*",
		`peers a.b: name "a.b"`,
		"peers lit: token must name an environment variable",
		"peers notoken: token: say which environment variable",
		`peers badurl: url "h:7777"`,
		`peers who: grant[0]: agent "mallory" is not defined`,
		"peers who: a peer of that name is listed twice",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("missing %q in:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, "s3cret") {
		t.Errorf("the message repeats the token written in the file:\n%s", msg)
	}
}

// TestExamplePeersParse: the commented peers block of the example, with
// its "# " removed, is a valid section that grants local.
func TestExamplePeersParse(t *testing.T) {
	home := isolate(t)
	_, rest, ok := strings.Cut(Example, "\n# peers:\n")
	if !ok {
		t.Fatal("the example has no peers block")
	}
	block, _, _ := strings.Cut(rest, "\n\n")
	yaml := "peers:\n"
	for _, l := range strings.Split(block, "\n") {
		yaml += strings.TrimPrefix(l, "# ") + "\n"
	}
	c, err := Load(write(t, filepath.Join(home, "airs.yaml"), yaml))
	if err != nil {
		t.Fatalf("%v\n%s", err, yaml)
	}
	if len(c.Peers) != 1 || c.Peers[0].TokenEnv != "LAB_TOKEN" || !slices.Contains(c.Agents["local"].Capabilities, PeerCapability("lab")) {
		t.Fatalf("peers %+v", c.Peers)
	}
}
