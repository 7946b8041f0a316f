// Package filelock is the one exclusive lock on a file that every airs
// process sharing an AIRS_HOME honours: the stores take it around a
// read-modify-write (or an append that must not interleave) so that two
// processes never lose each other's change. It is advisory (flock(2)) and
// the kernel releases it when its holder dies, kill -9 included, so a
// crashed process never blocks the next.
//
// Where flock is missing (Supported is false) every call succeeds without
// locking: there one process at a time must use an AIRS_HOME.
package filelock

import (
	"fmt"
	"os"
)

// Lock blocks until it holds the exclusive lock on f. Holders should keep
// it briefly: others wait for it.
func Lock(f *os.File) error {
	if err := lock(f); err != nil {
		return fmt.Errorf("locking %s: %w", f.Name(), err)
	}
	return nil
}

// Unlock releases the lock on f (closing f releases it too).
func Unlock(f *os.File) error {
	if err := unlock(f); err != nil {
		return fmt.Errorf("unlocking %s: %w", f.Name(), err)
	}
	return nil
}

// LockPath opens path (creating it, mode 0600, if needed) and blocks until
// it holds the lock on it; release unlocks and closes it.
func LockPath(path string) (release func(), err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if err := Lock(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { f.Close() }, nil // closing the descriptor releases the lock
}
