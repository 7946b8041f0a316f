package anomaly

import (
	"math/rand/v2"
)

// TrainOptions bound the tree. The zero value takes the defaults.
type TrainOptions struct {
	MaxDepth   int     // default 24
	MinLeaf    int     // fewest (unweighted) points in a leaf; default 3
	RefPerCall int     // reference points drawn per logged call; default 32 (fewer past MaxReference)
	Seed       uint64  // the reference sample's seed
	Prior      float64 // added to a leaf's logged weight (smoothing); default 0.5
	// Conditional is the share of the reference drawn one feature at a
	// time from a logged call (see conditionalReference); default 0.9, and a
	// negative value draws the whole reference uniformly.
	Conditional float64
	// KeepFirstCalls learns the logged first calls of a tool (NovelTool)
	// as normal too; by default they are left out (see Train).
	KeepFirstCalls bool
}

func (o TrainOptions) withDefaults() TrainOptions {
	if o.MaxDepth == 0 {
		o.MaxDepth = 24
	}
	if o.MinLeaf == 0 {
		o.MinLeaf = 3
	}
	if o.RefPerCall == 0 {
		o.RefPerCall = 32
	}
	if o.Prior == 0 {
		o.Prior = 0.5
	}
	if o.Conditional == 0 {
		o.Conditional = 0.9
	} else if o.Conditional < 0 || o.Conditional > 1 {
		o.Conditional = max(0, min(o.Conditional, 1))
	}
	return o
}

// tnode is the training tree, with float leaf scores; compile freezes it.
type tnode struct {
	leaf        bool
	score       float64
	feat        int
	val         uint8
	left, right *tnode // left: bin == val (categorical) or bin <= val (ordinal)
}

func goesLeft(feat int, val, b uint8) bool {
	if categorical[feat] {
		return b == val
	}
	return b <= val
}

type point struct {
	b   bins
	ref bool
}

// grow builds the tree over pts. refW is a reference point's weight
// (logged calls weigh 1), so both classes weigh the same in total.
func grow(pts []point, depth int, refW float64, o TrainOptions) *tnode {
	var real, ref float64
	for _, p := range pts {
		if p.ref {
			ref += refW
		} else {
			real++
		}
	}
	leaf := &tnode{leaf: true, score: ref / (ref + real + o.Prior)}
	if depth >= o.MaxDepth || len(pts) < 2*o.MinLeaf || real == 0 || ref == 0 {
		return leaf
	}
	total := real + ref
	parent := gini(real, ref)
	bestGain, bestF, bestV := 1e-9, -1, uint8(0)
	for f := 0; f < numFeatures; f++ {
		n := binCount[f]
		var hr, hf [64]float64
		var hc [64]int
		for _, p := range pts {
			v := p.b[f]
			hc[v]++
			if p.ref {
				hf[v] += refW
			} else {
				hr[v]++
			}
		}
		var lr, lf float64
		var lc int
		for v := 0; v < n; v++ {
			if categorical[f] {
				lr, lf, lc = hr[v], hf[v], hc[v]
			} else {
				lr, lf, lc = lr+hr[v], lf+hf[v], lc+hc[v]
			}
			if lc < o.MinLeaf || len(pts)-lc < o.MinLeaf {
				continue
			}
			rr, rf := real-lr, ref-lf
			lw, rw := lr+lf, rr+rf
			g := parent - (lw/total)*gini(lr, lf) - (rw/total)*gini(rr, rf)
			if g > bestGain {
				bestGain, bestF, bestV = g, f, uint8(v)
			}
		}
	}
	if bestF < 0 {
		return leaf
	}
	var l, r []point
	for _, p := range pts {
		if goesLeft(bestF, bestV, p.b[bestF]) {
			l = append(l, p)
		} else {
			r = append(r, p)
		}
	}
	return &tnode{feat: bestF, val: bestV,
		left: grow(l, depth+1, refW, o), right: grow(r, depth+1, refW, o)}
}

func gini(a, b float64) float64 {
	t := a + b
	if t == 0 {
		return 0
	}
	pa, pb := a/t, b/t
	return 1 - pa*pa - pb*pb
}

func (n *tnode) walk(b bins) float64 {
	for !n.leaf {
		if goesLeft(n.feat, n.val, b[n.feat]) {
			n = n.left
		} else {
			n = n.right
		}
	}
	return n.score
}

// reference draws k points uniformly over every feature's bins, each
// feature independently.
func reference(k int, seed uint64) []point {
	rng := rand.New(rand.NewPCG(seed, 0x616e6f6d616c79))
	pts := make([]point, k)
	for i := range pts {
		for f := 0; f < numFeatures; f++ {
			pts[i].b[f] = uint8(rng.IntN(binCount[f]))
		}
		pts[i].ref = true
	}
	return pts
}

// conditionalReference draws k points each from a logged call with one
// feature (chosen uniformly) replaced by a uniform draw over its bins.
// The uniform reference alone is thin wherever the log is narrow in several
// features at once: a bot that always runs at 02:00 occupies one caller bin
// of 32, and the uniform points in "that caller, another hour" are too few
// for a leaf there to score high, so a bot running at 11:00 among the
// humans' calls looks ordinary. Points that keep every feature of a real
// call but one fill exactly those regions — "this caller, this tool, this
// rate, at another hour" — so the tree learns how rare each feature's value
// is given the others (per-feature conditional rarity), while the uniform
// points still cover what no call comes near (unknown callers, bursts).
func conditionalReference(real []point, k int, seed uint64) []point {
	rng := rand.New(rand.NewPCG(seed, 0x636f6e64))
	pts := make([]point, k)
	for i := range pts {
		p := real[rng.IntN(len(real))]
		f := rng.IntN(numFeatures)
		p.b[f] = uint8(rng.IntN(binCount[f]))
		p.ref = true
		pts[i] = p
	}
	return pts
}
