package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/airs-dev/airs/config"
	"github.com/airs-dev/airs/grammar"
	"github.com/airs-dev/airs/guard"
	"github.com/airs-dev/airs/internal/demodata"
	"github.com/airs-dev/airs/internal/ollama"
	"github.com/airs-dev/airs/model/ollamamodel"
	"github.com/airs-dev/airs/pipeline"
	"github.com/airs-dev/airs/selector"
	"github.com/airs-dev/airs/session"
)

// newTurnEngine is the real engine over the builtin tools and the demo
// documents (space "documents"), recording on, in no-LLM mode; extra
// tools (provider "test") are registered too.
func newTurnEngine(t *testing.T, extra ...pipeline.Tool) (*Engine, *config.Config) {
	t.Helper()
	return newTurnEngineWith(t, nil, extra...)
}

// newTurnEngineWith is newTurnEngine with g as the Manager's intent gate
// and the engine's guard (none when nil).
func newTurnEngineWith(t *testing.T, g *guard.Guard, extra ...pipeline.Tool) (*Engine, *config.Config) {
	t.Helper()
	dir := t.TempDir()
	if err := demodata.Write(filepath.Join(dir, "docs")); err != nil {
		t.Fatal(err)
	}
	cfg := writeConfig(t, dir, "home: ./state\nspaces:\n  documents: ./docs\nagents:\n  web: {capabilities: [\"ReadSpace(documents)\"]}\nrecording: {enabled: true}\n")
	register := func(reg *pipeline.Registry) {
		for _, x := range extra {
			h := pipeline.HandlerFunc(func(ctx context.Context, params json.RawMessage, call *pipeline.Call) (json.RawMessage, error) {
				return json.RawMessage(`{"done":true}`), nil
			})
			if err := reg.Register("test", x, h); err != nil {
				t.Fatal(err)
			}
		}
	}
	e := testEngine(t, cfg, testBuild{register: register, gate: g, opts: Options{Channel: "chat", Model: "none"}})
	return e.Engine, cfg
}

// fakeModel is an ollama.Client for the turn loop: a request with a
// format (a selection under the grammar) gets the next of steps, in order,
// streamed in small chunks so the selector's stream check runs as with a
// server; a request without one (the final answer) gets "ANSWER".
type fakeModel struct {
	mu      sync.Mutex
	steps   []string
	selects []ollama.ChatRequest
	answers []ollama.ChatRequest
}

func (f *fakeModel) Chat(ctx context.Context, req ollama.ChatRequest, on func(string) error) (ollama.ChatResponse, error) {
	f.mu.Lock()
	reply := "ANSWER"
	if req.Format != nil {
		f.selects = append(f.selects, req)
		if len(f.steps) == 0 {
			f.mu.Unlock()
			return ollama.ChatResponse{}, fmt.Errorf("fakeModel: no scripted step left for selection %d", len(f.selects))
		}
		reply, f.steps = f.steps[0], f.steps[1:]
	} else {
		f.answers = append(f.answers, req)
	}
	f.mu.Unlock()
	var resp ollama.ChatResponse
	for i := 0; i < len(reply); i += 4 {
		c := reply[i:min(i+4, len(reply))]
		resp.Content += c
		if err := on(c); err != nil {
			return resp, err
		}
	}
	resp.Done = true
	return resp, nil
}
func (f *fakeModel) Embed(context.Context, string, []string) ([][]float32, error) {
	return nil, ollama.ErrUnavailable
}
func (f *fakeModel) Ping(context.Context) error               { return nil }
func (f *fakeModel) Version(context.Context) (string, error)  { return "fake", nil }
func (f *fakeModel) Models(context.Context) ([]string, error) { return []string{"fake"}, nil }

// withModel makes e select and answer with m.
func withModel(e *Engine, m ollama.Client) {
	e.model, e.modelName = ollamamodel.New(m), "fake"
	e.sel.Model, e.sel.Config.Model = ollamamodel.New(m), "fake"
}

