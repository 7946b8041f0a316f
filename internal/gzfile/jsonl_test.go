package gzfile

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadJSONLines(t *testing.T) {
	dir := t.TempDir()
	text := "{\"n\":1}\n\n  \n{\"n\":2}\n"
	plain := filepath.Join(dir, "a.jsonl")
	if err := os.WriteFile(plain, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(text))
	zw.Close()
	zipped := filepath.Join(dir, "a.jsonl.gz")
	if err := os.WriteFile(zipped, gz.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	type rec struct{ N int }
	for _, p := range []string{plain, zipped} {
		got, err := ReadJSONLines[rec](p)
		if err != nil || len(got) != 2 || got[0].N != 1 || got[1].N != 2 {
			t.Errorf("%s: %+v %v, want n 1 and 2 (blank lines skipped)", p, got, err)
		}
	}
	bad := filepath.Join(dir, "bad.jsonl")
	if err := os.WriteFile(bad, []byte("{\"n\":1}\n{\"n\":\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadJSONLines[rec](bad); err == nil || !strings.Contains(err.Error(), "bad.jsonl:2:") {
		t.Errorf("a broken line gave %v, want an error naming bad.jsonl:2", err)
	}
}
