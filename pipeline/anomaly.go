package pipeline

import (
	"context"
	"fmt"
	"math"
	"time"
)

// CallScorer is the anomaly gate's model: how unlike this
// caller's usual calls a call is, as a score 0–255 for [0, 1], with the
// version of the model that gave it (written to the audit record). The
// guard layer implements it (guard.AnomalyScorer over guard/anomaly);
// pipeline only defines what it needs, so it never imports guard.
//
// The Manager calls it once per call, after the schema stage and before
// the intent gate, from the call's goroutine: it must be cheap (the
// guard's is a few hundred nanoseconds, no allocation) and safe for
// concurrent use. A scorer keeps whatever per-caller history it needs
// (calls in the last minute, tools seen) itself; it sees every scored call
// once, in the order the Manager scores them. model "" means the call was
// not scored (no model loaded): nothing is written and no threshold
// applies.
type CallScorer interface {
	ScoreCall(CallFeatures) (score uint8, model string)
}

// CallFeatures are the facts of one call the scorer derives its features
// from (the seed's seven: caller, tool, hour of day, calls in the last
// minute, novel tool, params size, caller trust level; the last three that
// need history or configuration are the scorer's).
type CallFeatures struct {
	Caller   string
	Provider string
	Tool     string
	At       time.Time // the call's wall-clock time (Config.Now)
	// ParamSizeBytes is the size of the params as sent (JSON or
	// MessagePack), the size the audit record's params_bytes holds.
	ParamSizeBytes int
	// Params are the call's params as JSON (the scorer reads the paths
	// they name); the scorer must not keep them past the call.
	Params []byte
}

// AnomalyThresholds are the score levels, in the scorer's fixed point
// (0–255 for [0, 1]): at Warn a warning is logged and the call goes on; at
// Review it goes on and is queued for an asynchronous intent review; at
// Block it is held until a person confirms it, as a destructive call is
// (intent_verification_required). The zero value takes the seed's defaults
// 0.8, 0.9 and 0.95 (DefaultAnomalyThresholds).
type AnomalyThresholds struct {
	Warn, Review, Block uint8
}

// DefaultAnomalyThresholds are the seed's 0.8, 0.9, 0.95.
var DefaultAnomalyThresholds = AnomalyThresholdsOf(0.8, 0.9, 0.95)

// AnomalyThresholdsOf converts thresholds in [0, 1] to fixed point,
// rounding up, so a score s/255 is at or above x exactly when the fixed
// point score is at or above the converted threshold. A threshold of
// 0 or less is 1 (every scored call but those scoring 0 reaches it);
// above 1 it can never be reached (255 is 1.0, so it becomes 255 only at
// exactly 1).
func AnomalyThresholdsOf(warn, review, block float64) AnomalyThresholds {
	return AnomalyThresholds{Warn: fixedCeil(warn), Review: fixedCeil(review), Block: fixedCeil(block)}
}

func fixedCeil(x float64) uint8 {
	switch {
	case x <= 0:
		return 1
	case x >= 1:
		return 255
	}
	return uint8(math.Ceil(x * 255))
}

// AnomalyLevel is what the score means for the call, for the intent gate.
type AnomalyLevel uint8

const (
	AnomalyNone   AnomalyLevel = iota // below Warn, or not scored
	AnomalyWarn                       // logged; the call goes on
	AnomalyReview                     // the call goes on, queued for review
	AnomalyBlock                      // held until a person confirms it
)

func (l AnomalyLevel) String() string {
	switch l {
	case AnomalyWarn:
		return "warn"
	case AnomalyReview:
		return "review"
	case AnomalyBlock:
		return "block"
	}
	return "none"
}

// Level is the level of score s.
func (t AnomalyThresholds) Level(s uint8) AnomalyLevel {
	switch {
	case s >= t.Block:
		return AnomalyBlock
	case s >= t.Review:
		return AnomalyReview
	case s >= t.Warn:
		return AnomalyWarn
	}
	return AnomalyNone
}

func (t AnomalyThresholds) withDefaults() AnomalyThresholds {
	if t == (AnomalyThresholds{}) {
		return DefaultAnomalyThresholds
	}
	return t
}

// anomalyScore is one call's score, for the gate and the audit record.
type anomalyScore struct {
	score uint8
	model string // "" not scored
	level AnomalyLevel
}

// AnomalyScoreOf is score 0–255 as the audit record writes it: a fraction
// in [0, 1], rounded to 3 decimals.
func AnomalyScoreOf(score uint8) float64 {
	return float64((int(score)*1000+127)/255) / 1000
}

// scoreCall is the hook before the intent gate: score the call and apply
// the levels the gate does not handle. With a gate, Review and Block are
// the gate's (it queues or holds the call, IntentCheck.Anomaly); without
// one, a blocked call is refused — nobody could confirm it — and a
// reviewed one goes on with a warning.
func (m *Manager) scoreCall(_ context.Context, cs *callState) error {
	req, e := cs.req, cs.entry
	s, model := m.cfg.Scorer.ScoreCall(CallFeatures{Caller: req.Caller, Provider: e.prov.id, Tool: e.tool.Name,
		At: cs.wall, ParamSizeBytes: len(req.Params), Params: cs.params.json})
	if model == "" {
		return nil
	}
	cs.anomaly = anomalyScore{score: s, model: model, level: m.anomalyT.Level(s)}
	if cs.anomaly.level == AnomalyNone {
		return nil
	}
	m.log.Warn("anomalous call", "call_id", req.CallID, "caller", req.Caller, "tool", e.tool.Name,
		"score", AnomalyScoreOf(s), "level", cs.anomaly.level.String(), "model", model)
	if m.cfg.Gate == nil && cs.anomaly.level == AnomalyBlock {
		return &IntentMisaligned{Reason: fmt.Sprintf("anomaly score %.3f of this call of %s by %s is at or above the block threshold %.3f, and no intent gate is configured to ask a person: enable the guard (guard.enabled) or raise guard.anomaly.block",
			AnomalyScoreOf(s), e.tool.Name, req.Caller, AnomalyScoreOf(m.anomalyT.Block))}
	}
	return nil
}
