package atomicfile

import (
	"os"
	"path/filepath"
	"testing"
)

// A replaced file holds the new bytes, no temp file is left beside it, and
// a write into a missing folder fails without creating anything.
func TestWrite(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "state.json")
	for _, want := range []string{"old", "new contents"} {
		if err := Write(p, []byte(want)); err != nil {
			t.Fatal(err)
		}
		if got, err := os.ReadFile(p); err != nil || string(got) != want {
			t.Fatalf("read %q %v, want %q", got, err, want)
		}
	}
	if es, _ := os.ReadDir(dir); len(es) != 1 {
		t.Fatalf("left beside it: %v", es)
	}
	if err := Write(filepath.Join(dir, "missing", "x"), []byte("x")); err == nil {
		t.Fatal("write into a missing folder succeeded")
	}
}
