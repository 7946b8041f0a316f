package recommend

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"math/rand/v2"
	"sort"
	"time"

	"github.com/airs-dev/airs/recommender"
)

// Dataset is the name the results carry.
const Dataset = "bfcl_multi_turn"

// Item is one ground-truth call to predict: what was known just before it.
type Item struct {
	Conv  string   // conversation id
	Texts []string // the user turns so far, the current one last
	Prev  []string // the calls before this one, oldest first (earlier turns and this turn's)
	Gold  string   // the function called
	Cands []string // the functions of the conversation's classes, to rank
}

// Items lists the calls of convs to predict; candidates are the functions
// of each conversation's involved classes, in the functions file's order.
func Items(convs []Conversation, funcs []Function) []Item {
	byClass := map[string][]string{}
	for _, f := range funcs {
		byClass[f.Class] = append(byClass[f.Class], f.Name)
	}
	var out []Item
	for _, c := range convs {
		var cands []string
		for _, cl := range c.Classes {
			cands = append(cands, byClass[cl]...)
		}
		var texts, prev []string
		for _, t := range c.Turns {
			texts = append(texts, t.User)
			for _, call := range t.Calls {
				out = append(out, Item{Conv: c.ID, Texts: texts[:len(texts):len(texts)], Prev: prev[:len(prev):len(prev)], Gold: call, Cands: cands})
				prev = append(prev, call)
			}
		}
	}
	return out
}

// Result is one method's figures on one dataset.
type Result struct {
	Dataset string  `json:"dataset"`
	Method  string  `json:"method"`
	N       int     `json:"n"`
	Hit1    float64 `json:"hit@1"`
	Hit3    float64 `json:"hit@3"`
	MRR     float64 `json:"mrr"`
}

// Method ranks an item's candidates after fitting on training conversations.
type Method interface {
	Name() string
	// Fit learns from the training conversations (funcs: every function).
	Fit(train []Conversation, funcs []Function)
	// Score gives one score per candidate of it (higher is better).
	Score(it Item) []float64
}

// Methods is AIRS and the three baselines, in the order results are printed.
func Methods(o Options) []Method {
	return []Method{&AIRS{Options: o}, &Markov{}, &Frequency{}, &BM25{}}
}

// Options are the fixed hyperparameters of the AIRS method (chosen before
// looking at any test fold; see DefaultOptions).
type Options struct {
	Epochs     int     // passes of Fusion over the training calls
	Negatives  int     // dismissed candidates sampled per true call
	InnerFolds int     // cross-fitting folds for the Fusion's training features
	TaskDecay  float64 // weight of a turn per turn of age in the task signal
	Seed       uint64
}

// DefaultOptions are the hyperparameters of every reported run.
func DefaultOptions() Options {
	return Options{Epochs: 3, Negatives: 8, InnerFolds: 5, TaskDecay: 0.5, Seed: 1}
}

// rank is the 1-based rank of the gold candidate under scores (ties broken
// by candidate order; 0 when gold is not a candidate).
func rank(it Item, scores []float64) int {
	g := -1
	for i, c := range it.Cands {
		if c == it.Gold {
			g = i
			break
		}
	}
	if g < 0 {
		return 0
	}
	r := 1
	for i, s := range scores {
		if s > scores[g] || s == scores[g] && i < g {
			r++
		}
	}
	return r
}

// Evaluate fits every method on train and scores it on test's calls; each
// method's scored items are appended to tally under its name.
func Evaluate(methods []Method, train, test []Conversation, funcs []Function, tally map[string]*Result) {
	items := Items(test, funcs)
	for _, m := range methods {
		m.Fit(train, funcs)
		r := tally[m.Name()]
		if r == nil {
			r = &Result{Dataset: Dataset, Method: m.Name()}
			tally[m.Name()] = r
		}
		for _, it := range items {
			k := rank(it, m.Score(it))
			r.N++
			if k == 1 {
				r.Hit1++
			}
			if k >= 1 && k <= 3 {
				r.Hit3++
			}
			if k >= 1 {
				r.MRR += 1 / float64(k)
			}
		}
	}
}

func finish(methods []Method, tally map[string]*Result) []Result {
	var out []Result
	for _, m := range methods {
		r := *tally[m.Name()]
		if r.N > 0 {
			r.Hit1 /= float64(r.N)
			r.Hit3 /= float64(r.N)
			r.MRR /= float64(r.N)
		}
		out = append(out, r)
	}
	return out
}

// TrainTest fits on train and scores on test.
func TrainTest(train, test []Conversation, funcs []Function, o Options) []Result {
	ms := Methods(o)
	tally := map[string]*Result{}
	Evaluate(ms, train, test, funcs, tally)
	return finish(ms, tally)
}

