package embeddings

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"sync"
)

// WordVectors embeds a text as the smooth-inverse-frequency (SIF) average
// of pretrained English word vectors: each word w of the text (Tokens, the
// index's own tokenisation, so identifiers are split as BM25 sees them)
// adds its vector weighted a/(a+p(w)), where p(w) is the word's unigram
// probability, so frequent words count little and rare, content-bearing
// words much; then the vocabulary's common directions are projected out
// and the sum is normalised. Unlike the trained tool model, the vectors
// were learned from general text, so they relate words that no tool
// registry pairs ("codebase" and "repository", "forecast" and "weather"):
// what tools never seen in training need. Words outside the vocabulary
// (other scripts, rare names) add nothing; the other halves of a Blend
// carry them.
//
// The committed vectors (model/words.bin.gz, written by
// model/make_words.py) are GloVe 6B 100-d vectors of the 40,000 most
// frequent lower-case words, int8-quantised per word.
type WordVectors struct {
	index map[string]int32
	// tab holds the vectors as the file has them (int8 with a scale per
	// word, shared by every WordVectors); row rebuilds a word's float32
	// vector, common directions removed, when a text uses it: a quarter
	// of the memory of float32 rows, and the same floats.
	tab    *wordTable
	mean   []float32   // subtracted from every vector (Common > 0)
	dirs   [][]float64 // then projected out, in order
	weight []float32   // SIF weight per word
	dim    int
	opts   WordVectorOptions
	id     string
	wmap   []float32 // optional out×dim map (WithMap)
	out    int       // rows of wmap: the vectors' width when mapped
}

// WordVectorOptions tune a WordVectors embedder. The zero value means the
// documented defaults.
type WordVectorOptions struct {
	// SIF is a in a/(a+p(w)) (default DefaultWordSIF).
	SIF float64
	// Common is how many of the vocabulary's principal directions (after
	// its mean) are projected out of every word vector (default
	// DefaultWordCommon; negative: none, and the mean is kept).
	Common int
	// Map, when set, is a K×100 linear map (row-major) applied to every
	// averaged vector (TrainWordMap): the vectors are then K wide.
	Map []float32
}

// Defaults of WordVectorOptions (chosen on the development splits:
// EVALS.md).
const (
	DefaultWordSIF    = 1e-3
	DefaultWordCommon = 1
)

func (o *WordVectorOptions) defaults() {
	if o.SIF <= 0 {
		o.SIF = DefaultWordSIF
	}
	if o.Common == 0 {
		o.Common = DefaultWordCommon
	}
}

//go:embed model/words.bin.gz
var defaultWordBytes []byte

var wordMagic = []byte("AIRSWV1\n")

type wordTable struct {
	words []string
	rank  []uint32
	total int
	dim   int
	q     []int8    // N × dim
	scale []float32 // per word: its vector is scale × q
	sum   string    // sha256 of the file, first 16 hex digits
}

// raw is word k's vector as the file gives it, into buf (len dim).
func (t *wordTable) raw(k int, buf []float32) []float32 {
	s := t.scale[k]
	for j, x := range t.q[k*t.dim : (k+1)*t.dim] {
		buf[j] = s * float32(x)
	}
	return buf
}

var (
	defaultWordsOnce sync.Once
	defaultWords     *wordTable
	defaultWordsErr  error
)

// readTableFile decompresses a gzipped table file, checks that it starts
// with magic and holds at least header bytes after it, and answers those
// bytes on and the file's short hash (the first 16 hex digits of its
// sha256). what names the file in errors; notIt says what to do when it
// is not such a file.
func readTableFile(b, magic []byte, header int, what, notIt string) ([]byte, string, error) {
	h := sha256.Sum256(b)
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, "", fmt.Errorf("embeddings: %s: %w", what, err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		return nil, "", fmt.Errorf("embeddings: %s: %w", what, err)
	}
	if !bytes.HasPrefix(raw, magic) || len(raw) < len(magic)+header {
		return nil, "", fmt.Errorf("embeddings: %s: %s", what, notIt)
	}
	return raw[len(magic):], hex.EncodeToString(h[:8]), nil
}

