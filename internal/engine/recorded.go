package engine

import (
	"context"
	"encoding/json"
	"time"

	"github.com/airs-dev/airs/pipeline"
	"github.com/airs-dev/airs/selector"
	"github.com/airs-dev/airs/session"
)

// RecordInfo is added to an answer of a request that only decides (a
// selection or a plan that is not run): the session record's ID when
// recording is on, or why the request could not be recorded (nothing is
// dropped silently).
type RecordInfo struct {
	RecordID    string `json:"record_id,omitempty"`
	RecordError string `json:"record_error,omitempty"`
}

// SelectRecorded is Select that records the request in the session log
// like a chat turn, with execution "skipped": the client runs the call, if
// it wants, itself. via names the request's channel endpoint (for example
// "POST /v1/select") in the record's reason for not running it.
func (e *Engine) SelectRecorded(ctx context.Context, caller, text, via string) (*selector.Selection, RecordInfo, error) {
	start := time.Now()
	sel, err := e.Select(ctx, caller, text)
	rec := session.Record{Channel: e.channel, Caller: caller, Request: text}
	if sel != nil {
		fillSelection(&rec, sel, e.modelOptions())
	}
	rec.Execution = &session.Execution{Outcome: session.OutcomeSkipped, ErrorKind: kindIfErr(err), Error: notRun(via, err)}
	var tr TurnResult
	e.record(&rec, &tr, start)
	return sel, e.recordInfo(&tr), err
}

// PlanRecorded is Plan that records the request with the plan's steps
// (each step's tool and its arguments as planned, references to earlier
// steps included as {{…}} strings), execution "skipped"; via as for
// SelectRecorded.
func (e *Engine) PlanRecorded(ctx context.Context, caller, text, via string) (*selector.PlanResult, RecordInfo, error) {
	start := time.Now()
	pr, err := e.Plan(ctx, caller, text)
	rec := session.Record{Channel: e.channel, Caller: caller, Request: text}
	if pr != nil {
		fillPlan(&rec, pr, e.modelName, e.modelOptions())
	}
	rec.Execution = &session.Execution{Outcome: session.OutcomeSkipped, ErrorKind: kindIfErr(err), Error: notRun(via, err)}
	var tr TurnResult
	e.record(&rec, &tr, start)
	return pr, e.recordInfo(&tr), err
}

func (e *Engine) recordInfo(tr *TurnResult) RecordInfo {
	var r RecordInfo
	if e.recorder != nil {
		if tr.RecordErr != nil {
			r.RecordError = "this request was not recorded: " + tr.RecordErr.Error()
		} else {
			r.RecordID = tr.RecordID
		}
	}
	return r
}

func kindIfErr(err error) string {
	if err == nil {
		return ""
	}
	return pipeline.KindOf(err)
}

// notRun says why a recorded request has no execution.
func notRun(endpoint string, err error) string {
	if err != nil {
		return err.Error()
	}
	return "not run: " + endpoint + " only decides"
}

// fillPlan copies a plan into a session record: its candidates, the
// model's output and the steps in plan order.
func fillPlan(rec *session.Record, pr *selector.PlanResult, model string, opts map[string]any) {
	rec.Candidates = appendCandidates(rec.Candidates, pr.Candidates)
	rec.GrammarHash = pr.GrammarHash
	rec.RawOutput = pr.Raw
	lat := &session.Latency{}
	if pr.Mode == selector.ModeModel {
		rec.Model = &session.Model{Backend: "ollama", Name: model, Options: opts}
		lat.GenerationMS = ms(pr.Latency)
	} else {
		lat.RetrievalMS = ms(pr.Latency)
	}
	rec.Latency = lat
	if pr.Chain != nil {
		for _, st := range pr.Chain.Steps {
			args := map[string]any{}
			if st.Params != nil {
				if raw, err := json.Marshal(st.Params); err == nil {
					args = decodeArgs(raw)
				}
			}
			rec.Steps = append(rec.Steps, session.Call{Tool: st.Tool, Arguments: args})
		}
	}
	rec.Validation = &session.Validation{Valid: pr.Chain != nil}
}
