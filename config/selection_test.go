package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSelectionWeights(t *testing.T) {
	home := isolate(t)
	file := filepath.Join(home, "airs.yaml")

	c, err := Parse(file, []byte("spaces: {}\n"))
	if err != nil || c.Selection.Weights != nil {
		t.Fatalf("no selection section: weights %v, %v", c.Selection.Weights, err)
	}

	// The example documents the defaults, and they parse as such.
	os.MkdirAll(filepath.Join(home, "Documents"), 0o755)
	c, err = Parse(file, []byte(Example))
	if err != nil || c.Selection.Weights == nil || *c.Selection.Weights != (Weights{Semantic: 0.55, Trust: 0.15, Success: 0.15, Latency: 0.05, Preference: 0.10}) {
		t.Fatalf("example: weights %+v, %v; want the ranking's defaults", c.Selection.Weights, err)
	}

	c, err = Parse(file, []byte("spaces: {}\nselection:\n  weights: {semantic: 0.7, trust: 0.3}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if w := c.Selection.Weights; w == nil || *w != (Weights{Semantic: 0.7, Trust: 0.3}) {
		t.Fatalf("inline weights: %+v", w)
	}

	// A path, relative to the config file, to what `airs eval tune --write` writes.
	os.WriteFile(filepath.Join(home, "w.json"), []byte(`{"semantic":0.5,"trust":0.1,"success":0.2,"latency":0.1,"preference":0.1}`+"\n"), 0o644)
	c, err = Parse(file, []byte("spaces: {}\nselection:\n  weights: w.json\n"))
	if err != nil {
		t.Fatal(err)
	}
	if w := c.Selection.Weights; w == nil || w.Success != 0.2 || c.Selection.WeightsFile != filepath.Join(home, "w.json") {
		t.Fatalf("weights file: %+v from %q", w, c.Selection.WeightsFile)
	}

	os.WriteFile(filepath.Join(home, "bad.json"), []byte(`{"semantic":0.5,"speed":1}`), 0o644)
	for _, c := range []struct{ yaml, want string }{
		{"selection:\n  weights: {semantic: 1, relevance: 2}\n", `:3: selection.weights: unknown component "relevance"`},
		{"selection:\n  weights: {semantic: -1}\n", ":3: selection.weights: weight -1 is not a non-negative number"},
		{"selection:\n  weights: {semantic: 0}\n", "at least one above 0"},
		{"selection:\n  weights: {semantic: lots}\n", `selection.weights.semantic: want a number`},
		{"selection:\n  weights: missing.json\n", "missing.json: no such file"},
		{"selection:\n  weights: bad.json\n", `unknown field "speed"`},
		{"selection:\n  weights: [1, 2]\n", "want a file path or a mapping"},
		{"selection:\n  weight: {semantic: 1}\n", `unknown key "weight"`},
	} {
		_, err := Parse(file, []byte("spaces: {}\n"+c.yaml))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want it to contain %q", c.yaml, err, c.want)
		}
	}
}

// selection.embedder picks the index's embedder; a name AIRS does not have,
// or ollama without a model to call, is an error that says what to write.
func TestSelectionEmbedder(t *testing.T) {
	home := isolate(t)
	file := filepath.Join(home, "airs.yaml")
	for _, tc := range []struct{ yaml, want, err string }{
		{"spaces: {}\n", "", ""},
		{"spaces: {}\nselection:\n  embedder: model\n", EmbedderModel, ""},
		{"spaces: {}\nselection:\n  embedder: lexical\n", EmbedderLexical, ""},
		{"spaces: {}\nselection:\n  embedder: blend\n", EmbedderBlend, ""},
		{"spaces: {}\nollama:\n  embed_model: nomic-embed-text\nselection:\n  embedder: ollama\n", EmbedderOllama, ""},
		{"spaces: {}\nselection:\n  embedder: ollama\n", "", "ollama.embed_model"},
		{"spaces: {}\nselection:\n  embedder: bert\n", "", "blend (the tool model with word vectors, default), model, lexical or ollama"},
	} {
		c, err := Parse(file, []byte(tc.yaml))
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: error %v, want one mentioning %q", tc.yaml, err, tc.err)
			}
			continue
		}
		if err != nil || c.Selection.Embedder != tc.want {
			t.Errorf("%q: embedder %q, %v; want %q", tc.yaml, c.Selection.Embedder, err, tc.want)
		}
	}
}
