package embeddings

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"sync"
	"unicode/utf8"

	"gonum.org/v1/gonum/mat"
)

// LexicalOptions tune the embedded embedder. The zero value means the
// documented defaults.
type LexicalOptions struct {
	// Dim is the number of LSA components (default 384). A registry with
	// fewer documents gets fewer: the basis spans the documents.
	Dim int
	// CharMin, CharMax bound the character n-grams taken from every word,
	// with ^ and $ marking its ends (default 3 and 5).
	CharMin, CharMax int
	// WordWeight, BigramWeight, CharWeight weigh the three feature channels
	// after each is L2-normalised (defaults 1, 0.5, 0.7).
	WordWeight, BigramWeight, CharWeight float64
	// MaxFitDocs caps the documents the basis is fitted on (default 4000,
	// a deterministic sample beyond that).
	MaxFitDocs int
	// MaxFeatures caps the vocabulary of the basis (default 60000, most
	// frequent first).
	MaxFeatures int
	// PowerIters is the number of power iterations of the randomized SVD
	// (default 2).
	PowerIters int
}

func (o *LexicalOptions) defaults() {
	if o.Dim <= 0 {
		o.Dim = 384
	}
	if o.CharMin <= 0 {
		o.CharMin = 3
	}
	if o.CharMax < o.CharMin {
		o.CharMax = max(5, o.CharMin)
	}
	if o.WordWeight == 0 {
		o.WordWeight = 1
	}
	if o.BigramWeight == 0 {
		o.BigramWeight = 0.5
	}
	if o.CharWeight == 0 {
		o.CharWeight = 0.7
	}
	if o.MaxFitDocs <= 0 {
		o.MaxFitDocs = 4000
	}
	if o.MaxFeatures <= 0 {
		o.MaxFeatures = 60000
	}
	if o.PowerIters == 0 {
		o.PowerIters = 2
	}
}

// Lexical is the embedded default embedder: no server, no weights. A text
// becomes a sparse TF-IDF vector over three hashed feature channels — analysed
// words (see Terms), word bigrams, and character n-grams of every word (which
// match morphology and run-together names like "airqualityforecast") — and
// that vector is projected on a latent semantic basis (LSA: Deerwester et
// al., 1990) fitted over the registry's own descriptions, so that words used
// together in descriptions end up near each other. The basis comes from a
// randomized SVD (Halko, Martinsson & Tropp, 2011) of the TF-IDF matrix, so
// fitting is linear in the corpus. When the registry has no more documents
// than Dim, the basis spans every document and cosine similarity equals
// plain TF-IDF cosine.
//
// A Lexical embedder must be fitted (Fit) before Embed; the Index does this.
type Lexical struct {
	opts LexicalOptions

	mu sync.RWMutex
	m  *lexModel
}

// lexModel is the fitted state; immutable once built.
type lexModel struct {
	Opts  LexicalOptions
	Cols  map[uint64]int32 // feature → row of Proj
	IDF   []float32        // per column
	Dim   int
	Proj  []float32 // len(Cols) × Dim, row-major
	Sigma []float64
	ID    string
}

// NewLexical returns an unfitted Lexical embedder.
func NewLexical(o LexicalOptions) *Lexical {
	o.defaults()
	return &Lexical{opts: o}
}

// ID is "lexical:" + a hash of the fitted basis ("lexical:unfitted" before).
func (l *Lexical) ID() string {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if l.m == nil {
		return "lexical:unfitted"
	}
	return l.m.ID
}

// Dim is the number of components of the fitted basis.
func (l *Lexical) Dim() int {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if l.m == nil {
		return 0
	}
	return l.m.Dim
}

// Fitted reports whether Fit has run.
func (l *Lexical) Fitted() bool {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.m != nil
}

const (
	chWord = iota
	chBigram
	chChar
	nChannels
)

type feat struct {
	h uint64 // channel in the top two bits
	c float64
}

func featHash(ch int, s string) uint64 {
	// FNV-1a 64 (hash/fnv's), inline: no hasher or byte copy per feature.
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h&^(3<<62) | uint64(ch)<<62
}

