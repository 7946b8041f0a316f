package guard

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/airs-dev/airs/pipeline"
)

// askWith is an Asker that answers ch and counts its questions.
func askWith(ch Choice, asked *[]Question) Asker {
	return func(_ context.Context, q Question) Choice {
		*asked = append(*asked, q)
		return ch
	}
}

// With an asker on the context, the gate asks instead of only holding:
// the answer decides the call's confirmation, by the asker's person, and
// the call goes ahead (once, always) or is refused (deny) in the same
// gate; no answer leaves it held with its confirmation open. A call the
// gate lets through without a person is never asked about.
func TestGateAsksThroughTheAsker(t *testing.T) {
	clk := &clock{t: time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)}
	g := newGuard(t, t.TempDir(), clk)
	gate := func(ch Choice, c pipeline.IntentCheck) (pipeline.IntentDecision, error, []Question) {
		var asked []Question
		d, err := g.Gate(WithAsker(context.Background(), "chat:alice", askWith(ch, &asked)), c)
		return d, err, asked
	}

	d, err, asked := gate(Once, check("alice", deleteFile, `{"path": "a"}`))
	if err != nil || d.Decision != pipeline.IntentApproved || d.Reviewer != "chat:alice" || len(asked) != 1 {
		t.Fatalf("once: %+v %v, asked %d", d, err, len(asked))
	}
	if q := asked[0]; q.Review != d.Review || q.Caller != "alice" || q.Tool.Name != "delete-file" || string(q.Params) != `{"path": "a"}` {
		t.Errorf("the question: %+v", q)
	}
	rv, _ := g.Get(d.Review)
	if rv.Status != StatusApproved || rv.DecidedBy != "chat:alice" || rv.Used.IsZero() {
		t.Errorf("the confirmation after once: %+v", rv)
	}
	// Once is this call: the same call again is asked about again.
	if _, _, asked := gate(Once, check("alice", deleteFile, `{"path":"a"}`)); len(asked) != 1 {
		t.Errorf("the same call again asked %d times, want 1", len(asked))
	}

	d, err, _ = gate(Deny, check("alice", deleteFile, `{"path":"b"}`))
	var im *pipeline.IntentMisaligned
	if !errors.As(err, &im) || im.DeniedBy != "chat:alice" || d.Decision != pipeline.IntentDenied || d.Reviewer != "chat:alice" {
		t.Fatalf("deny: %+v %v", d, err)
	}

	d, err, asked = gate(0, check("alice", deleteFile, `{"path":"c"}`))
	var ivr *pipeline.IntentVerificationRequired
	if !errors.As(err, &ivr) || d.Decision != pipeline.IntentRequired || len(asked) != 1 {
		t.Fatalf("no answer: %+v %v", d, err)
	}
	if rv, _ := g.Get(ivr.ID); rv.Status != StatusPending {
		t.Errorf("no answer left the confirmation %s, want it open", rv.Status)
	}
	// Asked again, the open confirmation is the one decided.
	if d, err, _ := gate(Once, check("alice", deleteFile, `{"path":"c"}`)); err != nil || d.Review != ivr.ID || d.Reviewer != "chat:alice" {
		t.Fatalf("the open confirmation answered: %+v %v", d, err)
	}

	d, err, _ = gate(Always, check("alice", deleteFile, `{"path":"d"}`))
	if err != nil || d.Decision != pipeline.IntentAlways || d.Reviewer != "chat:alice" || !g.Granted("alice", "delete-file") {
		t.Fatalf("always: %+v %v", d, err)
	}
	// Granted, and a read-only call: nobody is asked.
	if _, err, asked := gate(Deny, check("alice", deleteFile, `{"path":"e"}`)); err != nil || len(asked) != 0 {
		t.Errorf("a granted call: %v, asked %d", err, len(asked))
	}
	if _, err, asked := gate(Deny, check("alice", calculator, `{}`)); err != nil || len(asked) != 0 {
		t.Errorf("a read-only call: %v, asked %d", err, len(asked))
	}
}

// A call level 2 holds is asked about with its reason, and the answer
// settles that hold; a decision someone made in `airs review` while the
// person thought is the one that applies.
func TestGateAskerSeesTheReasonAndLosesToAReviewer(t *testing.T) {
	clk := &clock{t: time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)}
	g := newGuard(t, t.TempDir(), clk)
	c := check("alice", calculator, `{"expression":"1"}`)
	c.Hold = "expression came from the text of documents/x.pdf"
	var asked []Question
	d, err := g.Gate(WithAsker(context.Background(), "cli:alice", askWith(Once, &asked)), c)
	if err != nil || d.Decision != pipeline.IntentApproved || len(asked) != 1 || asked[0].Reason != c.Hold {
		t.Fatalf("a level-2 hold asked: %+v %v %+v", d, err, asked)
	}

	ask := func(_ context.Context, q Question) Choice {
		if _, err := g.Decide(q.Review, Deny, "boss"); err != nil {
			t.Fatal(err)
		}
		return Once
	}
	_, err = g.Gate(WithAsker(context.Background(), "cli:alice", ask), check("alice", deleteFile, `{"path":"z"}`))
	var im *pipeline.IntentMisaligned
	if !errors.As(err, &im) || im.DeniedBy != "boss" {
		t.Fatalf("the reviewer's denial while the person thought: %v", err)
	}
}
