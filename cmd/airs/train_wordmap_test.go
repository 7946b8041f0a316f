package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/airs-dev/airs/embeddings"
)

// TestTrainWordMap: `airs train retrieval --word-map FILE` fits the word
// vectors' map on the reference data and writes one the word vectors
// accept; with --dim it is that many rows wide. Needs DATA_DIR.
func TestTrainWordMap(t *testing.T) {
	dataDir := os.Getenv("DATA_DIR")
	if dataDir == "" {
		t.Skip("DATA_DIR not set")
	}
	e := newEnv(t, "")
	out := filepath.Join(t.TempDir(), "map.bin.gz")
	e.run("train", "retrieval", "--data-dir", dataDir, "--word-map", out, "--epochs", "1", "--dim", "16").expect(t, 0, "wrote "+out, "")
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	m, err := embeddings.ReadWordMap(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	w, err := embeddings.NewWordVectors(embeddings.WordVectorOptions{Map: m})
	if err != nil {
		t.Fatal(err)
	}
	if w.Dim() != 16 {
		t.Fatalf("map width %d, want 16 (--dim)", w.Dim())
	}
}
