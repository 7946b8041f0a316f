//go:build unix

package client

import (
	"os/exec"
	"syscall"
)

// ownGroup starts the server in a process group of its own, so that killing
// it also kills what it started (npx runs node as a child).
func ownGroup(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }

// signalGroup sends sig to the server's process group.
func signalGroup(cmd *exec.Cmd, sig syscall.Signal) error {
	return syscall.Kill(-cmd.Process.Pid, sig)
}

// InheritedEnv are the variables of AIRS's environment a stdio server
// gets (ServerEnv): those of the TypeScript and Python SDKs'
// getDefaultEnvironment, and LANG so that it speaks the user's language.
var InheritedEnv = []string{"HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "LANG"}

const (
	sigTerm = syscall.SIGTERM
	sigKill = syscall.SIGKILL
)
