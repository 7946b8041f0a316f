package export

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"os"
	"testing"
)

func forEachSchema(t testing.TB, path string, f func(id string, schema []byte)) {
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

// BenchmarkExportLargest exports the largest schemas of JSONSchemaBench's
// JsonSchemaStore file (the slowest exports seen) to both formats.
func BenchmarkExportLargest(b *testing.B) {
	dir := os.Getenv("DATA_DIR")
	if dir == "" {
		b.Skip("DATA_DIR not set")
	}
	var big [][]byte
	forEachSchema(b, dir+"/jsonschemabench/JsonSchemaStore.jsonl.gz", func(id string, schema []byte) {
		if len(schema) > 200_000 {
			big = append(big, schema)
		}
	})
	if len(big) == 0 {
		b.Skip("no schema over 200 kB")
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, s := range big {
			if _, _, err := OllamaFormat(s); err != nil {
				b.Fatal(err)
			}
			if _, _, err := GBNF(s); err != nil {
				b.Fatal(err)
			}
		}
	}
}