// Folds splits convs into k folds by conversation, deterministically: by
// the FNV-1a hash of the id, then round robin.
func Folds(convs []Conversation, k int) [][]Conversation {
	idx := make([]int, len(convs))
	h := make([]uint64, len(convs))
	for i, c := range convs {
		idx[i] = i
		f := fnv.New64a()
		f.Write([]byte(c.ID))
		h[i] = f.Sum64()
	}
	sort.Slice(idx, func(a, b int) bool {
		if h[idx[a]] != h[idx[b]] {
			return h[idx[a]] < h[idx[b]]
		}
		return convs[idx[a]].ID < convs[idx[b]].ID
	})
	folds := make([][]Conversation, k)
	for r, i := range idx {
		folds[r%k] = append(folds[r%k], convs[i])
	}
	return folds
}

// without is every fold's conversations but fold i's.
func without(folds [][]Conversation, i int) []Conversation {
	var out []Conversation
	for j, f := range folds {
		if j != i {
			out = append(out, f...)
		}
	}
	return out
}

// CrossValidate is k-fold cross-validation over convs with folds by
// conversation; the figures pool every fold's test calls.
func CrossValidate(convs []Conversation, funcs []Function, k int, o Options) []Result {
	folds := Folds(convs, k)
	ms := Methods(o)
	tally := map[string]*Result{}
	for i := range folds {
		Evaluate(ms, without(folds, i), folds[i], funcs, tally)
	}
	return finish(ms, tally)
}

// WriteJSON prints one JSON line per result.
func WriteJSON(w io.Writer, rs []Result) error {
	for _, r := range rs {
		if err := writeJSONLine(w, r); err != nil {
			return err
		}
	}
	return nil
}

