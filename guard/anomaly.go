package guard

import (
	"encoding/json"

	"github.com/airs-dev/airs/guard/anomaly"
	"github.com/airs-dev/airs/pipeline"
)

// AnomalyScorer is the pipeline's anomaly gate (pipeline.CallScorer,
// Config.Scorer): it turns a call's facts into the model's features — the
// caller's recent rates and the tools and folders it used as usual calls
// from its Tracker, the folders the arguments name — and scores them with
// the model its Holder has now (swapped without a restart; a candidate
// scores a share of callers).
type AnomalyScorer struct {
	Models  *anomaly.Holder
	History *anomaly.Tracker
	// Block is the block threshold (pipeline.AnomalyThresholds.Block). A
	// call scoring at or above it is held for a person: it counts in its
	// caller's rates as every call does, but its tool and folders are not
	// learned as usual — a held new tool stays new until a person approves
	// it (Learn) or the model is retrained on the approval. 0 learns every
	// call.
	Block uint8
}

var _ pipeline.CallScorer = (*AnomalyScorer)(nil)

// NewAnomalyScorer scores with models, with a fresh history; block is the
// block threshold (pipeline.AnomalyThresholds.Block).
func NewAnomalyScorer(models *anomaly.Holder, block uint8) *AnomalyScorer {
	return &AnomalyScorer{Models: models, History: anomaly.NewTracker(), Block: block}
}

// ScoreCall scores the call and records it in the history (with or
// without a model, so a model installed later starts from a warm
// history).
func (s *AnomalyScorer) ScoreCall(c pipeline.CallFeatures) (uint8, string) {
	var score uint8
	var v string
	f := anomaly.Features{Caller: c.Caller, Tool: c.Tool, Unix: c.At.Unix(), ParamSizeBytes: c.ParamSizeBytes}
	f.SetFolders(c.Params)
	s.History.ObserveIf(c.Caller, c.Tool, anomaly.FoldersOfFeatures(&f), c.At, func(r anomaly.Recent) bool {
		r.Apply(&f)
		score, v = s.Models.Score(f)
		return v == "" || s.Block == 0 || score < s.Block
	})
	return score, v
}

// Learn makes a call a person approved usual for its caller at once: its
// tool and the folders its params name (the params as the review kept
// them). A denied call is not learned: it stays unusual.
func (s *AnomalyScorer) Learn(caller, tool string, params json.RawMessage) {
	var f anomaly.Features
	f.SetFolders(params)
	s.History.Learn(caller, tool, anomaly.FoldersOfFeatures(&f))
}