func readWordTable(b []byte) (*wordTable, error) {
	p, sum, err := readTableFile(b, wordMagic, 12, "word vectors", "not a words.bin file (rebuild it with embeddings/model/make_words.py)")
	if err != nil {
		return nil, err
	}
	n := int(binary.LittleEndian.Uint32(p))
	dim := int(binary.LittleEndian.Uint32(p[4:]))
	total := int(binary.LittleEndian.Uint32(p[8:]))
	p = p[12:]
	t := &wordTable{words: make([]string, n), rank: make([]uint32, n), total: total, dim: dim, sum: sum}
	for i := 0; i < n; i++ {
		if len(p) < 1 || len(p) < 1+int(p[0])+4 {
			return nil, errors.New("embeddings: word vectors: truncated vocabulary")
		}
		l := int(p[0])
		t.words[i] = string(p[1 : 1+l])
		t.rank[i] = binary.LittleEndian.Uint32(p[1+l:])
		p = p[1+l+4:]
	}
	if len(p) != n*4+n*dim {
		return nil, fmt.Errorf("embeddings: word vectors: %d bytes of vectors, want %d", len(p), n*4+n*dim)
	}
	t.scale = make([]float32, n)
	for i := range t.scale {
		t.scale[i] = math.Float32frombits(binary.LittleEndian.Uint32(p[i*4:]))
	}
	t.q = make([]int8, n*dim)
	for i, b := range p[n*4:] {
		t.q[i] = int8(b)
	}
	return t, nil
}

// NewWordVectors is the committed word vectors under o (decoded once, on
// first use, and shared).
func NewWordVectors(o WordVectorOptions) (*WordVectors, error) {
	defaultWordsOnce.Do(func() { defaultWords, defaultWordsErr = readWordTable(defaultWordBytes) })
	if defaultWordsErr != nil {
		return nil, defaultWordsErr
	}
	w := newWordVectors(defaultWords, o)
	if o.Map != nil {
		return w.WithMap(o.Map)
	}
	return w, nil
}

func newWordVectors(t *wordTable, o WordVectorOptions) *WordVectors {
	o.defaults()
	n, dim := len(t.words), t.dim
	w := &WordVectors{index: make(map[string]int32, n), tab: t, weight: make([]float32, n), dim: dim, opts: o}
	// Unigram probabilities from the frequency ranks (Zipf's law,
	// p(r) ∝ 1/r, normalised over the full vocabulary the ranks come
	// from): the package keeps the order of the words, not their counts.
	h := math.Log(float64(max(t.total, 2))) + 0.5772
	for i, word := range t.words {
		w.index[word] = int32(i)
		p := 1 / (float64(t.rank[i]+1) * h)
		w.weight[i] = float32(o.SIF / (o.SIF + p))
	}
	if o.Common > 0 {
		w.mean, w.dirs = commonDirections(t, o.Common)
	}
	w.id = "words:" + t.sum + ":a" + strconv.FormatFloat(o.SIF, 'g', -1, 64) + ":c" + strconv.Itoa(o.Common)
	return w
}

// commonDirections are the vocabulary's mean vector and its top k
// principal directions after the mean ("all-but-the-top"): they encode
// word frequency, not meaning, and would make every text look alike, so
// row removes them from every word vector. The directions are estimated
// on the 10,000 most frequent words, which keeps the load short.
func commonDirections(t *wordTable, k int) ([]float32, [][]float64) {
	n, dim := len(t.words), t.dim
	buf := make([]float32, dim)
	mean := make([]float64, dim)
	for i := 0; i < n; i++ {
		for j, x := range t.raw(i, buf) {
			mean[j] += float64(x)
		}
	}
	m32 := make([]float32, dim)
	for j := range mean {
		m32[j] = float32(mean[j] / float64(n))
	}
	m := min(n, 10000)
	cov := make([]float64, dim*dim)
	for i := 0; i < m; i++ {
		row := t.raw(i, buf)
		for j := range row {
			row[j] -= m32[j]
		}
		for a := 0; a < dim; a++ {
			x := float64(row[a])
			c := cov[a*dim:]
			for b := a; b < dim; b++ {
				c[b] += x * float64(row[b])
			}
		}
	}
	for a := 0; a < dim; a++ {
		for b := 0; b < a; b++ {
			cov[a*dim+b] = cov[b*dim+a]
		}
	}
	var dirs [][]float64
	for d := 0; d < k && d < dim; d++ {
		dirs = append(dirs, principal(cov, dim, dirs))
	}
	return m32, dirs
}

