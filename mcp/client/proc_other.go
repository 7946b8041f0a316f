//go:build !unix

package client

import (
	"os/exec"
	"syscall"
)

func ownGroup(*exec.Cmd) {}

// signalGroup can only reach the server's own process here: children it
// started may outlive it.
func signalGroup(cmd *exec.Cmd, sig syscall.Signal) error {
	if sig == sigTerm {
		return cmd.Process.Signal(sig)
	}
	return cmd.Process.Kill()
}

const (
	sigTerm = syscall.SIGTERM
	sigKill = syscall.SIGKILL
)
