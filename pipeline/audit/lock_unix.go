//go:build unix

package audit

import (
	"os"
	"syscall"
)

// lockFile takes the exclusive advisory lock that every writer holds while
// it extends the chain. It blocks: holders keep it only for one batch's
// tail check, hashing and write(2), never across an fsync. The kernel
// releases it when the process dies (kill -9 included), so a crashed writer
// never blocks the next.
func lockFile(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			return err
		}
	}
}

func unlockFile(f *os.File) error {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
}
