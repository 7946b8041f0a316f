//go:build !linux

package client

import "os/exec"

// startCmd starts cmd. Without a parent-death signal, a server outlives an
// AIRS that is killed outright until it reads the end of its stdin (the
// MCP SDKs' servers then exit).
func startCmd(cmd *exec.Cmd) error { return cmd.Start() }
