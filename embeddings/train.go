package embeddings

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
)

// TrainExample is one request and the tools it needs, by key into the
// training corpus; Hard are tools BM25 ranks high that it does not need.
type TrainExample struct {
	Query string
	Gold  []string
	Hard  []string
	// Pool names the registry the request is asked in (a key of
	// TrainOptions.Pools): the model's own hard negatives are mined there.
	Pool string
}

// TrainOptions tune TrainModel. The zero value means the defaults.
type TrainOptions struct {
	Header ModelHeader
	// Seed fixes the initial table and the order of examples.
	Seed uint64
	// Epochs over the examples (default 6).
	Epochs int
	// Batch is the number of requests per step (default 64); the other
	// requests' tools in the batch are its negatives.
	Batch int
	// HardPerQuery BM25 negatives join the batch per request (default 2).
	HardPerQuery int
	// Temperature of the softmax over cosines (default 0.05).
	Temperature float64
	// LearningRate of Adagrad (default 0.02).
	LearningRate float64
	// Dropout is the probability that a feature of a tool's text is left
	// out of one step's encoding (default 0.3; negative: none): it keeps
	// the model from resting on one identifying n-gram per tool.
	Dropout float64
	// Pools are the registries of the examples (Pool → tool keys). With
	// MinedPerQuery > 0, after each epoch the model ranks each request's
	// pool and its best-ranked wrong tools become hard negatives of the next
	// epoch, beside the BM25 ones: the confusions of the model itself.
	Pools         map[string][]string
	MinedPerQuery int
	// Keep, in (0, 1), is the share of the trained table kept in the
	// end: the rest is the initial random projection, which compares texts
	// by their shared features alone (weight-space ensembling: Wortsman et
	// al., 2022, "Robust fine-tuning of zero-shot models"). What training
	// learned about the tools it saw is thus mixed with what holds for any
	// text, for tools never seen. 0 or 1: the trained table alone.
	Keep float64
	// IDF scales each row of the initial table by its feature's inverse
	// document frequency over the training texts (tools and requests),
	// divided by the largest: words every tool text has ("get", "data")
	// start weak, and a feature no training text has — a word of a tool
	// never seen — starts at full weight, as BM25 weighs it. Training then
	// moves the rows from there.
	IDF bool
	// Progress receives one line per epoch (nil: none).
	Progress io.Writer
}

