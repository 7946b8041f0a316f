package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMCPStdio runs the real binary as `airs mcp` under the go-sdk's own
// client, the way an editor starts it: the agent is the OS user's
// (cli.users → tester, who may read documents and not private).
func TestMCPStdio(t *testing.T) {
	e := newEnv(t, "")
	pipes := filepath.Join(e.dir, "pipelines")
	os.MkdirAll(pipes, 0o755)
	os.WriteFile(filepath.Join(pipes, "hello.yaml"), []byte(`pipeline: read-hello
description: Read the hello file of a space.
inputs:
  space: {type: string, default: documents}
steps:
  - id: read
    tool: read-file
    params: {space: "{{input.space}}", path: hello.txt}
`), 0o644)
	cmd := exec.Command(airsBin, "--config", e.config, "mcp", "--pipelines", pipes)
	cmd.Env = append(os.Environ(), "AIRS_HOME="+e.home, "AIRS_CONFIG=", "HOME="+e.dir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "cli-test"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connecting to airs mcp: %v\n%s", err, stderr.String())
	}

	lt, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range lt.Tools {
		names = append(names, tl.Name)
	}
	if !slices.Contains(names, "read-file") || slices.Contains(names, "delete-file") {
		t.Errorf("tester's tools = %v (read-file yes, delete-file needs WriteSpace)", names)
	}
	r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "read-file", Arguments: map[string]any{"space": "documents", "path": "hello.txt"}})
	if err != nil || r.IsError || !strings.Contains(r.Content[0].(*mcp.TextContent).Text, "hello from the docs space") {
		t.Fatalf("read-file: %+v, %v", r, err)
	}
	r, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "read-file", Arguments: map[string]any{"space": "private", "path": "secret.txt"}})
	if err != nil || !r.IsError {
		t.Fatalf("tester read the private space: %+v, %v", r, err)
	}

	lr, err := cs.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var uris []string
	for _, res := range lr.Resources {
		uris = append(uris, res.URI)
	}
	if !slices.Contains(uris, "airs://documents/hello.txt") || slices.ContainsFunc(uris, func(u string) bool { return strings.HasPrefix(u, "airs://private/") }) {
		t.Errorf("tester's resources = %v", uris)
	}
	rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "airs://documents/hello.txt"})
	if err != nil || rr.Contents[0].Text != "hello from the docs space\n" {
		t.Errorf("reading hello.txt: %+v, %v", rr, err)
	}

	lp, err := cs.ListPrompts(ctx, nil)
	if err != nil || len(lp.Prompts) != 1 || lp.Prompts[0].Name != "read-hello" {
		t.Fatalf("prompts = %+v, %v", lp, err)
	}
	cs.Close() // closes stdin: airs mcp ends on its own
	if err := cmd.Wait(); err != nil && !strings.Contains(err.Error(), "Wait was already called") {
		t.Logf("airs mcp: %v", err)
	}
	if s := stderr.String(); strings.Contains(s, "level=ERROR") {
		t.Errorf("airs mcp logged an error:\n%s", s)
	}
	// Every call above is in the audit log, as tester's, and the chain holds.
	if res := e.run("audit", "verify"); res.code != 0 {
		t.Errorf("audit verify: %d %s %s", res.code, res.stdout, res.stderr)
	}
	log, _ := os.ReadFile(filepath.Join(e.home, "audit.jsonl"))
	seen := map[string]bool{}
	for _, line := range bytes.Split(log, []byte("\n")) {
		var rec struct{ Caller, Tool, Outcome string }
		if json.Unmarshal(line, &rec) == nil {
			seen[rec.Caller+":"+rec.Tool+":"+rec.Outcome] = true
		}
	}
	for _, w := range []string{"tester:read-file:ok", "tester:list-files:ok"} {
		if !seen[w] {
			t.Errorf("the audit log lacks %s: %v", w, seen)
		}
	}
}

func TestMCPHelpTeachesTheClientConfig(t *testing.T) {
	e := newEnv(t, "")
	res := e.run("mcp", "--help")
	for _, w := range []string{`"mcpServers"`, `"command": "airs"`, `"args": ["mcp"]`, "cli.users", "/mcp"} {
		if !strings.Contains(res.stdout, w) {
			t.Errorf("airs mcp --help lacks %s:\n%s", w, res.stdout)
		}
	}
	if res := e.run("mcp", "extra"); res.code == 0 {
		t.Error("airs mcp took an argument")
	}
}

// TestMCPOnServe: /mcp on the real `airs serve`, the token's agent.
func TestMCPOnServe(t *testing.T) {
	const token = "mcp-serve-test-token"
	sum := sha256.Sum256([]byte(token))
	e := newEnv(t, "http:\n  tokens:\n    - sha256: "+hex.EncodeToString(sum[:])+"\n      agent: tester\n")
	// A pipeline in the default folder ($AIRS_HOME/pipelines): a prompt of /mcp.
	os.MkdirAll(filepath.Join(e.home, "pipelines"), 0o755)
	os.WriteFile(filepath.Join(e.home, "pipelines", "hello.yaml"), []byte(`pipeline: read-hello
description: Read the hello file of a space.
inputs:
  space: {type: string, default: documents}
steps:
  - id: read
    tool: read-file
    params: {space: "{{input.space}}", path: hello.txt}
`), 0o644)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	srv := exec.Command(airsBin, "--config", e.config, "serve", "--listen", addr, "--model", "none")
	srv.Env = append(os.Environ(), "AIRS_HOME="+e.home, "AIRS_CONFIG=", "HOME="+e.dir)
	var srvErr bytes.Buffer
	srv.Stderr = &srvErr
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Process.Kill(); srv.Wait() })
	base := "http://" + addr
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get(base + "/healthz")
		if err == nil {
			resp.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("airs serve did not start:\n%s", srvErr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}

	resp, err := http.Post(base+"/mcp", "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize"}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(string(body), "http.tokens") {
		t.Errorf("/mcp without a token: %d %s", resp.StatusCode, body)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	hc := &http.Client{Transport: headerRT{"Authorization", "Bearer " + token}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "cli-test"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: hc, DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatalf("connecting to /mcp: %v\n%s", err, srvErr.String())
	}
	defer cs.Close()
	r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "calculator", Arguments: map[string]any{"expression": "(12.5 + 7) * 3"}})
	if err != nil || r.IsError || !strings.Contains(r.Content[0].(*mcp.TextContent).Text, "58.5") {
		t.Fatalf("calculator over /mcp: %+v, %v", r, err)
	}
	// Pipelines are prompts over /mcp as over airs mcp.
	lp, err := cs.ListPrompts(ctx, nil)
	if err != nil || len(lp.Prompts) != 1 || lp.Prompts[0].Name != "read-hello" || lp.Prompts[0].Description != "Read the hello file of a space." {
		t.Fatalf("prompts over /mcp: %+v, %v", lp, err)
	}
	g, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "read-hello", Arguments: map[string]string{"space": "documents"}})
	if err != nil || len(g.Messages) == 0 {
		t.Fatalf("prompts/get over /mcp: %+v, %v", g, err)
	}
	if txt := g.Messages[0].Content.(*mcp.TextContent).Text; !strings.Contains(txt, "read-file") || !strings.Contains(txt, "airs run") {
		t.Errorf("the prompt over /mcp:\n%s", txt)
	}
	if _, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "no-such"}); err == nil {
		t.Error("an unknown prompt was served")
	}
}

type headerRT struct{ k, v string }

func (h headerRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(h.k, h.v)
	return http.DefaultTransport.RoundTrip(r)
}
