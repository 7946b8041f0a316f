package main

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/airs-dev/airs/evals/replay"
	"github.com/airs-dev/airs/internal/engine"
	"github.com/airs-dev/airs/pipeline"
	"github.com/airs-dev/airs/selector"
	"github.com/airs-dev/airs/session"
)

// replayService is the engine as evals/replay's Service: the evaluation
// owns the interface and never imports the engine; the program wires the
// engine in here.
type replayService struct{ e *engine.Engine }

var _ replay.Service = replayService{}

func (s replayService) Serve(ctx context.Context, caller, text, sessionName string, confirm func(pipeline.Tool) bool) (*replay.Served, error) {
	tr, err := s.e.Turn(ctx, caller, text, silentUI{confirm: confirm}, engine.TurnOptions{Session: sessionName, MaxSteps: 1})
	if tr == nil {
		return nil, err
	}
	return &replay.Served{Selection: tr.First().Selection, RecordID: tr.RecordID, RecordErr: tr.RecordErr, Turn: tr}, err
}

func (s replayService) Feedback(ctx context.Context, sv *replay.Served, verdict string) error {
	tr, ok := sv.Turn.(*engine.TurnResult)
	if !ok {
		return errors.New("replay: feedback on a turn this engine did not serve")
	}
	return s.e.Feedback(ctx, tr, verdict)
}

func (s replayService) SessionLog() *session.Recorder { return s.e.SessionLog() }
func (s replayService) Tools() []pipeline.Registered  { return s.e.Tools() }
func (s replayService) CallableTool(caller, name string) (pipeline.Tool, error) {
	return s.e.CallableTool(caller, name)
}
func (s replayService) Hints() selector.Hints { return s.e.Hints() }

// silentUI is a channel that shows nothing and confirms a call only when
// confirm says so.
type silentUI struct{ confirm func(pipeline.Tool) bool }

func (silentUI) Selected(*selector.Selection, *pipeline.Tool) {}
func (u silentUI) Confirm(_ context.Context, t pipeline.Tool, _ json.RawMessage) bool {
	return u.confirm(t)
}
func (silentUI) Running(string)                 {}
func (silentUI) Result(*pipeline.Result, error) {}
func (silentUI) Note(string)                    {}
func (silentUI) Token(string) error             { return nil }
