//go:build linux

package client

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/airs-dev/airs/mcp/client/mcptest"
	"github.com/airs-dev/airs/pipeline"
)

// envParent makes the test binary an AIRS-like parent: it connects a
// stdio server (the test binary again, as mcptest), prints the server's
// pid and waits to be killed.
const envParent = "AIRS_MCPTEST_PARENT"

// envParentPids makes the parent's server a shell that starts a child of
// its own (sleep 300, as npx starts node) and writes "server child" pids
// to this file before it becomes mcptest.
const envParentPids = "AIRS_MCPTEST_PARENT_PIDS"

func maybeParent() {
	if os.Getenv(envParent) == "" {
		return
	}
	command := mcptest.Command()
	if f := os.Getenv(envParentPids); f != "" {
		command = append([]string{"/bin/sh", "-c", `sleep 300 & echo "$$ $!" > "$0" && exec "$@"`, f}, command...)
	}
	// Start the server from a goroutine that then ends, on a thread the
	// runtime is free to retire: the parent-death signal must still wait
	// for the process, not that thread.
	done := make(chan *Conn)
	go func() {
		c, err := Connect(context.Background(), pipeline.NewRegistry(pipeline.RegistryConfig{}),
			Server{Name: "child", Command: command, Env: mcptest.Env(os.Getenv(envParent), 0)})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		done <- c
	}()
	c := <-done
	fmt.Println(c.PID())
	select {}
}

// TestServerDiesWithAIRS: a stdio server does not outlive an AIRS killed
// with SIGKILL (no chance to stop it): the kernel kills it.
func TestServerDiesWithAIRS(t *testing.T) {
	// Orphans are reparented to this test process, so it can wait for the
	// server once its parent is gone.
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, 36 /* PR_SET_CHILD_SUBREAPER */, 1, 0); errno != 0 {
		t.Skipf("prctl(PR_SET_CHILD_SUBREAPER): %v", errno)
	}
	defer syscall.RawSyscall(syscall.SYS_PRCTL, 36, 0, 0)
	parent := exec.Command(os.Args[0], "-test.run=^$")
	parent.Env = append(os.Environ(), envParent+"="+filepath.Join(t.TempDir(), "events"))
	parent.Stderr = os.Stderr
	out, err := parent.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	pid, perr := strconv.Atoi(strings.TrimSpace(line))
	if err != nil || perr != nil || pid <= 0 {
		parent.Process.Kill()
		t.Fatalf("the parent did not report its server's pid: %q %v", line, err)
	}
	if err := syscall.Kill(pid, 0); err != nil {
		t.Fatalf("the server (pid %d) is not running before the parent dies: %v", pid, err)
	}
	parent.Process.Signal(syscall.SIGKILL)
	parent.Wait()
	gone := make(chan error, 1)
	go func() {
		var ws syscall.WaitStatus
		_, err := syscall.Wait4(pid, &ws, 0, nil)
		if err == nil && !(ws.Signaled() && ws.Signal() == syscall.SIGKILL) {
			err = fmt.Errorf("it ended otherwise: %v", ws)
		}
		gone <- err
	}()
	select {
	case err := <-gone:
		if err != nil {
			t.Fatalf("waiting for the server: %v", err)
		}
	case <-time.After(10 * time.Second):
		syscall.Kill(pid, syscall.SIGKILL)
		t.Fatalf("the server (pid %d) outlived its killed parent by 10 s", pid)
	}
}

// TestServerChildrenDieWithAIRS: what a stdio server started (node under
// npx) does not outlive an AIRS killed with SIGKILL either: the supervisor
// between them kills the server's whole process group.
func TestServerChildrenDieWithAIRS(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pids")
	parent := exec.Command(os.Args[0], "-test.run=^$")
	parent.Env = append(os.Environ(), envParent+"="+filepath.Join(dir, "events"), envParentPids+"="+pidFile)
	parent.Stderr = os.Stderr
	out, err := parent.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	supervisor, perr := strconv.Atoi(strings.TrimSpace(line))
	if err != nil || perr != nil || supervisor <= 0 {
		parent.Process.Kill()
		t.Fatalf("the parent did not report its server's pid: %q %v", line, err)
	}
	// Connect returned, so the shell wrote the file before it became the server.
	b, err := os.ReadFile(pidFile)
	var server, child int
	if _, serr := fmt.Sscan(string(b), &server, &child); err != nil || serr != nil {
		parent.Process.Kill()
		t.Fatalf("the server's pids: %q %v %v", b, err, serr)
	}
	pids := map[string]int{"supervisor": supervisor, "server": server, "server's child": child}
	for what, pid := range pids {
		if !alive(pid) {
			parent.Process.Kill()
			t.Fatalf("the %s (pid %d) is not running before the parent dies", what, pid)
		}
	}
	parent.Process.Signal(syscall.SIGKILL)
	parent.Wait()
	deadline := time.Now().Add(10 * time.Second)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for what, pid := range pids {
		for alive(pid) {
			if time.Now().After(deadline) {
				for _, pid := range pids {
					syscall.Kill(pid, syscall.SIGKILL)
				}
				t.Fatalf("the %s (pid %d) outlived its killed AIRS by 10 s", what, pid)
			}
			<-tick.C
		}
	}
}

// alive reports whether pid is a process that has not ended (a zombie
// has: it only waits to be reaped).
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] != 'Z' && s[i+2] != 'X'
}
