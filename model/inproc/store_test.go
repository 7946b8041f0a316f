package inproc

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseModelName(t *testing.T) {
	for _, c := range []struct{ in, want, path string }{
		{"qwen3", "qwen3:latest", "registry.ollama.ai/library/qwen3/latest"},
		{"qwen3:4b", "qwen3:4b", "registry.ollama.ai/library/qwen3/4b"},
		{"me/tiny:v1", "me/tiny:v1", "registry.ollama.ai/me/tiny/v1"},
		{"hf.co/org/repo:Q4_K_M", "hf.co/org/repo:Q4_K_M", "hf.co/org/repo/Q4_K_M"},
		{"localhost:5000/ns/m", "localhost:5000/ns/m:latest", "localhost:5000/ns/m/latest"},
		{"registry.ollama.ai/library/qwen3:0.6b", "qwen3:0.6b", "registry.ollama.ai/library/qwen3/0.6b"},
	} {
		n, err := ParseModelName(c.in)
		if err != nil {
			t.Fatalf("%q: %v", c.in, err)
		}
		if n.String() != c.want {
			t.Errorf("%q: String %q, want %q", c.in, n, c.want)
		}
		if got := filepath.ToSlash(n.manifestPath("")); got != "manifests/"+c.path {
			t.Errorf("%q: manifest %q, want manifests/%s", c.in, got, c.path)
		}
	}
	for _, bad := range []string{"", "a/b/c/d", "qwen3:", "../x", "m@sha256:00", "/m"} {
		if _, err := ParseModelName(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// fakeStore lays out an Ollama store: one manifest per name, each with a
// template layer and (unless noModel) a model layer whose blob holds data.
func fakeStore(t *testing.T, models map[string]string, noModel ...string) string {
	t.Helper()
	store := t.TempDir()
	os.MkdirAll(filepath.Join(store, "blobs"), 0o755)
	blob := func(data string) (string, int) {
		sum := sha256.Sum256([]byte(data))
		h := hex.EncodeToString(sum[:])
		if err := os.WriteFile(filepath.Join(store, "blobs", "sha256-"+h), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		return "sha256:" + h, len(data)
	}
	for name, data := range models {
		n, err := ParseModelName(name)
		if err != nil {
			t.Fatal(err)
		}
		type layer struct {
			MediaType string `json:"mediaType"`
			Digest    string `json:"digest"`
			Size      int    `json:"size"`
		}
		td, ts := blob("{{ .Prompt }}" + name)
		layers := []layer{{"application/vnd.ollama.image.template", td, ts}}
		if !strings.Contains(strings.Join(noModel, "\n"), name) {
			d, s := blob(data)
			layers = append(layers, layer{ModelLayerType, d, s})
		}
		raw, _ := json.Marshal(map[string]any{"schemaVersion": 2, "mediaType": "application/vnd.docker.distribution.manifest.v2+json", "layers": layers})
		p := n.manifestPath(store)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, raw, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return store
}

func TestResolveModel(t *testing.T) {
	store := fakeStore(t, map[string]string{
		"qwen3:0.6b":           "GGUF qwen small",
		"qwen3:4b":             "GGUF qwen big",
		"me/tiny:latest":       "GGUF tiny",
		"hf.co/org/repo:q4":    "GGUF hf",
		"nomic-embed:latest":   "GGUF embed",
		"broken/noblob:latest": "",
	}, "broken/noblob:latest")
	for name, want := range map[string]string{
		"qwen3:0.6b":                            "GGUF qwen small",
		"registry.ollama.ai/library/qwen3:0.6b": "GGUF qwen small",
		"me/tiny":                               "GGUF tiny",
		"hf.co/org/repo:q4":                     "GGUF hf",
	} {
		p, err := ResolveModel(store, name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if b, _ := os.ReadFile(p); string(b) != want {
			t.Errorf("%s: %s holds %q, want %q", name, p, b, want)
		}
	}
	for name, wants := range map[string][]string{
		"qwen3":                {"qwen3:latest is not in Ollama's store at " + store, "ollama pull qwen3:latest", "qwen3:0.6b, qwen3:4b"},
		"qwen2:4b":             {"ollama pull qwen2:4b", "qwen3:0.6b, qwen3:4b"},
		"llama3.2":             {"ollama pull llama3.2:latest"},
		"broken/noblob":        {"has no model layer", "application/vnd.ollama.image.template"},
		"hf.co/org/repo:q4@sh": {"a digest"},
	} {
		_, err := ResolveModel(store, name)
		if err == nil {
			t.Fatalf("%s: no error", name)
		}
		for _, w := range wants {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %q does not say %q", name, err, w)
			}
		}
		if name == "llama3.2" && strings.Contains(err.Error(), "the store has") {
			t.Errorf("llama3.2: %q lists names that are not close", err)
		}
	}

	// A blob cut short (an interrupted pull) is not loaded.
	p, _ := ResolveModel(store, "me/tiny")
	os.WriteFile(p, []byte("GG"), 0o644)
	if _, err := ResolveModel(store, "me/tiny"); err == nil || !strings.Contains(err.Error(), "its manifest says") {
		t.Errorf("short blob: %v", err)
	}
	os.Remove(p)
	if _, err := ResolveModel(store, "me/tiny"); err == nil || !strings.Contains(err.Error(), "missing from the store") {
		t.Errorf("missing blob: %v", err)
	}
}

func TestOllamaStore(t *testing.T) {
	store := fakeStore(t, map[string]string{"m:latest": "GGUF"})
	t.Setenv("OLLAMA_MODELS", store)
	if got, err := OllamaStore(); err != nil || got != store {
		t.Fatalf("OLLAMA_MODELS=%s: %q, %v", store, got, err)
	}
	if p, err := ResolveModel("", "m"); err != nil || !strings.HasPrefix(p, store) {
		t.Fatalf("ResolveModel through OLLAMA_MODELS: %q, %v", p, err)
	}
	empty := t.TempDir()
	t.Setenv("OLLAMA_MODELS", empty)
	if _, err := OllamaStore(); err == nil || !strings.Contains(err.Error(), empty+" (OLLAMA_MODELS)") {
		t.Fatalf("an OLLAMA_MODELS without manifests: %v", err)
	}
	t.Setenv("OLLAMA_MODELS", "")
	home := t.TempDir()
	t.Setenv("HOME", home)
	_, err := OllamaStore()
	if _, serr := os.Stat("/usr/share/ollama/.ollama/models/manifests"); serr == nil {
		t.Skip("this machine has a system-wide Ollama store")
	}
	if err == nil || !strings.Contains(err.Error(), filepath.Join(home, ".ollama", "models")) || !strings.Contains(err.Error(), "OLLAMA_MODELS") {
		t.Fatalf("no store: %v", err)
	}
	os.MkdirAll(filepath.Join(home, ".ollama", "models", "manifests"), 0o755)
	if got, err := OllamaStore(); err != nil || got != filepath.Join(home, ".ollama", "models") {
		t.Fatalf("~/.ollama/models: %q, %v", got, err)
	}
}
