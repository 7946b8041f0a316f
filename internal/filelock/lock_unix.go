//go:build unix

package filelock

import (
	"os"
	"syscall"
)

// Supported tells whether Lock locks on this system.
const Supported = true

func lock(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			return err
		}
	}
}

func unlock(f *os.File) error { return syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }
