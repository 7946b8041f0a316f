package recommender

import (
	"context"
	"testing"
	"time"

	"github.com/airs-dev/airs/pipeline"
)

// Peek shows the live suggestions without marking them seen (List does),
// and Run calls AfterCall only once the call's event has been observed:
// the call just made is no longer among the suggestions it reads.
func TestPeekAndAfterCall(t *testing.T) {
	w := newWorld(t)
	after := make(chan []Recommendation, 1)
	var r *Recommender
	r, err := New(Config{Catalog: w.cat, Validate: w.m.Validate, Spaces: []string{"documents"}, Home: w.home, Now: w.clock.Now,
		AfterCall: func(ev pipeline.CallEvent) { after <- r.Peek(ev.Caller) }})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	r.Known("alice")
	r.ObserveFile(FileEvent{Space: "documents", Rel: "papers/attention.pdf", Op: "create"})
	p := find(r.Peek("alice"), "pdf-extract")
	if p == nil || p.Seen {
		t.Fatalf("peek: %+v", r.Peek("alice"))
	}
	if rec := find(r.Peek("alice"), "pdf-extract"); rec.Seen {
		t.Fatal("Peek marked a suggestion seen")
	}
	if r.Peek("nobody") != nil {
		t.Fatal("an unknown caller has suggestions")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	calls := make(chan pipeline.CallEvent, 1)
	go r.Run(ctx, calls)
	calls <- pipeline.CallEvent{Caller: "alice", Tool: "pdf-extract", Outcome: pipeline.OutcomeOK, At: w.clock.Now(), Params: p.Arguments}
	select {
	case recs := <-after:
		for _, rec := range recs {
			if rec.Tool == "pdf-extract" && string(rec.Arguments) == string(p.Arguments) {
				t.Fatalf("AfterCall ran before the call was observed: %+v", recs)
			}
		}
	case <-time.After(5 * time.Second):
		t.Fatal("AfterCall not called")
	}
}
