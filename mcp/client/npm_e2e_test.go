//go:build e2e && unix

package client

// Real third-party MCP servers from npm, pinned: scripts/e2e.sh installs
// them (npm install --ignore-scripts) and exports AIRS_E2E_MCP_DIR, the
// prefix they are installed under.

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/airs-dev/airs/pipeline"
)

// NPMServers are the packages the e2e tests run (scripts/e2e.sh installs
// the same list).
var NPMServers = []string{"@modelcontextprotocol/server-filesystem@2026.8.31", "@modelcontextprotocol/server-everything@2026.8.31"}

func npmServer(t *testing.T, name string, args ...string) (*Conn, *pipeline.Manager, *pipeline.Registry) {
	t.Helper()
	dir := os.Getenv("AIRS_E2E_MCP_DIR")
	if dir == "" {
		t.Skip("e2e: AIRS_E2E_MCP_DIR is not set; run `bash scripts/e2e.sh` (make e2e), which installs " + strings.Join(NPMServers, " "))
	}
	pkg := filepath.Join(dir, "node_modules", "@modelcontextprotocol", "server-"+name, "dist", "index.js")
	reg := pipeline.NewRegistry(pipeline.RegistryConfig{})
	c, err := Connect(context.Background(), reg, Server{Name: name, Command: append([]string{"node", pkg}, args...),
		RestartsPerMinute: 3, Grace: time.Second, Logger: slog.New(slog.NewTextHandler(testWriter{t}, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	m, err := pipeline.NewManager(pipeline.Config{Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return c, m, reg
}

func call(m *pipeline.Manager, ctx context.Context, tool, params string, timeout time.Duration) (*pipeline.Result, error) {
	return m.Call(ctx, pipeline.Request{Tool: tool, Params: []byte(params), Caller: "e2e", Timeout: timeout})
}

func TestNPMFilesystem(t *testing.T) {
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "note.txt"), []byte("hello from a real MCP server\n"), 0o644)
	c, m, reg := npmServer(t, "filesystem", root)
	ctx := context.Background()
	read, ok := reg.Get("mcp:filesystem", "filesystem.read_text_file", "")
	if !ok || !read.Tool.ReadOnly {
		t.Fatalf("read_text_file: %v %+v (tools: %d, unavailable %v)", ok, read.Tool, len(c.Tools()), c.Unavailable())
	}
	if w, ok := reg.Get("mcp:filesystem", "filesystem.write_file", ""); !ok || w.Tool.ReadOnly {
		t.Fatalf("write_file: %v %+v", ok, w.Tool)
	}
	res, err := call(m, ctx, "filesystem.read_text_file", `{"path":"`+filepath.Join(root, "note.txt")+`"}`, 0)
	if err != nil || !strings.Contains(string(res.Output), "hello from a real MCP server") {
		t.Fatalf("read: %v %v", err, res)
	}
	// Outside its roots, the server refuses: an application error.
	_, err = call(m, ctx, "filesystem.read_text_file", `{"path":"/etc/hostname"}`, 0)
	if pipeline.KindOf(err) != pipeline.KindProviderRejected {
		t.Fatalf("outside the root: %v", err)
	}
	// The schema stage enforces the server's inputSchema.
	if _, err := call(m, ctx, "filesystem.read_text_file", `{}`, 0); pipeline.KindOf(err) != pipeline.KindSchemaValidationFailed {
		t.Fatalf("no path: %v", err)
	}
}

func TestNPMEverything(t *testing.T) {
	c, m, _ := npmServer(t, "everything")
	ctx := context.Background()
	res, err := call(m, ctx, "everything.get-sum", `{"a":2,"b":40}`, 0)
	if err != nil || !strings.Contains(string(res.Output), "42") {
		t.Fatalf("get-sum: %v %v", err, res)
	}
	// Cancel: the caller gives up; the server is told and stays.
	cctx, cancel := context.WithCancel(ctx)
	time.AfterFunc(300*time.Millisecond, cancel)
	t0 := time.Now()
	_, err = call(m, cctx, "everything.trigger-long-running-operation", `{"duration":20,"steps":20}`, 0)
	if pipeline.KindOf(err) != pipeline.KindCancelled || time.Since(t0) > 3*time.Second {
		t.Fatalf("cancel: %v after %v", err, time.Since(t0))
	}
	// A timeout: the same, reported as Timeout.
	_, err = call(m, ctx, "everything.trigger-long-running-operation", `{"duration":20,"steps":20}`, 500*time.Millisecond)
	if pipeline.KindOf(err) != pipeline.KindTimeout {
		t.Fatalf("timeout: %v", err)
	}
	time.Sleep(1500 * time.Millisecond) // past the grace: a responsive server is not killed
	if c.Kills.Load() != 0 {
		t.Fatalf("a responsive server was killed")
	}
	// A timeout that kills: the server is frozen (SIGSTOP), so it answers
	// neither the call nor the ping after the cancel; it is killed and
	// restarted, and answers again.
	pid := c.PID()
	if pid == 0 {
		t.Fatal("no pid")
	}
	// The whole process group: the server's supervisor, when it has one,
	// and the server itself (the group's leader is what PID names).
	syscall.Kill(-pid, syscall.SIGSTOP)
	_, err = call(m, ctx, "everything.echo", `{"message":"frozen"}`, 500*time.Millisecond)
	if pipeline.KindOf(err) != pipeline.KindTimeout {
		t.Fatalf("frozen: %v", err)
	}
	for end := time.Now().Add(5 * time.Second); c.Kills.Load() == 0; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatal("the frozen server was not killed")
		}
	}
	res, err = call(m, ctx, "everything.echo", `{"message":"back"}`, 30*time.Second)
	if err != nil || !strings.Contains(string(res.Output), "back") {
		t.Fatalf("after the restart: %v %v", err, res)
	}
	if c.PID() == pid {
		t.Fatal("same process after the kill")
	}
}
