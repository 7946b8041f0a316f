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

// InheritedEnv are the variables of AIRS's environment a stdio server
// gets (ServerEnv), as the official SDKs choose them on Windows.
var InheritedEnv = []string{"APPDATA", "HOMEDRIVE", "HOMEPATH", "LOCALAPPDATA", "PATH", "PROCESSOR_ARCHITECTURE",
	"SYSTEMDRIVE", "SYSTEMROOT", "TEMP", "USERNAME", "USERPROFILE", "LANG"}

const (
	sigTerm = syscall.SIGTERM
	sigKill = syscall.SIGKILL
)