// row is word k's vector with the common directions removed, into buf
// (len dim): the file's vector, less the mean, then each direction's
// component in turn.
func (w *WordVectors) row(k int, buf []float32) []float32 {
	row := w.tab.raw(k, buf)
	if w.mean == nil {
		return row
	}
	for j := range row {
		row[j] -= w.mean[j]
	}
	for _, u := range w.dirs {
		s := 0.0
		for j, x := range row {
			s += float64(x) * u[j]
		}
		for j := range row {
			row[j] -= float32(s * u[j])
		}
	}
	return row
}

// principal is the leading eigenvector of the symmetric dim×dim matrix cov
// orthogonal to dirs (power iteration from a fixed start: deterministic).
func principal(cov []float64, dim int, dirs [][]float64) []float64 {
	u := make([]float64, dim)
	for j := range u {
		u[j] = 1 / math.Sqrt(float64(dim+j))
	}
	next := make([]float64, dim)
	for it := 0; it < 200; it++ {
		for _, d := range dirs {
			s := 0.0
			for j := range u {
				s += u[j] * d[j]
			}
			for j := range u {
				u[j] -= s * d[j]
			}
		}
		norm := 0.0
		for a := 0; a < dim; a++ {
			s := 0.0
			for b := 0; b < dim; b++ {
				s += cov[a*dim+b] * u[b]
			}
			next[a] = s
			norm += s * s
		}
		norm = math.Sqrt(norm)
		if norm == 0 {
			break
		}
		for j := range u {
			u[j] = next[j] / norm
		}
	}
	return u
}

// ID names the vectors' checksum and the options.
func (w *WordVectors) ID() string { return w.id }

// Dim is the word vectors' width.
func (w *WordVectors) Dim() int {
	if w.wmap != nil {
		return w.out
	}
	return w.dim
}

// Options are the options in force (defaults filled).
func (w *WordVectors) Options() WordVectorOptions { return w.opts }

// Vocabulary is how many words have a vector.
func (w *WordVectors) Vocabulary() int { return len(w.index) }

// Embed returns each text's SIF-weighted, normalised average word vector
// (the zero vector for a text with no known word).
func (w *WordVectors) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	acc := make([]float64, w.dim)
	for i, t := range texts {
		if i%64 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		out[i] = w.encode(t, acc)
	}
	return out, nil
}

func (w *WordVectors) lookup(tok string) (int32, bool) {
	if k, ok := w.index[tok]; ok {
		return k, true
	}
	if s := Stem(tok); s != tok {
		k, ok := w.index[s]
		return k, ok
	}
	return 0, false
}

func (w *WordVectors) encode(text string, acc []float64) []float32 {
	v := w.average(text, acc)
	if w.wmap == nil {
		return v
	}
	z := make([]float64, w.out)
	for a := range z {
		z[a] = float64(dot32(w.wmap[a*w.dim:(a+1)*w.dim], v))
	}
	return normalized(z)
}

// average is the text's SIF-weighted average word vector, normalised.
func (w *WordVectors) average(text string, acc []float64) []float32 {
	clear(acc)
	any := false
	var buf []float32
	for _, tok := range Tokens(text) {
		k, ok := w.lookup(tok)
		if !ok {
			continue
		}
		if buf == nil {
			buf = make([]float32, w.dim)
		}
		any = true
		f := float64(w.weight[k])
		row := w.row(int(k), buf)
		for j, x := range row {
			acc[j] += f * float64(x)
		}
	}
	if !any {
		return make([]float32, w.Dim())
	}
	return normalized(acc)
}

// MemoryBytes is the size of the vectors (shared by every WordVectors),
// weights and vocabulary in memory.
func (w *WordVectors) MemoryBytes() int {
	return len(w.tab.q) + 4*len(w.tab.scale) + 4*len(w.weight) + 40*len(w.index) + 4*len(w.wmap)
}
