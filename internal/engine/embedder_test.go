package engine

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/airs-dev/airs/embeddings"
)

// selection.embedder picks the tool index's embedder: unset or blend, the
// trained tool model joined with the pretrained word vectors; model, the
// tool model alone.
func TestSelectionEmbedderPicksTheIndexEmbedder(t *testing.T) {
	for _, tc := range []struct {
		yaml string
		want string
	}{
		{"", "*embeddings.Blend"},
		{"selection:\n  embedder: blend\n", "*embeddings.Blend"},
		{"selection:\n  embedder: model\n", "*embeddings.ToolModel"},
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
