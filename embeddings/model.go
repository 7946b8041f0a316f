package embeddings

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sync"
)

// ToolModel is the trained tool-retrieval encoder, the default embedder:
// a dual encoder with one set of weights for requests and tool texts. A
// text's features — the same analysed words, word bigrams and character
// 3–5-grams of every word as the Lexical embedder's, so no script is
// dropped — are hashed into Buckets rows of a Dim-wide embedding table;
// the text's vector is the weighted sum of its rows (sublinear tf, each
// channel L2-normalised and weighted), L2-normalised.
//
// The table starts as a random projection of the hashed features (so
// untrained features still compare lexically) and is trained
// contrastively on requests paired with the tools they need (in-batch
// negatives and BM25 hard negatives: see TrainModel). A tool never seen in
// training is encoded from its own text at registration; nothing is
// refitted per registry, so the model is not a Fitter.
//
// Weights are stored int8-quantised per row (see WriteTo); the committed
// model is embedded in the binary and loaded on first use (DefaultModel).
type ToolModel struct {
	hdr   ModelHeader
	scale []float32 // per row
	q     []int8    // Buckets × Dim
	w     []float32 // float weights while training (nil once quantised)
	id    string
	opts  LexicalOptions
}

// ModelHeader describes a ToolModel's shape and how it was made.
type ModelHeader struct {
	Buckets int `json:"buckets"`
	Dim     int `json:"dim"`
	// Channel weights, as in LexicalOptions.
	WordWeight   float64 `json:"word_weight"`
	BigramWeight float64 `json:"bigram_weight"`
	CharWeight   float64 `json:"char_weight"`
	// MaxTokens caps the words of a text that are encoded.
	MaxTokens int `json:"max_tokens"`
	// Fusion are the hybrid-search weights fitted on development data for
	// this model; an Index uses them where its Options leave them zero.
	Fusion FusionWeights `json:"fusion"`
	// Train records how the weights were made (data, split, seed, epochs).
	Train map[string]any `json:"train,omitempty"`
}

// FusionWeights are the weights of an Index's hybrid score: the dense list
// (the model's cosine), the BM25F list, a tool's group, and the BM25F
// field weight of the tool's name. Zero means the Index's default.
type FusionWeights struct {
	Dense  float64 `json:"dense"`
	Sparse float64 `json:"sparse"`
	Group  float64 `json:"group"`
	Name   float64 `json:"name"`
	// Norm is how each list's scores are scaled before they are summed:
	// "" or "max" (divided by the list's best), or "minmax" (the list's
	// last candidate maps to 0, its best to 1).
	Norm string `json:"norm,omitempty"`
}

// FusionAdvisor is an Embedder that knows the fusion weights fitted for it.
type FusionAdvisor interface {
	Fusion() FusionWeights
}

const modelMagic = "AIRSTM1\n"

// NewToolModel returns an untrained model: the table is a deterministic
// random projection (seed) of the hashed features.
func NewToolModel(h ModelHeader, seed uint64) *ToolModel {
	if h.Buckets <= 0 {
		h.Buckets = 1 << 15
	}
	if h.Dim <= 0 {
		h.Dim = 128
	}
	if h.MaxTokens <= 0 {
		h.MaxTokens = 256
	}
	if h.WordWeight == 0 {
		h.WordWeight = 1
	}
	if h.BigramWeight == 0 {
		h.BigramWeight = 0.5
	}
	if h.CharWeight == 0 {
		h.CharWeight = 0.7
	}
	m := &ToolModel{hdr: h, w: make([]float32, h.Buckets*h.Dim)}
	s := seed | 1
	inv := float32(1 / math.Sqrt(float64(h.Dim)))
	for i := range m.w {
		// xorshift64*: cheap, deterministic, good enough for a projection.
		s ^= s >> 12
		s ^= s << 25
		s ^= s >> 27
		r := s * 2685821657736338717
		// Uniform in [-√3, √3]·inv: unit variance per coordinate / √dim.
		u := float32(r>>40)/float32(1<<24)*2 - 1
		m.w[i] = u * 1.7320508 * inv
	}
	m.setOpts()
	m.id = "tooltext:untrained"
	return m
}

func (m *ToolModel) setOpts() {
	m.opts = LexicalOptions{WordWeight: m.hdr.WordWeight, BigramWeight: m.hdr.BigramWeight, CharWeight: m.hdr.CharWeight}
	m.opts.defaults()
}

// Header is the model's header (shape, fusion weights, training record).
func (m *ToolModel) Header() ModelHeader { return m.hdr }

