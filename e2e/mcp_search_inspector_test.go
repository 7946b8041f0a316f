//go:build e2e

package e2e

// Tool search (mcp.serve.tool_search) as the MCP Inspector's CLI sees it,
// over stdio (airs mcp) and streamable HTTP (/mcp of airs serve):
//
//	AIRS_E2E_MCP=1 go test -tags e2e -run InspectorToolSearch ./e2e/

import (
	"bytes"
	"net"
	"net/http"
	"os"
	"os/exec"
	"testing"
	"time"
)

// searchOn turns tool search on in e's configuration.
func (e *inspectorEnv) searchOn(t *testing.T) {
	t.Helper()
	f, err := os.OpenFile(e.config, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString("mcp:\n  serve: {tool_search: true, search_limit: 3}\n"); err != nil {
		t.Fatal(err)
	}
}

func TestInspectorToolSearchOverStdio(t *testing.T) {
	e := newInspectorEnv(t)
	e.searchOn(t)
	target := []string{"-e", "AIRS_CONFIG=" + e.config, "-e", "AIRS_HOME=" + e.home, e.bin, "mcp"}
	run := func(want int, args ...string) map[string]any {
		return e.inspect(t, want, append(clone(target), args...)...)
	}

	tools := run(0, "--method", "tools/list")
	if !has(tools, `"name":"search_tools"`) || has(tools, `"name":"read-file"`) || has(tools, `"name":"calculator"`) {
		t.Errorf("tools/list with tool search = %v, want search_tools alone", tools)
	}
	found := run(0, "--method", "tools/call", "--tool-name", "search_tools", "--tool-arg", "query=read the text of a file")
	if !has(found, `"name":"read-file"`) || !has(found, `"inputSchema"`) || has(found, `"isError":true`) {
		t.Errorf("search_tools = %v, want read-file with its schema", found)
	}
	// Each Inspector run is a new session, and the Inspector calls only a
	// listed tool: a found tool's call is checked over HTTP below, where
	// the found tools are the agent's (and in-process with the go-sdk).
	if bad := run(exitToolError, "--method", "tools/call", "--tool-name", "search_tools", "--tool-arg", "limit=0", "--tool-arg", "query=x"); !has(bad, "want 1 to 50") {
		t.Errorf("search_tools limit=0 = %v", bad)
	}
}

// TestInspectorToolSearchOverServe: over HTTP the found tools are the
// agent's: a later session of the same token lists them.
func TestInspectorToolSearchOverServe(t *testing.T) {
	e := newInspectorEnv(t)
	e.searchOn(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	srv := exec.Command(e.bin, "serve", "--listen", addr, "--model", "none")
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
	target := []string{"http://" + addr + "/mcp", "--transport", "http", "--header", "Authorization: Bearer " + e.token}
	run := func(args ...string) map[string]any { return e.inspect(t, 0, append(clone(target), args...)...) }

	if tools := run("--method", "tools/list"); !has(tools, `"name":"search_tools"`) || has(tools, `"name":"list-files"`) {
		t.Errorf("first tools/list over /mcp = %v, want search_tools alone", tools)
	}
	if found := run("--method", "tools/call", "--tool-name", "search_tools", "--tool-arg", "query=list the files in a folder"); !has(found, `"name":"list-files"`) {
		t.Errorf("search_tools over /mcp = %v", found)
	}
	if tools := run("--method", "tools/list"); !has(tools, `"name":"list-files"`) || !has(tools, `"name":"search_tools"`) {
		t.Errorf("tools/list after a search over /mcp = %v, want search_tools and list-files", tools)
	}
	// A later session calls it: through the pipeline, as any call.
	if call := run("--method", "tools/call", "--tool-name", "list-files", "--tool-arg", "space=documents"); !has(call, "hello.txt") {
		t.Errorf("list-files after a search over /mcp = %v", call)
	}
}
