package selector

import (
	"errors"
	"sync"

	"github.com/airs-dev/airs/pipeline"
	"github.com/airs-dev/airs/scoring"
)

// The keys of Candidate.Score. They are part of AIRS's output (`airs select
// --json`, /v1/select, the session log's candidates), so they never change;
// code names them through these constants or Scores, not as string literals.
const (
	ScoreSemanticMatch   = "semantic_match"
	ScoreTrustWeight     = "trust_weight"
	ScoreSuccessRate     = "success_rate"
	ScoreLatencyScore    = "latency_score"
	ScorePreferenceScore = "preference_score"
	ScoreComposite       = "composite"
	ScoreSimilarity      = "similarity" // retrieval's raw cosine (Retrieved.Dense)
	ScoreCoverage        = "coverage"   // set by Select, not by a Ranker
)

// Scores are the components StatsRanker computes for one candidate, typed.
// Map gives them the keys Candidate.Score carries.
type Scores struct {
	SemanticMatch   float64
	TrustWeight     float64
	SuccessRate     float64
	LatencyScore    float64
	PreferenceScore float64
	Composite       float64
	Similarity      float64
}

// Map is s under Candidate.Score's keys.
func (s Scores) Map() map[string]float64 {
	return map[string]float64{
		ScoreSemanticMatch:   s.SemanticMatch,
		ScoreTrustWeight:     s.TrustWeight,
		ScoreSuccessRate:     s.SuccessRate,
		ScoreLatencyScore:    s.LatencyScore,
		ScorePreferenceScore: s.PreferenceScore,
		ScoreComposite:       s.Composite,
		ScoreSimilarity:      s.Similarity,
	}
}

// Scored is one ranked tool with its typed scores.
type Scored struct {
	Provider string
	Name     string
	Scores   Scores
}

// StatsRanker is the Ranker over scoring: retrieval's similarity, the
// tool's trust, the success rate and latency of its recent calls (fed by
// Observe), and the user's preferences. It is safe for concurrent use.
type StatsRanker struct {
	mu     sync.Mutex
	scorer scoring.Scorer
}

// NewStatsRanker starts with the default weights and empty statistics.
func NewStatsRanker() *StatsRanker {
	return &StatsRanker{scorer: scoring.Scorer{
		Weights: scoring.DefaultWeights,
		Stats:   scoring.NewStats(100),
		Prefs:   scoring.NewPreferences(),
	}}
}

// SetWeights replaces the selection weights (e.g. ones fitted by `airs eval tune`).
func (r *StatsRanker) SetWeights(w scoring.SelectionWeights) error {
	if err := w.Validate(); err != nil {
		return err
	}
	r.mu.Lock()
	r.scorer.Weights = w
	r.mu.Unlock()
	return nil
}

// Prefs are the user's explicit preferences and accept/dismiss history.
func (r *StatsRanker) Prefs() *scoring.Preferences { return r.scorer.Prefs }

// Stats are the per-tool success and latency statistics Observe feeds.
func (r *StatsRanker) Stats() *scoring.Stats { return r.scorer.Stats }

// Observe feeds a call's outcome to the statistics. Errors that say
// nothing about the tool (the caller's rights, its params, its rate) do
// not count against it.
func (r *StatsRanker) Observe(tool string, res *pipeline.Result, err error) {
	if res == nil && err == nil {
		return
	}
	// A result served from a speculative run took no handler time: its
	// latency says nothing of the tool's, and counting it would rank the
	// tools the engine speculates on as faster, which it then speculates on more.
	if res != nil && res.SpeculativeHit {
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

// Score ranks the hits that name an entry, best first, with deterministic
// ties (scoring.Scorer's order); hits naming no entry are dropped.
func (r *StatsRanker) Score(hits []Retrieved, entries map[string]Entry) []Scored {
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
	out := make([]Scored, 0, len(scores))
	for _, s := range scores {
		out = append(out, Scored{
			Provider: entries[s.Tool].Provider,
			Name:     s.Tool,
			Scores: Scores{
				SemanticMatch:   s.SemanticMatch,
				TrustWeight:     s.TrustWeight,
				SuccessRate:     s.SuccessRate,
				LatencyScore:    s.LatencyScore,
				PreferenceScore: s.PreferenceScore,
				Composite:       s.Composite,
				Similarity:      sim[s.Tool],
			},
		})
	}
	return out
}

// Rank implements Ranker: Score, under Candidate.Score's keys.
func (r *StatsRanker) Rank(caller string, hits []Retrieved, entries map[string]Entry) []Candidate {
	scored := r.Score(hits, entries)
	out := make([]Candidate, len(scored))
	for i, s := range scored {
		out[i] = Candidate{Provider: s.Provider, Name: s.Name, Score: s.Scores.Map()}
	}
	return out
}
