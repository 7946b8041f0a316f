package embeddings

import (
	"bufio"
	"compress/gzip"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Pieces embeds a text as the weighted average of learned vectors of its
// sentence pieces: the text is cut into the pieces of a unigram
// sentence-piece vocabulary (the most probable segmentation, as
// SentencePiece's unigram model cuts it), each piece adds its vector
// weighted a/(a+p(piece)) (smooth inverse frequency, p from the
// vocabulary's own log-probabilities), and the sum is normalised.
//
// The vectors are distilled from a pretrained sentence encoder, Universal
// Sentence Encoder lite, by TrainPieces (`make pieces`): fitted so that the
// average of a text's pieces reproduces the encoder's vector of the whole
// text, over the training tools' texts and requests. The encoder was
// trained on general text and question–answer pairs, so its vectors
// relate phrasings no tool registry pairs; as an average of fixed vectors
// it costs what a word lookup costs, where running the encoder would cost
// milliseconds a text. Pieces the vocabulary lacks (most other scripts)
// add nothing; the other parts of a Blend carry them. No vectors are
// built into airs: the distilled vectors kept only a quarter of what the
// encoder itself adds to the default blend (EVALS.md, "distilled sentence
// pieces"), so a Blend takes them only when given a file.
type Pieces struct {
	tab    *pieceTable
	weight []float32 // SIF weight per piece (0: the unknown piece)
	id     string
}

var piecesMagic = []byte("AIRSPC1\n")

// DefaultPieceSIF is a in a/(a+p): the weight a piece of probability p
// carries in a text's average.
const DefaultPieceSIF = 1e-3

// The unknown piece's log-probability when no piece of the vocabulary
// covers a character: low enough that any known cut is preferred.
const unknownPieceScore = -20

type pieceTable struct {
	pieces []string
	score  []float32 // log-probability per piece
	index  map[string]int32
	maxLen int // the longest piece, in runes
	dim    int
	q      []int8    // N × dim
	scale  []float32 // per piece: its vector is scale × q
	sum    string    // sha256 of the file, first 16 hex digits
}

// LoadPieces reads piece vectors written by WritePieces.
func LoadPieces(r io.Reader) (*Pieces, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	t, err := readPieceTable(b)
	if err != nil {
		return nil, err
	}
	return newPieces(t), nil
}

func newPieces(t *pieceTable) *Pieces {
	w := make([]float32, len(t.pieces))
	for i, s := range t.score {
		if i == 0 {
			continue // the unknown piece says nothing
		}
		p := math.Exp(float64(s))
		w[i] = float32(DefaultPieceSIF / (DefaultPieceSIF + p))
	}
	return &Pieces{tab: t, weight: w, id: "pieces:" + t.sum}
}

func readPieceTable(b []byte) (*pieceTable, error) {
	p, sum, err := readTableFile(b, piecesMagic, 8, "piece vectors", "not a pieces.bin file (write it with `airs train retrieval --pieces`)")
	if err != nil {
		return nil, err
	}
	n := int(binary.LittleEndian.Uint32(p))
	dim := int(binary.LittleEndian.Uint32(p[4:]))
	p = p[8:]
	t := &pieceTable{pieces: make([]string, n), score: make([]float32, n), index: make(map[string]int32, n),
		dim: dim, scale: make([]float32, n), q: make([]int8, n*dim), sum: sum}
	for i := 0; i < n; i++ {
		if len(p) < 2 {
			return nil, errors.New("embeddings: piece vectors: truncated")
		}
		l := int(binary.LittleEndian.Uint16(p))
		if len(p) < 2+l+8+dim {
			return nil, errors.New("embeddings: piece vectors: truncated")
		}
		t.pieces[i] = string(p[2 : 2+l])
		p = p[2+l:]
		t.score[i] = math.Float32frombits(binary.LittleEndian.Uint32(p))
		t.scale[i] = math.Float32frombits(binary.LittleEndian.Uint32(p[4:]))
		for j, c := range p[8 : 8+dim] {
			t.q[i*dim+j] = int8(c)
		}
		p = p[8+dim:]
		if i > 0 && t.pieces[i] != "" {
			if _, dup := t.index[t.pieces[i]]; !dup {
				t.index[t.pieces[i]] = int32(i)
			}
			if r := utf8.RuneCountInString(t.pieces[i]); r > t.maxLen {
				t.maxLen = r
			}
		}
	}
	if len(p) != 0 {
		return nil, fmt.Errorf("embeddings: piece vectors: %d bytes left over", len(p))
	}
	return t, nil
}

// WritePieces writes a vocabulary (piece 0 is the unknown piece), each
// piece's log-probability and its vector (row-major, n × dim) as
// LoadPieces reads them: int8 per coordinate with a scale per piece,
// gzipped with no time stamp, so the same vectors give the same bytes.
func WritePieces(w io.Writer, pieces []string, scores []float32, vecs []float32, dim int) error {
	n := len(pieces)
	if len(scores) != n || len(vecs) != n*dim {
		return fmt.Errorf("embeddings: pieces: %d pieces, %d scores, %d floats for dimension %d", n, len(scores), len(vecs), dim)
	}
	zw, err := gzip.NewWriterLevel(w, gzip.BestCompression)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(zw)
	bw.Write(piecesMagic)
	var b4 [4]byte
	binary.LittleEndian.PutUint32(b4[:], uint32(n))
	bw.Write(b4[:])
	binary.LittleEndian.PutUint32(b4[:], uint32(dim))
	bw.Write(b4[:])
	q := make([]byte, dim)
	for i, s := range pieces {
		var b2 [2]byte
		binary.LittleEndian.PutUint16(b2[:], uint16(len(s)))
		bw.Write(b2[:])
		bw.WriteString(s)
		binary.LittleEndian.PutUint32(b4[:], math.Float32bits(scores[i]))
		bw.Write(b4[:])
		row := vecs[i*dim : (i+1)*dim]
		m := float32(0)
		for _, x := range row {
			m = max(m, float32(math.Abs(float64(x))))
		}
		scale := m / 127
		binary.LittleEndian.PutUint32(b4[:], math.Float32bits(scale))
		bw.Write(b4[:])
		for j, x := range row {
			if scale == 0 {
				q[j] = 0
				continue
			}
			q[j] = byte(int8(math.Round(float64(x / scale))))
		}
		bw.Write(q)
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	return zw.Close()
}

// ID names the vectors (their file's hash).
func (p *Pieces) ID() string { return p.id }

// Dim is the vectors' width.
func (p *Pieces) Dim() int { return p.tab.dim }

// Vocabulary is the number of pieces.
func (p *Pieces) Vocabulary() int { return len(p.tab.pieces) }

// Embed returns each text's weighted, normalised average piece vector
// (the zero vector for a text with no known piece).
func (p *Pieces) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	acc := make([]float64, p.tab.dim)
	for i, t := range texts {
		if i%64 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		clear(acc)
		any := false
		for _, k := range p.tab.cut(t) {
			f := p.weight[k]
			if f == 0 {
				continue
			}
			any = true
			s := float64(f * p.tab.scale[k])
			for j, x := range p.tab.q[int(k)*p.tab.dim : (int(k)+1)*p.tab.dim] {
				acc[j] += s * float64(x)
			}
		}
		if !any {
			out[i] = make([]float32, p.tab.dim)
			continue
		}
		out[i] = normalized(acc)
	}
	return out, nil
}

// Cut is the text's pieces, as the vocabulary cuts it.
func (p *Pieces) Cut(text string) []string {
	ids := p.tab.cut(text)
	out := make([]string, len(ids))
	for i, k := range ids {
		out[i] = p.tab.pieces[k]
	}
	return out
}

// Weights are the pieces' ids of a text and each one's share of its
// average (summing to 1; nil for a text with no known piece): the rows of
// the linear system TrainPieces solves.
func (p *Pieces) Weights(text string) ([]int32, []float32) {
	var ids []int32
	var ws []float32
	sum := float32(0)
	for _, k := range p.tab.cut(text) {
		if f := p.weight[k]; f > 0 {
			ids = append(ids, k)
			ws = append(ws, f)
			sum += f
		}
	}
	for i := range ws {
		ws[i] /= sum
	}
	return ids, ws
}

// MemoryBytes is the size of the vectors and vocabulary in memory.
func (p *Pieces) MemoryBytes() int {
	return len(p.tab.q) + 12*len(p.tab.scale) + 48*len(p.tab.index)
}

// cut segments text into the pieces of the most probable segmentation
// (Viterbi over the pieces' log-probabilities): NFKC-normalised, spaces
// made the word-boundary mark ▁ with one before the text, as
// SentencePiece prepares it. A character no piece covers becomes the
// unknown piece 0 (runs of it merged).
func (t *pieceTable) cut(text string) []int32 {
	text = strings.TrimSpace(norm.NFKC.String(text))
	if text == "" {
		return nil
	}
	s := "▁" + strings.Join(strings.Fields(text), "▁")
	// Byte offsets of the runes, and the end.
	offs := make([]int, 0, len(s)+1)
	for i := range s {
		offs = append(offs, i)
	}
	n := len(offs)
	offs = append(offs, len(s))
	best := make([]float64, n+1)
	from := make([]int32, n+1) // rune index where the last piece starts
	piece := make([]int32, n+1)
	for i := 1; i <= n; i++ {
		best[i] = math.Inf(-1)
	}
	for i := 0; i < n; i++ {
		if math.IsInf(best[i], -1) {
			continue
		}
		covered := false
		for l := 1; l <= t.maxLen && i+l <= n; l++ {
			k, ok := t.index[s[offs[i]:offs[i+l]]]
			if !ok {
				continue
			}
			covered = covered || l == 1
			if sc := best[i] + float64(t.score[k]); sc > best[i+l] {
				best[i+l], from[i+l], piece[i+l] = sc, int32(i), k
			}
		}
		if !covered {
			if sc := best[i] + unknownPieceScore; sc > best[i+1] {
				best[i+1], from[i+1], piece[i+1] = sc, int32(i), 0
			}
		}
	}
	var out []int32
	for j := n; j > 0; j = int(from[j]) {
		out = append(out, piece[j])
	}
	for a, b := 0, len(out)-1; a < b; a, b = a+1, b-1 {
		out[a], out[b] = out[b], out[a]
	}
	// Merge runs of the unknown piece.
	w, prev := 0, int32(-1)
	for _, k := range out {
		if k == 0 && prev == 0 {
			continue
		}
		out[w], prev = k, k
		w++
	}
	return out[:w]
}
