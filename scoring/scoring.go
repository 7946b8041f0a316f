// Package scoring ranks candidate tools by a composite ToolScore: how well
// the tool matches the request (from retrieval), how much it is trusted, how
// often it succeeded recently, how fast it is, and what the user prefers.
// Every score explains itself. The package does no I/O: callers feed it
// outcomes and feedback and persist its state themselves.
package scoring

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
)

// ToolScore is one candidate's score and its components, each in 0..1.
type ToolScore struct {
	Tool            string  `json:"tool"`
	SemanticMatch   float64 `json:"semantic_match"`
	TrustWeight     float64 `json:"trust_weight"`
	SuccessRate     float64 `json:"success_rate"`
	LatencyScore    float64 `json:"latency_score"`
	PreferenceScore float64 `json:"preference_score"`
	Composite       float64 `json:"composite"`
}

// SelectionWeights weigh the components in the composite. They need not sum
// to 1: the composite divides by their sum, so it stays in 0..1.
type SelectionWeights struct {
	Semantic   float64 `json:"semantic"`
	Trust      float64 `json:"trust"`
	Success    float64 `json:"success"`
	Latency    float64 `json:"latency"`
	Preference float64 `json:"preference"`
}

// DefaultWeights: relevance dominates (0.55) so that a trusted, fast,
// reliable tool never beats one that actually fits the request; trust and
// reliability come next (0.15 each), preference 0.10, speed 0.05.
var DefaultWeights = SelectionWeights{Semantic: 0.55, Trust: 0.15, Success: 0.15, Latency: 0.05, Preference: 0.10}

// Validate rejects negative, non-finite or all-zero weights.
func (w SelectionWeights) Validate() error {
	sum := 0.0
	for _, v := range []float64{w.Semantic, w.Trust, w.Success, w.Latency, w.Preference} {
		if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("scoring: weight %v is not a non-negative number", v)
		}
		sum += v
	}
	if sum == 0 {
		return errors.New("scoring: all selection weights are zero")
	}
	return nil
}

func (w SelectionWeights) sum() float64 {
	return w.Semantic + w.Trust + w.Success + w.Latency + w.Preference
}

// TrustWeight maps a trust level to its weight: TL3 (system) 1.0, TL2
// (organisation) 0.8, TL1 (verified publisher) 0.5, TL0 (community) 0.2.
// Levels outside 0..3 are clamped.
func TrustWeight(level int) float64 {
	switch {
	case level >= 3:
		return 1.0
	case level == 2:
		return 0.8
	case level == 1:
		return 0.5
	default:
		return 0.2
	}
}

// Candidate is a tool that retrieval proposed.
type Candidate struct {
	Tool string
	// Similarity is retrieval's score (any non-negative scale); the scorer
	// divides by the best candidate's, so the top match has SemanticMatch 1.
	Similarity float64
	// Trust level 0..3.
	Trust int
	// LatencyClass (0 instant … 3 long-running) and InputBytes feed the
	// latency prediction for tools without measured calls.
	LatencyClass int
	InputBytes   int
}

// Scorer computes ToolScores. Stats, Prefs and Latency may be nil: the
// components they feed are then neutral (0.5 for success, latency and
// preference), so they do not reorder candidates.
type Scorer struct {
	Weights SelectionWeights
	Stats   *Stats
	Prefs   *Preferences
	Latency *LatencyModel
}

// Score scores the candidates and returns them best first. Ties on the
// composite break by tool name, so the order is deterministic.
func (s *Scorer) Score(cands []Candidate) []ToolScore {
	w := s.Weights
	if w.Validate() != nil {
		w = DefaultWeights
	}
	best := 0.0
	for _, c := range cands {
		best = math.Max(best, c.Similarity)
	}
	// Latency: inverse p50 (measured, else predicted) relative to the
	// fastest candidate: fastest → 1, twice as slow → 0.5.
	p50 := make([]float64, len(cands))
	fastest := math.Inf(1)
	for i, c := range cands {
		p50[i] = math.NaN()
		if s.Stats != nil {
			if d, ok := s.Stats.P50(c.Tool); ok {
				p50[i] = math.Max(float64(d), 1)
			}
		}
		if math.IsNaN(p50[i]) && s.Latency != nil {
			if d, ok := s.Latency.Predict(c.Tool, c.LatencyClass, c.InputBytes); ok {
				p50[i] = math.Max(float64(d), 1)
			}
		}
		if !math.IsNaN(p50[i]) {
			fastest = math.Min(fastest, p50[i])
		}
	}
	out := make([]ToolScore, len(cands))
	for i, c := range cands {
		ts := ToolScore{Tool: c.Tool, TrustWeight: TrustWeight(c.Trust), SuccessRate: 0.5, LatencyScore: 0.5, PreferenceScore: 0.5}
		if best > 0 && c.Similarity > 0 {
			ts.SemanticMatch = c.Similarity / best
		}
		if s.Stats != nil {
			ts.SuccessRate = s.Stats.SuccessRate(c.Tool)
		}
		if !math.IsNaN(p50[i]) {
			ts.LatencyScore = fastest / p50[i]
		}
		if s.Prefs != nil {
			ts.PreferenceScore = s.Prefs.Score(c.Tool)
		}
		ts.Composite = (w.Semantic*ts.SemanticMatch + w.Trust*ts.TrustWeight + w.Success*ts.SuccessRate +
			w.Latency*ts.LatencyScore + w.Preference*ts.PreferenceScore) / w.sum()
		out[i] = ts
	}
	Sort(out)
	return out
}

// Sort orders scores best first, ties by tool name.
func Sort(ts []ToolScore) {
	sort.SliceStable(ts, func(a, b int) bool {
		if ts[a].Composite != ts[b].Composite {
			return ts[a].Composite > ts[b].Composite
		}
		return ts[a].Tool < ts[b].Tool
	})
}

// Explain writes the components and their weighted contributions, e.g.
//
//	send_email composite 0.812 = semantic 1.000×0.55 + trust 0.800×0.15 + …
func (ts ToolScore) Explain(w SelectionWeights) string {
	if w.Validate() != nil {
		w = DefaultWeights
	}
	sum := w.sum()
	var b strings.Builder
	fmt.Fprintf(&b, "%s composite %.3f =", ts.Tool, ts.Composite)
	parts := []struct {
		name string
		v, w float64
	}{
		{"semantic", ts.SemanticMatch, w.Semantic},
		{"trust", ts.TrustWeight, w.Trust},
		{"success", ts.SuccessRate, w.Success},
		{"latency", ts.LatencyScore, w.Latency},
		{"preference", ts.PreferenceScore, w.Preference},
	}
	for i, p := range parts {
		if i > 0 {
			b.WriteString(" +")
		}
		fmt.Fprintf(&b, " %s %.3f×%.3f", p.name, p.v, p.w/sum)
	}
	return b.String()
}
