//go:build unix

package filelock

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// While one descriptor holds the lock, another cannot take it; once it is
// released (by release or by Unlock), it can.
func TestLockExcludesOtherDescriptors(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lock")
	release, err := LockPath(path)
	if err != nil {
		t.Fatal(err)
	}
	other, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	try := func() error { return syscall.Flock(int(other.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) }
	if err := try(); !errors.Is(err, syscall.EWOULDBLOCK) {
		t.Fatalf("a second descriptor took the held lock: %v", err)
	}
	release()
	if err := try(); err != nil {
		t.Fatalf("after release the lock is still held: %v", err)
	}
	if err := Unlock(other); err != nil {
		t.Fatal(err)
	}

	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := Lock(f); err != nil {
		t.Fatal(err)
	}
	if err := try(); !errors.Is(err, syscall.EWOULDBLOCK) {
		t.Fatalf("Lock did not hold the lock: %v", err)
	}
	if err := Unlock(f); err != nil {
		t.Fatal(err)
	}
	if err := try(); err != nil {
		t.Fatalf("after Unlock the lock is still held: %v", err)
	}
}
