package recommender

import (
	"encoding/json"
	"fmt"
	"math"
)

// Fusion combines a candidate's signal scores into the probability that the
// user accepts it, and learns online from feedback.
//
// Method: logistic regression, z = b + Σ wᵢ·xᵢ + Σ vᵢⱼ·xᵢ·xⱼ + t(tool),
// p = σ(z), fitted by one step of stochastic gradient ascent on the
// log-likelihood per feedback event, with an L2 pull toward prior weights.
// Why logistic regression:
//
//   - the feedback is binary (accepted or not), which is exactly the
//     Bernoulli likelihood LR maximises, so its output is a calibrated
//     probability the live recommender can threshold ("show only above
//     0.3"), not just a ranking;
//   - the signals are heterogeneous scores (a BM25-like text match, a
//     sequence-model probability, a recency weight) on different scales:
//     learned weights put them on one log-odds scale without hand-made
//     normalisation, and a negative weight is allowed (a call just made is
//     less likely to be wanted again);
//   - an online SGD step is O(number of weights) = 16 multiply-adds, with
//     constant memory, so every accept/dismiss/ignore updates the model at
//     once and it follows a user whose habits drift;
//   - the L2 pull toward the prior is the MAP estimate under a Gaussian
//     prior centred on the prior weights (Bayesian logistic regression with
//     a Laplace-style point estimate): untrained, Fusion ranks by the prior;
//     with feedback the data takes over, and a weight the data says
//     nothing about drifts back to its prior rather than to zero.
//
// The pairwise products let two weak signals that agree (the text mentions
// a tool and the sequence model expects it) count more than either alone,
// and let "just called" cancel a text match, which a purely additive model
// cannot. The per-tool bias t(tool) learns a user's standing preference for
// (or against) a particular tool; it is clipped to ±MaxToolBias, shrunk
// toward 0, and kept for at most MaxTools tools (the least recently updated
// is forgotten first), so memory is bounded whatever the registry.
//
// An Ignored recommendation is a negative example with weight
// IgnoredWeight (0.3): not seeing or not needing it right now is weak
// evidence, unlike an explicit dismissal.
//
// Not safe for concurrent use; the caller locks.
type Fusion struct {
	// LearningRate is the SGD step (default 0.1).
	LearningRate float64
	// ToolRate is the step of the per-tool bias (default 0.1).
	ToolRate float64
	// L2 is the pull of the weights toward their prior per step (default 1e-3).
	L2 float64
	// ToolL2 is the pull of a tool's bias toward 0 per update of that tool (default 1e-2).
	ToolL2 float64
	// IgnoredWeight is how much an ignored recommendation counts as a negative (default 0.3).
	IgnoredWeight float64
	// MaxToolBias bounds |t(tool)| (default 3).
	MaxToolBias float64
	// MaxTools bounds the number of per-tool biases kept (default 4096).
	MaxTools int

	bias, priorBias float64
	w, prior        [numWeights]float64
	tools           map[string]*toolBias
	clock           int64 // updates so far; a tool's last update for eviction
}

type toolBias struct {
	b    float64
	last int64
}

// numWeights: one per signal and one per unordered pair of signals.
const (
	numPairs   = int(NumSignals) * (int(NumSignals) - 1) / 2
	numWeights = int(NumSignals) + numPairs
)

// PriorWeights are the weights of an untrained Fusion, one per signal, and
// PriorBias its intercept: with no evidence a tool has probability
// σ(−2.5) ≈ 0.08; one signal at full strength brings it to about 0.6
// (space, conversation, history: a direct statement of what the user is
// doing), the task text and recent calls count less (they are broad).
var (
	PriorWeights = Features{SignalSpace: 3, SignalRecent: 1, SignalTask: 2, SignalConversation: 3, SignalHistory: 3}
	PriorBias    = -2.5
)