// recUI records what a turn showed, in order; Confirm answers confirm.
type recUI struct {
	mu      sync.Mutex
	confirm bool
	events  []string
	asked   []string
	callIDs []string
}

func (u *recUI) add(s string)    { u.mu.Lock(); u.events = append(u.events, s); u.mu.Unlock() }
func (u *recUI) Step(n, max int) { u.add(fmt.Sprintf("step %d/%d", n, max)) }
func (u *recUI) Selected(sel *selector.Selection, tool *pipeline.Tool) {
	u.add("selected " + sel.Function)
}
func (u *recUI) Confirm(ctx context.Context, tool pipeline.Tool, args json.RawMessage) bool {
	u.mu.Lock()
	u.asked = append(u.asked, tool.Name)
	u.mu.Unlock()
	u.add("confirm " + tool.Name)
	return u.confirm
}
func (u *recUI) Running(id string) {
	u.mu.Lock()
	u.callIDs = append(u.callIDs, id)
	u.mu.Unlock()
	u.add("running")
}
func (u *recUI) Result(res *pipeline.Result, err error) {
	u.add(fmt.Sprintf("result %s %s", res.Tool, pipeline.KindOf(err)))
}
func (u *recUI) Note(msg string)          { u.add("note " + msg) }
func (u *recUI) Token(chunk string) error { return nil }
func (u *recUI) String() string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return strings.Join(u.events, "\n")
}

func call(tool, args string) string { return `{"function":"` + tool + `","arguments":` + args + `}` }

const noneCall = `{"function":"none","arguments":{}}`

// lastRecord is the turn's session record.
func lastRecord(t *testing.T, cfg *config.Config) session.Record {
	t.Helper()
	recs, err := session.ReadFile(filepath.Join(cfg.Home, "sessions", "sessions.jsonl"))
	if err != nil || len(recs) == 0 {
		t.Fatalf("session log: %v, %d records", err, len(recs))
	}
	return recs[len(recs)-1]
}

// audited checks that every call ID is in the audit log: the call went
// through the pipeline.
func audited(t *testing.T, cfg *config.Config, ids []string) {
	t.Helper()
	raw, err := os.ReadFile(cfg.AuditPath())
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		if !strings.Contains(string(raw), id) {
			t.Errorf("call %s is not in the audit log: it did not go through the pipeline", id)
		}
	}
}

