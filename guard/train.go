package guard

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/airs-dev/airs/guard/anomaly"
	"github.com/airs-dev/airs/pipeline"
	"github.com/airs-dev/airs/pipeline/audit"
)

// TrainingSet is what `airs guard train` learns from: the audit log's
// calls as the anomaly model's features, computed as the running airs
// computes them (the same anomaly.Tracker, fed the same calls in the same
// order).
type TrainingSet struct {
	Calls []anomaly.Features
	// Records is how many records the log had; Skipped how many of them
	// never reached the scorer (refused before the schema stage passed);
	// Excluded how many reached it but are not taken as normal (a person
	// denied them, or they are still held).
	Records, Skipped, Excluded int
	From, To                   time.Time
}

// preScore are the error kinds of calls that never reach the anomaly hook
// (pipeline/call.go: it runs after the schema stage), so the running
// airs's history never saw them. A schema failure of a tool's output, a
// provider that died on dispatch, a timeout or a cancellation can happen
// on either side; those records count as seen (the common case for a
// call that got that far), which at worst makes one caller's
// calls-in-the-last-minute one higher than the running airs counted.
var preScore = map[string]bool{
	pipeline.KindRateLimited: true, pipeline.KindPayloadTooLarge: true, pipeline.KindToolNotFound: true,
	pipeline.KindToolDeprecated: true, pipeline.KindChannelCapabilityDenied: true,
	pipeline.KindToolCapabilityDenied: true, pipeline.KindSchemaValidationFailed: true,
}

// seen reports whether the running airs scored (or, with no model, would
// have scored) the call r records.
func seen(r *audit.Record) bool {
	if r.Speculative { // run ahead by the engine, not asked for: no habit of the caller's
		return false
	}
	if r.AnomalyModel != "" {
		return true
	}
	return r.Tool != "" && !preScore[r.Error]
}

// normal reports whether a seen call may be learned as normal: not one a
// person refused or has not yet allowed.
func normal(r *audit.Record) bool {
	return r.Intent != pipeline.IntentDenied && r.Intent != pipeline.IntentRequired
}

// recorded reports whether the running airs recorded the call in its
// history (AnomalyScorer.Block): not when it scored at or above block.
func recorded(r *audit.Record, block float64) bool {
	return r.AnomalyScore == nil || block <= 0 || *r.AnomalyScore < block
}

// ReadTrainingSet reads the audit log at path (a torn last line is
// skipped, as the log itself does) and returns its calls as features.
// trust is each agent's trust level (agents.ID.trust), block the block
// threshold in [0, 1] (guard.anomaly.block; the history leaves out the
// calls scoring at or above it, as the running airs's does).
func ReadTrainingSet(path string, trust map[string]int, block float64) (*TrainingSet, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("guard: reading the audit log: %w (train on another log with --audit FILE)", err)
	}
	defer f.Close()
	ts := &TrainingSet{}
	tr := anomaly.NewTracker()
	br := bufio.NewReaderSize(f, 256<<10)
	for line := 1; ; line++ {
		b, err := br.ReadBytes('\n')
		if errors.Is(err, io.EOF) {
			break // a torn tail (no newline) was never acknowledged
		}
		if err != nil {
			return nil, fmt.Errorf("guard: reading %s: %w", path, err)
		}
		var r audit.Record
		if err := json.Unmarshal(b, &r); err != nil {
			return nil, fmt.Errorf("guard: %s line %d is not an audit record (%v); `airs audit verify --file %s` says where the log breaks", path, line, err, path)
		}
		ts.observe(tr, &r, trust, block)
	}
	return ts, nil
}

// TrainingSetOf is ReadTrainingSet over records already read, oldest
// first (the PostgreSQL audit log's, store/pg DB.ReadAudit).
func TrainingSetOf(recs []audit.Record, trust map[string]int, block float64) *TrainingSet {
	ts := &TrainingSet{}
	tr := anomaly.NewTracker()
	for i := range recs {
		ts.observe(tr, &recs[i], trust, block)
	}
	return ts
}

// observe adds one record, the next in the log's order.
func (ts *TrainingSet) observe(tr *anomaly.Tracker, r *audit.Record, trust map[string]int, block float64) {
	ts.Records++
	if !seen(r) {
		ts.Skipped++
		return
	}
	var n int
	var novel bool
	if recorded(r, block) {
		n, novel = tr.Observe(r.Caller, r.Tool, r.Time)
	} else {
		n, novel = tr.Peek(r.Caller, r.Tool, r.Time)
	}
	if !normal(r) {
		ts.Excluded++
		return
	}
	if ts.From.IsZero() || r.Time.Before(ts.From) {
		ts.From = r.Time
	}
	if r.Time.After(ts.To) {
		ts.To = r.Time
	}
	ts.Calls = append(ts.Calls, anomaly.Features{Caller: r.Caller, Tool: r.Tool, Hour: r.Time.UTC().Hour(),
		CallsLastMinute: n, NovelTool: novel, ParamSizeBytes: r.ParamsBytes, TrustLevel: trust[r.Caller]})
}

// WarmHistory replays the last n records of the audit log at path into
// the scorer's history, so a restarted airs neither takes every caller's
// next tool for a new one nor forgets a burst in progress. A missing log
// is no history (a new AIRS_HOME).
func (s *AnomalyScorer) WarmHistory(path string, n int, block float64) (int, error) {
	recs, err := audit.Tail(path, n)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	return s.WarmHistoryFrom(recs, block), err
}

// WarmHistoryFrom is WarmHistory over records already read, oldest first
// (the PostgreSQL audit log's tail); it returns how many it replayed.
func (s *AnomalyScorer) WarmHistoryFrom(recs []audit.Record, block float64) int {
	k := 0
	for i := range recs {
		if seen(&recs[i]) && recorded(&recs[i], block) {
			s.History.Observe(recs[i].Caller, recs[i].Tool, recs[i].Time)
			k++
		}
	}
	return k
}
