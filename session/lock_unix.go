//go:build unix

package session

import (
	"fmt"
	"os"
	"syscall"
)

// lockFile takes the exclusive advisory lock a recorder holds while it
// writes and fsyncs one batch, so that recorders in several processes never
// interleave lines. It blocks: holders keep it for one batch only, and the
// kernel releases it when a holder dies.
func lockFile(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err == nil {
			return nil
		}
		if err != syscall.EINTR {
			return fmt.Errorf("locking session log %s: %w", f.Name(), err)
		}
	}
}

func unlockFile(f *os.File) error {
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_UN); err != nil {
		return fmt.Errorf("unlocking session log %s: %w", f.Name(), err)
	}
	return nil
}
