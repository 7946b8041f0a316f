package retrieval

import (
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWriteReport(t *testing.T) {
	dir := t.TempDir()
	rs := []Result{
		{Dataset: "a", Method: "airs", N: 10, Acc1: 0.5, NDCG5: 0.6},
		{Dataset: "a", Method: "bm25", N: 10, Acc1: 0.4, NDCG5: 0.5},
		{Dataset: "b", Method: "airs", N: 5, Acc1: 0.8, NDCG5: 0.9},
		{Dataset: "b", Method: "bm25", N: 5, Acc1: 0.6, NDCG5: 0.7},
	}
	path, err := WriteReport(dir, Options{Data: []string{"x.jsonl.gz"}}, rs)
	if err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| b | bm25 | 5 | 0.600 |", "retrieval_ndcg5.png", "retrieval_acc1.png"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
	for _, name := range []string{"retrieval_ndcg5.png", "retrieval_acc1.png"} {
		f, err := os.Open(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(f)
		f.Close()
		if err != nil || img.Bounds().Dx() < 100 {
			t.Errorf("%s: %v %v", name, err, img)
		}
	}
}
