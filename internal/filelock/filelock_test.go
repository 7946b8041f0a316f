package filelock

import (
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"testing"
)

// Read-modify-writes under the lock lose no update, each from its own
// descriptor (as separate processes would have).
func TestLockPathSerializesReadModifyWrite(t *testing.T) {
	if !Supported {
		t.Skip("no file lock on this system")
	}
	dir := t.TempDir()
	counter := filepath.Join(dir, "n")
	if err := os.WriteFile(counter, []byte("0"), 0o600); err != nil {
		t.Fatal(err)
	}
	const workers, each = 8, 25
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for range workers {
		wg.Go(func() {
			for range each {
				release, err := LockPath(filepath.Join(dir, "lock"))
				if err != nil {
					errs <- err
					return
				}
				b, err := os.ReadFile(counter)
				n, _ := strconv.Atoi(string(b))
				runtime.Gosched() // invite another writer into the gap the lock closes
				if err == nil {
					err = os.WriteFile(counter, []byte(strconv.Itoa(n+1)), 0o600)
				}
				release()
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(counter)
	if got := string(b); got != strconv.Itoa(workers*each) {
		t.Fatalf("counter %s after %d locked increments: updates were lost", got, workers*each)
	}
}

func TestLockPathReportsAnUnopenablePath(t *testing.T) {
	if _, err := LockPath(filepath.Join(t.TempDir(), "missing", "lock")); err == nil {
		t.Fatal("LockPath in a missing folder succeeded")
	}
}
