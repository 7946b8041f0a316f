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
	"github.com/airs-dev/airs/guard/anomaly/traffic"
	"github.com/airs-dev/airs/pipeline"
	"github.com/airs-dev/airs/pipeline/audit"
)

// TrainingSet is what `airs guard train` learns from: the audit log's
// calls as the anomaly model's features, computed as the running airs
// computes them (the same anomaly.Tracker, fed the same calls in the same
// order: every scored call counts in its caller's rates, held ones too).
// The audit log keeps no arguments, so its calls name no folders; the
// running airs learns those itself (anomaly.Features.LiveFolderCalls).
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
// person refused or has not yet allowed. One a person approved is: a
// decision is training data.
func normal(r *audit.Record) bool {
	return r.Intent != pipeline.IntentDenied && r.Intent != pipeline.IntentRequired
}

// learned reports whether the running airs learned the call's tool as
// usual for its caller (AnomalyScorer.Block): when it scored below block,
// or a person approved it; never when a person denied it.
func learned(r *audit.Record, block float64) bool {
	if r.Intent == pipeline.IntentDenied {
		return false
	}
	return r.AnomalyScore == nil || block <= 0 || *r.AnomalyScore < block ||
		r.Intent == pipeline.IntentApproved || r.Intent == pipeline.IntentAlways
}

// ReadTrainingSet reads the audit log at path (a torn last line is
// skipped, as the log itself does) and returns its calls as features.
// block is the block threshold in [0, 1] (guard.anomaly.block: the
// history does not learn the tools of calls scoring at or above it unless
// a person approved them, as the running airs's does).
func ReadTrainingSet(path string, block float64) (*TrainingSet, error) {
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
		ts.observe(tr, &r, block)
	}
	return ts, nil
}

// TrainingSetOf is ReadTrainingSet over records already read, oldest
// first (the PostgreSQL audit log's, store/pg DB.ReadAudit).
func TrainingSetOf(recs []audit.Record, block float64) *TrainingSet {
	ts := &TrainingSet{}
	tr := anomaly.NewTracker()
	for i := range recs {
		ts.observe(tr, &recs[i], block)
	}
	return ts
}

// observe adds one record, the next in the log's order.
func (ts *TrainingSet) observe(tr *anomaly.Tracker, r *audit.Record, block float64) {
	ts.Records++
	if !seen(r) {
		ts.Skipped++
		return
	}
	f := anomaly.Features{Caller: r.Caller, Tool: r.Tool, Unix: r.Time.Unix(), ParamSizeBytes: r.ParamsBytes}
	tr.ObserveIf(r.Caller, r.Tool, anomaly.Folders{}, r.Time, func(rc anomaly.Recent) bool {
		rc.Apply(&f)
		return learned(r, block)
	})
	if !normal(r) {
		ts.Excluded++
		return
	}
	ts.add(f, r.Time)
}

func (ts *TrainingSet) add(f anomaly.Features, at time.Time) {
	if ts.From.IsZero() || at.Before(ts.From) {
		ts.From = at
	}
	if at.After(ts.To) {
		ts.To = at
	}
	ts.Calls = append(ts.Calls, f)
}

// After is the set's calls after t (an incremental update's: the calls a
// model trained through t has not learned).
func (ts *TrainingSet) After(t time.Time) []anomaly.Features {
	u := t.Unix()
	for i, f := range ts.Calls {
		if f.Unix > u {
			return ts.Calls[i:]
		}
	}
	return nil
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
		r := &recs[i]
		if seen(r) {
			s.History.ObserveIf(r.Caller, r.Tool, anomaly.Folders{}, r.Time, func(anomaly.Recent) bool { return learned(r, block) })
			k++
		}
	}
	return k
}

// TraceOfAudit reads the audit log at path and returns its scored calls
// (those the running airs's history saw) as trace lines, labelled normal:
// a recording of real traffic for `airs eval guard --train/--test`. The
// log keeps the params' size, not the params, so the lines carry no args.
func TraceOfAudit(path string) ([]traffic.TraceLine, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("guard: reading the audit log: %w (record another log with --audit FILE)", err)
	}
	defer f.Close()
	var out []traffic.TraceLine
	br := bufio.NewReaderSize(f, 256<<10)
	for line := 1; ; line++ {
		b, err := br.ReadBytes('\n')
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("guard: reading %s: %w", path, err)
		}
		var r audit.Record
		if err := json.Unmarshal(b, &r); err != nil {
			return nil, fmt.Errorf("guard: %s line %d is not an audit record (%v)", path, line, err)
		}
		if !seen(&r) {
			continue
		}
		if n := len(out); n > 0 && r.Time.Before(out[n-1].Time) {
			r.Time = out[n-1].Time // records are appended in commit order; a trace is in time order
		}
		out = append(out, traffic.TraceLine{Time: r.Time.UTC(), Agent: r.Caller, Tool: r.Tool, ArgsBytes: r.ParamsBytes, Label: traffic.LabelNormal})
	}
	return out, nil
}
