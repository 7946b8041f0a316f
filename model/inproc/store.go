package inproc

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Ollama's defaults for a name's missing parts, as `ollama pull` fills them.
const (
	DefaultRegistry  = "registry.ollama.ai"
	DefaultNamespace = "library"
	DefaultTag       = "latest"
	// ModelLayerType is the media type of the manifest layer that is the
	// GGUF (the others are templates, parameters, licences, projectors).
	ModelLayerType = "application/vnd.ollama.image.model"
)

// ModelName is a model's name in Ollama's store: host/namespace/model:tag.
type ModelName struct {
	Host, Namespace, Model, Tag string
}

// ParseModelName reads the forms `ollama pull` accepts: model, model:tag,
// ns/model:tag and host/ns/model:tag; missing parts take Ollama's defaults.
func ParseModelName(s string) (ModelName, error) {
	n := ModelName{Host: DefaultRegistry, Namespace: DefaultNamespace, Tag: DefaultTag}
	rest := strings.TrimSpace(s)
	// A digest pins a blob, not a name in the store.
	if i := strings.IndexByte(rest, '@'); i >= 0 {
		return n, fmt.Errorf("inproc: model %q: a digest (@sha256:…) is not a name in Ollama's store; give NAME[:TAG]", s)
	}
	// The tag is after the last colon of the last path element (a host may
	// carry a port: localhost:5000/ns/model).
	if i := strings.LastIndexByte(rest, ':'); i > strings.LastIndexByte(rest, '/') {
		n.Tag, rest = rest[i+1:], rest[:i]
	}
	parts := strings.Split(rest, "/")
	switch len(parts) {
	case 1:
		n.Model = parts[0]
	case 2:
		n.Namespace, n.Model = parts[0], parts[1]
	case 3:
		n.Host, n.Namespace, n.Model = parts[0], parts[1], parts[2]
	default:
		return n, fmt.Errorf("inproc: model %q: want NAME, NAME:TAG, NAMESPACE/NAME:TAG or HOST/NAMESPACE/NAME:TAG", s)
	}
	for _, p := range []string{n.Host, n.Namespace, n.Model, n.Tag} {
		if p == "" || p == "." || p == ".." || strings.ContainsAny(p, `\`) {
			return n, fmt.Errorf("inproc: model %q: want NAME, NAME:TAG, NAMESPACE/NAME:TAG or HOST/NAMESPACE/NAME:TAG", s)
		}
	}
	return n, nil
}

// String is the name as Ollama shows it: the default registry and
// namespace left out.
func (n ModelName) String() string {
	s := n.Model + ":" + n.Tag
	if n.Host != DefaultRegistry {
		return n.Host + "/" + n.Namespace + "/" + s
	}
	if n.Namespace != DefaultNamespace {
		return n.Namespace + "/" + s
	}
	return s
}

func (n ModelName) manifestPath(store string) string {
	return filepath.Join(store, "manifests", n.Host, n.Namespace, n.Model, n.Tag)
}

// OllamaStore is the directory of Ollama's models: $OLLAMA_MODELS, else
// ~/.ollama/models, else the Linux service's /usr/share/ollama/.ollama/models;
// an error names every place it looked.
func OllamaStore() (string, error) {
	if d := os.Getenv("OLLAMA_MODELS"); d != "" {
		if isDir(filepath.Join(d, "manifests")) {
			return d, nil
		}
		return "", fmt.Errorf("inproc: Ollama's model store is not at %s (OLLAMA_MODELS): it has no manifests directory; point OLLAMA_MODELS at the directory `ollama serve` uses, or give the file with --gguf", d)
	}
	var looked []string
	if home, err := os.UserHomeDir(); err == nil {
		looked = append(looked, filepath.Join(home, ".ollama", "models"))
	}
	looked = append(looked, "/usr/share/ollama/.ollama/models")
	for _, d := range looked {
		if isDir(filepath.Join(d, "manifests")) {
			return d, nil
		}
	}
	return "", fmt.Errorf("inproc: Ollama's model store was not found (looked in %s): set OLLAMA_MODELS to the directory `ollama serve` keeps its models in, or give the file with --gguf",
		strings.Join(looked, " and "))
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

type manifest struct {
	Layers []struct {
		MediaType string `json:"mediaType"`
		Digest    string `json:"digest"`
		Size      int64  `json:"size"`
	} `json:"layers"`
}

// ResolveModel finds the GGUF of a model pulled into the Ollama store at
// store (OllamaStore() when ""): its manifest's model layer, as a blob.
func ResolveModel(store, name string) (string, error) {
	if store == "" {
		s, err := OllamaStore()
		if err != nil {
			return "", err
		}
		store = s
	}
	n, err := ParseModelName(name)
	if err != nil {
		return "", err
	}
	mp := n.manifestPath(store)
	raw, err := os.ReadFile(mp)
	if errors.Is(err, fs.ErrNotExist) {
		msg := fmt.Sprintf("inproc: model %s is not in Ollama's store at %s: pull it with `ollama pull %s`", n, store, n)
		if close := closeNames(store, n); len(close) > 0 {
			msg += " (the store has " + strings.Join(close, ", ") + ")"
		}
		return "", errors.New(msg)
	}
	if err != nil {
		return "", fmt.Errorf("inproc: reading the manifest of %s: %w", n, err)
	}
	var m manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		return "", fmt.Errorf("inproc: the manifest of %s (%s) is not valid JSON: %w; pull it again with `ollama pull %s`", n, mp, err, n)
	}
	for _, l := range m.Layers {
		if l.MediaType != ModelLayerType {
			continue
		}
		hex, ok := strings.CutPrefix(l.Digest, "sha256:")
		if !ok || len(hex) != 64 || strings.Trim(hex, "0123456789abcdef") != "" {
			return "", fmt.Errorf("inproc: the manifest of %s (%s) has a model layer with digest %q, not sha256:<64 hex digits>", n, mp, l.Digest)
		}
		blob := filepath.Join(store, "blobs", "sha256-"+hex)
		st, err := os.Stat(blob)
		if err != nil {
			return "", fmt.Errorf("inproc: the model layer of %s is missing from the store (%s): pull it again with `ollama pull %s`", n, blob, n)
		}
		if l.Size > 0 && st.Size() != l.Size {
			return "", fmt.Errorf("inproc: the model layer of %s (%s) is %d bytes, its manifest says %d: pull it again with `ollama pull %s`", n, blob, st.Size(), l.Size, n)
		}
		return blob, nil
	}
	types := make([]string, 0, len(m.Layers))
	for _, l := range m.Layers {
		types = append(types, l.MediaType)
	}
	return "", fmt.Errorf("inproc: the manifest of %s (%s) has no model layer (%s); its layers are [%s]: it is not a model the in-process engine can load",
		n, mp, ModelLayerType, strings.Join(types, ", "))
}

// StoreModels lists the models in the store, as Ollama names them.
func StoreModels(store string) []string {
	root := filepath.Join(store, "manifests")
	var out []string
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return nil
		}
		parts := strings.Split(filepath.ToSlash(rel), "/")
		if len(parts) != 4 {
			return nil
		}
		out = append(out, ModelName{Host: parts[0], Namespace: parts[1], Model: parts[2], Tag: parts[3]}.String())
		return nil
	})
	slices.Sort(out)
	return out
}

// closeNames are the store's models a user who typed n may have meant:
// the same model under another tag or namespace, or a name one edit or a
// prefix away; at most 5.
func closeNames(store string, n ModelName) []string {
	var out []string
	for _, s := range StoreModels(store) {
		m, err := ParseModelName(s)
		if err != nil {
			continue
		}
		a, b := strings.ToLower(m.Model), strings.ToLower(n.Model)
		if a == b || strings.HasPrefix(a, b) || strings.HasPrefix(b, a) || editDistance(a, b) <= 2 {
			out = append(out, s)
		}
	}
	if len(out) > 5 {
		out = out[:5]
	}
	return out
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			c := prev[j-1]
			if a[i-1] != b[j-1] {
				c++
			}
			cur[j] = min(c, prev[j]+1, cur[j-1]+1)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
