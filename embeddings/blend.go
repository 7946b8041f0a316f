package embeddings

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"sync"
)

// Blend is the trained tool model, pretrained word vectors and, when given
// a share, a Lexical embedder fitted on the registry, as one embedder. The
// model knows how people ask for the tools it was trained on; the word
// vectors relate words no training pair relates (paraphrase), which is
// what tools never seen in training need; the lexical basis knows the
// registry's own words. Each text's vector is the parts' unit vectors
// concatenated, each scaled by the square root of its share, so one dot
// product is the share-weighted sum of the parts' cosines: the dense scan,
// the stores and the parts search need nothing new. Nothing is trained per
// tool; a lexical part is fitted and persisted by the Index as a Lexical
// embedder is (Fitter).
type Blend struct {
	model      *ToolModel
	words      *WordVectors
	lex        *Lexical // nil without a lexical share
	opts       BlendOptions
	sm, sw, sl float32    // √shares
	soft       *SoftMatch // nil: no soft matching
	softOnce   sync.Once
	softFeat   *SoftMatch
	hub        *hubness // nil: no hubness correction
	pieces     *Pieces  // nil without a pieces share
	sp         float32  // √share of the pieces
}

// BlendOptions tune a Blend. The zero value means the documented defaults.
type BlendOptions struct {
	// WordWeight is the word vectors' share of the dense cosine, in (0, 1)
	// (default DefaultBlendWordWeight).
	WordWeight float64
	// LexicalWeight is the lexical part's share, in [0, 1) (0: no lexical
	// part; WordWeight + LexicalWeight < 1, the model has the rest).
	LexicalWeight float64
	// DenseWeight replaces the model's fitted weight of the dense list in
	// the fusion (default DefaultBlendDenseWeight; negative keeps the
	// model's).
	DenseWeight float64
	// Norm, when set, replaces the model's scaling of the lists ("max" or
	// "minmax", as FusionWeights.Norm).
	Norm string
	// GroupWeight and NameWeight, when nonzero, replace the model's fitted
	// weight of a tool's group and of its name field (FusionWeights).
	GroupWeight, NameWeight float64
	// Words configures the word vectors. Without a Words.Map the committed
	// word map applies (DefaultWordMap), unless RawWords.
	Words    WordVectorOptions
	RawWords bool
	// Lexical configures the lexical part (its Dim defaults to
	// DefaultEnsembleLexicalDim).
	Lexical LexicalOptions
	// SoftMatch re-scores an index's first candidates word by word with
	// the same word vectors (SoftMatch; its Weight ≤ 0: off).
	SoftMatch SoftMatchOptions
	// Hub corrects the dense scores of tools near many requests
	// (HubOptions; a negative Weight: none).
	Hub HubOptions
	// PieceWeight is the distilled sentence pieces' share of the dense
	// cosine, in [0, 1) (0 or negative: none). It needs Pieces.
	PieceWeight float64
	// Pieces are the piece vectors the share applies to (LoadPieces).
	Pieces *Pieces
}

// The defaults of BlendOptions: the best mean NDCG@10 over the development
// splits (EVALS.md); refit them when the model is retrained.
const (
	DefaultBlendWordWeight  = 0.5
	DefaultBlendDenseWeight = 1
)

func (o *BlendOptions) defaults() {
	if o.WordWeight <= 0 || o.WordWeight >= 1 {
		o.WordWeight = DefaultBlendWordWeight
	}
	if o.PieceWeight < 0 || o.WordWeight+o.PieceWeight >= 1 {
		o.PieceWeight = 0
	}
	if o.LexicalWeight < 0 || o.WordWeight+o.PieceWeight+o.LexicalWeight >= 1 {
		o.LexicalWeight = 0
	}
	if o.DenseWeight == 0 {
		o.DenseWeight = DefaultBlendDenseWeight
	}
	if o.Lexical.Dim <= 0 {
		o.Lexical.Dim = DefaultEnsembleLexicalDim
	}
	o.Hub.defaults()
}

// NewBlend joins model with the committed word vectors (and a new,
// unfitted Lexical embedder when o gives it a share).
func NewBlend(model *ToolModel, o BlendOptions) (*Blend, error) {
	o.defaults()
	if o.Words.Map == nil && !o.RawWords {
		m, err := DefaultWordMap()
		if err != nil {
			return nil, err
		}
		o.Words.Map = m
	}
	w, err := NewWordVectors(o.Words)
	if err != nil {
		return nil, err
	}
	b := &Blend{model: model, words: w, opts: o}
	if o.SoftMatch.Weight > 0 {
		b.soft = NewSoftMatch(w, o.SoftMatch)
		b.opts.SoftMatch = b.soft.Options()
	}
	if o.LexicalWeight > 0 {
		b.lex = NewLexical(o.Lexical)
	}
	if o.Hub.Weight > 0 {
		b.hub = &hubness{opts: o.Hub}
	}
	if o.PieceWeight > 0 {
		if o.Pieces == nil {
			return nil, errors.New("embeddings: a blend with a pieces share needs piece vectors (`make pieces` writes them; LoadPieces reads them)")
		}
		b.pieces = o.Pieces
	}
	b.sp = float32(math.Sqrt(o.PieceWeight))
	b.sm = float32(math.Sqrt(1 - o.WordWeight - o.PieceWeight - o.LexicalWeight))
	b.sw = float32(math.Sqrt(o.WordWeight))
	b.sl = float32(math.Sqrt(o.LexicalWeight))
	return b, nil
}

