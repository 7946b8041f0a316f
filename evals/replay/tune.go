package replay

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/airs-dev/airs/scoring"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// Component names as the engine's ranker records them, in the order of
// SelectionWeights' fields.
var Components = []string{"semantic_match", "trust_weight", "success_rate", "latency_score", "preference_score"}

// Choice is one labelled decision for tuning: the recorded candidates'
// score components and which candidate was right.
type Choice struct {
	ID       string
	Features [][]float64 // per candidate, in Components order
	Tools    []string
	Gold     int // index of the right candidate
}

// Choices extracts the tuning data from labelled items: records whose
// labelled tool is among the recorded candidates (weights cannot help when
// retrieval missed it, and "none" labels are a threshold's business, not
// the weights'). It returns the number of items left out.
func Choices(items []Item) (out []Choice, skipped int) {
	for _, it := range items {
		if it.Gold == nil || len(it.Recorded.Candidates) < 2 {
			skipped++
			continue
		}
		c := Choice{ID: it.ID, Gold: -1}
		for i, cand := range it.Recorded.Candidates {
			f := make([]float64, len(Components))
			for k, name := range Components {
				f[k] = cand.Components[name]
			}
			c.Features = append(c.Features, f)
			c.Tools = append(c.Tools, cand.Tool)
			if cand.Tool == it.Gold.Tool && c.Gold < 0 {
				c.Gold = i
			}
		}
		if c.Gold < 0 {
			skipped++
			continue
		}
		out = append(out, c)
	}
	return out, skipped
}

// Top1 is the fraction of choices whose right candidate has the highest
// composite under w (ties broken by tool name, as scoring.Sort does).
func Top1(cs []Choice, w scoring.SelectionWeights) float64 {
	if len(cs) == 0 {
		return 0
	}
	wv := weightVector(w)
	right := 0
	for _, c := range cs {
		best := -1
		bestS := math.Inf(-1)
		for i, f := range c.Features {
			s := dot(wv, f)
			if s > bestS || s == bestS && best >= 0 && c.Tools[i] < c.Tools[best] {
				best, bestS = i, s
			}
		}
		if best == c.Gold {
			right++
		}
	}
	return float64(right) / float64(len(cs))
}

func weightVector(w scoring.SelectionWeights) []float64 {
	return []float64{w.Semantic, w.Trust, w.Success, w.Latency, w.Preference}
}

