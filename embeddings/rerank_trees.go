package embeddings

import (
	"math"
	"slices"
)

// BoostOptions tune BoostReranker.
type BoostOptions struct {
	// Trees is how many trees are grown [100].
	Trees int
	// Depth of each tree [3].
	Depth int
	// Shrinkage multiplies each tree's values [0.1].
	Shrinkage float64
	// MinLeaf is the least summed Hessian a leaf may hold [1].
	MinLeaf float64
	// Bins are the thresholds tried per feature (quantiles) [32].
	Bins int
}

func (o *BoostOptions) defaults() {
	if o.Trees <= 0 {
		o.Trees = 100
	}
	if o.Depth <= 0 {
		o.Depth = 3
	}
	if o.Shrinkage <= 0 {
		o.Shrinkage = 0.1
	}
	if o.MinLeaf <= 0 {
		o.MinLeaf = 1
	}
	if o.Bins <= 1 {
		o.Bins = 32
	}
}

// BoostReranker grows regression trees on top of r's score by LambdaMART
// (Burges, "From RankNet to LambdaRank to LambdaMART", 2010): each tree
// fits the gradients of the pairwise logistic loss, every pair weighted
// by the change in NDCG@10 of swapping it, with Newton leaf values. The
// split thresholds are quantiles of each feature and ties go to the lower
// feature, so the result depends on the data alone. r is not changed.
func BoostReranker(r *Reranker, groups []RerankGroup, o BoostOptions) *Reranker {
	o.defaults()
	out := *r
	out.Trees = nil
	nf := len(RerankFeatures)
	// Rows flattened, with their group.
	var rows [][]float64
	var start []int
	for _, g := range groups {
		start = append(start, len(rows))
		rows = append(rows, g.Rows...)
	}
	start = append(start, len(rows))
	score := make([]float64, len(rows))
	for i, x := range rows {
		score[i] = out.linear(x)
	}
	cuts := quantileCuts(rows, nf, o.Bins)
	// bin[i*nf+f]: row i's bin of feature f (the first cut ≥ its value).
	bin := make([]uint8, len(rows)*nf)
	for i, x := range rows {
		for f := 0; f < nf; f++ {
			b, _ := slices.BinarySearch(cuts[f], x[f])
			bin[i*nf+f] = uint8(b)
		}
	}
	grad, hess := make([]float64, len(rows)), make([]float64, len(rows))
	wsum := 0.0
	for _, g := range groups {
		wsum += max(g.Weight, 0)
	}
	for t := 0; t < o.Trees; t++ {
		clear(grad)
		clear(hess)
		for gi, g := range groups {
			if g.Weight <= 0 {
				continue
			}
			lo, hi := start[gi], start[gi+1]
			pos := positionsOf(score[lo:hi])
			ideal := idealDCG(g.Gold)
			w := g.Weight / wsum
			for i := lo; i < hi; i++ {
				if !g.Relevant[i-lo] {
					continue
				}
				for j := lo; j < hi; j++ {
					if g.Relevant[j-lo] {
						continue
					}
					d := math.Abs(dcgAt(pos[i-lo])-dcgAt(pos[j-lo]))/ideal + 0.01
					rho := 1 / (1 + math.Exp(score[i]-score[j]))
					grad[i] += w * d * rho
					grad[j] -= w * d * rho
					h := w * d * rho * (1 - rho)
					hess[i] += h
					hess[j] += h
				}
			}
		}
		tree := growTree(rows, bin, cuts, grad, hess, nf, o, wsum)
		for i, x := range rows {
			score[i] += tree.eval(x)
		}
		out.Trees = append(out.Trees, tree)
	}
	return &out
}

// positionsOf are each score's 0-based place, best first (ties: the
// earlier first).
func positionsOf(s []float64) []int {
	order := make([]int, len(s))
	for i := range order {
		order[i] = i
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
	pos := make([]int, len(s))
	for p, i := range order {
		pos[i] = p
	}
	return pos
}

// quantileCuts are up to bins−1 distinct thresholds per feature.
func quantileCuts(rows [][]float64, nf, bins int) [][]float64 {
	cuts := make([][]float64, nf)
	vals := make([]float64, len(rows))
	for f := 0; f < nf; f++ {
		for i, x := range rows {
			vals[i] = x[f]
		}
		slices.Sort(vals)
		var c []float64
		for b := 1; b < bins; b++ {
			v := vals[b*len(vals)/bins]
			if len(c) == 0 || v > c[len(c)-1] {
				c = append(c, v)
			}
		}
		// The largest value is no threshold: nothing would go right.
		if len(c) > 0 && len(vals) > 0 && c[len(c)-1] >= vals[len(vals)-1] {
			c = c[:len(c)-1]
		}
		cuts[f] = c
	}
	return cuts
}

// growTree grows one tree of depth o.Depth on the rows' gradients and
// Hessians: at each node the split with the best Newton gain, its leaf
// values −(Σgrad)/(Σhess) scaled by the shrinkage (here grad is the
// direction to move, so the value is Σgrad/Σhess).
func growTree(rows [][]float64, bin []uint8, cuts [][]float64, grad, hess []float64, nf int, o BoostOptions, wsum float64) RerankTree {
	var t RerankTree
	reg := 1e-3
	minLeaf := o.MinLeaf / wsum
	newNode := func() int {
		t.Feature = append(t.Feature, -1)
		t.Threshold = append(t.Threshold, 0)
		t.Left = append(t.Left, 0)
		t.Right = append(t.Right, 0)
		t.Value = append(t.Value, 0)
		return len(t.Feature) - 1
	}
	idx := make([]int, len(rows))
	for i := range idx {
		idx[i] = i
	}
	var grow func(node int, members []int, depth int)
	grow = func(node int, members []int, depth int) {
		G, H := 0.0, 0.0
		for _, i := range members {
			G += grad[i]
			H += hess[i]
		}
		t.Value[node] = o.Shrinkage * G / (H + reg)
		if depth == o.Depth || len(members) < 2 {
			return
		}
		parent := G * G / (H + reg)
		bestGain, bestF, bestB := 1e-12, -1, -1
		nb := 0
		for f := 0; f < nf; f++ {
			nb = max(nb, len(cuts[f])+1)
		}
		gh := make([]float64, 2*nb)
		for f := 0; f < nf; f++ {
			k := len(cuts[f])
			if k == 0 {
				continue
			}
			clear(gh)
			for _, i := range members {
				b := bin[i*nf+f]
				gh[2*int(b)] += grad[i]
				gh[2*int(b)+1] += hess[i]
			}
			gl, hl := 0.0, 0.0
			for b := 0; b < k; b++ {
				gl += gh[2*b]
				hl += gh[2*b+1]
				gr, hr := G-gl, H-hl
				if hl < minLeaf || hr < minLeaf {
					continue
				}
				gain := gl*gl/(hl+reg) + gr*gr/(hr+reg) - parent
				if gain > bestGain {
					bestGain, bestF, bestB = gain, f, b
				}
			}
		}
		if bestF < 0 {
			return
		}
		var left, right []int
		for _, i := range members {
			if int(bin[i*nf+bestF]) <= bestB {
				left = append(left, i)
			} else {
				right = append(right, i)
			}
		}
		t.Feature[node], t.Threshold[node] = bestF, cuts[bestF][bestB]
		l := newNode()
		r := newNode()
		t.Left[node], t.Right[node] = l, r
		grow(l, left, depth+1)
		grow(r, right, depth+1)
	}
	grow(newNode(), idx, 0)
	return t
}
