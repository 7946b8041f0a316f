package embeddings

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
)

// Ensemble is the trained tool model and a Lexical embedder fitted on the
// registry's own descriptions, as one embedder. The model knows how people
// ask for the tools it was trained on; the lexical basis knows the words of
// the registry it indexes, which is what carries tools the model never saw.
// Each text's vector is the two normalised vectors concatenated, scaled by
// √(1−w) and √w, so one dot product of two such vectors is
// (1−w)·cos_model + w·cos_lexical: the dense scan, the store and the parts
// search need nothing new. Nothing is trained per tool: the lexical basis
// is refitted by the Index as a Lexical embedder's is (Fitter).
type Ensemble struct {
	model *ToolModel
	lex   *Lexical
	opts  EnsembleOptions
	a, b  float32 // √(1−w), √w
}

// EnsembleOptions tune an Ensemble. The zero value means the documented
// defaults (chosen on the development splits: EVALS.md).
type EnsembleOptions struct {
	// LexicalWeight is w, the lexical cosine's share of the dense score,
	// in (0, 1) (default DefaultEnsembleLexicalWeight).
	LexicalWeight float64
	// DenseWeight replaces the model's fitted weight of the dense list in
	// the fusion (FusionAdvisor; default DefaultEnsembleDenseWeight): the
	// model's weight was fitted for its own, narrower cosines. Negative
	// keeps the model's.
	DenseWeight float64
	// Norm, when set, replaces the model's fitted scaling of the lists in
	// the fusion ("max" or "minmax", as FusionWeights.Norm).
	Norm string
	// Lexical configures the lexical half (its Dim defaults to
	// DefaultEnsembleLexicalDim: the scan costs the sum of both widths).
	Lexical LexicalOptions
}

// The defaults of EnsembleOptions: the best mean NDCG@10 over the
// development splits (EVALS.md); refit them when the model is retrained.
const (
	DefaultEnsembleLexicalWeight = 0.45
	DefaultEnsembleLexicalDim    = 256
	DefaultEnsembleDenseWeight   = 2
)

func (o *EnsembleOptions) defaults() {
	if o.LexicalWeight <= 0 || o.LexicalWeight >= 1 {
		o.LexicalWeight = DefaultEnsembleLexicalWeight
	}
	if o.Lexical.Dim <= 0 {
		o.Lexical.Dim = DefaultEnsembleLexicalDim
	}
	if o.DenseWeight == 0 {
		o.DenseWeight = DefaultEnsembleDenseWeight
	}
}

// NewEnsemble joins model with a new, unfitted Lexical embedder.
func NewEnsemble(model *ToolModel, o EnsembleOptions) *Ensemble {
	o.defaults()
	return &Ensemble{
		model: model,
		lex:   NewLexical(o.Lexical),
		opts:  o,
		a:     float32(math.Sqrt(1 - o.LexicalWeight)),
		b:     float32(math.Sqrt(o.LexicalWeight)),
	}
}

// DefaultEnsemble is the committed tool model with a lexical half, under
// the default options.
func DefaultEnsemble() (*Ensemble, error) {
	m, err := DefaultModel()
	if err != nil {
		return nil, err
	}
	return NewEnsemble(m, EnsembleOptions{}), nil
}

// Model is the trained half.
func (e *Ensemble) Model() *ToolModel { return e.model }

// Lexical is the lexical half (its fitted basis is what an Index persists).
func (e *Ensemble) Lexical() *Lexical { return e.lex }

// Options are the options in force (defaults filled).
func (e *Ensemble) Options() EnsembleOptions { return e.opts }

// ID names both halves and the weight: vectors change with any of them.
func (e *Ensemble) ID() string {
	return "ensemble:" + e.model.ID() + "+" + e.lex.ID() + ":w" + strconv.FormatFloat(e.opts.LexicalWeight, 'g', -1, 64)
}

// Dim is the sum of both halves' widths (0 until the lexical half is fitted).
func (e *Ensemble) Dim() int {
	ld := e.lex.Dim()
	if ld == 0 {
		return 0
	}
	return e.model.Dim() + ld
}

// Fit fits the lexical half on the registry's documents (Fitter).
func (e *Ensemble) Fit(ctx context.Context, corpus []string) error { return e.lex.Fit(ctx, corpus) }

// Fitted reports whether the lexical half is fitted.
func (e *Ensemble) Fitted() bool { return e.lex.Fitted() }

// Fusion is the model's fitted fusion with the options' dense weight and
// scaling, where set (FusionAdvisor).
func (e *Ensemble) Fusion() FusionWeights {
	f := e.model.Fusion()
	if e.opts.DenseWeight > 0 {
		f.Dense = e.opts.DenseWeight
	}
	if e.opts.Norm != "" {
		f.Norm = e.opts.Norm
	}
	return f
}

// Embed encodes each text with both halves and joins the weighted,
// normalised vectors. A text with nothing either half knows is the zero
// vector; one only a half knows keeps that half's part.
func (e *Ensemble) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if !e.lex.Fitted() {
		return nil, errors.New("embeddings: the ensemble's lexical half is not fitted (index the registry first)")
	}
	mv, err := e.model.Embed(ctx, texts)
	if err != nil {
		return nil, err
	}
	lv, err := e.lex.Embed(ctx, texts)
	if err != nil {
		return nil, err
	}
	md := e.model.Dim()
	out := make([][]float32, len(texts))
	for i := range texts {
		if len(mv[i]) != md {
			return nil, fmt.Errorf("embeddings: the tool model returned dimension %d, expected %d", len(mv[i]), md)
		}
		v := make([]float32, md+len(lv[i]))
		m, l := unit(mv[i]), unit(lv[i])
		for j, x := range m {
			v[j] = e.a * x
		}
		for j, x := range l {
			v[md+j] = e.b * x
		}
		out[i] = v
	}
	return out, nil
}

// unit returns v scaled to length 1 (v itself when it is zero or already
// of length 1 within rounding).
func unit(v []float32) []float32 {
	s := 0.0
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	if s == 0 || math.Abs(s-1) < 1e-6 {
		return v
	}
	inv := float32(1 / math.Sqrt(s))
	out := make([]float32, len(v))
	for j, x := range v {
		out[j] = x * inv
	}
	return out
}

// fittedLexical is the Lexical embedder whose fitted basis an Index keeps
// with its vectors: emb itself, or an Ensemble's lexical half.
func fittedLexical(emb Embedder) (*Lexical, bool) {
	switch e := emb.(type) {
	case *Lexical:
		return e, true
	case *Ensemble:
		return e.lex, true
	case *Blend:
		return e.lex, e.lex != nil
	}
	return nil, false
}