// SetFusion records the fusion weights fitted for the model.
func (m *ToolModel) SetFusion(f FusionWeights) { m.hdr.Fusion = f }

// SetTrainInfo records how the model was trained.
func (m *ToolModel) SetTrainInfo(info map[string]any) { m.hdr.Train = info }

// ID is "tooltext:" + a hash of the weights.
func (m *ToolModel) ID() string { return m.id }

// Dim is the vector length.
func (m *ToolModel) Dim() int { return m.hdr.Dim }

// Fusion is the fitted fusion weights (FusionAdvisor).
func (m *ToolModel) Fusion() FusionWeights { return m.hdr.Fusion }

// Embed encodes each text.
func (m *ToolModel) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		if i%256 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		out[i] = m.Encode(t)
	}
	return out, nil
}

// wfeat is one hashed feature of a text with its weight.
type wfeat struct {
	row int32
	w   float32
}

// textFeatures are a text's weighted rows, in a deterministic order.
func (m *ToolModel) textFeatures(text string) []wfeat {
	fs := m.opts.features(capTokens(text, m.hdr.MaxTokens))
	var norms [nChannels]float64
	for i := range fs {
		fs[i].c = 1 + math.Log(fs[i].c)
		norms[fs[i].h>>62] += fs[i].c * fs[i].c
	}
	cw := [nChannels]float64{m.opts.WordWeight, m.opts.BigramWeight, m.opts.CharWeight}
	for c := range norms {
		if norms[c] > 0 {
			cw[c] /= math.Sqrt(norms[c])
		}
	}
	out := make([]wfeat, len(fs))
	for i, f := range fs {
		// The low bits pick the row; the channel bits keep words and n-grams
		// apart in the hash but not in the table.
		out[i] = wfeat{int32((f.h * 0x9E3779B97F4A7C15 >> 20) % uint64(m.hdr.Buckets)), float32(f.c * cw[f.h>>62])}
	}
	return out
}

// capTokens keeps roughly the first n words of a text.
func capTokens(text string, n int) string {
	words, inWord := 0, false
	for i, r := range text {
		space := r == ' ' || r == '\n' || r == '\t'
		if !space && !inWord {
			words++
			if words > n {
				return text[:i]
			}
		}
		inWord = !space
	}
	return text
}

// Encode is the text's unit vector (zero when it has no features).
func (m *ToolModel) Encode(text string) []float32 {
	v := make([]float32, m.hdr.Dim)
	m.sum(m.textFeatures(text), v)
	return normalize32(v)
}

// Strength is the length of the text's summed rows before normalising:
// how strongly the trained table answers to the text's features, larger
// for words like those of the tools it was trained on.
func (m *ToolModel) Strength(text string) float64 {
	v := make([]float32, m.hdr.Dim)
	m.sum(m.textFeatures(text), v)
	s := 0.0
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	return math.Sqrt(s)
}

// sum adds the weighted rows of fs into v.
func (m *ToolModel) sum(fs []wfeat, v []float32) {
	d := m.hdr.Dim
	v = v[:d] // v and each row of length d: no bounds check per element
	if m.w != nil {
		for _, f := range fs {
			row := m.w[int(f.row)*d : int(f.row+1)*d]
			row = row[:len(v)]
			for j := range v {
				v[j] += f.w * row[j]
			}
		}
		return
	}
	for _, f := range fs {
		row := m.q[int(f.row)*d : int(f.row+1)*d]
		row = row[:len(v)]
		s := f.w * m.scale[f.row]
		for j := range v {
			v[j] += s * float32(row[j])
		}
	}
}

// quantize turns the float table into int8 rows with a per-row scale.
func (m *ToolModel) quantize() {
	d := m.hdr.Dim
	m.q = make([]int8, len(m.w))
	m.scale = make([]float32, m.hdr.Buckets)
	for r := 0; r < m.hdr.Buckets; r++ {
		row := m.w[r*d : (r+1)*d]
		mx := float32(0)
		for _, x := range row {
			mx = max(mx, float32(math.Abs(float64(x))))
		}
		if mx == 0 {
			continue
		}
		s := mx / 127
		m.scale[r] = s
		for j, x := range row {
			m.q[r*d+j] = int8(math.Round(float64(x / s)))
		}
	}
	m.w = nil
	m.computeID()
}

