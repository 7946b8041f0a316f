//go:build unix

package guard

import (
	"os"
	"syscall"
)

// lockFile takes the exclusive advisory lock every process holds while it
// reads, changes and rewrites the review store (airs serve deciding a call
// while `airs review approve` runs). The kernel releases it when the
// process dies.
func lockFile(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			return err
		}
	}
}

func unlockFile(f *os.File) error { return syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }
