//go:build unix

package audit

import (
	"os"
	"syscall"
)

// lockFile takes an exclusive advisory lock, released by the kernel when the
// process dies (kill -9 included), so a crashed writer never blocks the next.
func lockFile(f *os.File) error {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
}
