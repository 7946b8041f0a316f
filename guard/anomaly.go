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
	// Block is the block threshold (pipeline.AnomalyThresholds.Block): a
	// call scoring at or above it is held for a person and is not recorded
	// in the history, so sending it again does not make it look usual (a
	// new tool stays new until the model is retrained or a person grants
	// "always"). 0 records every call.
	Block uint8
}

var _ pipeline.CallScorer = (*AnomalyScorer)(nil)

// NewAnomalyScorer scores with models, with a fresh history; block is the
// block threshold (pipeline.AnomalyThresholds.Block) — calls at or above
// it are not recorded in the history.
func NewAnomalyScorer(models *anomaly.Holder, trust map[string]int, block uint8) *AnomalyScorer {
	return &AnomalyScorer{Models: models, History: anomaly.NewTracker(), Trust: trust, Block: block}
}

// ScoreCall scores the call and records it in the history unless it
// scored at or above Block (with or without a model, so a model installed
// later starts from a warm history).
func (s *AnomalyScorer) ScoreCall(c pipeline.CallFeatures) (uint8, string) {
	var score uint8
	var v string
	hour := c.At.UTC().Hour()
	trust := s.Trust[c.Caller]
	s.History.ObserveIf(c.Caller, c.Tool, c.At, func(n int, novel bool) bool {
		score, v = s.Models.Score(anomaly.Features{Caller: c.Caller, Tool: c.Tool, Hour: hour,
			CallsLastMinute: n, NovelTool: novel, ParamSizeBytes: c.ParamSizeBytes, TrustLevel: trust})
		return v == "" || s.Block == 0 || score < s.Block
	})
	return score, v
}
