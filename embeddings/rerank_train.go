package embeddings

import (
	"errors"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"
)

// RerankGroup is one request's candidates for fitting a Reranker: each
// candidate's features (Index.Candidates), whether it is a right tool,
// how many right tools the request has (for NDCG's ideal), and the
// request's weight in the loss.
type RerankGroup struct {
	Rows     [][]float64
	Relevant []bool
	Gold     int
	Weight   float64
	// Fixed marks a request the reranker does not apply to (a long
	// request a WholeOnly reranker leaves to the parts search): scored in
	// its fused order and not fitted on.
	Fixed bool
}

// RerankTrainOptions tune TrainReranker.
type RerankTrainOptions struct {
	// L2 is the ridge penalty on the standardised weights [1].
	L2 float64
	// Iterations caps Newton's steps [30].
	Iterations int
	// Depth is recorded in the reranker: how many candidates it re-ranks.
	Depth int
	// Use, when set, names the features the fit may weigh; the others get
	// no weight.
	Use []string
	// Lambda weighs each pair by the change in NDCG@10 a swap of its two
	// candidates would make (LambdaRank), recomputed at every step.
	Lambda bool
	// LambdaFloor is added to every pair's LambdaRank weight [0.01], so
	// that pairs below the first ten still count a little.
	LambdaFloor float64
	// Embedder is recorded in the reranker: the ID of the embedder whose
	// scores the features were computed with.
	Embedder string
}

// TrainReranker fits a Reranker by pairwise logistic regression (RankNet
// with a linear scorer): for every request, each right candidate should
// score above each wrong one; a request's pairs share its Weight, so a
// request with many candidates does not outweigh one with few. The loss
// is convex and minimised by Newton's method from zero, so the result
// depends on the data alone (no seed, no order).
func TrainReranker(groups []RerankGroup, o RerankTrainOptions) (*Reranker, error) {
	if o.L2 <= 0 {
		o.L2 = 1
	}
	if o.Iterations <= 0 {
		o.Iterations = 30
	}
	if o.LambdaFloor <= 0 {
		o.LambdaFloor = 0.01
	}
	nf := len(RerankFeatures)
	mean, scale := standardise(groups, nf)
	if len(o.Use) > 0 {
		for f, name := range RerankFeatures {
			if !slices.Contains(o.Use, name) {
				scale[f] = 0
			}
		}
	}
	// The pairs' standardised differences, each with its request's share.
	var diffs []float64
	var pw []float64
	type pair struct{ g, i, j int }
	var pairs []pair
	for gi, g := range groups {
		var pos, neg []int
		for i, r := range g.Relevant {
			if r {
				pos = append(pos, i)
			} else {
				neg = append(neg, i)
			}
		}
		if len(pos) == 0 || len(neg) == 0 || g.Weight <= 0 {
			continue
		}
		w := g.Weight / float64(len(pos)*len(neg))
		if o.Lambda {
			w = g.Weight
		}
		for _, i := range pos {
			for _, j := range neg {
				for f := 0; f < nf; f++ {
					d := 0.0
					if scale[f] > 0 {
						d = (g.Rows[i][f] - g.Rows[j][f]) / scale[f]
					}
					diffs = append(diffs, d)
				}
				pw = append(pw, w)
				pairs = append(pairs, pair{gi, i, j})
			}
		}
	}
	if len(pw) == 0 {
		return nil, errors.New("embeddings: no request has both a right and a wrong candidate to learn from")
	}
	wsum := 0.0
	for _, g := range groups {
		wsum += max(g.Weight, 0)
	}
	for i := range pw {
		pw[i] /= wsum
	}
	base := slices.Clone(pw)
	w := make([]float64, nf)
	grad := make([]float64, nf)
	hess := mat.NewSymDense(nf, nil)
	for it := 0; it < o.Iterations; it++ {
		if o.Lambda {
			// LambdaRank: a pair counts by how much NDCG@10 would change
			// were its two candidates swapped in the current order, so the
			// fit cares about the top of the list.
			r := &Reranker{Mean: mean, Scale: scale, Weights: w}
			pos := make([][]int, len(groups))
			for p, pr := range pairs {
				if pos[pr.g] == nil {
					pos[pr.g] = r.positions(groups[pr.g].Rows)
				}
				ideal := idealDCG(groups[pr.g].Gold)
				d := math.Abs(dcgAt(pos[pr.g][pr.i]) - dcgAt(pos[pr.g][pr.j]))
				pw[p] = base[p] * (d/ideal + o.LambdaFloor)
			}
		}
		for f := range grad {
			grad[f] = o.L2 / wsum * w[f]
		}
		hess.Zero()
		for f := 0; f < nf; f++ {
			hess.SetSym(f, f, o.L2/wsum)
		}
		h := make([]float64, nf*nf)
		for p, pwt := range pw {
			z := diffs[p*nf : (p+1)*nf]
			s := 0.0
			for f, v := range z {
				s += w[f] * v
			}
			sig := 1 / (1 + math.Exp(s)) // P(wrong order)
			c := pwt * sig * (1 - sig)
			for f, v := range z {
				grad[f] -= pwt * sig * v
				if v == 0 {
					continue
				}
				row := h[f*nf : (f+1)*nf]
				for g := f; g < nf; g++ {
					row[g] += c * v * z[g]
				}
			}
		}
		for f := 0; f < nf; f++ {
			for g := f; g < nf; g++ {
				hess.SetSym(f, g, hess.At(f, g)+h[f*nf+g])
			}
		}
		var step mat.VecDense
		if err := step.SolveVec(hess, mat.NewVecDense(nf, slices.Clone(grad))); err != nil {
			return nil, err
		}
		moved := 0.0
		for f := range w {
			w[f] -= step.AtVec(f)
			moved = max(moved, math.Abs(step.AtVec(f)))
		}
		if moved < 1e-9 && !o.Lambda {
			break
		}
	}
	return &Reranker{Version: rerankerVersion, Embedder: o.Embedder, Depth: o.Depth,
		Features: slices.Clone(RerankFeatures), Mean: mean, Scale: scale, Weights: w}, nil
}

