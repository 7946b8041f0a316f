package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/airs-dev/airs/embeddings"
	"github.com/airs-dev/airs/evals/retrieval"
)

// TestTrainFromSessions: this installation's users say "tally up" for the
// calculator, and corrected AIRS when it chose otherwise. Learning from
// those sessions scores the latest requests before and after, writes the
// adapter beside the index, and a later command's selection uses it.
func TestTrainFromSessions(t *testing.T) {
	e := newEnv(t, "")
	log := filepath.Join(e.dir, "sessions.jsonl")
	var lines []string
	things := []string{"the invoices", "my receipts", "the team's hours", "the grocery bill", "march expenses",
		"the quarterly numbers", "the donations", "travel costs", "the overtime", "the pledges"}
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, th := range things {
		id := fmt.Sprintf("r%02d", i)
		at = at.Add(time.Minute)
		lines = append(lines,
			fmt.Sprintf(`{"v":1,"kind":"request","id":%q,"time":%q,"caller":"tester","request":"tally up %s","call":{"tool":"read-file","arguments":{}}}`, id, at.Format(time.RFC3339), th),
			fmt.Sprintf(`{"v":1,"kind":"feedback","id":"f%s","ref":%q,"time":%q,"feedback":{"verdict":"corrected","corrected":{"tool":"calculator","arguments":{"expression":"1+1"}}}}`, id, id, at.Format(time.RFC3339)))
	}
	// A tool this installation does not offer is skipped, not an error.
	lines = append(lines, `{"v":1,"kind":"request","id":"gone","time":"2026-01-02T00:00:00Z","caller":"tester","request":"tally up the gone","call":{"tool":"gone-tool","arguments":{}},"feedback":{"verdict":"accepted"}}`)
	if err := os.WriteFile(log, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	out := e.run("train", "retrieval", "--from-sessions", log, "--holdout", "0.3", "--json")
	if out.code != 0 {
		t.Fatalf("exit %d: %s %s", out.code, out.stdout, out.stderr)
	}
	var rep struct {
		retrieval.UseReport
		Skipped int    `json:"skipped"`
		Written string `json:"written"`
	}
	if err := json.Unmarshal([]byte(out.stdout), &rep); err != nil {
		t.Fatalf("%v: %s", err, out.stdout)
	}
	if rep.Skipped != 1 || rep.HeldOut != 3 || rep.Train != 7 || rep.Weights == 0 {
		t.Fatalf("report = %+v", rep)
	}
	if rep.Base.Top1 == 1 {
		t.Skip("the base already ranks the calculator first for every 'tally up': nothing to learn")
	}
	if rep.Adapted.Top1 <= rep.Base.Top1 {
		t.Errorf("held-out top-1: base %.3f, adapted %.3f: learning from use did not help (%s)", rep.Base.Top1, rep.Adapted.Top1, out.stdout)
	}
	if _, err := os.Stat(rep.Written); err != nil || filepath.Base(rep.Written) != embeddings.AdapterFile {
		t.Fatalf("adapter %q: %v", rep.Written, err)
	}
	// A later command reads it: the no-LLM selection picks the calculator.
	sel := e.run("select", "tally up the refunds")
	if !strings.Contains(sel.stdout+sel.stderr, "calculator") {
		t.Errorf("select after learning = %d %s %s", sel.code, sel.stdout, sel.stderr)
	}

	// Nothing labelled: a usage error that says how to label.
	empty := filepath.Join(e.dir, "empty.jsonl")
	os.WriteFile(empty, []byte(`{"v":1,"kind":"request","id":"x","time":"2026-01-01T00:00:00Z","caller":"tester","request":"hi"}`+"\n"), 0o644)
	if out := e.run("train", "retrieval", "--from-sessions", empty); out.code == 0 || !strings.Contains(out.stderr, "/accept") {
		t.Errorf("no labels: exit %d %s", out.code, out.stderr)
	}
}