func (o *TrainOptions) defaults() {
	if o.Epochs <= 0 {
		o.Epochs = 6
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
	if o.Dropout == 0 {
		o.Dropout = 0.3
	}
	if o.LearningRate <= 0 {
		o.LearningRate = 0.02
	}
}

// TrainModel trains a ToolModel contrastively (InfoNCE, as in dense
// passage retrieval: Karpukhin et al., 2020): for each request, its tool
// against the other requests' tools in the batch and against its BM25 hard
// negatives, tools the request also needs excluded from the negatives.
// One goroutine and a seeded generator: the same data and options give the
// same weights. corpus maps a tool key to the text the index embeds for it.
func TrainModel(ctx context.Context, corpus map[string]string, examples []TrainExample, o TrainOptions) (*ToolModel, error) {
	o.defaults()
	if len(examples) == 0 {
		return nil, errors.New("embeddings: no training examples")
	}
	m := NewToolModel(o.Header, o.Seed)
	d := m.hdr.Dim
	rng := rand.New(rand.NewPCG(o.Seed, 0x7001))

	docFeat := map[string][]wfeat{}
	feat := func(key string) ([]wfeat, error) {
		if f, ok := docFeat[key]; ok {
			return f, nil
		}
		t, ok := corpus[key]
		if !ok {
			return nil, fmt.Errorf("embeddings: training tool %q is not in the corpus", key)
		}
		f := m.textFeatures(t)
		docFeat[key] = f
		return f, nil
	}
	qFeat := make([][]wfeat, len(examples))
	for i, ex := range examples {
		qFeat[i] = m.textFeatures(ex.Query)
		for _, k := range append(append([]string(nil), ex.Gold...), ex.Hard...) {
			if _, err := feat(k); err != nil {
				return nil, err
			}
		}
	}
	if o.IDF {
		m.scaleByIDF(corpus, qFeat)
	}

	accum := make([]float32, len(m.w)) // Adagrad's sum of squared gradients
	grad := map[int32][]float32{}
	addGrad := func(fs []wfeat, g []float32) {
		for _, f := range fs {
			row, ok := grad[f.row]
			if !ok {
				row = make([]float32, d)
				grad[f.row] = row
			}
			for j := range g {
				row[j] += f.w * g[j]
			}
		}
	}
	type enc struct {
		fs   []wfeat
		u    []float32
		norm float32
	}
	encode := func(fs []wfeat) enc {
		v := make([]float32, d)
		m.sum(fs, v)
		n := float32(math.Sqrt(float64(dot32(v, v))))
		if n > 0 {
			for j := range v {
				v[j] /= n
			}
		}
		return enc{fs, v, n}
	}
	// back turns dL/du into dL/d(rows) through the normalisation.
	back := func(e enc, gu []float32) {
		if e.norm == 0 {
			return
		}
		p := dot32(gu, e.u)
		g := make([]float32, d)
		for j := range g {
			g[j] = (gu[j] - p*e.u[j]) / e.norm
		}
		addGrad(e.fs, g)
	}

	mined := make([][]string, len(examples))
	mine := func() {
		for pool, keys := range o.Pools {
			vecs := make([][]float32, len(keys))
			for i, k := range keys {
				fs, err := feat(k)
				if err != nil {
					continue
				}
				vecs[i] = encode(fs).u
			}
			for i, ex := range examples {
				if ex.Pool != pool {
					continue
				}
				q := encode(qFeat[i]).u
				gold := map[string]bool{}
				for _, g := range ex.Gold {
					gold[g] = true
				}
				scores := make([]float64, len(keys))
				for j, v := range vecs {
					scores[j] = math.Inf(-1)
					if v != nil && !gold[keys[j]] {
						scores[j] = float64(dot32(q, v))
					}
				}
				best := topK(scores, 10, nil, false, nil)
				mined[i] = mined[i][:0]
				for _, b := range best {
					if math.IsInf(b.Score, -1) {
						continue
					}
					mined[i] = append(mined[i], keys[b.Doc])
				}
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
		var nq int
		for b0 := 0; b0 < len(order); b0 += o.Batch {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			batch := order[b0:min(b0+o.Batch, len(order))]
			cands, cidx, pos := batchCandidates(rng, batch, examples, func(ex int) []negatives {
				return []negatives{{examples[ex].Hard, o.HardPerQuery}, {mined[ex], o.MinedPerQuery}}
			})
			qs := make([]enc, len(batch))
			for i, ex := range batch {
				qs[i] = encode(qFeat[ex])
			}
			cs := make([]enc, len(cands))
			for j, k := range cands {
				fs := docFeat[k]
				if o.Dropout > 0 {
					kept := make([]wfeat, 0, len(fs))
					for _, f := range fs {
						if rng.Float64() >= o.Dropout {
							kept = append(kept, f)
						}
					}
					if len(kept) > 0 {
						fs = kept
					}
				}
				cs[j] = encode(fs)
			}
			gq := make([][]float32, len(batch))
			gc := make([][]float32, len(cands))
			for j := range gc {
				gc[j] = make([]float32, d)
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
				nq++
				gq[i] = make([]float32, d)
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
					for t := 0; t < d; t++ {
						gq[i][t] += g * cs[j].u[t]
						gc[j][t] += g * qs[i].u[t]
					}
				}
			}
			for i := range qs {
				back(qs[i], gq[i])
			}
			for j := range cs {
				back(cs[j], gc[j])
			}
			lr := float32(o.LearningRate)
			for r, g := range grad {
				base := int(r) * d
				for j, x := range g {
					a := accum[base+j] + x*x
					accum[base+j] = a
					m.w[base+j] -= lr * x / (float32(math.Sqrt(float64(a))) + 1e-8)
				}
				delete(grad, r)
			}
		}
		if o.MinedPerQuery > 0 && ep+1 < o.Epochs {
			mine()
		}
		if o.Progress != nil {
			fmt.Fprintf(o.Progress, "epoch %d/%d: loss %.4f over %d requests\n", ep+1, o.Epochs, lossSum/float64(max(nq, 1)), nq)
		}
	}
	if o.Keep > 0 && o.Keep < 1 {
		w0 := NewToolModel(o.Header, o.Seed).w
		a := float32(o.Keep)
		for i := range m.w {
			m.w[i] = a*m.w[i] + (1-a)*w0[i]
		}
	}
	m.quantize()
	return m, nil
}

// scaleByIDF multiplies each row of the table by idf(row) / max idf, with
// idf = ln(1 + n/df) over the corpus's texts and the requests (df 0: the
// largest).
func (m *ToolModel) scaleByIDF(corpus map[string]string, queries [][]wfeat) {
	df := make([]int32, m.hdr.Buckets)
	count := func(fs []wfeat) {
		seen := map[int32]bool{}
		for _, f := range fs {
			if !seen[f.row] {
				seen[f.row] = true
				df[f.row]++
			}
		}
	}
	keys := make([]string, 0, len(corpus))
	for k := range corpus {
		keys = append(keys, k)
	}
	for _, k := range keys {
		count(m.textFeatures(corpus[k]))
	}
	for _, q := range queries {
		count(q)
	}
	n := float64(len(keys) + len(queries))
	top := math.Log(1 + n)
	d := m.hdr.Dim
	for r, c := range df {
		if c == 0 {
			continue
		}
		s := float32(math.Log(1+n/float64(c)) / top)
		row := m.w[r*d : (r+1)*d]
		for j := range row {
			row[j] *= s
		}
	}
}

// negatives is a list to draw a request's negatives from, and how many.
type negatives struct {
	keys []string
	n    int
}

// batchCandidates gathers a training batch's candidate tools, as the
// contrastive trainers share them: each request's sampled positive (pos
// holds its place), then, request by request, draws from its negative
// lists. idx maps a tool's key to its place in cands.
func batchCandidates(rng *rand.Rand, batch []int, examples []TrainExample, negs func(ex int) []negatives) (cands []string, idx map[string]int, pos []int) {
	idx = map[string]int{}
	add := func(k string) int {
		if i, ok := idx[k]; ok {
			return i
		}
		idx[k] = len(cands)
		cands = append(cands, k)
		return len(cands) - 1
	}
	pos = make([]int, len(batch))
	for i, ex := range batch {
		g := examples[ex].Gold
		pos[i] = add(g[rng.IntN(len(g))])
	}
	for _, ex := range batch {
		for _, l := range negs(ex) {
			if len(l.keys) == 0 {
				continue
			}
			for k := 0; k < l.n; k++ {
				add(l.keys[rng.IntN(len(l.keys))])
			}
		}
	}
	return cands, idx, pos
}