// features counts the raw features of a text.
func (o *LexicalOptions) features(text string) []feat {
	// Every occurrence's hash, then sorted and counted by runs: the same
	// counts, in the same order, as a map and a sort, without the map.
	hs := make([]uint64, 0, 4*len(text)+8)
	toks := Tokens(text)
	var prev string
	var offs []int // byte offset of each rune of the marked token, and its end
	for _, t := range toks {
		if stopwords[t] {
			continue
		}
		st := Stem(t)
		hs = append(hs, featHash(chWord, st))
		if prev != "" {
			hs = append(hs, featHash(chBigram, prev+" "+st))
		}
		prev = st
		// Character n-grams of the marked token, n counted in runes, each
		// a substring of it (no copy).
		m := "^" + t + "$"
		if !utf8.ValidString(m) {
			m = string([]rune(m)) // each invalid byte a U+FFFD, as a rune slice has it
		}
		offs = offs[:0]
		for i := range m {
			offs = append(offs, i)
		}
		runes := len(offs)
		offs = append(offs, len(m))
		if runes <= o.CharMin {
			hs = append(hs, featHash(chChar, m))
			continue
		}
		for n := o.CharMin; n <= o.CharMax; n++ {
			for i := 0; i+n <= runes; i++ {
				hs = append(hs, featHash(chChar, m[offs[i]:offs[i+n]]))
			}
		}
	}
	slices.Sort(hs)
	out := make([]feat, 0, len(hs))
	for i := 0; i < len(hs); {
		j := i + 1
		for j < len(hs) && hs[j] == hs[i] {
			j++
		}
		out = append(out, feat{hs[i], float64(j - i)})
		i = j
	}
	return out
}

type sparseRow struct {
	cols []int32
	vals []float64
}

// tfidf weighs raw features by sublinear tf × idf, normalises each channel,
// weighs the channels and normalises the whole; features outside the
// vocabulary are dropped.
func (m *lexModel) tfidf(fs []feat) sparseRow {
	var r sparseRow
	var norms [nChannels]float64
	chOf := make([]int, 0, len(fs))
	for _, f := range fs {
		c, ok := m.Cols[f.h]
		if !ok {
			continue
		}
		v := (1 + math.Log(f.c)) * float64(m.IDF[c])
		ch := int(f.h >> 62)
		norms[ch] += v * v
		r.cols = append(r.cols, c)
		r.vals = append(r.vals, v)
		chOf = append(chOf, ch)
	}
	w := [nChannels]float64{m.Opts.WordWeight, m.Opts.BigramWeight, m.Opts.CharWeight}
	for ch := range norms {
		if norms[ch] > 0 {
			w[ch] /= math.Sqrt(norms[ch])
		}
	}
	total := 0.0
	for i := range r.vals {
		r.vals[i] *= w[chOf[i]]
		total += r.vals[i] * r.vals[i]
	}
	if total > 0 {
		inv := 1 / math.Sqrt(total)
		for i := range r.vals {
			r.vals[i] *= inv
		}
	}
	return r
}

// Fit learns idf and the LSA basis from the corpus (the registry's texts).
func (l *Lexical) Fit(ctx context.Context, corpus []string) error {
	if len(corpus) == 0 {
		return errors.New("embeddings: cannot fit the lexical embedder on an empty corpus")
	}
	o := l.opts
	docs := corpus
	if len(docs) > o.MaxFitDocs { // deterministic stride sample
		s := make([]string, 0, o.MaxFitDocs)
		step := float64(len(docs)) / float64(o.MaxFitDocs)
		for i := 0; i < o.MaxFitDocs; i++ {
			s = append(s, docs[int(float64(i)*step)])
		}
		docs = s
	}
	n := len(docs)
	raw := make([][]feat, n)
	df := map[uint64]int{}
	for i, t := range docs {
		if i%256 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		raw[i] = o.features(t)
		for _, f := range raw[i] {
			df[f.h]++
		}
	}
	// Vocabulary: words and bigrams always (rare words are the most
	// telling), character n-grams only when shared by two documents.
	type cand struct {
		h  uint64
		df int
	}
	cands := make([]cand, 0, len(df))
	for h, d := range df {
		if int(h>>62) == chChar && d < 2 && n > 1 {
			continue
		}
		cands = append(cands, cand{h, d})
	}
	sort.Slice(cands, func(i, j int) bool {
		if cands[i].df != cands[j].df {
			return cands[i].df > cands[j].df
		}
		return cands[i].h < cands[j].h
	})
	if len(cands) > o.MaxFeatures {
		cands = cands[:o.MaxFeatures]
	}
	m := &lexModel{Opts: o, Cols: make(map[uint64]int32, len(cands)), IDF: make([]float32, len(cands))}
	for i, c := range cands {
		m.Cols[c.h] = int32(i)
		m.IDF[i] = float32(math.Log(float64(n+1)/float64(c.df+1)) + 1)
	}
	V := len(cands)
	X := make([]sparseRow, n)
	for i := range raw {
		X[i] = m.tfidf(raw[i])
	}
	if err := m.fitBasis(ctx, X, V); err != nil {
		return err
	}
	m.ID = m.hash()
	l.mu.Lock()
	l.m = m
	l.mu.Unlock()
	return nil
}

