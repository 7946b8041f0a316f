package chat

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/airs-dev/airs/internal/demodata"
	"github.com/airs-dev/airs/recommender"
)

// A PDF that lands in a watched space is suggested after the next turn,
// dim-free on a pipe, and /accept N runs it through the pipeline; /dismiss N
// refuses the next one.
func TestSuggestionsAfterATurn(t *testing.T) {
	r := newRig(t)
	if err := r.eng.WatchSpaces(); err != nil {
		t.Fatal(err)
	}
	r.start(Options{})
	mark := r.expect(0, "Type a request")
	must(t, demodata.WritePDF(filepath.Join(r.docs, "invoice.pdf"), []string{"Invoice 42", "Total: 12 EUR"}))
	deadline := time.Now().Add(30 * time.Second) // a hang guard; the watcher's speed is recommender/watch's BenchmarkEventToDeliver
	for {
		if recs := r.eng.Recommender().List("tester"); len(recs) > 0 && recs[0].Tool == "pdf-extract" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no pdf-extract suggestion 30 s after the file landed: %+v (watcher %+v)", r.eng.Recommender().List("tester"), r.eng.WatchStats())
		}
		time.Sleep(20 * time.Millisecond)
	}
	r.say("tell me a joke")
	mark = r.expect(mark, `suggestion 1: pdf-extract {"path":"invoice.pdf","space":"documents"}`)
	mark = r.expect(mark, "(/accept 1, /dismiss 1)")
	if strings.Contains(r.out.String(), "\x1b[2m") {
		t.Fatal("dimmed output on a pipe")
	}
	r.say("/accept 1")
	mark = r.expect(mark, "ok: pdf-extract")
	r.expect(mark, "Invoice 42")
	if got := r.auditTools()["pdf-extract"]; len(got) != 1 {
		t.Fatalf("audit has pdf-extract %v times, want once", got)
	}
	if s := r.eng.Recommender().Stats(); s.Accepted != 1 {
		t.Fatalf("stats %+v", s)
	}
	r.say("/accept 7")
	r.expect(mark, "say a suggestion's number")
	r.stop()
	if _, err := os.Stat(filepath.Join(r.home, "recommender", "feedback.jsonl")); err != nil {
		t.Fatalf("the answer was not kept: %v", err)
	}
}

// An accepted suggestion of a destructive tool is asked about once, by the
// pipeline's gate, like a turn's call: allowed, it runs once and its audit
// record names who allowed it.
func TestAcceptedDestructiveSuggestionAsksAtTheGate(t *testing.T) {
	r := newRig(t)
	note := filepath.Join(r.docs, "notes", "todo.txt")
	if err := r.eng.Recommender().SetTask("tester", "delete the note notes/todo.txt"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second) // a hang guard; the watcher's speed is recommender/watch's BenchmarkEventToDeliver
	for !slices.ContainsFunc(r.eng.Recommender().List("tester"), func(rec recommender.Recommendation) bool { return rec.Tool == "delete-note" }) {
		if time.Now().After(deadline) {
			t.Fatalf("no delete-note suggestion from the task: %+v", r.eng.Recommender().List("tester"))
		}
		time.Sleep(20 * time.Millisecond)
	}
	r.start(Options{})
	mark := r.expect(0, "Type a request")
	r.say("tell me a joke")
	mark = r.expect(mark, "suggestion 1: delete-note")
	r.say("/accept 1")
	mark = r.expect(mark, "agent tester wants to call delete-note(")
	r.say("o")
	r.expect(mark, "ok: delete-note")
	r.stop()
	if _, err := os.Stat(note); !os.IsNotExist(err) {
		t.Fatalf("the accepted, allowed call did not delete the note: %v", err)
	}
	if n := strings.Count(r.out.String(), "[d]eny? "); n != 1 {
		t.Errorf("asked %d times, want once:\n%s", n, r.out.String())
	}
	if got := r.auditDecisions("delete-note"); got != "ok/approved/chat:tester" {
		t.Errorf("audit of delete-note: %s", got)
	}
}
