package guard

import (
	"github.com/airs-dev/airs/guard/anomaly"
	"github.com/airs-dev/airs/pipeline"
)

// AnomalyScorer is the pipeline's anomaly gate (pipeline.CallScorer,
// Config.Scorer): it turns a call's facts into the seed's seven features —
// the caller's calls in the last minute and whether the tool is new to it
// from its Tracker, the caller's trust level from the configuration — and
// scores them with the model its Holder has now (swapped without a
// restart; a candidate scores a share of callers).
type AnomalyScorer struct {
	Models  *anomaly.Holder
	History *anomaly.Tracker
	// Trust is each agent's trust level (agents.ID.trust in airs.yaml);
	// read-only once the scorer is in use. An agent not in it has 0.
	Trust map[string]int
}

var _ pipeline.CallScorer = (*AnomalyScorer)(nil)

// NewAnomalyScorer scores with models, with a fresh history.
func NewAnomalyScorer(models *anomaly.Holder, trust map[string]int) *AnomalyScorer {
	return &AnomalyScorer{Models: models, History: anomaly.NewTracker(), Trust: trust}
}

// ScoreCall records the call in the history (with or without a model, so
// a model installed later starts from a warm history) and scores it.
func (s *AnomalyScorer) ScoreCall(c pipeline.CallFeatures) (uint8, string) {
	n, novel := s.History.Observe(c.Caller, c.Tool, c.At)
	return s.Models.Score(anomaly.Features{Caller: c.Caller, Tool: c.Tool, Hour: c.At.UTC().Hour(),
		CallsLastMinute: n, NovelTool: novel, ParamSizeBytes: c.ParamSizeBytes, TrustLevel: s.Trust[c.Caller]})
}
