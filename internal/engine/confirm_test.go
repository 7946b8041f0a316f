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

func (s *memSink) decisions() string {
	var got []string
	for _, r := range s.recs {
		got = append(got, r.CallID+"/"+r.Intent+"/"+r.Reviewer)
	}
	return strings.Join(got, " ")
}

// intentUI answers the guard's question with choice and counts it.
type intentUI struct {
	recUI
	choice guard.Choice
}

func (u *intentUI) ConfirmIntent(_ context.Context, _ string, tool pipeline.Tool, args json.RawMessage) guard.Choice {
	u.mu.Lock()
	u.asked = append(u.asked, tool.Name+string(args))
	u.mu.Unlock()
	return u.choice
}

// proposingUI cannot ask mid-turn, as an HTTP stream cannot.
type proposingUI struct{ recUI }

func (*proposingUI) ProposesCalls() {}

// A destructive call is asked about once, by the pipeline's gate, about
// the params the tool gets (a lenient tool's defaults filled in): the
// call is made once, and its one audit record says who allowed it. A no,
// a denial or no answer runs nothing; without a guard, or on a channel
// that cannot ask mid-turn, Confirm decides before the call is made.
func TestCallAskingAsksAtTheGate(t *testing.T) {
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
	req := func(id string) pipeline.Request {
		return pipeline.Request{CallID: id, Tool: "wipe", Params: args, Caller: "web"}
	}

	yes := &intentUI{choice: guard.Once}
	res, err := e.CallAsking(context.Background(), yes, req("c1"), tl, true)
	if err != nil || res.Outcome != pipeline.OutcomeOK || ran != 1 {
		t.Fatalf("allowed once: %v %+v ran %d", err, res, ran)
	}
	if len(yes.asked) != 1 || yes.asked[0] != `wipe{"n":7}` {
		t.Fatalf("asked %q, want once about the params the tool gets", yes.asked)
	}
	if got := sink.decisions(); got != "c1/approved/chat:web" {
		t.Fatalf("audit: %s", got)
	}

	// Confirm's yes is once; its no is no answer: the call stays held.
	if _, err := e.CallAsking(context.Background(), &recUI{confirm: true}, req("c2"), tl, true); err != nil || ran != 2 {
		t.Fatalf("Confirm's yes: %v ran %d", err, ran)
	}
	no := &recUI{confirm: false}
	if _, err := e.CallAsking(context.Background(), no, req("c3"), tl, true); !errors.Is(err, ErrDeclined) || ran != 2 || len(no.asked) != 1 {
		t.Fatalf("Confirm's no: %v ran %d asked %v", err, ran, no.asked)
	}
	deny := &intentUI{choice: guard.Deny}
	if _, err := e.CallAsking(context.Background(), deny, req("c4"), tl, true); !errors.Is(err, ErrDeclined) || ran != 2 {
		t.Fatalf("denied: %v ran %d", err, ran)
	}
	if got := sink.decisions(); got != "c1/approved/chat:web c2/approved/chat:web c3/required/ c4/denied/chat:web" {
		t.Fatalf("audit: %s", got)
	}

	// "always": asked once, then never again for this agent and tool.
	always := &intentUI{choice: guard.Always}
	for _, id := range []string{"c5", "c6"} {
		if _, err := e.CallAsking(context.Background(), always, req(id), tl, true); err != nil {
			t.Fatal(err)
		}
	}
	if len(always.asked) != 1 || ran != 4 {
		t.Fatalf("always: asked %d times, ran %d", len(always.asked), ran)
	}

	// A channel that cannot ask mid-turn proposes: nothing reaches the pipeline.
	n := len(sink.recs)
	if _, err := e.CallAsking(context.Background(), &proposingUI{}, req("c7"), pipeline.Tool{Name: "other", Destructive: true}, true); !errors.Is(err, ErrDeclined) || len(sink.recs) != n {
		t.Fatalf("proposed: %v, %d audit records", err, len(sink.recs)-n)
	}

	// No guard: Confirm decides before the call, nothing to record.
	plain := &Engine{manager: m, channel: "chat", ranker: selector.NewStatsRanker()}
	if _, err := plain.CallAsking(context.Background(), &recUI{confirm: false}, req("c8"), tl, true); !errors.Is(err, ErrDeclined) || len(sink.recs) != n {
		t.Fatalf("without a guard a no made the call: %v", err)
	}
}

// A turn's destructive call goes through the gate's question exactly once
// (after Running: the question is the pipeline's), and the call's one
// audit record names the person who allowed it.
func TestTurnAsksAtTheGate(t *testing.T) {
	post := pipeline.Tool{Name: "post-note", Version: "1.0.0", Description: "Post a note to the team board.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string","minLength":1,"maxLength":100}},"required":["text"],"additionalProperties":false}`), Destructive: true}
	g, err := guard.New(guard.Config{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	e, cfg := newTurnEngineWith(t, g, post)
	withModel(e, &fakeModel{steps: []string{call("post-note", `{"text":"42"}`), noneCall}})
	ui := &recUI{confirm: true}
	tr, err := e.Turn(context.Background(), "web", "post 42 to the board", ui, TurnOptions{})
	if err != nil || tr.Calls() != 1 {
		t.Fatalf("%v calls %d\n%s", err, tr.Calls(), ui)
	}
	if !strings.Contains(ui.String(), "selected post-note\nrunning\nconfirm post-note\nresult post-note \n") || len(ui.asked) != 1 {
		t.Fatalf("asked %v:\n%s", ui.asked, ui)
	}
	got := auditOf(t, cfg, "post-note", func(r audit.Record) string { return r.CallID + "/" + r.Outcome + "/" + r.Intent + "/" + r.Reviewer })
	if want := ui.callIDs[0] + "/ok/approved/chat:web"; strings.Join(got, " ") != want {
		t.Fatalf("audit of post-note: %v, want %s", got, want)
	}

	// Declined at the gate: the step is declined, as before a call.
	withModel(e, &fakeModel{steps: []string{call("post-note", `{"text":"43"}`), noneCall}})
	ui = &recUI{confirm: false}
	tr, _ = e.Turn(context.Background(), "web", "post 43 to the board", ui, TurnOptions{})
	if s := tr.First(); !s.Declined || s.Skipped != "declined by the user" || s.Result != nil || strings.Contains(ui.String(), "result") {
		t.Fatalf("declined: %+v\n%s", s, ui)
	}
}
