package embeddings

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
)

// An Adapter is what one installation learned from use: how its users'
// words map to its tools, beyond what the shared model and BM25 know. It is
// a table of additive weights, query term → tool → weight; a search adds to
// each candidate's fused score the mean, over the query's distinct terms,
// of the candidate's weights. The base (the trained model, BM25, the fusion
// weights) is never changed, so what it knows is not forgotten: a query
// without a learned term ranks as before, and weights are bounded
// (AdapterOptions.MaxWeight), so a few recorded sessions cannot bury a
// tool the base ranks far ahead.
//
// Adapters are trained from recorded sessions (TrainAdapter; `airs train
// retrieval --from-sessions`), saved beside the index (AdapterFile under
// Options.Dir) and loaded with it by Open.
type Adapter struct {
	Version int `json:"version"`
	// Embedder is the ID of the embedder the adapter was trained over: its
	// weights correct that base's ranking.
	Embedder string `json:"embedder"`
	// Examples is how many labelled requests trained it.
	Examples int                           `json:"examples"`
	Weights  map[string]map[string]float64 `json:"weights"`
}

// AdapterFile is the adapter's file under the index directory.
const AdapterFile = "adapter.json"

const adapterVersion = 1

// adapterDepth is how many base candidates an adapter may re-rank: a tool
// the base places below it is not promoted.
const adapterDepth = 50

