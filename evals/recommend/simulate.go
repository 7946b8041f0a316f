package recommend

import (
	"math"
	"math/rand/v2"

	"github.com/airs-dev/airs/recommender"
)

// SimUser is the simulated user of the learning curve: a hidden logistic
// acceptance model that differs from Fusion's prior. It accepts a
// recommended tool with probability
//
//	σ(Bias + Σ Weights[s]·x[s] + Family[class of the tool])
//
// and otherwise dismisses it (probability DismissShare) or ignores it.
type SimUser struct {
	Bias         float64
	Weights      recommender.Features
	Family       map[string]float64 // class → preference in log-odds
	DismissShare float64
}

// DefaultSimUser is the documented user of EVALS.md: they act on what they
// did before (history +4, recent calls +2, the files in front of them +1)
// and are put off by suggestions that merely echo the chat (conversation
// −2, task −1) — the reverse of Fusion's prior, which trusts the
// conversation most — and they like the math tools (MathAPI +2.5) and
// dislike the social ones (TwitterAPI −3, MessageAPI −2); bias −3.
// Non-accepted recommendations are dismissed 60% of the time, ignored
// otherwise.
func DefaultSimUser() SimUser {
	return SimUser{
		Bias: -3,
		Weights: recommender.Features{recommender.SignalSpace: 1, recommender.SignalRecent: 2, recommender.SignalHistory: 4,
			recommender.SignalConversation: -2, recommender.SignalTask: -1},
		Family:       map[string]float64{"MathAPI": 2.5, "TwitterAPI": -3, "MessageAPI": -2},
		DismissShare: 0.6,
	}
}

// P is the user's acceptance probability for a tool of class with scores x.
func (u SimUser) P(class string, x recommender.Features) float64 {
	z := u.Bias + u.Family[class]
	for s := range recommender.NumSignals {
		z += u.Weights[s] * x[s]
	}
	return 1 / (1 + math.Exp(-z))
}

// SimOptions shape the simulation.
type SimOptions struct {
	Rounds     int    // recommendations (500)
	Candidates int    // candidates per round, drawn from the functions (20)
	Window     int    // rounds per point of the curve (50)
	Seed       uint64 // (1)
	Learn      bool   // false: the prior Fusion, never updated (the baseline curve)
}

// SimResult is one simulated run.
type SimResult struct {
	Method     string    `json:"simulation"`
	Rounds     int       `json:"rounds"`
	Window     int       `json:"window"`
	Acceptance []float64 `json:"acceptance"` // per window
	First100   float64   `json:"first100"`
	Last100    float64   `json:"last100"`
	Accepted   int       `json:"accepted"`
}

// Simulate runs the simulated user u for o.Rounds rounds: each round draws
// o.Candidates functions with random signal scores (each signal present
// with probability 0.4, then uniform in [0,1]), Fusion ranks them, the top
// one is recommended, u answers (accept, dismiss, ignore) and, when
// o.Learn, Fusion updates on the answer. The random draws (candidates,
// scores and the user's coin) are the same with and without learning, so
// the two curves differ only by what Fusion learned.
func Simulate(funcs []Function, u SimUser, o SimOptions) SimResult {
	if o.Rounds == 0 {
		o.Rounds = 500
	}
	if o.Candidates == 0 {
		o.Candidates = 20
	}
	if o.Window == 0 {
		o.Window = 50
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	r := rand.New(rand.NewPCG(o.Seed, 0x51))
	f := recommender.NewFusion()
	res := SimResult{Method: "fusion (prior, no learning)", Rounds: o.Rounds, Window: o.Window}
	if o.Learn {
		res.Method = "fusion (learning online)"
	}
	acc := make([]bool, o.Rounds)
	idx := make([]int, len(funcs))
	for i := range idx {
		idx[i] = i
	}
	xs := make([]recommender.Features, o.Candidates)
	for round := 0; round < o.Rounds; round++ {
		r.Shuffle(len(idx), func(i, j int) { idx[i], idx[j] = idx[j], idx[i] })
		cands := idx[:min(o.Candidates, len(idx))]
		for k := range cands {
			for s := range recommender.NumSignals {
				xs[k][s] = 0
				if v := r.Float64(); r.Float64() < 0.4 {
					xs[k][s] = v
				}
			}
		}
		best, bp := 0, -1.0
		for k, fi := range cands {
			if p := f.Score(funcs[fi].Name, xs[k]); p > bp {
				best, bp = k, p
			}
		}
		fn := funcs[cands[best]]
		coin, coin2 := r.Float64(), r.Float64()
		out := recommender.Ignored
		switch {
		case coin < u.P(fn.Class, xs[best]):
			out = recommender.Accepted
			acc[round] = true
			res.Accepted++
		case coin2 < u.DismissShare:
			out = recommender.Dismissed
		}
		if o.Learn {
			f.Update(fn.Name, xs[best], out)
		}
	}
	rate := func(a []bool) float64 {
		n := 0
		for _, v := range a {
			if v {
				n++
			}
		}
		return float64(n) / float64(max(1, len(a)))
	}
	for w := 0; w+o.Window <= o.Rounds; w += o.Window {
		res.Acceptance = append(res.Acceptance, rate(acc[w:w+o.Window]))
	}
	res.First100 = rate(acc[:min(100, len(acc))])
	res.Last100 = rate(acc[max(0, len(acc)-100):])
	return res
}
