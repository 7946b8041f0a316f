//go:build unix

package session

import (
	"fmt"
	"os"
	"syscall"
)

// lockFile takes an exclusive, non-blocking advisory lock so that two
// recorders never interleave lines in one log.
func lockFile(f *os.File) error {
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return fmt.Errorf("session log %s is in use by another recorder: %w", f.Name(), err)
	}
	return nil
}
