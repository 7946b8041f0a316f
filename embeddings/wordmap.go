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
	"math/rand/v2"
	"sync"
)

// The committed word map: `airs train retrieval --word-map
// embeddings/model/wordmap.bin.gz` (the default options, seed 1) over the
// committed word vectors under the default WordVectorOptions.
//
//go:embed model/wordmap.bin.gz
var defaultWordMapBytes []byte

var defaultWordMap = sync.OnceValues(func() ([]float32, error) {
	return ReadWordMap(bytes.NewReader(defaultWordMapBytes))
})

// DefaultWordMap is the committed word map (decoded once).
func DefaultWordMap() ([]float32, error) { return defaultWordMap() }

// WordMapOptions tune TrainWordMap. The zero value means the defaults.
type WordMapOptions struct {
	Seed         uint64
	Epochs       int     // default 3
	Batch        int     // default 64
	HardPerQuery int     // default 2
	Temperature  float64 // default 0.05
	LearningRate float64 // Adagrad, default 0.005
	// Out is the mapped vectors' width (default: the word vectors'). Fewer
	// than the word vectors' start from their leading principal
	// directions, and make the dense scan cheaper.
	Out      int
	Progress io.Writer
}

func (o *WordMapOptions) defaults() {
	if o.Epochs <= 0 {
		o.Epochs = 3
	}
	if o.Batch <= 0 {
		o.Batch = 64
	}
	if o.HardPerQuery == 0 {
		o.HardPerQuery = 2
	}
	if o.Temperature <= 0 {
		o.Temperature = 0.05
	}
	if o.LearningRate <= 0 {
		o.LearningRate = 0.005
	}
}

// initialMap is the identity, or for out < dim the out leading principal
// directions of the word vectors (the most informative projection before
// training).
func initialMap(w *WordVectors, out int) []float32 {
	d := w.dim
	W := make([]float32, out*d)
	if out >= d {
		for i := 0; i < d; i++ {
			W[i*d+i] = 1
		}
		return W
	}
	n := len(w.tab.words)
	cov := make([]float64, d*d)
	buf := make([]float32, d)
	for i := 0; i < n; i++ {
		row := w.row(i, buf)
		f := float64(w.weight[i])
		for a := 0; a < d; a++ {
			x := f * float64(row[a])
			for b := a; b < d; b++ {
				cov[a*d+b] += x * float64(row[b])
			}
		}
	}
	for a := 0; a < d; a++ {
		for b := 0; b < a; b++ {
			cov[a*d+b] = cov[b*d+a]
		}
	}
	var dirs [][]float64
	for k := 0; k < out; k++ {
		u := principal(cov, d, dirs)
		dirs = append(dirs, u)
		for j, x := range u {
			W[k*d+j] = float32(x)
		}
	}
	return W
}