// A model that never says "none" is stopped at max_steps, with a note; every
// call ran through the pipeline; the answer is written from every result.
func TestTurnStopsAtMaxSteps(t *testing.T) {
	e, cfg := newTurnEngine(t)
	m := &fakeModel{steps: []string{
		call("calculator", `{"expression":"1+1"}`),
		call("calculator", `{"expression":"2+2"}`),
		call("calculator", `{"expression":"3+3"}`),
		call("calculator", `{"expression":"4+4"}`),
	}}
	withModel(e, m)
	e.stepLimit = 3
	ui := &recUI{}
	tr, err := e.Turn(context.Background(), "web", "add numbers again and again", ui, TurnOptions{Session: "s"})
	if err != nil {
		t.Fatal(err)
	}
	if tr.Calls() != 3 || len(m.selects) != 3 {
		t.Fatalf("%d calls after %d selections, want 3 and 3 (max_steps); UI:\n%s", tr.Calls(), len(m.selects), ui)
	}
	if !strings.Contains(tr.Stopped, "max_steps (3 tool calls") || !strings.Contains(ui.String(), "note stopped at max_steps (3 tool calls") {
		t.Errorf("no clear note at the limit: %q\n%s", tr.Stopped, ui)
	}
	want := "selected calculator\nrunning\nresult calculator \nstep 2/3\nselected calculator\nrunning\nresult calculator \nstep 3/3\nselected calculator\nrunning\nresult calculator "
	if !strings.HasPrefix(ui.String(), want) {
		t.Errorf("UI events:\n%s\nwant a prefix:\n%s", ui, want)
	}
	for i, st := range tr.Steps {
		if st.Result == nil || st.CallErr != nil || st.Selection.Validation != "ok" {
			t.Errorf("step %d: %+v", i+1, st)
		}
	}
	audited(t, cfg, ui.callIDs)
	if len(m.answers) != 1 {
		t.Fatalf("%d answers, want 1", len(m.answers))
	}
	user := m.answers[0].Messages[1].Content
	for _, want := range []string{"Call 1: calculator", "Call 3: calculator", `"result":2`, `"result":6`} {
		if !strings.Contains(user, want) {
			t.Errorf("the answer's prompt lacks %q:\n%s", want, user)
		}
	}
	// The third selection saw both earlier calls and their results.
	third := m.selects[2].Messages
	if len(third) != 6 || !strings.Contains(third[3].Content, `"result":2`) || !strings.Contains(third[5].Content, `"result":4`) {
		t.Errorf("step 3's prompt: %+v", third)
	}
	rec := lastRecord(t, cfg)
	if len(rec.TurnSteps) != 3 || rec.Call == nil || rec.Call.Tool != "calculator" {
		t.Fatalf("record: call %+v, %d turn steps", rec.Call, len(rec.TurnSteps))
	}
	for i, st := range rec.TurnSteps {
		if st.Step != i+1 || st.Call == nil || st.Execution == nil || st.Execution.Outcome != session.OutcomeOK || !st.Validation.Valid || st.RawOutput == "" {
			t.Errorf("recorded step %d: %+v", i+1, st)
		}
	}
	if !strings.Contains(rec.TurnSteps[2].Note, "max_steps") || rec.TurnSteps[2].Call.Arguments["expression"] != "3+3" {
		t.Errorf("last recorded step: %+v", rec.TurnSteps[2])
	}
}