// standardise is each feature's mean and standard deviation over every
// candidate (0: a constant feature, left out).
func standardise(groups []RerankGroup, nf int) (mean, scale []float64) {
	mean, scale = make([]float64, nf), make([]float64, nf)
	n := 0.0
	for _, g := range groups {
		for _, r := range g.Rows {
			for f, v := range r {
				mean[f] += v
			}
			n++
		}
	}
	if n == 0 {
		return
	}
	for f := range mean {
		mean[f] /= n
	}
	for _, g := range groups {
		for _, r := range g.Rows {
			for f, v := range r {
				scale[f] += (v - mean[f]) * (v - mean[f])
			}
		}
	}
	for f := range scale {
		scale[f] = math.Sqrt(scale[f] / n)
		if scale[f] < 1e-9 {
			scale[f] = 0
		}
	}
	return
}

// NDCG10 is the mean NDCG@10 of the groups' candidates ordered by r (nil:
// in their given order, the fused list's), binary relevance, the ideal
// ranking putting min(Gold, 10) right tools first.
func (r *Reranker) NDCG10(groups []RerankGroup) float64 {
	if len(groups) == 0 {
		return 0
	}
	total := 0.0
	for _, g := range groups {
		order := make([]int, len(g.Rows))
		for i := range order {
			order[i] = i
		}
		if r != nil && !g.Fixed {
			s := make([]float64, len(g.Rows))
			for i, x := range g.Rows {
				s[i] = r.Score(x)
			}
			slices.SortStableFunc(order, func(a, b int) int {
				switch {
				case s[a] > s[b]:
					return -1
				case s[a] < s[b]:
					return 1
				}
				return 0
			})
		}
		dcg, ideal := 0.0, 0.0
		for k := 0; k < 10 && k < len(order); k++ {
			if g.Relevant[order[k]] {
				dcg += 1 / math.Log2(float64(k+2))
			}
		}
		for k := 0; k < 10 && k < g.Gold; k++ {
			ideal += 1 / math.Log2(float64(k+2))
		}
		if ideal > 0 {
			total += dcg / ideal
		}
	}
	return total / float64(len(groups))
}

// positions are each row's 0-based place in r's order (ties keep the
// given order).
func (r *Reranker) positions(rows [][]float64) []int {
	order := make([]int, len(rows))
	s := make([]float64, len(rows))
	for i, x := range rows {
		order[i] = i
		s[i] = r.Score(x)
	}
	slices.SortStableFunc(order, func(a, b int) int {
		switch {
		case s[a] > s[b]:
			return -1
		case s[a] < s[b]:
			return 1
		}
		return 0
	})
	pos := make([]int, len(rows))
	for p, i := range order {
		pos[i] = p
	}
	return pos
}

// dcgAt is the discounted gain of a right tool at 0-based position p in
// NDCG@10.
func dcgAt(p int) float64 {
	if p >= 10 {
		return 0
	}
	return 1 / math.Log2(float64(p+2))
}

// idealDCG is DCG@10 of gold right tools ranked first.
func idealDCG(gold int) float64 {
	s := 0.0
	for k := 0; k < 10 && k < gold; k++ {
		s += dcgAt(k)
	}
	return max(s, 1e-9)
}