func dot(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// Split shuffles choices with a fixed seed and holds out the given
// fraction.
func Split(cs []Choice, holdout float64, seed uint64) (train, test []Choice) {
	idx := make([]int, len(cs))
	for i := range idx {
		idx[i] = i
	}
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	r.Shuffle(len(idx), func(i, j int) { idx[i], idx[j] = idx[j], idx[i] })
	nTest := int(math.Round(holdout * float64(len(cs))))
	for k, i := range idx {
		if k < nTest {
			test = append(test, cs[i])
		} else {
			train = append(train, cs[i])
		}
	}
	return train, test
}

// FitOptions tune Fit.
type FitOptions struct {
	// L2 is the ridge penalty on the log-weights (default 1e-3), which keeps
	// the optimum finite when the data separate perfectly.
	L2 float64
}

// Fit fits SelectionWeights by a conditional logit (McFadden, 1974) on the
// score components: P(candidate j) = exp(β·x_j) / Σ_k exp(β·x_k) over
// each decision's candidates, maximising the log-likelihood of the right
// candidates (plus a small ridge penalty, which keeps the optimum finite
// when the data separate perfectly) subject to β ≥ 0. The objective is
// convex, so a projected Newton method with an active set converges in a
// few steps: the Hessian (the covariance of the components under the
// model, gonum/mat) is solved on the free coordinates, the step is
// projected on β ≥ 0 and backtracked (Armijo). The composite divides by
// the sum of the weights, so only their direction matters for ranking: the
// result is normalised to sum to 1. Components that never vary within a
// decision carry no information and get weight 0. It returns the weights
// and the mean log-likelihood of the training decisions.
func Fit(cs []Choice, o FitOptions) (scoring.SelectionWeights, float64, error) {
	if len(cs) == 0 {
		return scoring.SelectionWeights{}, 0, errors.New("tune: no decisions to fit (labelled records whose right tool is among ≥2 recorded candidates)")
	}
	if o.L2 == 0 {
		o.L2 = 1e-3
	}
	d := len(Components)
	varies := make([]bool, d)
	for _, c := range cs {
		for k := 0; k < d; k++ {
			for _, f := range c.Features[1:] {
				if f[k] != c.Features[0][k] {
					varies[k] = true
				}
			}
		}
	}
	if !slices.Contains(varies, true) {
		return scoring.SelectionWeights{}, 0, errors.New("tune: no score component varies between candidates")
	}
	n := float64(len(cs))
	obj := func(b []float64) float64 {
		nll := 0.0
		for _, c := range cs {
			nll -= logProb(c, b)
		}
		return nll/n + o.L2*floats.Dot(b, b)
	}
	beta := make([]float64, d)
	for k, v := range weightVector(scoring.DefaultWeights) {
		if varies[k] {
			beta[k] = 10 * v
		}
	}
	fx := obj(beta)
	g := make([]float64, d)
	H := mat.NewSymDense(d, nil)
	trial := make([]float64, d)
	for iter := 0; iter < 100; iter++ {
		gradHess(cs, beta, o.L2, g, H)
		var free []int
		for k := 0; k < d; k++ {
			if varies[k] && (beta[k] > 0 || g[k] < 0) {
				free = append(free, k)
			}
		}
		if len(free) == 0 {
			break
		}
		dir := make([]float64, d)
		hf := mat.NewSymDense(len(free), nil)
		gf := mat.NewVecDense(len(free), nil)
		for i, a := range free {
			gf.SetVec(i, -g[a])
			for j, b := range free {
				hf.SetSym(i, j, H.At(a, b))
			}
		}
		var ch mat.Cholesky
		var x mat.VecDense
		if ch.Factorize(hf) && ch.SolveVecTo(&x, gf) == nil {
			for i, a := range free {
				dir[a] = x.AtVec(i)
			}
		} else {
			for _, a := range free {
				dir[a] = -g[a]
			}
		}
		step, moved := 1.0, false
		for step > 1e-12 {
			for k := range trial {
				trial[k] = math.Max(0, beta[k]+step*dir[k])
			}
			dec := 0.0
			for k := range trial {
				dec += g[k] * (trial[k] - beta[k])
			}
			if ft := obj(trial); ft <= fx+1e-4*dec {
				moved = floats.Distance(trial, beta, 2) > 1e-10
				copy(beta, trial)
				fx = ft
				break
			}
			step /= 2
		}
		if !moved {
			break
		}
	}
	sum := floats.Sum(beta)
	if sum <= 0 {
		return scoring.SelectionWeights{}, 0, errors.New("tune: the fit put every weight at zero")
	}
	floats.Scale(1/sum, beta)
	w := scoring.SelectionWeights{Semantic: beta[0], Trust: beta[1], Success: beta[2], Latency: beta[3], Preference: beta[4]}
	ll := 0.0
	for _, c := range cs {
		ll += logProb(c, weightVector(w))
	}
	return w, ll / n, w.Validate()
}

// gradHess computes the gradient and Hessian of the penalised mean
// negative log-likelihood at b.
func gradHess(cs []Choice, b []float64, l2 float64, g []float64, H *mat.SymDense) {
	d := len(b)
	for k := range g {
		g[k] = 0
	}
	h := make([]float64, d*d)
	ex := make([]float64, d)
	for _, c := range cs {
		p := probs(c, b)
		for k := range ex {
			ex[k] = 0
		}
		for j, f := range c.Features {
			for k := 0; k < d; k++ {
				ex[k] += p[j] * f[k]
			}
		}
		for k := 0; k < d; k++ {
			g[k] += ex[k] - c.Features[c.Gold][k]
		}
		for j, f := range c.Features {
			for a := 0; a < d; a++ {
				for bb := 0; bb < d; bb++ {
					h[a*d+bb] += p[j] * (f[a] - ex[a]) * (f[bb] - ex[bb])
				}
			}
		}
	}
	n := float64(len(cs))
	for a := 0; a < d; a++ {
		g[a] = g[a]/n + 2*l2*b[a]
		for bb := a; bb < d; bb++ {
			v := h[a*d+bb] / n
			if a == bb {
				v += 2 * l2
			}
			H.SetSym(a, bb, v)
		}
	}
}

func probs(c Choice, b []float64) []float64 {
	s := make([]float64, len(c.Features))
	m := math.Inf(-1)
	for j, f := range c.Features {
		s[j] = dot(b, f)
		m = math.Max(m, s[j])
	}
	z := 0.0
	for j := range s {
		s[j] = math.Exp(s[j] - m)
		z += s[j]
	}
	for j := range s {
		s[j] /= z
	}
	return s
}

func logProb(c Choice, b []float64) float64 {
	m := math.Inf(-1)
	s := make([]float64, len(c.Features))
	for j, f := range c.Features {
		s[j] = dot(b, f)
		m = math.Max(m, s[j])
	}
	z := 0.0
	for _, v := range s {
		z += math.Exp(v - m)
	}
	return s[c.Gold] - m - math.Log(z)
}

// TuneResult is what `airs eval tune` reports.
type TuneResult struct {
	Train, Test   int                      `json:"-"`
	Skipped       int                      `json:"-"`
	Weights       scoring.SelectionWeights `json:"weights"`
	DefaultTop1   float64                  `json:"default_top1"`
	TunedTop1     float64                  `json:"tuned_top1"`
	TrainDefault  float64                  `json:"train_default_top1"`
	TrainTuned    float64                  `json:"train_tuned_top1"`
	LogLikelihood float64                  `json:"-"`
	// Paired difference on the held-out decisions (tuned − default).
	Diff Interval `json:"diff"`
}

// Interval is a bootstrap interval in JSON form.
type Interval struct {
	Mean float64 `json:"mean"`
	Lo   float64 `json:"lo"`
	Hi   float64 `json:"hi"`
}

// Tune splits the decisions, fits on the training part and scores both the
// default and the fitted weights on the held-out part.
func Tune(items []Item, holdout float64, seed uint64) (*TuneResult, error) {
	if holdout <= 0 || holdout >= 1 {
		return nil, fmt.Errorf("tune: --holdout must be in (0, 1), got %g", holdout)
	}
	cs, skipped := Choices(items)
	train, test := Split(cs, holdout, seed)
	if len(test) == 0 || len(train) == 0 {
		return nil, fmt.Errorf("tune: %d usable decisions is too few to hold %g%% out", len(cs), 100*holdout)
	}
	w, ll, err := Fit(train, FitOptions{})
	if err != nil {
		return nil, err
	}
	r := &TuneResult{Train: len(train), Test: len(test), Skipped: skipped, Weights: w, LogLikelihood: ll,
		DefaultTop1: Top1(test, scoring.DefaultWeights), TunedTop1: Top1(test, w),
		TrainDefault: Top1(train, scoring.DefaultWeights), TrainTuned: Top1(train, w)}
	base, cand := make([]float64, len(test)), make([]float64, len(test))
	for i, c := range test {
		base[i] = Top1([]Choice{c}, scoring.DefaultWeights)
		cand[i] = Top1([]Choice{c}, w)
	}
	iv, err := bootstrap(base, cand)
	if err != nil {
		return nil, err
	}
	r.Diff = iv
	return r, nil
}
