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

func maybeParent() {
	if os.Getenv(envParent) == "" {
		return
	}
	// Start the server from a goroutine that then ends, on a thread the
	// runtime is free to retire: the parent-death signal must still wait
	// for the process, not that thread.
	done := make(chan *Conn)
	go func() {
		c, err := Connect(context.Background(), pipeline.NewRegistry(pipeline.RegistryConfig{}),
			Server{Name: "child", Command: mcptest.Command(), Env: mcptest.Env(os.Getenv(envParent), 0)})
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
