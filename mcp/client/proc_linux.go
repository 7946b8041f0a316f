//go:build linux

package client

import (
	"os/exec"
	"runtime"
	"sync"
	"syscall"
)

// startCmd starts cmd so that the kernel kills it when AIRS dies, however
// AIRS dies (kill -9 included): the parent-death signal, SIGKILL.
//
// Linux sends that signal when the thread that forked the child exits,
// not the process, and the Go runtime may end an idle thread. So every
// server is started from one goroutine locked to its thread for the life
// of the process: that thread exits only with AIRS.
func startCmd(cmd *exec.Cmd) error {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	starterOnce.Do(func() {
		starter = make(chan func())
		go func() {
			runtime.LockOSThread() // never unlocked: the thread lives as long as AIRS
			for f := range starter {
				f()
			}
		}()
	})
	done := make(chan error, 1)
	starter <- func() { done <- cmd.Start() }
	return <-done
}

var (
	starterOnce sync.Once
	starter     chan func()
)
