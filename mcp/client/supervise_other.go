//go:build !linux

package client

import "os/exec"

// MaybeSupervise returns at once: without a parent-death signal there is
// no supervisor to run (see the Linux build).
func MaybeSupervise() {}

func supervisedCommand(string, []string) *exec.Cmd { return nil }