// NewFusion returns a Fusion with the prior weights and default rates; it
// ranks sensibly before any feedback.
func NewFusion() *Fusion {
	f := &Fusion{tools: map[string]*toolBias{}}
	f.defaults()
	f.priorBias = PriorBias
	for i := range NumSignals {
		f.prior[i] = PriorWeights[i]
	}
	f.bias, f.w = f.priorBias, f.prior
	return f
}

func (f *Fusion) defaults() {
	if f.LearningRate == 0 {
		f.LearningRate = 0.1
	}
	if f.ToolRate == 0 {
		f.ToolRate = 0.1
	}
	if f.L2 == 0 {
		f.L2 = 1e-3
	}
	if f.ToolL2 == 0 {
		f.ToolL2 = 1e-2
	}
	if f.IgnoredWeight == 0 {
		f.IgnoredWeight = 0.3
	}
	if f.MaxToolBias == 0 {
		f.MaxToolBias = 3
	}
	if f.MaxTools == 0 {
		f.MaxTools = 4096
	}
	if f.tools == nil {
		f.tools = map[string]*toolBias{}
	}
}

// phi expands the signal scores into the model's inputs: the scores, then
// their pairwise products.
func phi(x *Features) (v [numWeights]float64) {
	k := int(NumSignals)
	for i := range NumSignals {
		xi := clamp01(x[i])
		v[i] = xi
		for j := i + 1; j < NumSignals; j++ {
			v[k] = xi * clamp01(x[j])
			k++
		}
	}
	return v
}

func clamp01(x float64) float64 {
	if !(x > 0) { // NaN too
		return 0
	}
	if x > 1 {
		return 1
	}
	return x
}

func sigmoid(z float64) float64 {
	if z >= 0 {
		return 1 / (1 + math.Exp(-z))
	}
	e := math.Exp(z)
	return e / (1 + e)
}

func (f *Fusion) logit(tool string, v *[numWeights]float64) float64 {
	z := f.bias
	for i, wi := range f.w {
		z += wi * v[i]
	}
	if t, ok := f.tools[tool]; ok {
		z += t.b
	}
	return z
}

// Score is the probability in (0,1) that the user accepts tool given its
// signal scores x.
func (f *Fusion) Score(tool string, x Features) float64 {
	v := phi(&x)
	p := sigmoid(f.logit(tool, &v))
	// Keep strictly inside (0,1) for any weights.
	return math.Min(math.Max(p, 1e-9), 1-1e-9)
}

// Update takes one online step on the feedback o for tool recommended with
// signal scores x.
func (f *Fusion) Update(tool string, x Features, o Outcome) {
	f.defaults()
	y, wt := 0.0, 1.0
	switch o {
	case Accepted:
		y = 1
	case Ignored:
		wt = f.IgnoredWeight
	}
	v := phi(&x)
	g := wt * (y - sigmoid(f.logit(tool, &v)))
	eta := f.LearningRate
	f.bias += eta * (g - f.L2*(f.bias-f.priorBias))
	for i := range f.w {
		f.w[i] += eta * (g*v[i] - f.L2*(f.w[i]-f.prior[i]))
	}
	f.clock++
	t := f.tools[tool]
	if t == nil {
		if len(f.tools) >= f.MaxTools {
			f.evict()
		}
		t = &toolBias{}
		f.tools[tool] = t
	}
	t.b += f.ToolRate * (g - f.ToolL2*t.b)
	t.b = math.Max(-f.MaxToolBias, math.Min(f.MaxToolBias, t.b))
	t.last = f.clock
}

// evict forgets the least recently updated tool bias.
func (f *Fusion) evict() {
	var old string
	oldest := int64(math.MaxInt64)
	for name, t := range f.tools {
		if t.last < oldest || t.last == oldest && name < old {
			old, oldest = name, t.last
		}
	}
	delete(f.tools, old)
}

