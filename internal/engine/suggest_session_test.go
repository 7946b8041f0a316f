package engine

import (
	"context"
	"encoding/json"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/airs-dev/airs/internal/demodata"
	"github.com/airs-dev/airs/pipeline"
	"github.com/airs-dev/airs/recommender"
	"github.com/airs-dev/airs/understand"
)

// demoSession is what a scripted session of ordinary use over the engine's
// recommender gives when every suggestion is accepted, except the first
// delete, which is denied.
type demoSession struct {
	Keys               []string // every suggestion, in order
	Denied             int
	Accepted           int
	Succeeded          int      // ran without error, every argument of its type
	Failures           []string // suggestion: why it failed or made no sense
	UnaskedDestructive []string
	RepeatedDenied     int
	// RepeatsMade: suggestions of a call the session made since the last
	// file arrived, in other words (the same tool, no argument of another
	// value): a step the person just saw.
	RepeatsMade []string
}

// runDemoSession plays the session the demo home invites: the demo quotes
// and papers and a few notes in documents, requests typed as people type
// them (an off-topic question naming two cities, a comparison, a reading
// of a paper described loosely, arithmetic in words, a pasted text to
// summarize, deletions asked for), tasks set and changed, one call made
// by hand, new files arriving. Suggestions come from the engine's own
// recommender (its understanding of the caller's files included); an
// accepted one runs through a pipeline over the same tools. A suggestion
// succeeds when its call runs without error and each argument is a value
// of its type: a text argument is a text the person gave, never a word of
// a request; a file goes to the reader of its type.
func runDemoSession(t *testing.T) demoSession {
	t.Helper()
	dir := t.TempDir()
	docs := filepath.Join(dir, "docs")
	if err := demodata.Write(docs); err != nil {
		t.Fatal(err)
	}
	write := func(rel, body string) {
		p := filepath.Join(docs, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("meeting-notes.md", "# Monday\n- ship v2 on Friday\n- Bob owns the docs\n")
	write("draft.txt", "Draft report: sales rose 5%.\n")
	write("final.txt", "Final report: sales rose 7%.\n")
	write("todo.txt", "buy milk\ncall the landlord\n")
	// The session runs in well under a minute: the per-minute limit would
	// hold back suggestions a person spread over an hour would get.
	yaml := "home: ./state\nspaces:\n  documents: ./docs\nagents:\n  alice: {capabilities: [\"ReadSpace(documents)\", \"WriteSpace(documents)\"]}\nrecommend: {per_minute: 1000}\n"
	built := testEngine(t, writeConfig(t, dir, yaml), testBuild{opts: Options{Channel: "chat", Model: "none"}})
	e := built.Engine
	// Accepted calls run through a second Manager over the same tools, so
	// that the engine's recommender hears of each call once, here, in
	// order (the engine's own Manager would tell it asynchronously).
	run, err := pipeline.NewManager(pipeline.Config{Registry: built.reg, Policy: built.policy})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { run.Close() })
	r := e.recommender
	if r == nil {
		t.Fatal("the engine has no recommender")
	}
	const who = "alice"
	var out demoSession
	var task, turn, denied string
	given := map[string]bool{} // texts the person gave to work on
	seen := map[string]bool{}
	var made []pipeline.Request // the calls made since the last file arrived
	call := func(tool string, args json.RawMessage) error {
		made = append(made, pipeline.Request{Tool: tool, Params: args})
		_, err := run.Call(t.Context(), pipeline.Request{Tool: tool, Params: args, Caller: who})
		o := pipeline.OutcomeOK
		if err != nil {
			o = pipeline.OutcomeError
		}
		r.ObserveCall(pipeline.CallEvent{Caller: who, Tool: tool, Outcome: o, Params: args})
		return err
	}
	asks := func(s string) bool { return s != "" && understand.ParsePlain(s).ExplicitDestructive }
	repeatsMade := func(rec recommender.Recommendation) bool {
		var args map[string]any
		if json.Unmarshal(rec.Arguments, &args) != nil {
			return false
		}
		return slices.ContainsFunc(made, func(m pipeline.Request) bool {
			var margs map[string]any
			if m.Tool != rec.Tool || json.Unmarshal(m.Params, &margs) != nil {
				return false
			}
			for k, v := range args {
				if w, ok := margs[k]; ok && !reflect.DeepEqual(v, w) {
					return false
				}
			}
			return true
		})
	}
	accept := func() {
		for _, rec := range r.List(who) {
			key := rec.Tool + " " + string(rec.Arguments)
			if repeatsMade(rec) {
				out.RepeatsMade = append(out.RepeatsMade, key)
			}
			if denied != "" && key == denied {
				out.RepeatedDenied++
			}
			if rec.Destructive && !asks(task) && !asks(turn) {
				out.UnaskedDestructive = append(out.UnaskedDestructive, key)
			}
			if seen[key] {
				continue
			}
			seen[key] = true
			out.Keys = append(out.Keys, key)
			if rec.Destructive && denied == "" {
				denied = key
				r.Denied(who, rec.Tool, rec.Arguments)
				out.Denied++
				continue
			}
			if _, err := r.Accept(who, rec.ID); err != nil {
				t.Fatalf("accepting %s: %v", key, err)
			}
			out.Accepted++
			if why := nonsense(rec, given); why != "" {
				out.Failures = append(out.Failures, key+": "+why)
				continue
			}
			if err := call(rec.Tool, rec.Arguments); err != nil {
				out.Failures = append(out.Failures, key+": "+err.Error())
				continue
			}
			out.Succeeded++
		}
	}
	arrive := func(rel string) {
		made = nil
		// As the watcher does: the file-name index first, then the event.
		e.noteFile("documents", rel, false)
		r.ObserveFile(recommender.FileEvent{Space: "documents", Rel: rel, Op: "create"})
		accept()
	}
	say := func(text string) {
		turn = text
		if b := understand.ParsePlain(text).Body; b != "" {
			given[b] = true
		}
		r.ObserveTurn(who, text)
		accept()
	}
	// plan runs a request of several parts as airs chat does (a no-LLM
	// plan through the engine's own pipeline).
	plan := func(text string) {
		turn = text
		tr, err := e.Turn(t.Context(), who, text, &recUI{}, TurnOptions{})
		if err != nil || len(tr.Steps) < 2 {
			t.Fatalf("%q: %v, %d steps", text, err, len(tr.Steps))
		}
		for _, st := range tr.Steps {
			if st.Selection != nil && !strings.Contains(string(st.Selection.Arguments), "{{") {
				made = append(made, pipeline.Request{Tool: st.Selection.Function, Params: st.Selection.Arguments})
			}
		}
		accept()
	}
	setTask := func(text string) {
		task = text
		if err := r.SetTask(who, text); err != nil {
			t.Fatal(err)
		}
		accept()
	}

	r.Known(who)
	for _, f := range []string{"quotes/acme-2024.pdf", "quotes/acme-2025.pdf", "papers/attention.pdf", "meeting-notes.md", "draft.txt"} {
		arrive(f)
	}
	say("what is the capital of France? Paris")
	say("compare the two acme quotes")
	setTask("summarize the papers in my documents")
	say("read the attention paper")
	say("what's 12% of 350")
	if err := call("list-files", json.RawMessage(`{"space":"documents"}`)); err != nil {
		t.Fatal(err)
	}
	accept()
	say("list my documents")
	setTask("clean up: delete draft.txt")
	say("please delete draft.txt")
	say("summarize this: The bus was late again. I missed the meeting with the acme people and we moved it to Friday.")
	setTask("compare draft.txt and final.txt")
	say("what does final.txt say")
	plan("find the PDFs in documents, then summarize them")
	write("notes/standup.md", "# Tuesday\nfix the login bug\n")
	arrive("notes/standup.md")
	if err := demodata.WritePDF(filepath.Join(docs, "invoices", "invoice-7.pdf"), []string{"Invoice 7", "Total 99 EUR"}); err != nil {
		t.Fatal(err)
	}
	arrive("invoices/invoice-7.pdf")
	say("extract the text of the 2025 acme quote")
	setTask("delete todo.txt")
	say("square root of 1764")
	say("tell me a joke")
	arrive("final.txt")
	setTask("read the meeting notes")
	return out
}

// nonsense says why a suggestion's arguments are not values of their
// types ("" when they are): a text argument that is no text the person
// gave (a word of a request, a space's name), or a PDF given to read-file.
func nonsense(rec recommender.Recommendation, given map[string]bool) string {
	var args map[string]any
	if err := json.Unmarshal(rec.Arguments, &args); err != nil {
		return err.Error()
	}
	switch rec.Tool {
	case "summarize", "compare":
		for _, k := range []string{"text", "a", "b"} {
			if v, ok := args[k].(string); ok && !given[v] {
				return k + " is no text the person gave"
			}
		}
	case "read-file":
		if p, _ := args["path"].(string); strings.EqualFold(path.Ext(p), ".pdf") {
			return "a PDF is pdf-extract's to read"
		}
	}
	return ""
}

// TestDemoSessionSuggestionsWork: in a session of ordinary use in the demo
// home, with every suggestion accepted, at least 95% succeed (run, with
// every argument of its type), none is destructive without a standing
// explicit ask, the denied call is not suggested again, and nothing the
// session just did (a plan's listing included) is suggested again while
// no file changed.
func TestDemoSessionSuggestionsWork(t *testing.T) {
	o := runDemoSession(t)
	t.Logf("suggestions:\n%s", strings.Join(o.Keys, "\n"))
	t.Logf("suggested %d, denied %d, accepted %d, succeeded %d, unasked destructive %d, denied repeated %d", len(o.Keys), o.Denied, o.Accepted, o.Succeeded, len(o.UnaskedDestructive), o.RepeatedDenied)
	if o.Accepted < 10 {
		t.Fatalf("only %d suggestions accepted in the session: too few to measure", o.Accepted)
	}
	if rate := float64(o.Succeeded) / float64(o.Accepted); rate < 0.95 {
		t.Errorf("%d of %d accepted suggestions succeeded (%.3f), goal ≥ 0.95; failed:\n%s", o.Succeeded, o.Accepted, rate, strings.Join(o.Failures, "\n"))
	}
	if len(o.UnaskedDestructive) > 0 {
		t.Errorf("destructive suggestions without an explicit ask: %v", o.UnaskedDestructive)
	}
	if o.RepeatedDenied > 0 {
		t.Errorf("the denied call was suggested again %d times", o.RepeatedDenied)
	}
	if len(o.RepeatsMade) > 0 {
		t.Errorf("suggested again what the session just did, with no file changed since: %v", o.RepeatsMade)
	}
}

// TestTurnsCallIsNoSuggestion: when a turn ends, the call it made is not
// among the suggestions the channel shows next (the pipeline's event of
// the call reaches the recommender later; the engine tells it at once).
func TestTurnsCallIsNoSuggestion(t *testing.T) {
	e, _ := newTurnEngine(t)
	for _, q := range []string{"what's 250 divided by 4", "summarize this: the bus was late again and I missed the meeting with the acme people."} {
		tr, err := e.Turn(context.Background(), "web", q, &recUI{}, TurnOptions{})
		if err != nil || !tr.Ran() {
			t.Fatalf("%q: %v", q, err)
		}
		sel := tr.First().Selection
		for _, rec := range e.recommender.List("web") {
			if rec.Tool == sel.Function && compact(rec.Arguments) == compact(sel.Arguments) {
				t.Errorf("%q: the call just made is suggested: %s %s", q, rec.Tool, rec.Arguments)
			}
		}
	}
}

// TestTurnReferents: "summarize it", "extract them" after a turn that
// worked on files are about those files (said in a note); a request that
// names its own file, or asks about "it" ("is it …"), is left alone.
func TestTurnReferents(t *testing.T) {
	e, _ := newTurnEngine(t)
	ctx := context.Background()
	tools := func(tr *TurnResult) []string {
		var out []string
		for _, s := range tr.Steps {
			if s.Selection != nil {
				out = append(out, s.Selection.Function+" "+compact(s.Selection.Arguments))
			}
		}
		return out
	}
	if _, err := e.Turn(ctx, "web", "extract the text of quotes/acme-2024.pdf", &recUI{}, TurnOptions{}); err != nil {
		t.Fatal(err)
	}
	ui := &recUI{}
	tr, err := e.Turn(ctx, "web", "summarize it", ui, TurnOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{`pdf-extract {"path":"quotes/acme-2024.pdf","space":"documents"}`, `summarize {"text":"{{steps.s1.output.text}}"}`}
	if got := tools(tr); !slices.Equal(got, want) || !strings.Contains(ui.String(), `"summarize it" read as "summarize quotes/acme-2024.pdf"`) {
		t.Errorf("summarize it: %v\n%s", got, ui)
	}
	if got, note := e.Referents("web", "what is it about"); got != "what is quotes/acme-2024.pdf about" || note == "" {
		t.Errorf("what is it about: %q", got)
	}
	if _, err := e.Turn(ctx, "web", "compare the two acme quotes", &recUI{}, TurnOptions{}); err != nil {
		t.Fatal(err)
	}
	tr, err = e.Turn(ctx, "web", "extract them", &recUI{}, TurnOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want = []string{`pdf-extract {"path":"quotes/acme-2024.pdf","space":"documents"}`, `pdf-extract {"path":"quotes/acme-2025.pdf","space":"documents"}`}
	if got := tools(tr); !slices.Equal(got, want) {
		t.Errorf("extract them: %v", got)
	}
	for _, q := range []string{"is it long", "extract the text of papers/bm25.pdf", "what's 12 times 3", "find the PDFs in documents, then summarize them", "list the pdfs and summarize them"} {
		if got, note := e.Referents("web", q); got != q || note != "" {
			t.Errorf("%q rewritten as %q", q, got)
		}
	}
}