// DefaultBlend is the committed tool model and word vectors under the
// default options.
func DefaultBlend() (*Blend, error) {
	m, err := DefaultModel()
	if err != nil {
		return nil, err
	}
	return NewBlend(m, BlendOptions{})
}

// rerankSoft is the soft match a reranker's features read when the blend
// does not re-score with one itself (default options), made once.
func (b *Blend) rerankSoft() *SoftMatch {
	b.softOnce.Do(func() { b.softFeat = NewSoftMatch(b.words, SoftMatchOptions{Weight: 1}) })
	return b.softFeat
}

// SoftMatch is the blend's word-by-word re-scoring of an index's first
// candidates, nil when off (SoftMatcher).
func (b *Blend) SoftMatch() *SoftMatch { return b.soft }

// DocBias is the hubness correction of each stored row (DocBiaser), nil
// when the blend makes none.
func (b *Blend) DocBias(ctx context.Context, rows []float32, dim int) ([]float32, error) {
	if b.hub == nil {
		return nil, nil
	}
	return b.hub.bias(ctx, b, rows, dim)
}

// Model is the trained part.
func (b *Blend) Model() *ToolModel { return b.model }

// Words is the word-vector part.
func (b *Blend) Words() *WordVectors { return b.words }

// Options are the options in force (defaults filled).
func (b *Blend) Options() BlendOptions { return b.opts }

// ID names every part and the shares: vectors change with any of them.
func (b *Blend) ID() string {
	id := "blend:" + b.model.ID() + "+" + b.words.ID() + ":w" + strconv.FormatFloat(b.opts.WordWeight, 'g', -1, 64)
	if b.lex != nil {
		id += "+" + b.lex.ID() + ":l" + strconv.FormatFloat(b.opts.LexicalWeight, 'g', -1, 64)
	}
	if b.pieces != nil {
		id += "+" + b.pieces.ID() + ":p" + strconv.FormatFloat(b.opts.PieceWeight, 'g', -1, 64)
	}
	return id
}

// Dim is the sum of the parts' widths (0 until a lexical part is fitted).
func (b *Blend) Dim() int {
	d := b.model.Dim() + b.words.Dim()
	if b.lex != nil {
		ld := b.lex.Dim()
		if ld == 0 {
			return 0
		}
		d += ld
	}
	if b.pieces != nil {
		d += b.pieces.Dim()
	}
	return d
}

// Fit fits the lexical part, if any, on the registry's documents (Fitter).
func (b *Blend) Fit(ctx context.Context, corpus []string) error {
	if b.lex == nil {
		return nil
	}
	return b.lex.Fit(ctx, corpus)
}

// Fitted reports whether the lexical part, if any, is fitted.
func (b *Blend) Fitted() bool { return b.lex == nil || b.lex.Fitted() }

// Fusion is the model's fitted fusion with the options' dense weight and
// scaling, where set (FusionAdvisor).
func (b *Blend) Fusion() FusionWeights {
	f := b.model.Fusion()
	if b.opts.DenseWeight > 0 {
		f.Dense = b.opts.DenseWeight
	}
	if b.opts.Norm != "" {
		f.Norm = b.opts.Norm
	}
	if b.opts.GroupWeight != 0 {
		f.Group = b.opts.GroupWeight
	}
	if b.opts.NameWeight != 0 {
		f.Name = b.opts.NameWeight
	}
	return f
}

// Embed encodes each text with every part and joins the scaled, normalised
// vectors. A part that knows none of a text's words contributes zeros.
func (b *Blend) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if !b.Fitted() {
		return nil, errors.New("embeddings: the blend's lexical part is not fitted (index the registry first)")
	}
	mv, err := b.model.Embed(ctx, texts)
	if err != nil {
		return nil, err
	}
	wv, err := b.words.Embed(ctx, texts)
	if err != nil {
		return nil, err
	}
	var lv [][]float32
	if b.lex != nil {
		if lv, err = b.lex.Embed(ctx, texts); err != nil {
			return nil, err
		}
	}
	var pv [][]float32
	if b.pieces != nil {
		if pv, err = b.pieces.Embed(ctx, texts); err != nil {
			return nil, err
		}
	}
	md, wd := b.model.Dim(), b.words.Dim()
	out := make([][]float32, len(texts))
	for i := range texts {
		if len(mv[i]) != md {
			return nil, fmt.Errorf("embeddings: the tool model returned dimension %d, expected %d", len(mv[i]), md)
		}
		n := md + wd
		if lv != nil {
			n += len(lv[i])
		}
		v := make([]float32, n)
		for j, x := range unit(mv[i]) {
			v[j] = b.sm * x
		}
		for j, x := range unit(wv[i]) {
			v[md+j] = b.sw * x
		}
		if lv != nil {
			for j, x := range unit(lv[i]) {
				v[md+wd+j] = b.sl * x
			}
		}
		if pv != nil {
			// The pieces come last, after a lexical part when there is one.
			off := n
			v = append(v, make([]float32, len(pv[i]))...)
			for j, x := range unit(pv[i]) {
				v[off+j] = b.sp * x
			}
		}
		out[i] = v
	}
	return out, nil
}
