package embeddings

import (
	"context"
	"testing"
)

// lazyDim is an embedder that learns its dimension from its first answer,
// as the Ollama embedder does.
type lazyDim struct{ dim int }

func (l *lazyDim) ID() string { return "lazy" }
func (l *lazyDim) Dim() int   { return l.dim }
func (l *lazyDim) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	l.dim = 3
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = []float32{float32(len(t)), 1, float32(i + 1)}
	}
	return out, nil
}

func TestReopenWithLazyDimension(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	docs := []Doc{{ID: "a", Name: "alpha", Description: "first tool"}, {ID: "b", Name: "beta", Description: "second tool, longer"}}
	ix, err := Open(ctx, &lazyDim{}, Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ix.Sync(ctx, docs); err != nil {
		t.Fatal(err)
	}
	// A new process: the embedder does not know its dimension yet and
	// nothing changed, so nothing is embedded.
	ix2, err := Open(ctx, &lazyDim{}, Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	st, err := ix2.Sync(ctx, docs)
	if err != nil {
		t.Fatal(err)
	}
	if st.Embedded != 0 || st.Unchanged != 2 {
		t.Fatalf("sync after reopen: %+v", st)
	}
	hits, err := ix2.Search(ctx, "alpha", 2, Filter{})
	if err != nil || len(hits) == 0 {
		t.Fatalf("search after reopen: %v %v", hits, err)
	}
}