// fitBasis computes the top right singular vectors of X (n × V) by a
// randomized range finder with power iterations, then the small eigenproblem
// of B Bᵀ where B = Qᵀ X. With n ≤ the sketch size, Q = I and the result is
// the exact SVD.
func (m *lexModel) fitBasis(ctx context.Context, X []sparseRow, V int) error {
	n := len(X)
	r := min(m.Opts.Dim, n, V)
	l := min(r+16, n, V)
	var Q *mat.Dense // n × l, orthonormal columns
	if l >= n {
		Q = mat.NewDense(n, n, nil)
		for i := 0; i < n; i++ {
			Q.Set(i, i, 1)
		}
		l = n
	} else {
		// Y = X Ω with Ω a Rademacher matrix drawn from the feature hash.
		Y := mat.NewDense(n, l, nil)
		for i, row := range X {
			y := Y.RawRowView(i)
			for k, c := range row.cols {
				v := row.vals[k]
				for j := 0; j < l; j++ {
					if rademacher(uint64(c), j) {
						y[j] += v
					} else {
						y[j] -= v
					}
				}
			}
		}
		Q = orthonormalize(Y)
		for it := 0; it < m.Opts.PowerIters; it++ {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			Z := xtMul(X, Q, V) // V × l
			Y = xMul(X, Z)      // n × l
			Q = orthonormalize(Y)
		}
		l = Q.RawMatrix().Cols
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	// G = B Bᵀ = Qᵀ X Xᵀ Q (l × l), computed through the sparse X: two
	// sparse products and one n·l² dense one, instead of V·l².
	XXtQ := xMul(X, xtMul(X, Q, V)) // n × l
	var Gd mat.Dense
	Gd.Mul(Q.T(), XXtQ)
	G := mat.NewSymDense(l, nil)
	for i := 0; i < l; i++ {
		for j := i; j < l; j++ {
			G.SetSym(i, j, (Gd.At(i, j)+Gd.At(j, i))/2)
		}
	}
	var eig mat.EigenSym
	if !eig.Factorize(G, true) {
		return errors.New("embeddings: LSA eigendecomposition did not converge")
	}
	vals := eig.Values(nil) // ascending
	var W mat.Dense
	eig.VectorsTo(&W)
	// Keep the r largest components with a non-negligible singular value.
	top := vals[len(vals)-1]
	var keep []int
	for j := len(vals) - 1; j >= 0 && len(keep) < r; j-- {
		if vals[j] <= top*1e-10 || vals[j] <= 0 {
			break
		}
		keep = append(keep, j)
	}
	if len(keep) == 0 {
		return errors.New("embeddings: the corpus has no lexical content to fit")
	}
	m.Dim = len(keep)
	m.Sigma = make([]float64, m.Dim)
	Wr := mat.NewDense(l, m.Dim, nil)
	for k, j := range keep {
		s := math.Sqrt(vals[j])
		m.Sigma[k] = s
		for i := 0; i < l; i++ {
			Wr.Set(i, k, W.At(i, j)/s)
		}
	}
	// Right singular vectors P = Bᵀ W Σ⁻¹ = Xᵀ (Q W Σ⁻¹) (V × Dim), again
	// through the sparse X.
	var QW mat.Dense
	QW.Mul(Q, Wr)
	P := xtMul(X, &QW, V)
	raw := P.RawMatrix()
	m.Proj = make([]float32, V*m.Dim)
	for i := 0; i < V; i++ {
		row := raw.Data[i*raw.Stride : i*raw.Stride+m.Dim]
		for j, v := range row {
			m.Proj[i*m.Dim+j] = float32(v)
		}
	}
	return nil
}

// rademacher is a deterministic ±1 draw for entry (c, j) of Ω.
func rademacher(c uint64, j int) bool {
	x := c*0x9E3779B97F4A7C15 + uint64(j)*0xBF58476D1CE4E5B9 + 0x94D049BB133111EB
	x ^= x >> 31
	x *= 0xD6E8FEB86659FD93
	x ^= x >> 32
	return x&1 == 1
}

// xtMul returns Xᵀ Q (V × cols(Q)).
func xtMul(X []sparseRow, Q *mat.Dense, V int) *mat.Dense {
	l := Q.RawMatrix().Cols
	Z := mat.NewDense(V, l, nil)
	zr := Z.RawMatrix()
	for i, row := range X {
		q := Q.RawRowView(i)
		for k, c := range row.cols {
			v := row.vals[k]
			z := zr.Data[int(c)*zr.Stride : int(c)*zr.Stride+l]
			for j := range z {
				z[j] += v * q[j]
			}
		}
	}
	return Z
}

// xMul returns X Z (n × cols(Z)).
func xMul(X []sparseRow, Z *mat.Dense) *mat.Dense {
	l := Z.RawMatrix().Cols
	Y := mat.NewDense(len(X), l, nil)
	for i, row := range X {
		y := Y.RawRowView(i)
		for k, c := range row.cols {
			v := row.vals[k]
			z := Z.RawRowView(int(c))
			for j := range y {
				y[j] += v * z[j]
			}
		}
	}
	return Y
}

// orthonormalize returns an orthonormal basis of Y's column space through
// the eigendecomposition of YᵀY (Q = Y W Λ^-½), dropping directions with a
// negligible eigenvalue; applied twice for accuracy.
func orthonormalize(Y *mat.Dense) *mat.Dense {
	for pass := 0; pass < 2; pass++ {
		_, c := Y.Dims()
		var G mat.SymDense
		G.SymOuterK(1, Y.T())
		var eig mat.EigenSym
		if !eig.Factorize(&G, true) {
			break
		}
		vals := eig.Values(nil)
		var W mat.Dense
		eig.VectorsTo(&W)
		top := vals[len(vals)-1]
		var keep []int
		for j := c - 1; j >= 0; j-- {
			if vals[j] > top*1e-12 && vals[j] > 0 {
				keep = append(keep, j)
			}
		}
		Wk := mat.NewDense(c, len(keep), nil)
		for k, j := range keep {
			s := 1 / math.Sqrt(vals[j])
			for i := 0; i < c; i++ {
				Wk.Set(i, k, W.At(i, j)*s)
			}
		}
		var Q mat.Dense
		Q.Mul(Y, Wk)
		Y = &Q
	}
	return Y
}

func (m *lexModel) hash() string {
	h := sha256.New()
	fmt.Fprintf(h, "%+v|%d|%d|", m.Opts, len(m.Cols), m.Dim)
	var b [4]byte
	for i := 0; i < len(m.Proj); i += 97 {
		binary.LittleEndian.PutUint32(b[:], math.Float32bits(m.Proj[i]))
		h.Write(b[:])
	}
	for _, v := range m.IDF {
		binary.LittleEndian.PutUint32(b[:], math.Float32bits(v))
		h.Write(b[:])
	}
	return "lexical:" + hex.EncodeToString(h.Sum(nil)[:8])
}

// Embed projects each text's TF-IDF vector on the fitted basis and
// normalises it. A text with no known feature gets the zero vector.
func (l *Lexical) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	l.mu.RLock()
	m := l.m
	l.mu.RUnlock()
	if m == nil {
		return nil, errors.New("embeddings: lexical embedder is not fitted")
	}
	out := make([][]float32, len(texts))
	acc := make([]float64, m.Dim)
	for i, t := range texts {
		if i%256 == 255 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		clear(acc)
		row := m.tfidf(m.Opts.features(t))
		for k, c := range row.cols {
			v := row.vals[k]
			p := m.Proj[int(c)*m.Dim : int(c)*m.Dim+m.Dim]
			for j, pv := range p {
				acc[j] += v * float64(pv)
			}
		}
		out[i] = normalized(acc)
	}
	return out, nil
}

func normalized(acc []float64) []float32 {
	s := 0.0
	for _, v := range acc {
		s += v * v
	}
	out := make([]float32, len(acc))
	if s == 0 {
		return out
	}
	inv := 1 / math.Sqrt(s)
	for j, v := range acc {
		out[j] = float32(v * inv)
	}
	return out
}