// Weights returns the current weight of each signal (the linear terms).
func (f *Fusion) Weights() Features {
	var w Features
	copy(w[:], f.w[:NumSignals])
	return w
}

// ToolBias is the learned bias of tool (0 when none is kept).
func (f *Fusion) ToolBias(tool string) float64 {
	if t, ok := f.tools[tool]; ok {
		return t.b
	}
	return 0
}

// pairName is "a*b" for the k-th pair weight.
func pairNames() []string {
	var out []string
	for i := range NumSignals {
		for j := i + 1; j < NumSignals; j++ {
			out = append(out, i.String()+"*"+j.String())
		}
	}
	return out
}

type fusionJSON struct {
	LearningRate  float64             `json:"learning_rate"`
	ToolRate      float64             `json:"tool_rate"`
	L2            float64             `json:"l2"`
	ToolL2        float64             `json:"tool_l2"`
	IgnoredWeight float64             `json:"ignored_weight"`
	MaxToolBias   float64             `json:"max_tool_bias"`
	MaxTools      int                 `json:"max_tools"`
	Bias          float64             `json:"bias"`
	PriorBias     float64             `json:"prior_bias"`
	Weights       map[string]float64  `json:"weights"`
	Prior         map[string]float64  `json:"prior"`
	Tools         map[string]toolJSON `json:"tools,omitempty"`
	Clock         int64               `json:"clock"`
}

type toolJSON struct {
	Bias float64 `json:"bias"`
	Last int64   `json:"last"`
}

func weightNames() []string {
	names := make([]string, 0, numWeights)
	for i := range NumSignals {
		names = append(names, i.String())
	}
	return append(names, pairNames()...)
}

// MarshalJSON writes the weights by name, the priors, the rates and the
// per-tool biases.
func (f *Fusion) MarshalJSON() ([]byte, error) {
	j := fusionJSON{LearningRate: f.LearningRate, ToolRate: f.ToolRate, L2: f.L2, ToolL2: f.ToolL2,
		IgnoredWeight: f.IgnoredWeight, MaxToolBias: f.MaxToolBias, MaxTools: f.MaxTools,
		Bias: f.bias, PriorBias: f.priorBias, Weights: map[string]float64{}, Prior: map[string]float64{},
		Tools: map[string]toolJSON{}, Clock: f.clock}
	for k, n := range weightNames() {
		j.Weights[n], j.Prior[n] = f.w[k], f.prior[k]
	}
	for n, t := range f.tools {
		j.Tools[n] = toolJSON{t.b, t.last}
	}
	return json.Marshal(j)
}

// UnmarshalJSON reads what MarshalJSON wrote; a weight it does not name
// keeps its prior.
func (f *Fusion) UnmarshalJSON(b []byte) error {
	var j fusionJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	g := NewFusion()
	g.LearningRate, g.ToolRate, g.L2, g.ToolL2 = j.LearningRate, j.ToolRate, j.L2, j.ToolL2
	g.IgnoredWeight, g.MaxToolBias, g.MaxTools = j.IgnoredWeight, j.MaxToolBias, j.MaxTools
	g.defaults()
	g.bias, g.priorBias, g.clock = j.Bias, j.PriorBias, j.Clock
	idx := map[string]int{}
	for k, n := range weightNames() {
		idx[n] = k
	}
	for n, v := range j.Prior {
		k, ok := idx[n]
		if !ok {
			return fmt.Errorf("recommender: fusion: unknown weight %q", n)
		}
		g.prior[k] = v
	}
	g.w = g.prior
	for n, v := range j.Weights {
		k, ok := idx[n]
		if !ok {
			return fmt.Errorf("recommender: fusion: unknown weight %q", n)
		}
		g.w[k] = v
	}
	for n, t := range j.Tools {
		g.tools[n] = &toolBias{b: t.Bias, last: t.Last}
	}
	for len(g.tools) > g.MaxTools {
		g.evict()
	}
	*f = *g
	return nil
}