// bonus is the adapter's addition to the fused score of tool id for terms
// (distinct query terms): the mean of its weights over the terms the
// adapter has learned, so that words it never saw do not dilute what it
// knows.
func (a *Adapter) bonus(terms []string, id string) float64 {
	var s float64
	n := 0
	for _, t := range terms {
		if w := a.Weights[t]; len(w) > 0 {
			s += w[id]
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return s / float64(n)
}

// knows tells whether any of terms has a learned weight.
func (a *Adapter) knows(terms []string) bool {
	for _, t := range terms {
		if len(a.Weights[t]) > 0 {
			return true
		}
	}
	return false
}

// rerank adds the adapter's bonus to each hit's Fused and sorts them again.
func (a *Adapter) rerank(terms []string, hits []Hit) {
	for i := range hits {
		hits[i].Fused += a.bonus(terms, hits[i].ID)
	}
	slices.SortStableFunc(hits, byFused)
}

func distinctTerms(q string) []string {
	ts := Terms(q)
	slices.Sort(ts)
	return slices.Compact(ts)
}

// SetAdapter makes searches re-rank with a (nil: the base alone).
func (ix *Index) SetAdapter(a *Adapter) {
	ix.mu.Lock()
	ix.adapter = a
	ix.mu.Unlock()
}

// Adapter is the adapter searches use, nil when none.
func (ix *Index) Adapter() *Adapter {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return ix.adapter
}

// SaveAdapter writes a beside the index (Options.Dir/AdapterFile), so the
// next Open loads it, and makes searches use it now.
func (ix *Index) SaveAdapter(a *Adapter) error {
	if ix.opts.Dir == "" {
		return errors.New("embeddings: this index is not kept in a directory, so an adapter cannot be saved with it")
	}
	b, err := json.Marshal(a)
	if err != nil {
		return err
	}
	path := filepath.Join(ix.opts.Dir, AdapterFile)
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	ix.SetAdapter(a)
	return nil
}

// loadAdapter reads dir's adapter; none is no error.
func loadAdapter(dir string) (*Adapter, error) {
	path := filepath.Join(dir, AdapterFile)
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var a Adapter
	if err := json.Unmarshal(b, &a); err != nil || a.Version != adapterVersion {
		if err == nil {
			err = fmt.Errorf("version %d, want %d", a.Version, adapterVersion)
		}
		return nil, fmt.Errorf("embeddings: the learned adapter %s cannot be read (%v): retrain it with 'airs train retrieval --from-sessions' or delete it", path, err)
	}
	return &a, nil
}

// AdapterExample is one labelled request: the tool that was right among
// the tools its caller could call.
type AdapterExample struct {
	Query string
	Tool  string
	// Allowed are the tools the caller could call (nil: every tool).
	Allowed []string
}

// AdapterOptions tune TrainAdapter; zero values are the defaults.
type AdapterOptions struct {
	// Epochs over the examples [8].
	Epochs int
	// Rate is the step of one correction, in fused-score units [0.2].
	Rate float64
	// Margin is how far ahead of the best wrong tool the right one should
	// be before no correction is made [0.1].
	Margin float64
	// MaxWeight bounds each weight's magnitude [0.6]: the fused score of
	// the base's best tool is about DenseWeight+SparseWeight.
	MaxWeight float64
	// PenalizeAny lowers any tool ranked above the right one; by default
	// only tools that were right for some request are lowered, so that a
	// tool nobody has used yet keeps its base ranking.
	PenalizeAny bool
}

func (o *AdapterOptions) defaults() {
	if o.Epochs <= 0 {
		o.Epochs = 8
	}
	if o.Rate <= 0 {
		o.Rate = 0.2
	}
	if o.Margin <= 0 {
		o.Margin = 0.1
	}
	if o.MaxWeight <= 0 {
		o.MaxWeight = 0.6
	}
}

// AdapterScore is how well a ranking finds the labelled tools: the share
// ranked first and the share within the first five.
type AdapterScore struct {
	N         int     `json:"n"`
	Top1      float64 `json:"top1"`
	RecallAt5 float64 `json:"recall_at_5"`
}

// baseCandidates are the base ranking's candidates of every example (the
// adapter only re-ranks them, so they are searched once).
func (ix *Index) baseCandidates(ctx context.Context, exs []AdapterExample) ([][]Hit, error) {
	out := make([][]Hit, len(exs))
	for i, ex := range exs {
		hits, err := ix.search(ctx, ex.Query, adapterDepth, Filter{IDs: ex.Allowed})
		if err != nil {
			return nil, err
		}
		out[i] = hits
	}
	return out, nil
}

// TrainAdapter learns an adapter over ix's base ranking from exs: for each
// example whose right tool the (adapted) ranking does not place first by
// Margin, the right tool's weights for the query's terms go up and the
// weights of the tool ranked above it go down, by Rate, within MaxWeight.
func TrainAdapter(ctx context.Context, ix *Index, exs []AdapterExample, o AdapterOptions) (*Adapter, error) {
	o.defaults()
	cands, err := ix.baseCandidates(ctx, exs)
	if err != nil {
		return nil, err
	}
	a := &Adapter{Version: adapterVersion, Embedder: ix.emb.ID(), Examples: len(exs), Weights: map[string]map[string]float64{}}
	terms := make([][]string, len(exs))
	for i, ex := range exs {
		terms[i] = distinctTerms(ex.Query)
	}
	add := func(ts []string, id string, d float64) {
		for _, t := range ts {
			w := a.Weights[t]
			if w == nil {
				w = map[string]float64{}
				a.Weights[t] = w
			}
			v := math.Max(-o.MaxWeight, math.Min(o.MaxWeight, w[id]+d))
			if v == 0 {
				delete(w, id)
			} else {
				w[id] = v
			}
		}
	}
	used := map[string]bool{}
	for _, ex := range exs {
		used[ex.Tool] = true
	}
	hits := make([]Hit, 0, adapterDepth)
	for range o.Epochs {
		for i, ex := range exs {
			if len(terms[i]) == 0 {
				continue
			}
			hits = append(hits[:0], cands[i]...)
			a.rerank(terms[i], hits)
			gold := slices.IndexFunc(hits, func(h Hit) bool { return h.ID == ex.Tool })
			if gold < 0 {
				continue // beyond what the adapter re-ranks
			}
			rival := 0
			if gold == 0 {
				if len(hits) < 2 || hits[0].Fused-hits[1].Fused >= o.Margin {
					continue
				}
				rival = 1
			}
			// The mean over the query's terms: each term moves by Rate, so
			// the bonus moves by Rate.
			add(terms[i], ex.Tool, o.Rate)
			if o.PenalizeAny || used[hits[rival].ID] {
				add(terms[i], hits[rival].ID, -o.Rate)
			}
		}
	}
	for t, w := range a.Weights {
		if len(w) == 0 {
			delete(a.Weights, t)
		}
	}
	return a, nil
}

// ScoreAdapter scores ix's ranking of exs with a (nil: the base alone).
func ScoreAdapter(ctx context.Context, ix *Index, a *Adapter, exs []AdapterExample) (AdapterScore, error) {
	cands, err := ix.baseCandidates(ctx, exs)
	if err != nil {
		return AdapterScore{}, err
	}
	s := AdapterScore{N: len(exs)}
	if len(exs) == 0 {
		return s, nil
	}
	for i, ex := range exs {
		hits := cands[i]
		if a != nil {
			a.rerank(distinctTerms(ex.Query), hits)
		}
		r := slices.IndexFunc(hits, func(h Hit) bool { return h.ID == ex.Tool })
		if r == 0 {
			s.Top1++
		}
		if r >= 0 && r < 5 {
			s.RecallAt5++
		}
	}
	s.Top1 /= float64(len(exs))
	s.RecallAt5 /= float64(len(exs))
	return s, nil
}