func (m *ToolModel) computeID() {
	h := sha256.New()
	hb, _ := json.Marshal(struct {
		B, D, T    int
		W1, W2, W3 float64
	}{m.hdr.Buckets, m.hdr.Dim, m.hdr.MaxTokens, m.hdr.WordWeight, m.hdr.BigramWeight, m.hdr.CharWeight})
	h.Write(hb)
	binary.Write(h, binary.LittleEndian, m.scale)
	b := make([]byte, len(m.q))
	for i, x := range m.q {
		b[i] = byte(x)
	}
	h.Write(b)
	m.id = "tooltext:" + hex.EncodeToString(h.Sum(nil)[:8])
}

// WriteTo writes the quantised model, gzip-compressed: the magic line, the
// JSON header's length and bytes, the per-row scales (float32) and the
// int8 table, little-endian.
func (m *ToolModel) WriteTo(w io.Writer) (int64, error) {
	if m.w != nil {
		m.quantize()
	}
	zw, _ := gzip.NewWriterLevel(w, gzip.BestCompression)
	bw := bufio.NewWriter(zw)
	hb, err := json.Marshal(m.hdr)
	if err != nil {
		return 0, err
	}
	bw.WriteString(modelMagic)
	binary.Write(bw, binary.LittleEndian, uint32(len(hb)))
	bw.Write(hb)
	binary.Write(bw, binary.LittleEndian, m.scale)
	b := make([]byte, len(m.q))
	for i, x := range m.q {
		b[i] = byte(x)
	}
	bw.Write(b)
	if err := bw.Flush(); err != nil {
		return 0, err
	}
	return 0, zw.Close()
}

// ReadToolModel reads a model written by WriteTo.
func ReadToolModel(r io.Reader) (*ToolModel, error) {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return nil, fmt.Errorf("embeddings: tool model: %w", err)
	}
	br := bufio.NewReaderSize(zr, 1<<16)
	magic := make([]byte, len(modelMagic))
	if _, err := io.ReadFull(br, magic); err != nil || string(magic) != modelMagic {
		return nil, errors.New("embeddings: not an AIRS tool model (bad magic)")
	}
	var n uint32
	if err := binary.Read(br, binary.LittleEndian, &n); err != nil || n > 1<<24 {
		return nil, errors.New("embeddings: tool model: bad header length")
	}
	hb := make([]byte, n)
	if _, err := io.ReadFull(br, hb); err != nil {
		return nil, fmt.Errorf("embeddings: tool model header: %w", err)
	}
	m := &ToolModel{}
	if err := json.Unmarshal(hb, &m.hdr); err != nil {
		return nil, fmt.Errorf("embeddings: tool model header: %w", err)
	}
	if m.hdr.Buckets <= 0 || m.hdr.Dim <= 0 || m.hdr.Buckets*m.hdr.Dim > 1<<28 {
		return nil, fmt.Errorf("embeddings: tool model: bad shape %d×%d", m.hdr.Buckets, m.hdr.Dim)
	}
	m.scale = make([]float32, m.hdr.Buckets)
	if err := binary.Read(br, binary.LittleEndian, m.scale); err != nil {
		return nil, fmt.Errorf("embeddings: tool model scales: %w", err)
	}
	b := make([]byte, m.hdr.Buckets*m.hdr.Dim)
	if _, err := io.ReadFull(br, b); err != nil {
		return nil, fmt.Errorf("embeddings: tool model table: %w", err)
	}
	m.q = make([]int8, len(b))
	for i, x := range b {
		m.q[i] = int8(x)
	}
	m.setOpts()
	m.computeID()
	return m, nil
}

//go:embed model/tooltext.bin.gz
var defaultModelBytes []byte

var (
	defaultModelOnce sync.Once
	defaultModel     *ToolModel
	defaultModelErr  error
)

// DefaultModel is the committed, trained tool model (embedded in the
// binary; decoded once, on first use).
func DefaultModel() (*ToolModel, error) {
	defaultModelOnce.Do(func() {
		defaultModel, defaultModelErr = ReadToolModel(bytes.NewReader(defaultModelBytes))
	})
	return defaultModel, defaultModelErr
}

// LoadToolModel reads a model file `airs train retrieval` wrote.
func LoadToolModel(path string) (*ToolModel, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	m, err := ReadToolModel(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

// ReadDefaultModel decodes the committed model afresh (DefaultModel keeps
// one; this is for measuring the load).
func ReadDefaultModel() (*ToolModel, error) {
	return ReadToolModel(bytes.NewReader(defaultModelBytes))
}

// MemoryBytes is the size of the model's tables in memory.
func (m *ToolModel) MemoryBytes() int {
	return len(m.q) + 4*len(m.scale) + 4*len(m.w)
}
