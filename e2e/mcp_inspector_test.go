//go:build e2e

package e2e

// The MCP Inspector's CLI mode as a real third-party client of `airs mcp`
// (stdio) and of /mcp on `airs serve` (streamable HTTP with a bearer
// token). It needs npx (npm fetches the pinned Inspector) and no Ollama:
// it runs under `make e2e` (AIRS_E2E=1) or alone with AIRS_E2E_MCP=1:
//
//	AIRS_E2E_MCP=1 go test -tags e2e -run Inspector ./e2e/

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

const inspector = "@modelcontextprotocol/inspector@2.12.0"

// exitToolError is the Inspector's exit code for a tools/call answered
// with isError: true (it prints the result all the same).
const exitToolError = 5

// inspectorEnv builds airs and writes a configuration: the agent tester
// reads the space documents (hello.txt in it) and is the OS user's agent
// and the agent of token.
type inspectorEnv struct {
	bin, dir, config, home, pipes string
	token                         string
}

func newInspectorEnv(t *testing.T) *inspectorEnv {
	t.Helper()
	if os.Getenv("AIRS_E2E") != "1" && os.Getenv("AIRS_E2E_MCP") != "1" {
		t.Skip("e2e: set AIRS_E2E_MCP=1 (or run make e2e) to run the MCP Inspector against airs")
	}
	if _, err := exec.LookPath("npx"); err != nil {
		t.Skip("e2e: no npx on PATH: the MCP Inspector is fetched with npx (install Node.js and npm)")
	}
	e := &inspectorEnv{dir: t.TempDir(), token: "inspector-e2e-token"}
	e.bin = filepath.Join(e.dir, "airs")
	_, file, _, _ := runtime.Caller(0)
	build := exec.Command("go", "build", "-o", e.bin, "./cmd/airs")
	build.Dir = filepath.Join(filepath.Dir(file), "..")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building airs: %v\n%s", err, out)
	}
	docs := filepath.Join(e.dir, "docs")
	e.pipes = filepath.Join(e.dir, "pipelines")
	e.home = filepath.Join(e.dir, "state")
	os.MkdirAll(docs, 0o755)
	os.MkdirAll(e.pipes, 0o755)
	os.WriteFile(filepath.Join(docs, "hello.txt"), []byte("hello from the inspector test\n"), 0o644)
	os.WriteFile(filepath.Join(e.pipes, "hello.yaml"), []byte("pipeline: read-hello\ndescription: Read hello.txt.\n"+
		"inputs:\n  space: {type: string, default: documents}\nsteps:\n  - id: read\n    tool: read-file\n"+
		"    params: {space: \"{{input.space}}\", path: hello.txt}\n"), 0o644)
	sum := sha256.Sum256([]byte(e.token))
	e.config = filepath.Join(e.dir, "airs.yaml")
	yaml := "spaces:\n  documents: ./docs\nagents:\n  tester: {capabilities: [\"ReadSpace(documents)\"]}\n" +
		"cli:\n  users: {\"*\": tester}\nhttp:\n  tokens:\n    - sha256: " + hex.EncodeToString(sum[:]) + "\n      agent: tester\n"
	if err := os.WriteFile(e.config, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	return e
}

// inspect runs the Inspector's CLI with args and decodes its JSON answer.
// want is the exit code expected: 0, exitToolError (the answer is still
// printed), or -1 for any failure (nothing decoded).
func (e *inspectorEnv) inspect(t *testing.T, want int, args ...string) map[string]any {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "npx", append([]string{"-y", inspector, "--cli"}, args...)...)
	cmd.Dir = e.dir
	cmd.Env = append(os.Environ(), "AIRS_CONFIG="+e.config, "AIRS_HOME="+e.home, "npm_config_update_notifier=false")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := cmd.ProcessState.ExitCode()
	if want < 0 {
		if err == nil {
			t.Fatalf("inspector %v succeeded, want a failure:\n%s", args, stdout.String())
		}
		return nil
	}
	if code != want {
		t.Fatalf("inspector %v: %v\nstdout:\n%s\nstderr:\n%s", args, err, stdout.String(), stderr.String())
	}
	var out map[string]any
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatalf("inspector %v printed what is not JSON: %v\n%s", args, err, stdout.String())
	}
	return out
}

func has(v any, want string) bool {
	b, _ := json.Marshal(v)
	return strings.Contains(string(b), want)
}

