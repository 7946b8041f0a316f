package engine

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/airs-dev/airs/guard"
	"github.com/airs-dev/airs/pipeline"
	"github.com/airs-dev/airs/pipeline/audit"
	"github.com/airs-dev/airs/selector"
)

type memSink struct{ recs []audit.Record }

func (s *memSink) Append(r *audit.Record) error { s.recs = append(s.recs, *r); return nil }

// The user's answer is recorded in the guard before the call, for the
// arguments shown; when the gate checks other params (a lenient tool's
// defaults) and holds the call, the same answer decides that confirmation
// and the call is made once more. A "no" records nothing and runs nothing;
// without a guard, Confirm alone decides.
func TestConfirmCallFoldsIntoTheGuard(t *testing.T) {
	reg := pipeline.NewRegistry(pipeline.RegistryConfig{})
	ran := 0
	tl := pipeline.Tool{Name: "wipe", Version: "1", Destructive: true, Lenient: true, LatencyClass: pipeline.Fast,
		Parameters: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer","default":7}}}`)}
	if err := reg.Register("p", tl, pipeline.HandlerFunc(func(context.Context, json.RawMessage, *pipeline.Call) (json.RawMessage, error) {
		ran++
		return json.RawMessage(`{}`), nil
	})); err != nil {
		t.Fatal(err)
	}
	g, err := guard.New(guard.Config{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	sink := &memSink{}
	m, err := pipeline.NewManager(pipeline.Config{Registry: reg, Gate: g, Audit: sink})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	e := &Engine{manager: m, guard: g, channel: "chat", ranker: selector.NewStatsRanker()}
	args := json.RawMessage(`{"n":null}`) // the gate sees {"n":7}
	req := pipeline.Request{CallID: "c1", Tool: "wipe", Params: args, Caller: "web"}

	no := &recUI{confirm: false}
	if ch := e.confirmChoice(context.Background(), no, "web", "p", tl, args, ""); ch != 0 {
		t.Fatalf("a no: choice %v", ch)
	}
	if rs, _ := g.List(guard.Filter{All: true}); len(rs) != 0 {
		t.Fatalf("a no was recorded: %+v", rs)
	}

	yes := &recUI{confirm: true}
	ch := e.confirmChoice(context.Background(), yes, "web", "p", tl, args, "wipe it")
	if ch != guard.Once {
		t.Fatalf("a yes: choice %v", ch)
	}
	res, err := e.callAnswered(context.Background(), req, ch)
	if err != nil || res.Outcome != pipeline.OutcomeOK || ran != 1 {
		t.Fatalf("answered call: %v %+v ran %d", err, res, ran)
	}
	var got []string
	for _, r := range sink.recs {
		got = append(got, r.CallID+"/"+r.Intent+"/"+r.Reviewer)
	}
	if strings.Join(got, " ") != "c1/required/ c1-confirmed/approved/chat:web" {
		t.Fatalf("audit: %v", got)
	}
	// Unanswered (0), a held call stays held.
	if _, err := e.callAnswered(context.Background(), pipeline.Request{Tool: "wipe", Params: args, Caller: "web"}, 0); !errors.Is(err, pipeline.ErrIntentVerificationRequired) || ran != 1 {
		t.Fatalf("unanswered: %v, ran %d", err, ran)
	}

	// No guard: Confirm decides, nothing to record.
	plain := &Engine{manager: m, channel: "chat", ranker: selector.NewStatsRanker()}
	if !plain.ConfirmCall(context.Background(), yes, "web", "p", tl, args, "") || plain.ConfirmCall(context.Background(), no, "web", "p", tl, args, "") {
		t.Fatal("without a guard ConfirmCall is not Confirm")
	}
}
