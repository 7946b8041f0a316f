//go:build linux

package client

import (
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strconv"
	"sync/atomic"
	"syscall"
)

// superviseArg is the hidden first argument that makes the program a
// server's supervisor (MaybeSupervise).
const superviseArg = "__mcp-supervise"

// parentDied is the supervisor's parent-death signal: one that AIRS never
// sends to a server's process group (it sends SIGTERM and SIGKILL), so
// the supervisor can tell AIRS's death from AIRS stopping the server.
const parentDied = syscall.SIGUSR2

var supervisorOn atomic.Bool

// MaybeSupervise must be the first thing main does in a program that
// starts stdio servers. Called with the hidden supervisor arguments it
// runs the supervisor and exits; otherwise it returns at once and lets
// this program start its stdio servers under one.
//
// Why a supervisor: the kernel's parent-death signal kills a server when
// AIRS dies, however it dies (kill -9 included), but not what the server
// started (npx runs node as its child), which would live on, orphaned,
// until it reads the end of its stdin — if it ever reads it. The
// supervisor is this same binary, between AIRS and the server: it asks
// for a catchable parent-death signal, starts the server in its own
// process group, and when AIRS dies kills that whole group, itself
// included. A program that does not call MaybeSupervise starts its servers
// directly (a test binary re-executed with these arguments would run its
// tests instead).
func MaybeSupervise() {
	if len(os.Args) > 1 && os.Args[1] == superviseArg {
		os.Exit(supervise(os.Args[2:]))
	}
	supervisorOn.Store(true)
}

// supervisedCommand is the command that starts the server path (argv as
// its arguments, argv[0] included) under a supervisor, or nil when this
// program has none (MaybeSupervise was not called).
func supervisedCommand(path string, argv []string) *exec.Cmd {
	if !supervisorOn.Load() {
		return nil
	}
	// /proc/self/exe, not os.Executable: it runs this very binary even
	// after an upgrade replaced the file.
	args := append([]string{superviseArg, strconv.Itoa(os.Getpid()), path, "--"}, argv...)
	return exec.Command("/proc/self/exe", args...)
}

// supervise runs the supervisor: args are AIRS's pid, the server's path,
// "--" and its argv. Its exit status is the server's (a server killed by a
// signal is reported as killed by that signal).
func supervise(args []string) int {
	if len(args) < 4 || args[2] != "--" {
		fmt.Fprintln(os.Stderr, "airs: "+superviseArg+" is internal to AIRS (it runs a stdio MCP server); run the server's own command instead")
		return 2
	}
	parent, err := strconv.Atoi(args[0])
	if err != nil {
		fmt.Fprintln(os.Stderr, "airs: "+superviseArg+": bad parent pid:", args[0])
		return 2
	}
	// The server's own parent-death signal follows the thread that
	// started it: this one, which lives as long as the process.
	runtime.LockOSThread()
	died := make(chan os.Signal, 1)
	signal.Notify(died, parentDied)
	// AIRS stops a server by signalling its process group, the supervisor
	// included: the server gets the signal itself, and the supervisor
	// waits for it to end (a handler, unlike an ignored signal, is not
	// inherited by the server).
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	// Until now AIRS's death would have sent SIGKILL (set at the fork), so
	// there is no moment without a parent-death signal; and if AIRS died
	// before this, there is no signal to come: the parent pid tells.
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_SET_PDEATHSIG, uintptr(parentDied), 0); errno != 0 {
		fmt.Fprintln(os.Stderr, "airs: "+superviseArg+": prctl(PR_SET_PDEATHSIG):", errno)
		return 2
	}
	if os.Getppid() != parent {
		return 1
	}
	cmd := &exec.Cmd{Path: args[1], Args: args[3:], Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr,
		SysProcAttr: &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}}
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 127
	}
	exited := make(chan struct{})
	go func() {
		cmd.Wait()
		close(exited)
	}()
	for {
		select {
		case <-died:
			if os.Getppid() != parent { // not a stray SIGUSR2 from the server
				syscall.Kill(0, syscall.SIGKILL) // the group: the server, what it started, and this process
			}
		case <-stop:
		case <-exited:
			// AIRS's death also closes the server's stdin, and the server
			// may end of that before the signal is handled.
			if os.Getppid() != parent {
				syscall.Kill(0, syscall.SIGKILL)
			}
			ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
			if ws.Signaled() {
				signal.Reset(ws.Signal())
				syscall.Kill(os.Getpid(), ws.Signal())
				return 128 + int(ws.Signal()) // a signal whose default is not to end the process
			}
			return ws.ExitStatus()
		}
	}
}