func writeJSONLine(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

// WriteTable prints the results as a table.
func WriteTable(w io.Writer, rs []Result) {
	fmt.Fprintf(w, "%-16s %-10s %5s %7s %7s %7s\n", "dataset", "method", "n", "hit@1", "hit@3", "mrr")
	for _, r := range rs {
		fmt.Fprintf(w, "%-16s %-10s %5d %7.3f %7.3f %7.3f\n", r.Dataset, r.Method, r.N, r.Hit1, r.Hit3, r.MRR)
	}
}

// ---- baselines -------------------------------------------------------

// Frequency ranks by how often each function was called in training.
type Frequency struct{ n map[string]float64 }

func (*Frequency) Name() string { return "frequency" }

func (f *Frequency) Fit(train []Conversation, _ []Function) {
	f.n = map[string]float64{}
	for _, c := range train {
		for _, t := range c.Turns {
			for _, call := range t.Calls {
				f.n[call]++
			}
		}
	}
}

func (f *Frequency) Score(it Item) []float64 {
	s := make([]float64, len(it.Cands))
	for i, c := range it.Cands {
		s[i] = f.n[c]
	}
	return s
}

// Markov is a first-order Markov chain over the previous call's name,
// falling back to frequency (first call, unseen previous call).
type Markov struct {
	freq Frequency
	next map[string]map[string]float64
}

func (*Markov) Name() string { return "markov" }

func (m *Markov) Fit(train []Conversation, funcs []Function) {
	m.freq.Fit(train, funcs)
	m.next = map[string]map[string]float64{}
	for _, c := range train {
		prev := ""
		for _, t := range c.Turns {
			for _, call := range t.Calls {
				if prev != "" {
					if m.next[prev] == nil {
						m.next[prev] = map[string]float64{}
					}
					m.next[prev][call]++
				}
				prev = call
			}
		}
	}
}

func (m *Markov) Score(it Item) []float64 {
	s := m.freq.Score(it)
	total := 0.0
	for _, v := range s {
		total += v
	}
	if len(it.Prev) == 0 {
		return s
	}
	nx := m.next[it.Prev[len(it.Prev)-1]]
	for i, c := range it.Cands {
		// transition count first, frequency breaks ties
		s[i] = nx[c] + s[i]/(total+1)
	}
	return s
}

// BM25 ranks by BM25 of the current turn's text over the functions' docs
// (name, description, parameters: recommender.TextModel with nothing learned).
type BM25 struct{ m *recommender.TextModel }

func (*BM25) Name() string { return "bm25" }

func (b *BM25) Fit(_ []Conversation, funcs []Function) { b.m = recommender.NewTextModel(docs(funcs)) }

func (b *BM25) Score(it Item) []float64 {
	sc := b.m.Scores(it.Texts[len(it.Texts)-1])
	s := make([]float64, len(it.Cands))
	for i, c := range it.Cands {
		s[i] = sc[c]
	}
	return s
}

func docs(funcs []Function) []recommender.ToolDoc {
	d := make([]recommender.ToolDoc, len(funcs))
	for i, f := range funcs {
		d[i] = f.Doc()
	}
	return d
}

// ---- AIRS --------------------------------------------------------------

// AIRS is the recommender's own models: TextModel on the current turn (the
// conversation signal) and on the earlier turns, down-weighted (the task
// signal), RecentScores on the previous calls, History on the previous
// calls; fused by a Fusion trained on the training conversations (each
// true call Accepted, sampled other candidates Dismissed). The Fusion's
// training features are cross-fitted: the text and sequence models that
// compute them never saw the conversation they score, as at test time.
type AIRS struct {
	Options
	models *Models
	fusion *recommender.Fusion
}

func (*AIRS) Name() string { return "airs" }

// epoch is the time every observation and score is made at: the BFCL
// conversations carry no times, so decay plays no part here.
var epoch = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// Models are the signal models fitted on some conversations.
type Models struct {
	Text *recommender.TextModel
	Hist *recommender.History
}

// FitModels observes every call of convs: (turn text, call) pairs for the
// text model, (previous calls, call) for the history.
func FitModels(convs []Conversation, funcs []Function) *Models {
	m := &Models{Text: recommender.NewTextModel(docs(funcs)), Hist: recommender.NewHistory(365 * 24 * time.Hour)}
	for _, c := range convs {
		var prev []string
		for _, t := range c.Turns {
			for _, call := range t.Calls {
				m.Text.Observe(t.User, call)
				m.Hist.Observe(prev, call, epoch)
				prev = append(prev, call)
			}
		}
	}
	return m
}

// Features computes every candidate's signal scores for it.
func (m *Models) Features(it Item, taskDecay float64) []recommender.Features {
	conv := m.Text.Scores(it.Texts[len(it.Texts)-1])
	task := map[string]float64{}
	wsum, w := 0.0, 1.0
	for i := len(it.Texts) - 2; i >= 0; i-- {
		w *= taskDecay
		m.Text.AddScores(it.Texts[i], w, task)
		wsum += w
	}
	recent := recommender.RecentScores(it.Prev)
	hist := m.Hist.Scores(it.Prev, epoch)
	out := make([]recommender.Features, len(it.Cands))
	for i, c := range it.Cands {
		x := &out[i]
		x[recommender.SignalConversation] = conv[c]
		if wsum > 0 {
			x[recommender.SignalTask] = task[c] / wsum
		}
		x[recommender.SignalRecent] = recent[c]
		x[recommender.SignalHistory] = hist[c]
	}
	return out
}

type example struct {
	it Item
	x  []recommender.Features
}

func (a *AIRS) Fit(train []Conversation, funcs []Function) {
	o := a.Options
	if o.Epochs == 0 {
		o = DefaultOptions()
	}
	// Cross-fitted training features.
	var ex []example
	inner := Folds(train, max(2, o.InnerFolds))
	for i := range inner {
		m := FitModels(without(inner, i), funcs)
		for _, it := range Items(inner[i], funcs) {
			ex = append(ex, example{it, m.Features(it, o.TaskDecay)})
		}
	}
	r := rand.New(rand.NewPCG(o.Seed, 0x5eed))
	f := recommender.NewFusion()
	for e := 0; e < o.Epochs; e++ {
		r.Shuffle(len(ex), func(i, j int) { ex[i], ex[j] = ex[j], ex[i] })
		for _, e := range ex {
			var neg []int
			for i, c := range e.it.Cands {
				if c == e.it.Gold {
					f.Update(c, e.x[i], recommender.Accepted)
				} else {
					neg = append(neg, i)
				}
			}
			r.Shuffle(len(neg), func(i, j int) { neg[i], neg[j] = neg[j], neg[i] })
			for _, i := range neg[:min(o.Negatives, len(neg))] {
				f.Update(e.it.Cands[i], e.x[i], recommender.Dismissed)
			}
		}
	}
	a.fusion = f
	a.models = FitModels(train, funcs)
}

func (a *AIRS) Score(it Item) []float64 {
	x := a.models.Features(it, a.TaskDecay)
	s := make([]float64, len(it.Cands))
	for i, c := range it.Cands {
		s[i] = a.fusion.Score(c, x[i])
	}
	return s
}

// Fusion is the trained fusion (after Fit), for inspection.
func (a *AIRS) Fusion() *recommender.Fusion { return a.fusion }
