//go:build unix

package engine

import (
	"fmt"
	"os"
	"syscall"
)

// lockPath takes an exclusive flock on path (created if needed) and
// returns its release. Holders keep it briefly (one read-merge-write of the
// learned state, one open and sync of the tool index); the kernel drops it
// if the holder dies.
func lockPath(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	return func() { f.Close() }, nil // closing the descriptor releases the lock
}