// The model ends the turn with "none": no further call, no note, the answer
// from the results; the steps are recorded with the final "none".
func TestTurnStopsAtNone(t *testing.T) {
	e, cfg := newTurnEngine(t)
	m := &fakeModel{steps: []string{
		call("pdf-extract", `{"space":"documents","path":"quotes/acme-2024.pdf"}`),
		call("calculator", `{"expression":"10*12"}`),
		noneCall,
	}}
	withModel(e, m)
	ui := &recUI{}
	tr, err := e.Turn(context.Background(), "web", "read the 2024 quote then compute a year of the basic plan", ui, TurnOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if tr.Calls() != 2 || len(tr.Steps) != 3 || tr.Steps[2].Selection.Function != grammar.NoneTool || tr.Stopped != "" || tr.Answer != "ANSWER" {
		t.Fatalf("calls %d, steps %d, stopped %q, answer %q\n%s", tr.Calls(), len(tr.Steps), tr.Stopped, tr.Answer, ui)
	}
	if strings.Contains(ui.String(), "note") {
		t.Errorf("a note on a turn the model ended:\n%s", ui)
	}
	// Step 2 saw the PDF's text.
	if msgs := m.selects[1].Messages; !strings.Contains(msgs[len(msgs)-1].Content, "Starter plan: $10") {
		t.Errorf("step 2 was not shown step 1's result: %q", msgs[len(msgs)-1].Content)
	}
	audited(t, cfg, ui.callIDs)
	rec := lastRecord(t, cfg)
	if len(rec.TurnSteps) != 3 || rec.TurnSteps[2].Call != nil || rec.TurnSteps[2].RawOutput != noneCall || rec.TurnSteps[1].Call.Tool != "calculator" {
		t.Errorf("recorded steps: %+v", rec.TurnSteps)
	}
}

// Every step is validated: a later call that stays invalid after the
// repair attempt does not run, and the turn stops there with a note.
func TestTurnValidatesEveryStep(t *testing.T) {
	e, cfg := newTurnEngine(t)
	m := &fakeModel{steps: []string{
		call("calculator", `{"expression":"1+1"}`),
		call("calculator", `{"expression":""}`), // minLength 1
		call("calculator", `{"expression":""}`), // the repair fails too
	}}
	withModel(e, m)
	ui := &recUI{}
	tr, err := e.Turn(context.Background(), "web", "add then add", ui, TurnOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if tr.Calls() != 1 || len(tr.Steps) != 2 || tr.Steps[1].Result != nil || !strings.Contains(tr.Steps[1].Skipped, "invalid") {
		t.Fatalf("calls %d steps %+v\n%s", tr.Calls(), tr.Steps, ui)
	}
	if !strings.Contains(tr.Stopped, "step 2 not run") || !strings.Contains(ui.String(), "note step 2 not run: the model's call is invalid") {
		t.Errorf("stopped %q\n%s", tr.Stopped, ui)
	}
	if len(ui.callIDs) != 1 || tr.Answer != "ANSWER" {
		t.Errorf("ran %d calls, answer %q", len(ui.callIDs), tr.Answer)
	}
	rec := lastRecord(t, cfg)
	if len(rec.TurnSteps) != 2 || rec.TurnSteps[1].Validation.Valid || rec.TurnSteps[1].Execution.Outcome != session.OutcomeSkipped {
		t.Errorf("recorded steps: %+v", rec.TurnSteps)
	}
}

// A later call of a destructive tool is confirmed like the
// first: declined, it does not run; confirmed, it does.
func TestTurnConfirmsLaterSteps(t *testing.T) {
	post := pipeline.Tool{Name: "post-note", Version: "1.0.0", Description: "Post a note to the team board.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string","minLength":1,"maxLength":100}},"required":["text"],"additionalProperties":false}`), Destructive: true}
	for _, confirm := range []bool{false, true} {
		t.Run(fmt.Sprint("confirm=", confirm), func(t *testing.T) {
			e, cfg := newTurnEngine(t, post)
			m := &fakeModel{steps: []string{call("calculator", `{"expression":"6*7"}`), call("post-note", `{"text":"42"}`), noneCall}}
			withModel(e, m)
			ui := &recUI{confirm: confirm}
			tr, err := e.Turn(context.Background(), "web", "compute 6*7 then post it to the board", ui, TurnOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if len(ui.asked) != 1 || ui.asked[0] != "post-note" {
				t.Fatalf("asked %v\n%s", ui.asked, ui)
			}
			if !confirm {
				if tr.Calls() != 1 || !strings.Contains(tr.Stopped, "declined") || len(m.selects) != 2 {
					t.Errorf("declined: calls %d stopped %q selections %d", tr.Calls(), tr.Stopped, len(m.selects))
				}
				return
			}
			if tr.Calls() != 2 || tr.Steps[1].Result.Tool != "post-note" || tr.Stopped != "" {
				t.Errorf("confirmed: calls %d stopped %q", tr.Calls(), tr.Stopped)
			}
			audited(t, cfg, ui.callIDs)
		})
	}
}

// The same idempotent call again only shows the model what it saw: the
// turn stops there.
func TestTurnStopsOnRepeat(t *testing.T) {
	e, _ := newTurnEngine(t)
	m := &fakeModel{steps: []string{call("calculator", `{"expression":"1+1"}`), call("calculator", `{"expression": "1+1"}`)}}
	withModel(e, m)
	ui := &recUI{}
	tr, _ := e.Turn(context.Background(), "web", "add", ui, TurnOptions{})
	if tr.Calls() != 1 || !strings.Contains(tr.Stopped, "step 1's call again") {
		t.Errorf("calls %d stopped %q\n%s", tr.Calls(), tr.Stopped, ui)
	}
}

// TurnOptions.MaxSteps 1 is one call per request: no second selection.
func TestTurnOneStep(t *testing.T) {
	e, cfg := newTurnEngine(t)
	m := &fakeModel{steps: []string{call("calculator", `{"expression":"1+1"}`)}}
	withModel(e, m)
	ui := &recUI{}
	tr, err := e.Turn(context.Background(), "web", "add", ui, TurnOptions{MaxSteps: 1})
	if err != nil || tr.Calls() != 1 || len(m.selects) != 1 || tr.Stopped != "" || strings.Contains(ui.String(), "note") {
		t.Errorf("err %v calls %d selections %d stopped %q\n%s", err, tr.Calls(), len(m.selects), tr.Stopped, ui)
	}
	if rec := lastRecord(t, cfg); len(rec.TurnSteps) != 0 {
		t.Errorf("a one-step turn recorded turn_steps: %+v", rec.TurnSteps)
	}
}

// In no-LLM mode a request of several parts runs as a plan through chains:
// each step shown, each call through the pipeline, the run recorded.
func TestNoLLMPlanTurn(t *testing.T) {
	e, cfg := newTurnEngine(t)
	ui := &recUI{}
	tr, err := e.Turn(context.Background(), "web", "extract the text of quotes/acme-2024.pdf then summarize it", ui, TurnOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if tr.Run == nil || len(tr.Steps) != 2 || tr.Calls() != 2 || tr.Stopped != "" {
		t.Fatalf("run %v steps %d calls %d stopped %q\n%s", tr.Run != nil, len(tr.Steps), tr.Calls(), tr.Stopped, ui)
	}
	want := "note the request runs as a plan of 2 steps, each call through the pipeline\nselected pdf-extract\nstep 2/2\nselected summarize\nrunning\nresult pdf-extract \nrunning\nresult summarize "
	if ui.String() != want {
		t.Errorf("UI:\n%s\nwant:\n%s", ui, want)
	}
	var sum struct{ Summary string }
	if err := json.Unmarshal(tr.Steps[1].Result.Output, &sum); err != nil || !strings.Contains(sum.Summary, "$") {
		t.Errorf("the summary is not of the PDF's text: %s (%v)", tr.Steps[1].Result.Output, err)
	}
	audited(t, cfg, ui.callIDs)
	rec := lastRecord(t, cfg)
	if rec.Call != nil || len(rec.Steps) != 2 || rec.Steps[1].Arguments["text"] != "{{steps.s1.output.text}}" || len(rec.TurnSteps) != 2 ||
		rec.Execution.Outcome != session.OutcomeOK || rec.TurnSteps[1].Execution.Outcome != session.OutcomeOK {
		t.Errorf("record: call %+v steps %+v turn steps %+v execution %+v", rec.Call, rec.Steps, rec.TurnSteps, rec.Execution)
	}

	// A listing, a bridging step the words did not name (pdf-extract),
	// and a summary of each.
	ui = &recUI{}
	tr, err = e.Turn(context.Background(), "web", "find the PDFs in documents recursively, then summarize them", ui, TurnOptions{})
	if err != nil || tr.Run == nil {
		t.Fatalf("%v\n%s", err, ui)
	}
	var tools []string
	for _, s := range tr.Steps {
		tools = append(tools, s.Selection.Function)
	}
	if strings.Join(tools, ",") != "list-files,pdf-extract,summarize" {
		t.Fatalf("steps %v", tools)
	}
	var sums []struct{ Summary string }
	if err := json.Unmarshal(tr.Run.Output, &sums); err != nil || len(sums) != 5 {
		t.Fatalf("want a summary of each of the 5 PDFs: %s (%v)", tr.Run.Output, err)
	}
	if n := strings.Count(ui.String(), "running"); n != 11 {
		t.Errorf("%d calls shown, want 11 (1 listing, 5 extracts, 5 summaries)", n)
	}

	// max_steps cuts the plan with a note.
	ui = &recUI{}
	tr, _ = e.Turn(context.Background(), "web", "find the PDFs in documents recursively, then summarize them", ui, TurnOptions{MaxSteps: 2})
	if tr.Run == nil || len(tr.Steps) != 2 || !strings.Contains(tr.Stopped, "max_steps (2)") || !strings.Contains(ui.String(), "note the plan has 3 steps, more than max_steps (2)") {
		t.Errorf("steps %d stopped %q\n%s", len(tr.Steps), tr.Stopped, ui)
	}

	// A foreach over nothing is said, not passed over in silence.
	ui = &recUI{}
	tr, _ = e.Turn(context.Background(), "web", "list the pdf files in documents, then summarize them", ui, TurnOptions{})
	if tr.Run == nil || !strings.Contains(ui.String(), "note step 2 (pdf-extract) ran for no element: {{steps.s1.output.files}} is empty") {
		t.Errorf("empty foreach:\n%s", ui)
	}

	// A part no tool serves: one call for the request, and a note saying
	// which part could not be planned.
	ui = &recUI{}
	tr, _ = e.Turn(context.Background(), "web", "compute 2+3 then tell me a joke", ui, TurnOptions{})
	if tr.Run != nil || tr.Calls() != 1 || !strings.Contains(ui.String(), `could not plan part 2 ("tell me a joke")`) {
		t.Errorf("unplannable part: run %v calls %d\n%s", tr.Run != nil, tr.Calls(), ui)
	}

	// /v1/plan and `airs plan` give the same plan without running it.
	pr, err := e.Plan(context.Background(), "web", "extract the text of quotes/acme-2024.pdf then summarize it")
	if err != nil || pr.Chain == nil || strings.Join(pr.Outline, ",") != "pdf-extract,summarize" {
		t.Errorf("Plan: %v %+v", err, pr)
	}

	// One part: one call, no plan.
	ui = &recUI{}
	tr, _ = e.Turn(context.Background(), "web", "what is 2+3", ui, TurnOptions{})
	if tr.Run != nil || tr.Calls() != 1 || ui.String() != "selected calculator\nrunning\nresult calculator " {
		t.Errorf("one part: run %v calls %d\n%s", tr.Run != nil, tr.Calls(), ui)
	}
}

// blockingModel selects once, then blocks the next selection until its
// context ends.
type blockingModel struct {
	fakeModel
	entered chan struct{}
}

func (b *blockingModel) Chat(ctx context.Context, req ollama.ChatRequest, on func(string) error) (ollama.ChatResponse, error) {
	b.mu.Lock()
	n := len(b.selects)
	b.mu.Unlock()
	if req.Format != nil && n == 1 {
		close(b.entered)
		<-ctx.Done()
		return ollama.ChatResponse{}, ctx.Err()
	}
	return b.fakeModel.Chat(ctx, req, on)
}

// Cancelling during a later step ends the turn there: no further call, no
// answer, the steps so far recorded.
func TestTurnCancelledMidway(t *testing.T) {
	e, cfg := newTurnEngine(t)
	m := &blockingModel{fakeModel: fakeModel{steps: []string{call("calculator", `{"expression":"1+1"}`)}}, entered: make(chan struct{})}
	withModel(e, m)
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-m.entered; cancel() }()
	ui := &recUI{}
	tr, _ := e.Turn(ctx, "web", "add then add", ui, TurnOptions{})
	if tr.Calls() != 1 || tr.Answer != "" || len(m.answers) != 0 || strings.Contains(ui.String(), "note") {
		t.Errorf("calls %d answer %q answers asked %d\n%s", tr.Calls(), tr.Answer, len(m.answers), ui)
	}
	rec := lastRecord(t, cfg)
	if len(rec.TurnSteps) != 2 || rec.TurnSteps[0].Execution.Outcome != session.OutcomeOK || !strings.Contains(rec.TurnSteps[1].Note, "choosing the next call failed") {
		t.Errorf("recorded steps %+v", rec.TurnSteps)
	}
}