// TrainWordMap fits a linear map on top of w's averaged word vectors
// contrastively (InfoNCE over in-batch and BM25 hard negatives, as
// TrainModel): the same map for requests and tool texts, starting from the
// identity, so it only re-weighs the pretrained directions that tell tools
// apart; with dim² weights it cannot memorise a tool, which keeps what the
// vectors know about words no training pair has.
func TrainWordMap(ctx context.Context, w *WordVectors, corpus map[string]string, examples []TrainExample, o WordMapOptions) ([]float32, error) {
	o.defaults()
	if len(examples) == 0 {
		return nil, errors.New("embeddings: no training examples")
	}
	d := w.dim
	acc := make([]float64, d)
	raw := func(t string) []float32 { return w.average(t, acc) }
	docVec := map[string][]float32{}
	for _, ex := range examples {
		for _, k := range append(append([]string(nil), ex.Gold...), ex.Hard...) {
			if _, ok := docVec[k]; ok {
				continue
			}
			t, ok := corpus[k]
			if !ok {
				return nil, fmt.Errorf("embeddings: training tool %q is not in the corpus", k)
			}
			docVec[k] = raw(t)
		}
	}
	qVec := make([][]float32, len(examples))
	for i, ex := range examples {
		qVec[i] = raw(ex.Query)
	}
	k := o.Out
	if k <= 0 || k > d {
		k = d
	}
	W := initialMap(w, k)
	accum := make([]float32, k*d)
	gW := make([]float32, k*d)
	rng := rand.New(rand.NewPCG(o.Seed, 0x3a9))
	type enc struct {
		x, u []float32
		norm float32
	}
	encode := func(x []float32) enc {
		z := make([]float32, k)
		for a := 0; a < k; a++ {
			z[a] = dot32(W[a*d:(a+1)*d], x)
		}
		n := float32(math.Sqrt(float64(dot32(z, z))))
		if n > 0 {
			for j := range z {
				z[j] /= n
			}
		}
		return enc{x, z, n}
	}
	back := func(e enc, gu []float32) {
		if e.norm == 0 {
			return
		}
		p := dot32(gu, e.u)
		for a := 0; a < k; a++ {
			g := (gu[a] - p*e.u[a]) / e.norm
			if g == 0 {
				continue
			}
			row := gW[a*d : (a+1)*d]
			for b, x := range e.x {
				row[b] += g * x
			}
		}
	}
	order := make([]int, len(examples))
	for i := range order {
		order[i] = i
	}
	invT := float32(1 / o.Temperature)
	for ep := 0; ep < o.Epochs; ep++ {
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		var lossSum float64
		for b0 := 0; b0 < len(order); b0 += o.Batch {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			batch := order[b0:min(b0+o.Batch, len(order))]
			cands, cidx, pos := batchCandidates(rng, batch, examples, func(ex int) []negatives {
				return []negatives{{examples[ex].Hard, o.HardPerQuery}}
			})
			qs := make([]enc, len(batch))
			for i, ex := range batch {
				qs[i] = encode(qVec[ex])
			}
			cs := make([]enc, len(cands))
			for j, k := range cands {
				cs[j] = encode(docVec[k])
			}
			gc := make([][]float32, len(cands))
			for j := range gc {
				gc[j] = make([]float32, k)
			}
			logits := make([]float32, len(cands))
			for i, ex := range batch {
				gold := map[int]bool{}
				for _, g := range examples[ex].Gold {
					if j, ok := cidx[g]; ok {
						gold[j] = true
					}
				}
				mx := float32(math.Inf(-1))
				for j := range cands {
					if gold[j] && j != pos[i] {
						logits[j] = float32(math.Inf(-1))
						continue
					}
					logits[j] = invT * dot32(qs[i].u, cs[j].u)
					mx = max(mx, logits[j])
				}
				var z float64
				for j := range cands {
					z += math.Exp(float64(logits[j] - mx))
				}
				lossSum += -(float64(logits[pos[i]]-mx) - math.Log(z))
				gq := make([]float32, k)
				scale := invT / float32(len(batch))
				for j := range cands {
					p := float32(math.Exp(float64(logits[j]-mx)) / z)
					if j == pos[i] {
						p -= 1
					}
					if p == 0 {
						continue
					}
					g := p * scale
					for t := 0; t < k; t++ {
						gq[t] += g * cs[j].u[t]
						gc[j][t] += g * qs[i].u[t]
					}
				}
				back(qs[i], gq)
			}
			for j := range cs {
				back(cs[j], gc[j])
			}
			lr := float32(o.LearningRate)
			for i, g := range gW {
				if g == 0 {
					continue
				}
				a := accum[i] + g*g
				accum[i] = a
				W[i] -= lr * g / (float32(math.Sqrt(float64(a))) + 1e-8)
				gW[i] = 0
			}
		}
		if o.Progress != nil {
			fmt.Fprintf(o.Progress, "word map epoch %d/%d: loss %.4f\n", ep+1, o.Epochs, lossSum/float64(len(order)))
		}
	}
	return W, nil
}

// WithMap is w with the linear map m (row-major, K×Dim) applied to every
// averaged vector before it is normalised (TrainWordMap).
func (w *WordVectors) WithMap(m []float32) (*WordVectors, error) {
	if len(m) == 0 || len(m)%w.dim != 0 {
		return nil, fmt.Errorf("embeddings: word map has %d weights, want a multiple of %d", len(m), w.dim)
	}
	c := *w
	c.wmap, c.out = m, len(m)/w.dim
	var b bytes.Buffer
	_ = binary.Write(&b, binary.LittleEndian, m)
	h := sha256.Sum256(b.Bytes())
	c.id = w.id + ":map" + hex.EncodeToString(h[:6])
	return &c, nil
}

// WriteWordMap writes m gzipped (float32, little-endian; no timestamp).
func WriteWordMap(out io.Writer, m []float32) error {
	zw, _ := gzip.NewWriterLevel(out, gzip.BestCompression)
	if err := binary.Write(zw, binary.LittleEndian, m); err != nil {
		return err
	}
	return zw.Close()
}

// ReadWordMap reads a map WriteWordMap wrote.
func ReadWordMap(r io.Reader) ([]float32, error) {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return nil, fmt.Errorf("embeddings: word map: %w", err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("embeddings: word map: %w", err)
	}
	if len(b)%4 != 0 {
		return nil, errors.New("embeddings: word map: truncated")
	}
	m := make([]float32, len(b)/4)
	_ = binary.Read(bytes.NewReader(b), binary.LittleEndian, m)
	return m, nil
}
