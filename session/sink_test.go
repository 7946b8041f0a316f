package session

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
)

// memSink keeps batches in memory; fail makes the next Append fail.
type memSink struct {
	mu      sync.Mutex
	entries []Entry
	batches int
	fail    bool
}

func (s *memSink) Append(_ context.Context, b []Entry) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail {
		s.fail = false
		return errors.New("database away")
	}
	s.batches++
	for _, e := range b {
		e.Line = append([]byte(nil), e.Line...) // the Recorder reuses nothing, but a Sink must not rely on it
		s.entries = append(s.entries, e)
	}
	return nil
}

// A Recorder on a Sink acknowledges a record after the sink took it, hands
// it the file's line and the indexed fields (redacted), and a sink error
// fails that record only.
func TestRecorderOnSink(t *testing.T) {
	sink := &memSink{}
	r := OpenSink(sink, "memory", Options{Redact: []string{"token"}})
	ctx := context.Background()
	id, err := r.Record(ctx, Record{Session: "s1", Channel: "serve", Caller: "alice", Request: "hi",
		Call: &Call{Tool: "t", Arguments: map[string]any{"token": "abc"}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(sink.entries) != 1 {
		t.Fatalf("acknowledged before the sink had it: %d entries", len(sink.entries))
	}
	e := sink.entries[0]
	if e.ID != id || e.Kind != KindRequest || e.Session != "s1" || e.Channel != "serve" || e.Caller != "alice" || e.Time.IsZero() {
		t.Fatalf("entry fields %+v", e)
	}
	if !strings.HasSuffix(string(e.Line), "}\n") || strings.Contains(string(e.Line), "abc") {
		t.Fatalf("line %q: want the redacted file line", e.Line)
	}
	got, err := DecodeLine(e.Line)
	if err != nil || got.ID != id {
		t.Fatalf("DecodeLine: %+v %v", got, err)
	}
	sink.mu.Lock()
	sink.fail = true
	sink.mu.Unlock()
	if _, err := r.Record(ctx, Record{Request: "lost"}); err == nil || !strings.Contains(err.Error(), "memory") {
		t.Fatalf("a record the sink refused: %v, want an error naming the sink", err)
	}
	if err := r.Feedback(ctx, id, Feedback{Verdict: Accepted}); err != nil {
		t.Fatalf("after one failed batch: %v (not sticky)", err)
	}
	if r.Path() != "memory" || !r.Enabled() {
		t.Fatalf("Path %q Enabled %v", r.Path(), r.Enabled())
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Record(ctx, Record{Request: "late"}); !errors.Is(err, ErrClosed) {
		t.Fatalf("after Close: %v", err)
	}
	if len(sink.entries) != 2 || sink.entries[1].Kind != KindFeedback || sink.entries[1].Ref != id {
		t.Fatalf("entries %+v", sink.entries)
	}
	if _, err := DecodeLine([]byte(`{"v":99,"kind":"request"}`)); err == nil {
		t.Fatal("a newer version decoded")
	}
}
