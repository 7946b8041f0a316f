package retrieval

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/airs-dev/airs/embeddings"
)

// newEnsemble builds the committed tool model joined with a lexical half
// (embeddings.Ensemble) from "KEY=VALUE,…" options, empty for the
// defaults: lex=W (the lexical cosine's share), dim=D (the lexical half's
// components), dense=X (the fusion's dense weight), norm=max|minmax (the fusion's
// scaling of each list). The lexical options of
// the run apply to the lexical half.
func newEnsemble(spec string, lo embeddings.LexicalOptions) (embeddings.Embedder, error) {
	m, err := embeddings.DefaultModel()
	if err != nil {
		return nil, err
	}
	o := embeddings.EnsembleOptions{Lexical: lo}
	for _, kv := range strings.Split(spec, ",") {
		if kv == "" {
			continue
		}
		k, v, ok := strings.Cut(kv, "=")
		if k == "norm" && (v == "max" || v == "minmax") {
			o.Norm = v
			continue
		}
		f, err := strconv.ParseFloat(v, 64)
		if !ok || err != nil {
			return nil, fmt.Errorf("retrieval: ensemble option %q: want KEY=NUMBER (lex=0.5, dim=128, dense=0.5)", kv)
		}
		switch k {
		case "lex":
			if f <= 0 || f >= 1 {
				return nil, fmt.Errorf("retrieval: ensemble lex=%v: the lexical share must be between 0 and 1 (exclusive)", f)
			}
			o.LexicalWeight = f
		case "dim":
			o.Lexical.Dim = int(f)
		case "dense":
			o.DenseWeight = f
		default:
			return nil, fmt.Errorf("retrieval: unknown ensemble option %q (lex, dim, dense, norm)", k)
		}
	}
	return embeddings.NewEnsemble(m, o), nil
}
