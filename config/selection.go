package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Selection configures how candidate tools are ranked.
type Selection struct {
	// Weights of the ranking's components; nil: the ranking's defaults.
	Weights *Weights
	// WeightsFile is the file Weights came from ("" when inline or default).
	WeightsFile string
	// MinCoverage, when set, replaces the engine's calibrated no-LLM
	// threshold on the share of a request's words a tool's text uses
	// (0..1; selection.min_coverage); nil keeps selector.NoLLMMinCoverage.
	MinCoverage *float64
	// Embedder is the tool index's embedder (selection.embedder):
	// EmbedderBlend, the trained tool model built into airs joined with
	// pretrained word vectors (they relate words no training pair does,
	// which tools unlike the trained ones need), unless ollama.embed_model
	// names an Ollama model; EmbedderModel, the trained tool model alone
	// (narrower vectors: a faster scan, less memory); EmbedderLexical, the
	// registry-fitted LSA embedder; EmbedderOllama, ollama.embed_model
	// (required then). "" means that default.
	Embedder string
}

// The embedders selection.embedder can name.
const (
	EmbedderModel   = "model"
	EmbedderLexical = "lexical"
	EmbedderBlend   = "blend"
	EmbedderOllama  = "ollama"
)

// fileSelection is the file's selection: section. weights is either a
// mapping (inline) or a path to a JSON file as `airs eval tune --write`
// writes it.
type fileSelection struct {
	Weights     yaml.Node `yaml:"weights"`
	MinCoverage *float64  `yaml:"min_coverage"`
	Embedder    string    `yaml:"embedder"`
}

// buildEmbedder checks selection.embedder against the embedders AIRS has.
func (p *parser) buildEmbedder(fs *fileSelection, c *Config) {
	switch fs.Embedder {
	case "", EmbedderModel, EmbedderLexical, EmbedderBlend:
	case EmbedderOllama:
		if c.Ollama.EmbedModel == "" {
			p.add(p.line("selection", "embedder"), "selection.embedder: ollama needs ollama.embed_model (e.g. nomic-embed-text)")
			return
		}
	default:
		p.add(p.line("selection", "embedder"), "selection.embedder: unknown embedder %q: say blend (the tool model with word vectors, default), model, lexical or ollama", fs.Embedder)
		return
	}
	c.Selection.Embedder = fs.Embedder
}

var weightKeys = []string{"semantic", "trust", "success", "latency", "preference"}

func (p *parser) buildSelection(fs *fileSelection, c *Config) {
	p.buildEmbedder(fs, c)
	n := &fs.Weights
	line := p.line("selection", "weights")
	switch n.Kind {
	case 0: // absent
		return
	case yaml.ScalarNode:
		if n.Value == "" {
			return
		}
		path := p.expandPath(n.Value)
		w, err := readWeightsFile(path)
		if err != nil {
			p.add(line, "selection.weights: %v: give the JSON file `airs eval tune --write FILE` wrote, or the weights inline ({semantic: 0.55, trust: 0.15, …})", err)
			return
		}
		c.Selection.Weights, c.Selection.WeightsFile = &w, path
	case yaml.MappingNode:
		var w Weights
		vals := map[string]*float64{"semantic": &w.Semantic, "trust": &w.Trust, "success": &w.Success, "latency": &w.Latency, "preference": &w.Preference}
		ok := true
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			dst, known := vals[k.Value]
			if !known {
				p.add(k.Line, "selection.weights: unknown component %q: the components are %s", k.Value, strings.Join(weightKeys, ", "))
				ok = false
				continue
			}
			if err := v.Decode(dst); err != nil {
				p.add(v.Line, "selection.weights.%s: want a number ≥ 0, got %q", k.Value, v.Value)
				ok = false
			}
		}
		if !ok {
			return
		}
		if err := w.Validate(); err != nil {
			p.add(line, "selection.weights: %v: give non-negative numbers, at least one above 0", strings.TrimPrefix(err.Error(), "scoring: "))
			return
		}
		c.Selection.Weights = &w
	default:
		p.add(line, "selection.weights: want a file path or a mapping like {semantic: 0.55, trust: 0.15, success: 0.15, latency: 0.05, preference: 0.10}")
	}
}

// readWeightsFile reads selection weights as `airs eval tune --write`
// writes them: one JSON object with the five components.
func readWeightsFile(path string) (Weights, error) {
	var w Weights
	b, err := os.ReadFile(path)
	if err != nil {
		return w, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&w); err != nil {
		return w, fmt.Errorf("%s: %w", path, err)
	}
	if dec.More() {
		return w, fmt.Errorf("%s: more than one JSON value", path)
	}
	if err := w.Validate(); err != nil {
		return w, fmt.Errorf("%s: %w", path, err)
	}
	return w, nil
}