func TestInspectorAgainstAirsMCP(t *testing.T) {
	e := newInspectorEnv(t)
	// The target is the airs command; its environment (AIRS_CONFIG,
	// AIRS_HOME) is passed with -e, as a client's config would.
	target := []string{"-e", "AIRS_CONFIG=" + e.config, "-e", "AIRS_HOME=" + e.home, e.bin, "mcp", "--pipelines", e.pipes}
	run := func(args ...string) map[string]any { return e.inspect(t, 0, append(clone(target), args...)...) }

	tools := run("--method", "tools/list")
	if !has(tools, `"name":"read-file"`) || has(tools, `"name":"delete-file"`) || !has(tools, `"destructiveHint":false`) {
		t.Errorf("tools/list = %v", tools)
	}
	call := run("--method", "tools/call", "--tool-name", "calculator", "--tool-arg", "expression=(12.5 + 7) * 3")
	if !has(call, "58.5") || has(call, `"isError":true`) {
		t.Errorf("tools/call calculator = %v", call)
	}
	denied := e.inspect(t, exitToolError, append(clone(target), "--method", "tools/call", "--tool-name", "read-file", "--tool-arg", "space=elsewhere", "--tool-arg", "path=x")...)
	if !has(denied, `"isError":true`) || !has(denied, "tool_capability_denied") {
		t.Errorf("a read of an unknown space = %v", denied)
	}
	res := run("--method", "resources/list")
	if !has(res, `airs://documents/hello.txt`) {
		t.Errorf("resources/list = %v", res)
	}
	read := run("--method", "resources/read", "--uri", "airs://documents/hello.txt")
	if !has(read, "hello from the inspector test") {
		t.Errorf("resources/read = %v", read)
	}
	prompts := run("--method", "prompts/list")
	if !has(prompts, `"name":"read-hello"`) {
		t.Errorf("prompts/list = %v", prompts)
	}
	got := run("--method", "prompts/get", "--prompt-name", "read-hello")
	if !has(got, "read-file") || !has(got, "Read hello.txt.") {
		t.Errorf("prompts/get = %v", got)
	}
}

func TestInspectorAgainstServeMCP(t *testing.T) {
	e := newInspectorEnv(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	srv := exec.Command(e.bin, "serve", "--listen", addr, "--model", "none", "--pipelines", e.pipes)
	srv.Env = append(os.Environ(), "AIRS_CONFIG="+e.config, "AIRS_HOME="+e.home)
	var srvErr bytes.Buffer
	srv.Stderr = &srvErr
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Process.Kill(); srv.Wait() })
	deadline := time.Now().Add(60 * time.Second)
	for {
		if resp, err := http.Get("http://" + addr + "/healthz"); err == nil {
			resp.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("airs serve did not start:\n%s", srvErr.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	url := "http://" + addr + "/mcp"
	auth := "Authorization: Bearer " + e.token

	tools := e.inspect(t, 0, url, "--transport", "http", "--header", auth, "--method", "tools/list")
	if !has(tools, `"name":"read-file"`) || !has(tools, `"readOnlyHint":true`) {
		t.Errorf("tools/list over /mcp = %v", tools)
	}
	call := e.inspect(t, 0, url, "--transport", "http", "--header", auth, "--method", "tools/call",
		"--tool-name", "read-file", "--tool-arg", "space=documents", "--tool-arg", "path=hello.txt")
	if !has(call, "hello from the inspector test") {
		t.Errorf("tools/call over /mcp = %v", call)
	}
	read := e.inspect(t, 0, url, "--transport", "http", "--header", auth, "--method", "resources/read", "--uri", "airs://documents/hello.txt")
	if !has(read, "hello from the inspector test") {
		t.Errorf("resources/read over /mcp = %v", read)
	}
	if prompts := e.inspect(t, 0, url, "--transport", "http", "--header", auth, "--method", "prompts/list"); !has(prompts, `"name":"read-hello"`) {
		t.Errorf("prompts/list over /mcp = %v", prompts)
	}
	if got := e.inspect(t, 0, url, "--transport", "http", "--header", auth, "--method", "prompts/get", "--prompt-name", "read-hello"); !has(got, "read-file") {
		t.Errorf("prompts/get over /mcp = %v", got)
	}
	e.inspect(t, -1, url, "--transport", "http", "--method", "tools/list")                                            // no token
	e.inspect(t, -1, url, "--transport", "http", "--header", "Authorization: Bearer wrong", "--method", "tools/list") // unknown token
}

func clone(s []string) []string { return append([]string(nil), s...) }
