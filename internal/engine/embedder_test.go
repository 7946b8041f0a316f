package engine

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/airs-dev/airs/embeddings"
)

// selection.embedder picks the tool index's embedder: unset, the trained
// tool model; blend, the model joined with the pretrained word vectors.
func TestSelectionEmbedderPicksTheIndexEmbedder(t *testing.T) {
	for _, tc := range []struct {
		yaml string
		want string
	}{
		{"", "*embeddings.ToolModel"},
		{"selection:\n  embedder: blend\n", "*embeddings.Blend"},
	} {
		dir := t.TempDir()
		os.Mkdir(filepath.Join(dir, "docs"), 0o755)
		cfg := writeConfig(t, dir, "spaces: {documents: ./docs}\n"+tc.yaml)
		e := testEngine(t, cfg, testBuild{})
		got := "?"
		switch e.index.Embedder().(type) {
		case *embeddings.ToolModel:
			got = "*embeddings.ToolModel"
		case *embeddings.Blend:
			got = "*embeddings.Blend"
		}
		if got != tc.want {
			t.Errorf("%q: index embedder %s (%T), want %s", tc.yaml, got, e.index.Embedder(), tc.want)
		}
	}
}
