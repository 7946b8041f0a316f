package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/airs-dev/airs/embeddings"
)

// TestTrainRetrievalExtraUsage: an unknown extra set is a usage error that
// names the sets; --fusion-with refuses a set the model was trained on (a
// registry it knows says nothing about tools it never saw) and an unknown
// one.
func TestTrainRetrievalExtraUsage(t *testing.T) {
	e := newEnv(t, "")
	data := t.TempDir()
	e.run("train", "retrieval", "--data-dir", data, "--extra", "nosuch").expect(t, 2, "", "no set \"nosuch\" (the sets: sealtools, toolalpaca, apibench")

	m := embeddings.NewToolModel(embeddings.ModelHeader{Buckets: 64, Dim: 4}, 1)
	m.SetTrainInfo(map[string]any{"extra": []string{"sealtools"}})
	file := filepath.Join(t.TempDir(), "m.bin.gz")
	f, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.WriteTo(f); err != nil {
		t.Fatal(err)
	}
	f.Close()
	out := filepath.Join(t.TempDir(), "out.bin.gz")
	e.run("train", "retrieval", "--data-dir", data, "--fusion-only", file, "--out", out, "--fusion-with", "toolalpaca,sealtools").
		expect(t, 2, "", "--fusion-with sealtools: the model was trained on it")
	e.run("train", "retrieval", "--data-dir", data, "--fusion-only", file, "--out", out, "--fusion-with", "nosuch").
		expect(t, 2, "", `no extra training set "nosuch"`)
	if _, err := os.Stat(out); err == nil {
		t.Error("a refused fit wrote its output")
	}
}
