package engine

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/airs-dev/airs/guard"
	"github.com/airs-dev/airs/pipeline"
	"github.com/airs-dev/airs/pipeline/audit"
)

// A plan's destructive step is asked about once, before any step runs;
// its call, whose arguments come from the step before (so nobody could
// have been asked about them exactly), is held by the gate and settled by
// that answer: it runs, and its audit record names who allowed it.
// Declined, the step does not run (the steps before it do).
func TestPlanStepAnswerSettlesTheGate(t *testing.T) {
	shred := pipeline.Tool{Name: "shred-text", Version: "1.0.0", Description: "Delete a text permanently: shred it.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string","minLength":1}},"required":["text"],"additionalProperties":false}`), Destructive: true}
	g, err := guard.New(guard.Config{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	e, cfg := newTurnEngineWith(t, g, shred)
	const request = "extract the text of quotes/acme-2024.pdf then delete that text permanently"
	ui := &recUI{confirm: true}
	tr, err := e.Turn(context.Background(), "web", request, ui, TurnOptions{})
	if err != nil || tr.Run == nil || len(tr.Steps) != 2 {
		t.Fatalf("%v run %v steps %d\n%s", err, tr.Run != nil, len(tr.Steps), ui)
	}
	if s := tr.Steps[1]; s.Selection.Function != "shred-text" || s.CallErr != nil || s.Result == nil || s.Result.Outcome != pipeline.OutcomeOK {
		t.Fatalf("the confirmed step: %+v\n%s", s, ui)
	}
	if len(ui.asked) != 1 || !strings.Contains(ui.String(), "selected shred-text\nconfirm shred-text\nrunning") {
		t.Fatalf("asked %v, want once before any step runs:\n%s", ui.asked, ui)
	}
	got := auditOf(t, cfg, "shred-text", func(r audit.Record) string { return r.Outcome + "/" + r.Intent + "/" + r.Reviewer })
	if strings.Join(got, " ") != "ok/approved/chat:web" {
		t.Fatalf("audit of shred-text: %v", got)
	}

	ui = &recUI{confirm: false}
	tr, _ = e.Turn(context.Background(), "web", request, ui, TurnOptions{})
	if len(tr.Steps) != 2 || tr.Steps[1].Skipped != "declined by the user" || tr.Steps[1].Result != nil || strings.Count(ui.String(), "running") != 1 {
		t.Fatalf("declined: %+v\n%s", tr.Steps, ui)
	}
}
