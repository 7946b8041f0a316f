package recommender

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/airs-dev/airs/pipeline"
	"github.com/airs-dev/airs/pipeline/builtin"
	"github.com/airs-dev/airs/selector"
	"github.com/airs-dev/airs/understand"
)

// sessionOutcome is what a scripted session of ordinary use gives when
// every suggestion is accepted (run through the pipeline) except one
// delete, which is denied.
type sessionOutcome struct {
	Suggested, Succeeded int
	Denied               int      // suggestions the user denied instead of accepting
	Failures             []string // tool args: error
	Keys                 []string // every suggestion, in order
	UnaskedDestructive   []string // destructive suggestions no standing ask justified
	RepeatedDenied       int      // suggestions equal to the denied call, after the denial
}

// runScriptedSession plays files arriving in a space, tasks set and
// changed, requests typed, calls made and one delete denied, accepting
// every suggestion as it appears.
func runScriptedSession(t *testing.T) sessionOutcome {
	t.Helper()
	docs, home := t.TempDir(), t.TempDir()
	clk := &clock{t: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)}
	pol := &pipeline.StaticPolicy{
		Channels:     map[string][]string{"*": {"*"}},
		Capabilities: map[string][]pipeline.Capability{"alice": {{Kind: "ReadSpace", Arg: "documents"}, {Kind: "WriteSpace", Arg: "documents"}}},
	}
	reg := pipeline.NewRegistry(pipeline.RegistryConfig{})
	if err := builtin.Register(reg, builtin.Options{Spaces: map[string]string{"documents": docs}, Policy: pol}); err != nil {
		t.Fatal(err)
	}
	m, err := pipeline.NewManager(pipeline.Config{Registry: reg, Policy: pol})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	r, err := New(Config{Catalog: &selector.RegistryCatalog{Registry: reg, Policy: pol}, Validate: m.Validate,
		Spaces: []string{"documents"}, Home: home, Now: clk.Now,
		FileExists: func(space, rel string) bool {
			_, err := os.Stat(filepath.Join(docs, rel))
			return space == "documents" && err == nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })

	var out sessionOutcome
	var curTask, lastTurn string // the standing task and the last request, for the destructive check
	var denied string
	seen := map[string]bool{}
	arrive := func(rel, body string) {
		p := filepath.Join(docs, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		r.ObserveFile(FileEvent{Space: "documents", Rel: rel, Op: "create"})
	}
	call := func(tool string, args json.RawMessage) error {
		start := clk.Now()
		_, err := m.Call(t.Context(), pipeline.Request{Tool: tool, Params: args, Caller: "alice"})
		o := pipeline.OutcomeOK
		if err != nil {
			o = pipeline.OutcomeError
		}
		r.ObserveCall(pipeline.CallEvent{Caller: "alice", Tool: tool, Outcome: o, At: start, Params: args})
		clk.Advance(time.Minute)
		return err
	}
	// accept takes every suggestion not taken before; the first delete
	// suggested is denied instead.
	accept := func() {
		for _, rec := range r.List("alice") {
			key := rec.Tool + " " + string(rec.Arguments)
			if denied != "" && key == denied {
				out.RepeatedDenied++
			}
			// Checked at every listing: a destructive suggestion must go
			// when the ask that justified it does.
			if rec.Destructive && !asks(curTask) && !asks(lastTurn) {
				out.UnaskedDestructive = append(out.UnaskedDestructive, key)
			}
			if seen[key] {
				continue
			}
			seen[key] = true
			out.Suggested++
			out.Keys = append(out.Keys, key)
			if rec.Destructive && denied == "" {
				denied = key
				r.Denied("alice", rec.Tool, rec.Arguments)
				out.Denied++
				continue
			}
			if _, err := r.Accept("alice", rec.ID); err != nil {
				t.Fatalf("accepting %s: %v", key, err)
			}
			if err := call(rec.Tool, rec.Arguments); err != nil {
				out.Failures = append(out.Failures, key+": "+err.Error())
				continue
			}
			out.Succeeded++
		}
	}
	turn := func(text string) {
		lastTurn = text
		r.ObserveTurn("alice", text)
		accept()
	}
	task := func(text string) {
		curTask = text
		if err := r.SetTask("alice", text); err != nil {
			t.Fatal(err)
		}
		accept()
	}

	r.Known("alice")
	arrive("notes/meeting-notes.md", "# Monday\nship the release\n")
	accept()
	arrive("report.txt", "quarterly report: revenue up\n")
	accept()
	task("summarize the quarterly report")
	turn("what is 12 * 7")
	turn("what does report.txt say")
	if err := call("list-files", json.RawMessage(`{"space":"documents"}`)); err != nil {
		t.Fatal(err)
	}
	accept()
	arrive("drafts/old-draft.txt", "an old draft\n")
	accept()
	task("compare report.txt and notes/meeting-notes.md")
	turn("read the meeting notes")
	task("clean up: delete drafts/old-draft.txt in documents")
	turn("please delete drafts/old-draft.txt")
	arrive("budget.csv", "item,amount\nrent,900\n")
	task("plan the budget")
	turn("sum 900 and 250")
	arrive("letter.txt", "dear reader\n")
	accept()
	turn("list the files in documents")
	arrive("notes/standup.md", "# Tuesday\nfix the login bug\n")
	accept()
	task("summarize the standup notes")
	turn("what is 15% of 80")
	arrive("recipes/soup.txt", "leek and potato\n")
	accept()
	turn("read recipes/soup.txt")
	task("delete letter.txt in documents")
	turn("what is the square root of 144")
	arrive("contracts/lease-2024.txt", "the lease\n")
	accept()
	task("read the lease")
	return out
}

// asks reports whether a text explicitly asks to delete or move something.
func asks(text string) bool {
	return text != "" && understand.Parse(text, understand.Env{}).ExplicitDestructive
}

// TestScriptedSessionSuggestionsWork: in a session of ordinary use where
// every suggestion is accepted, at least 95% of them succeed, none is
// destructive without a standing explicit ask, and the denied call is not
// suggested again.
func TestScriptedSessionSuggestionsWork(t *testing.T) {
	o := runScriptedSession(t)
	t.Logf("suggestions:\n%s", strings.Join(o.Keys, "\n"))
	t.Logf("suggested %d, denied %d, accepted and succeeded %d, unasked destructive %d, denied repeated %d", o.Suggested, o.Denied, o.Succeeded, len(o.UnaskedDestructive), o.RepeatedDenied)
	if o.Suggested < 10 {
		t.Fatalf("only %d suggestions in the session: too few to measure", o.Suggested)
	}
	if o.Denied != 1 {
		t.Errorf("%d suggestions denied, want the script's one delete", o.Denied)
	}
	accepted := o.Suggested - o.Denied
	if rate := float64(o.Succeeded) / float64(accepted); rate < 0.95 {
		t.Errorf("%d of %d accepted suggestions succeeded (%.3f), goal ≥ 0.95; failed:\n%s", o.Succeeded, accepted, rate, strings.Join(o.Failures, "\n"))
	}
	if len(o.UnaskedDestructive) > 0 {
		t.Errorf("destructive suggestions without an explicit ask: %v", o.UnaskedDestructive)
	}
	if o.RepeatedDenied > 0 {
		t.Errorf("the denied call was suggested again %d times", o.RepeatedDenied)
	}
}
