//go:build unix

package mcptest

import (
	"os"
	"syscall"
)

// freeze stops the whole process: it answers nothing, pings included.
func freeze() { syscall.Kill(os.Getpid(), syscall.SIGSTOP) }
