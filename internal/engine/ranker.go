package engine

import (
	"errors"
	"sync"

	"github.com/airs-dev/airs/pipeline"
	"github.com/airs-dev/airs/scoring"
	"github.com/airs-dev/airs/selector"
)

// Ranker is the selector's Ranker over scoring: retrieval's similarity,
// the tool's trust, the success rate and latency of its recent calls
// through this engine, and the user's preferences.
type Ranker struct {
	mu     sync.Mutex
	scorer scoring.Scorer
}

// NewRanker starts with the default weights and empty statistics.
func NewRanker(reg *pipeline.Registry) *Ranker {
	return &Ranker{scorer: scoring.Scorer{
		Weights: scoring.DefaultWeights,
		Stats:   scoring.NewStats(100),
		Prefs:   scoring.NewPreferences(),
	}}
}

// SetWeights replaces the selection weights (e.g. ones fitted by `airs eval tune`).
func (r *Ranker) SetWeights(w scoring.SelectionWeights) error {
	if err := w.Validate(); err != nil {
		return err
	}
	r.mu.Lock()
	r.scorer.Weights = w
	r.mu.Unlock()
	return nil
}

// Prefs are the user's explicit preferences and accept/dismiss history.
func (r *Ranker) Prefs() *scoring.Preferences { return r.scorer.Prefs }

// Observe feeds a call's outcome to the statistics. Errors that say
// nothing about the tool (the caller's rights, its params, its rate) do
// not count against it.
func (r *Ranker) Observe(tool string, res *pipeline.Result, err error) {
	if res == nil && err == nil {
		return
	}
	switch {
	case errors.Is(err, pipeline.ErrToolNotFound), errors.Is(err, pipeline.ErrChannelCapabilityDenied),
		errors.Is(err, pipeline.ErrToolCapabilityDenied), errors.Is(err, pipeline.ErrIntentMisaligned),
		errors.Is(err, pipeline.ErrSchemaValidationFailed), errors.Is(err, pipeline.ErrPayloadTooLarge),
		errors.Is(err, pipeline.ErrRateLimited), errors.Is(err, pipeline.ErrCancelled):
		return
	}
	var lat = res.Latency
	r.scorer.Stats.Record(tool, err == nil, lat)
}

// Rank implements selector.Ranker.
func (r *Ranker) Rank(caller string, hits []selector.Retrieved, entries map[string]selector.Entry) []selector.Candidate {
	cands := make([]scoring.Candidate, 0, len(hits))
	sim := make(map[string]float64, len(hits))
	for _, h := range hits {
		e, ok := entries[h.Name]
		if !ok {
			continue
		}
		sim[h.Name] = h.Dense
		cands = append(cands, scoring.Candidate{
			Tool: h.Name, Similarity: h.Semantic, Trust: int(e.Tool.Trust), LatencyClass: int(e.Tool.LatencyClass),
		})
	}
	r.mu.Lock()
	scores := r.scorer.Score(cands)
	r.mu.Unlock()
	out := make([]selector.Candidate, 0, len(scores))
	for _, s := range scores {
		out = append(out, selector.Candidate{
			Provider: entries[s.Tool].Provider,
			Name:     s.Tool,
			Score: map[string]float64{
				"semantic_match":   s.SemanticMatch,
				"trust_weight":     s.TrustWeight,
				"success_rate":     s.SuccessRate,
				"latency_score":    s.LatencyScore,
				"preference_score": s.PreferenceScore,
				"composite":        s.Composite,
				"similarity":       sim[s.Tool],
			},
		})
	}
	return out
}
