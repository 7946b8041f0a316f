package export

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"os"
	"testing"
)

func forEachSchema(t *testing.T, path string, f func(id string, schema []byte)) {
	t.Helper()
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	zr, err := gzip.NewReader(fh)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(zr)
	sc.Buffer(make([]byte, 1<<20), 1<<28)
	for sc.Scan() {
		var rec struct {
			ID     string          `json:"id"`
			Schema json.RawMessage `json:"schema"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatal(err)
		}
		f(rec.ID, rec.Schema)
	}
}
