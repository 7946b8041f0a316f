package chat

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/airs-dev/airs/internal/demodata"
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
	deadline := time.Now().Add(2 * time.Second)
	for {
		if recs := r.eng.Recommender().List("tester"); len(recs) > 0 && recs[0].Tool == "pdf-extract" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no pdf-extract suggestion within 2 s of the file landing: %+v (watcher %+v)", r.eng.Recommender().List("tester"), r.eng.WatchStats())
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
