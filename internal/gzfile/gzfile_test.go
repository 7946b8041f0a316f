package gzfile

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func write(t *testing.T, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func gz(t *testing.T, s string) []byte {
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	w.Write([]byte(s))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestOpen(t *testing.T) {
	want := strings.Repeat("line of text\n", 10000)
	for _, c := range []struct {
		name string
		data []byte
	}{
		{"plain.jsonl", []byte(want)},
		{"packed.jsonl.gz", gz(t, want)},
		{"misnamed.jsonl", gz(t, want)}, // the content decides, not the name
	} {
		rc, err := Open(write(t, c.name, c.data))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		got, err := io.ReadAll(rc)
		if err != nil || string(got) != want {
			t.Errorf("%s: read %d bytes, err %v; want %d bytes", c.name, len(got), err, len(want))
		}
		if err := rc.Close(); err != nil {
			t.Errorf("%s: close: %v", c.name, err)
		}
	}
}

func TestOpenErrors(t *testing.T) {
	if _, err := Open(filepath.Join(t.TempDir(), "missing.gz")); err == nil {
		t.Error("missing file: no error")
	}
	// gzip magic, then a broken header: the error names the file.
	p := write(t, "broken.gz", []byte{0x1f, 0x8b, 0, 0})
	if _, err := Open(p); err == nil || !strings.Contains(err.Error(), p) {
		t.Errorf("broken gzip: err %v, want one naming %s", err, p)
	}
	if rc, err := Open(write(t, "empty", nil)); err != nil {
		t.Errorf("empty file: %v", err)
	} else if b, _ := io.ReadAll(rc); len(b) != 0 {
		t.Errorf("empty file read %q", b)
	}
}
