package chat

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airs-dev/airs/config"
	"github.com/airs-dev/airs/guard"
	"github.com/airs-dev/airs/internal/engine"
	"github.com/airs-dev/airs/internal/ollama"
	"github.com/airs-dev/airs/internal/settings"
	"github.com/airs-dev/airs/model/ollamamodel"
	"github.com/airs-dev/airs/pipeline"
	"github.com/airs-dev/airs/pipeline/audit"
	"github.com/airs-dev/airs/pipeline/builtin"
	"github.com/airs-dev/airs/session"
)

// rig is a real engine (builtin tools, the real Manager with a durable
// audit log, the session recorder, no-LLM mode) over a temp space, plus
// two test tools: delete-note (destructive, really deletes) and slow
// (runs until cancelled, then hands back partial output).
type rig struct {
	t        *testing.T
	dir      string
	docs     string
	home     string
	eng      *engine.Engine
	auditLog *audit.Log
	guard    *guard.Guard
	slowOn   chan struct{} // a value each time slow starts
	wait     time.Duration // expect's timeout (default 15 s)

	in   *io.PipeWriter
	out  *buffer
	ints chan os.Signal
	done chan error
	repl *REPL
}

func newRig(t *testing.T) *rig { return newRigWith(t, "none", nil) }

// newRigWith builds the rig with a model ("none": no-LLM mode) and, when
// register is set, with only the tools it registers instead of the
// builtins and the two test tools; each of engineOpts may add to the
// engine's options, over the rig's registry.
func newRigWith(t *testing.T, model string, register func(r *rig, reg *pipeline.Registry, opts builtin.Options), engineOpts ...func(reg *pipeline.Registry, o *engine.Options)) *rig {
	t.Helper()
	t.Setenv("AIRS_HOME", "")
	dir := t.TempDir()
	r := &rig{t: t, dir: dir, docs: filepath.Join(dir, "docs"), home: filepath.Join(dir, "state"), slowOn: make(chan struct{}, 4)}
	must(t, os.MkdirAll(filepath.Join(r.docs, "notes"), 0o755))
	must(t, os.WriteFile(filepath.Join(r.docs, "notes", "todo.txt"), []byte("buy milk\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(r.docs, "hello.txt"), []byte("hello from the docs space\n"), 0o644))
	big := strings.Repeat("a line of a large report, repeated to make it big.\n", 400) // ~20 KB
	must(t, os.WriteFile(filepath.Join(r.docs, "report.txt"), []byte(big), 0o644))
	yaml := `home: ./state
spaces:
  documents: ./docs
agents:
  tester:
    capabilities: ["ReadSpace(documents)"]
cli:
  users:
    "*": tester
recording:
  enabled: true
  dir: ./sessions
`
	cfgPath := filepath.Join(dir, "airs.yaml")
	must(t, os.WriteFile(cfgPath, []byte(yaml), 0o644))
	cfg, err := config.Parse(cfgPath, []byte(yaml))
	must(t, err)
	must(t, cfg.EnsureHome())

	policy := settings.Policy(cfg)
	reg := pipeline.NewRegistry(pipeline.RegistryConfig{})
	if register != nil {
		register(r, reg, builtin.Options{Spaces: cfg.Spaces, Policy: policy})
	} else {
		r.registerTestTools(reg, builtin.Options{Spaces: cfg.Spaces, Policy: policy})
	}

	log, err := audit.Open(cfg.AuditPath())
	must(t, err)
	r.auditLog = log
	mc := settings.ManagerConfig(cfg)
	mc.Registry, mc.Audit, mc.Policy = reg, log, policy
	mc.CancelGrace = 200 * time.Millisecond
	g, err := guard.New(guard.Config{Dir: cfg.GuardDir()})
	must(t, err)
	r.guard = g
	mc.Gate = g
	m, err := pipeline.NewManager(mc)
	must(t, err)
	opts := engine.Options{Channel: "chat", Model: model, Guard: g}
	for _, f := range engineOpts {
		f(reg, &opts)
	}
	eng, err := engine.New(context.Background(), cfg, reg, m, policy, opts)
	must(t, err)
	r.eng = eng
	t.Cleanup(func() {
		eng.Close()
		m.Close()
		log.Close()
	})
	return r
}

// registerTestTools registers the builtins, delete-note and slow.
func (r *rig) registerTestTools(reg *pipeline.Registry, opts builtin.Options) {
	t := r.t
	must(t, builtin.Register(reg, opts))
	must(t, reg.Register("notes", pipeline.Tool{
		Name: "delete-note", Version: "1.0.0",
		Description: "Delete a note file from the notes folder permanently (remove, erase the note).",
		Parameters:  json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","description":"the note file to delete"}},"required":["path"],"additionalProperties":false}`),
		Trust:       pipeline.TL2, LatencyClass: pipeline.Instant, Idempotent: false, Destructive: true,
	}, pipeline.HandlerFunc(func(ctx context.Context, params json.RawMessage, call *pipeline.Call) (json.RawMessage, error) {
		var p struct{ Path string }
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, err
		}
		if err := os.Remove(filepath.Join(r.docs, "notes", filepath.Base(p.Path))); err != nil {
			return nil, pipeline.Reject("not_found", err.Error())
		}
		return json.Marshal(map[string]string{"deleted": p.Path})
	})))
	must(t, reg.Register("test", pipeline.Tool{
		Name: "slow", Version: "1.0.0",
		Description: "Wait slowly: count seconds one by one for a long time (a slow, long-running wait).",
		Parameters:  json.RawMessage(`{"type":"object","properties":{"seconds":{"type":"integer","minimum":1}},"required":["seconds"]}`),
		Trust:       pipeline.TL2, LatencyClass: pipeline.Slow, Idempotent: true,
	}, pipeline.HandlerFunc(func(ctx context.Context, params json.RawMessage, call *pipeline.Call) (json.RawMessage, error) {
		r.slowOn <- struct{}{}
		ticks := 0
		tk := time.NewTicker(5 * time.Millisecond)
		defer tk.Stop()
		for {
			select {
			case <-tk.C:
				ticks++
			case <-ctx.Done():
				out, _ := json.Marshal(map[string]any{"ticks": ticks, "partial": true})
				return out, ctx.Err()
			}
		}
	})))
}

// start runs the REPL over a pipe; stop ends its input and waits.
func (r *rig) start(opts Options) {
	pr, pw := io.Pipe()
	r.in, r.out, r.ints, r.done = pw, &buffer{}, make(chan os.Signal, 1), make(chan error, 1)
	opts.In, opts.Out, opts.Caller, opts.Interrupts = pr, r.out, "tester", r.ints
	if opts.HistoryFile == "" {
		opts.HistoryFile = filepath.Join(r.home, "chat_history")
	}
	r.repl = New(r.eng, opts)
	go func() { r.done <- r.repl.Run(context.Background()) }()
	r.t.Cleanup(func() { pw.Close() })
}

func (r *rig) stop() {
	r.t.Helper()
	r.in.Close()
	select {
	case err := <-r.done:
		if err != nil {
			r.t.Fatalf("Run: %v", err)
		}
	case <-time.After(10 * time.Second):
		r.t.Fatalf("the REPL did not end at end of input; output:\n%s", r.out)
	}
}

// say types a line.
func (r *rig) say(line string) {
	r.t.Helper()
	if _, err := io.WriteString(r.in, line+"\n"); err != nil {
		r.t.Fatalf("typing %q: %v", line, err)
	}
}

// expect waits until the output after mark contains s and returns the new
// mark (the end of s).
func (r *rig) expect(mark int, s string) int {
	r.t.Helper()
	wait := r.wait
	if wait == 0 {
		wait = 15 * time.Second
	}
	deadline := time.Now().Add(wait)
	for {
		out := r.out.String()
		if i := strings.Index(out[mark:], s); i >= 0 {
			return mark + i + len(s)
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("output never showed %q; after the mark it is:\n%s", s, out[mark:])
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (r *rig) auditTools() map[string][]string {
	r.t.Helper()
	recs, err := audit.Tail(filepath.Join(r.home, "audit.jsonl"), 1000)
	if err != nil && !os.IsNotExist(err) {
		r.t.Fatal(err)
	}
	out := map[string][]string{}
	for _, rec := range recs {
		out[rec.Tool] = append(out[rec.Tool], string(rec.Outcome))
	}
	return out
}

// auditDecisions lists tool's audit records as outcome/intent/reviewer.
func (r *rig) auditDecisions(tool string) string {
	r.t.Helper()
	recs, err := audit.Tail(filepath.Join(r.home, "audit.jsonl"), 1000)
	if err != nil && !os.IsNotExist(err) {
		r.t.Fatal(err)
	}
	var got []string
	for _, rec := range recs {
		if rec.Tool == tool {
			got = append(got, rec.Outcome+"/"+rec.Intent+"/"+rec.Reviewer)
		}
	}
	return strings.Join(got, " ")
}

func (r *rig) sessions() []session.Record {
	r.t.Helper()
	f, err := os.Open(filepath.Join(r.dir, "sessions", "sessions.jsonl"))
	must(r.t, err)
	defer f.Close()
	var out []session.Record
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var rec session.Record
		must(r.t, json.Unmarshal(sc.Bytes(), &rec))
		out = append(out, rec)
	}
	return out
}

func TestRequestWhyToolsFeedbackHistory(t *testing.T) {
	r := newRig(t)
	r.start(Options{})
	m := r.expect(0, "mode: no-LLM")
	m = r.expect(m, "no-LLM mode: no model reachable")

	r.say("calculate (12.5 + 7) * 3")
	m = r.expect(m, `[no-LLM mode] tool: calculator {"expression":"(12.5 + 7) * 3"}`)
	m = r.expect(m, "ok: calculator")
	m = r.expect(m, "(12.5 + 7) * 3 = 58.5\n")
	if strings.Contains(r.out.String(), `"result"`) {
		t.Errorf("the value is shown, not the JSON:\n%s", r.out)
	}
	// The JSON stays at hand: /json prints the last result whole.
	r.say("/json")
	m = r.expect(m, `"result": 58.5`)

	r.say("/why")
	m = r.expect(m, "candidates for the last request (no-LLM mode)")
	m = r.expect(m, "score  semantic  cosine  coverage  trust  success  speed  pref\n")
	m = r.expect(m, "→ calculator   0.")
	m = r.expect(m, "  delete-note  0.")
	m = r.expect(m, "cosine is the raw similarity")
	m = r.expect(m, "no-LLM mode proposes a tool only from 0.40 (selection.min_coverage)")

	r.say("/tools")
	m = r.expect(m, "* delete-note")
	m = r.expect(m, "(* = destructive")
	if tools := r.out.String()[:m]; !strings.Contains(tools, "  calculator") || strings.Contains(tools, "* calculator") {
		t.Errorf("/tools marks calculator wrongly:\n%s", tools)
	}

	before := r.eng.Ranker().Prefs().Score("calculator")
	r.say("/accept")
	m = r.expect(m, "noted: accepted calculator")
	if after := r.eng.Ranker().Prefs().Score("calculator"); after <= before {
		t.Errorf("accept did not raise calculator's preference: %v -> %v", before, after)
	}

	r.say("/nope")
	m = r.expect(m, "unknown command /nope")
	r.say("/history")
	m = r.expect(m, "   1  calculate (12.5 + 7) * 3")
	m = r.expect(m, "   7  /history")
	r.say("/help")
	m = r.expect(m, "/dismiss")
	r.say("/quit")
	r.expect(m, "bye")
	select {
	case err := <-r.done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("/quit did not end the session")
	}

	// History is persisted, appended.
	hist, err := os.ReadFile(filepath.Join(r.home, "chat_history"))
	must(t, err)
	if !strings.HasPrefix(string(hist), "calculate (12.5 + 7) * 3\n/json\n/why\n/tools\n/accept\n") {
		t.Errorf("chat_history:\n%s", hist)
	}

	// The session log: the request with its candidates, call, validation,
	// execution, then the feedback that refers to it.
	recs := r.sessions()
	if len(recs) != 2 {
		t.Fatalf("want 2 session records, got %d: %+v", len(recs), recs)
	}
	req, fb := recs[0], recs[1]
	if req.Kind != session.KindRequest || req.Channel != "chat" || req.Caller != "tester" || req.Request != "calculate (12.5 + 7) * 3" || req.Session == "" {
		t.Errorf("request record: %+v", req)
	}
	if req.Call == nil || req.Call.Tool != "calculator" || fmt.Sprint(req.Call.Arguments["expression"]) != "(12.5 + 7) * 3" {
		t.Errorf("call: %+v", req.Call)
	}
	if len(req.Candidates) == 0 || req.Candidates[0].Tool != "calculator" || req.Candidates[0].Components["semantic_match"] == 0 || req.Candidates[0].Score == 0 {
		t.Errorf("candidates: %+v", req.Candidates)
	}
	if req.Model != nil || req.Validation == nil || !req.Validation.Valid {
		t.Errorf("model %+v validation %+v", req.Model, req.Validation)
	}
	if req.Execution == nil || req.Execution.Outcome != session.OutcomeOK || req.Execution.LatencyMS <= 0 || req.Latency == nil || req.Latency.TotalMS < req.Execution.LatencyMS {
		t.Errorf("execution %+v latency %+v", req.Execution, req.Latency)
	}
	if fb.Kind != session.KindFeedback || fb.Ref != req.ID || fb.Feedback == nil || fb.Feedback.Verdict != session.Accepted {
		t.Errorf("feedback record: %+v", fb)
	}
}

func TestDestructiveCallNeedsConfirmation(t *testing.T) {
	r := newRig(t)
	note := filepath.Join(r.docs, "notes", "todo.txt")
	r.start(Options{})
	m := r.expect(0, "> ")

	// Declined: nothing runs. The question is the pipeline's gate's, so
	// each declined call is in the audit log as the gate left it: denied
	// by the person, held (no answer), cancelled (Ctrl-C).
	r.say("delete the note todo.txt")
	m = r.expect(m, `tool: delete-note {"path":"todo.txt"}`)
	m = r.expect(m, `agent tester wants to call delete-note({"path":"todo.txt"}): allow [o]nce, [a]lways for this agent, or [d]eny? `)
	r.say("n")
	m = r.expect(m, "not run: declined by the user")
	m = r.expect(m, "> ")
	if _, err := os.Stat(note); err != nil {
		t.Fatalf("the declined call deleted the note: %v", err)
	}

	// Anything but y/yes is No; an empty answer too.
	r.say("delete the note todo.txt")
	m = r.expect(m, "[d]eny? ")
	r.say("")
	m = r.expect(m, "not run: declined by the user")

	// Ctrl-C at the question is No as well, and the session goes on.
	r.say("delete the note todo.txt")
	m = r.expect(m, "[d]eny? ")
	r.ints <- os.Interrupt
	m = r.expect(m, "not run: declined by the user")
	m = r.expect(m, "> ")
	if _, err := os.Stat(note); err != nil {
		t.Fatalf("a declined call deleted the note: %v", err)
	}
	if got := r.auditDecisions("delete-note"); got != "error/denied/chat:tester error/required/ cancelled/required/" {
		t.Fatalf("audit of the declined calls: %s", got)
	}

	// Confirmed: it runs.
	r.say("delete the note todo.txt")
	m = r.expect(m, "[d]eny? ")
	r.say("y")
	m = r.expect(m, "ok: delete-note")
	m = r.expect(m, `"deleted": "todo.txt"`)
	if _, err := os.Stat(note); !os.IsNotExist(err) {
		t.Fatalf("the confirmed call did not delete the note: %v", err)
	}
	if got := r.auditDecisions("delete-note"); !strings.HasSuffix(got, " ok/approved/chat:tester") || strings.Count(got, "ok/") != 1 {
		t.Fatalf("audit of delete-note: %s", got)
	}

	// End of input at the question is No.
	must(t, os.WriteFile(note, []byte("again\n"), 0o644))
	r.say("delete the note todo.txt")
	r.expect(m, "[d]eny? ")
	r.stop()
	if _, err := os.Stat(note); err != nil {
		t.Fatalf("EOF at the question deleted the note: %v", err)
	}

	var outcomes []string
	for _, rec := range r.sessions() {
		outcomes = append(outcomes, rec.Execution.Outcome)
	}
	want := "skipped skipped skipped ok skipped"
	if got := strings.Join(outcomes, " "); got != want {
		t.Errorf("recorded outcomes %q, want %q", got, want)
	}
}

func TestCtrlCCancelsTheCallNotTheSession(t *testing.T) {
	r := newRig(t)
	r.start(Options{})
	m := r.expect(0, "> ")

	// Ctrl-C at the prompt: a hint, and the session goes on.
	r.ints <- os.Interrupt
	m = r.expect(m, "(Ctrl-D or /quit to leave)")
	m = r.expect(m, "> ")

	r.say("wait slowly for 30 seconds")
	m = r.expect(m, `tool: slow {"seconds":30}`)
	select {
	case <-r.slowOn:
	case <-time.After(10 * time.Second):
		t.Fatalf("slow never started:\n%s", r.out)
	}
	// The slow tool never ends by itself: only the cancellation brings
	// back the prompt (expect's deadline is the bound, not a timer here).
	r.ints <- os.Interrupt
	m = r.expect(m, "cancelling…")
	m = r.expect(m, "cancelled: slow after")
	m = r.expect(m, "partial output:")
	m = r.expect(m, `"partial": true`)
	m = r.expect(m, "cancelled; back at the prompt")
	m = r.expect(m, "> ")

	// The session is alive: the next request runs.
	r.say("calculate 2 + 2")
	m = r.expect(m, "2 + 2 = 4\n")
	r.stop()

	if got := r.auditTools()["slow"]; len(got) != 1 || got[0] != "cancelled" {
		t.Fatalf("audit of slow: %v", got)
	}
	recs := r.sessions()
	if len(recs) != 2 || recs[0].Execution.Outcome != session.OutcomeCancelled || recs[0].Execution.ErrorKind != pipeline.KindCancelled {
		t.Fatalf("recorded: %+v", recs)
	}
}

func TestLargeResultIsCutWithANote(t *testing.T) {
	// As an answer: the text's first lines, and how much was not shown.
	r := newRig(t)
	r.start(Options{MaxShowBytes: 2048})
	m := r.expect(0, "> ")
	r.say("read the file report.txt in documents")
	m = r.expect(m, "tool: read-file")
	m = r.expect(m, "a line of a large report")
	m = r.expect(m, " more lines (")
	r.expect(m, "not shown; /json shows the whole result")
	r.stop()
	out := r.out.String()
	if n := strings.Count(out, "a line of a large report"); n < 10 || n > 60 {
		t.Errorf("showed %d lines of the report (want its first lines only)", n)
	}

	// As JSON: cut at MaxShowBytes with a note.
	r = newRig(t)
	r.start(Options{MaxShowBytes: 2048, JSON: true})
	m = r.expect(0, "> ")
	r.say("read the file report.txt in documents")
	m = r.expect(m, "tool: read-file")
	m = r.expect(m, "a line of a large report")
	r.expect(m, "[truncated: ")
	r.stop()
	if n := strings.Count(r.out.String(), "a line of a large report"); n < 10 || n > 60 {
		t.Errorf("showed %d lines of the report as JSON (want the first ~2 KB only)", n)
	}
}

func TestNoToolFits(t *testing.T) {
	r := newRig(t)
	// No-LLM mode answers "none" when the best tool is not similar enough.
	r.eng.Selector().Config.MinSimilarity = 1.5
	r.start(Options{})
	m := r.expect(0, "> ")
	r.say("/why")
	m = r.expect(m, "no request yet")
	r.say("/accept")
	m = r.expect(m, "no request yet to give feedback on")
	r.say("calculate 1 + 1")
	m = r.expect(m, "[no-LLM mode] no tool fits this request")
	m = r.expect(m, "> ")
	r.say("/why")
	m = r.expect(m, "  calculator")
	r.say("/dismiss")
	r.expect(m, "noted: dismissed no tool")
	r.stop()
	if strings.Contains(r.out.String(), "ok: calculator") || len(r.auditTools()) != 0 {
		t.Fatalf("a call ran although no tool was chosen:\n%s", r.out)
	}
	recs := r.sessions()
	if len(recs) != 2 || recs[0].Call != nil || recs[0].Execution != nil || len(recs[0].Candidates) == 0 || recs[1].Feedback.Verdict != session.Dismissed {
		t.Fatalf("recorded: %+v", recs)
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// buffer is a goroutine-safe bytes.Buffer.
type buffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (b *buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// scriptedModel is an in-process ollama.Client for the result-integration
// path: it records what the engine asks and streams a fixed answer. (The
// real Ollama path is TestModelMode, build tag e2e; its tiny random model
// never picks a tool, so the call → model path is checked here.)
type scriptedModel struct {
	mu   sync.Mutex
	reqs []ollama.ChatRequest
}

func (s *scriptedModel) Chat(ctx context.Context, req ollama.ChatRequest, onChunk func(string) error) (ollama.ChatResponse, error) {
	s.mu.Lock()
	s.reqs = append(s.reqs, req)
	s.mu.Unlock()
	var resp ollama.ChatResponse
	for _, c := range []string{"The report ", "repeats one line."} {
		resp.Content += c
		if err := onChunk(c); err != nil {
			return resp, err
		}
	}
	resp.Done = true
	return resp, nil
}
func (s *scriptedModel) Embed(context.Context, string, []string) ([][]float32, error) {
	return nil, ollama.ErrUnavailable
}
func (s *scriptedModel) Ping(context.Context) error               { return nil }
func (s *scriptedModel) Version(context.Context) (string, error)  { return "scripted", nil }
func (s *scriptedModel) Models(context.Context) ([]string, error) { return []string{"scripted"}, nil }

func TestResultToTheModel(t *testing.T) {
	// The model writes the final answer; selection stays in no-LLM mode
	// (the selector has no model), so the chosen call is predictable.
	model := &scriptedModel{}
	r := newRigWith(t, "none", nil, func(_ *pipeline.Registry, o *engine.Options) {
		o.Client, o.LocalName, o.MaxResultBytes = ollamamodel.New(model), "scripted", 1024
	})
	r.start(Options{})
	m := r.expect(0, "mode: model scripted via Ollama")
	r.say("read the file report.txt in documents")
	m = r.expect(m, "tool: read-file")
	m = r.expect(m, "ok: read-file")
	m = r.expect(m, "note: the result (")
	m = r.expect(m, "bytes) was truncated to 1024 bytes for the model's context")
	m = r.expect(m, "The report repeats one line.\n")
	m = r.expect(m, "> ")
	if strings.Contains(r.out.String(), "a line of a large report") {
		t.Errorf("with a model, the raw result is given to the model, not printed:\n%s", r.out)
	}

	// No tool fits: the model answers directly.
	r.eng.Selector().Config.MinSimilarity = 1.5
	r.say("what is the meaning of life")
	m = r.expect(m, "no tool fits this request; the model answers directly:")
	r.expect(m, "The report repeats one line.\n")
	r.stop()

	model.mu.Lock()
	defer model.mu.Unlock()
	if len(model.reqs) != 2 {
		t.Fatalf("the model was asked %d times, want 2", len(model.reqs))
	}
	user := model.reqs[0].Messages[len(model.reqs[0].Messages)-1].Content
	if !strings.Contains(user, "read the file report.txt in documents") || !strings.Contains(user, "Tool call: read-file") ||
		!strings.Contains(user, "[truncated: ") || len(user) > 1024+600 {
		t.Errorf("the result given to the model (%d bytes):\n%s", len(user), user)
	}
	if sys := model.reqs[1].Messages[0].Content; !strings.Contains(sys, "No tool fits") {
		t.Errorf("direct answer's system prompt: %s", sys)
	}
	if model.reqs[0].Options.NumPredict <= 0 || model.reqs[0].Format != nil {
		t.Errorf("answer options: %+v format %s", model.reqs[0].Options, model.reqs[0].Format)
	}
}

// The chat's question is the guard's, asked by the pipeline's gate: the
// answer is recorded as the decision of the call's confirmation (its audit
// record names who answered), "always" stops the questions for that tool,
// "deny" is kept in the review store and nothing runs.
func TestChatAnswersAreTheGuards(t *testing.T) {
	r := newRig(t)
	note := filepath.Join(r.docs, "notes", "todo.txt")
	r.start(Options{})
	m := r.expect(0, "> ")

	r.say("delete the note todo.txt")
	m = r.expect(m, "[d]eny? ")
	r.say("d")
	m = r.expect(m, "not run: declined by the user")
	denied, err := r.guard.List(guard.Filter{All: true})
	if err != nil || len(denied) != 1 || denied[0].Status != guard.StatusDenied || denied[0].DecidedBy != "chat:tester" || denied[0].Tool != "delete-note" {
		t.Fatalf("the denial in the store: %+v %v", denied, err)
	}

	r.say("delete the note todo.txt")
	m = r.expect(m, "[d]eny? ")
	r.say("a")
	m = r.expect(m, "ok: delete-note")
	if _, err := os.Stat(note); !os.IsNotExist(err) {
		t.Fatalf("the allowed call did not delete the note: %v", err)
	}
	must(t, os.WriteFile(note, []byte("again\n"), 0o644))
	r.say("delete the note todo.txt")
	m = r.expect(m, "ok: delete-note") // no question: always for tester
	m = r.expect(m, "> ")
	if strings.Count(r.out.String(), "[d]eny? ") != 2 {
		t.Errorf("asked %d times, want 2:\n%s", strings.Count(r.out.String(), "[d]eny? "), r.out.String())
	}
	r.stop()
	recs, err := audit.Tail(filepath.Join(r.home, "audit.jsonl"), 100)
	must(t, err)
	var got []string
	for _, rec := range recs {
		if rec.Tool == "delete-note" {
			got = append(got, rec.Outcome+"/"+rec.Intent+"/"+rec.Reviewer)
		}
	}
	if strings.Join(got, " ") != "error/denied/chat:tester ok/always/chat:tester ok/always/chat:tester" {
		t.Errorf("audit of delete-note: %v", got)
	}
}

// TestSeveralFilesAskWhichOne: a request naming several files equally well
// runs nothing; chat lists them numbered, and the number answered runs the
// request on that file.
func TestSeveralFilesAskWhichOne(t *testing.T) {
	r := newRig(t)
	must(t, os.MkdirAll(filepath.Join(r.docs, "contracts"), 0o755))
	must(t, os.WriteFile(filepath.Join(r.docs, "contracts", "lease-2023.txt"), []byte("the old lease\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(r.docs, "contracts", "lease-2024.txt"), []byte("the new lease\n"), 0o644))
	r.start(Options{})
	m := r.expect(0, "> ")
	r.say("read the lease")
	m = r.expect(m, "which one? Answer with its number")
	m = r.expect(m, "2. contracts/lease-2024.txt (space documents)")
	m = r.expect(m, "> ")
	if n := len(r.auditTools()); n != 0 {
		t.Fatalf("a call ran before the user chose: %v", r.auditTools())
	}
	r.say("2")
	m = r.expect(m, "the new lease")
	r.expect(m, "> ")
	r.stop()
	if strings.Contains(r.out.String(), "the old lease") {
		t.Fatalf("the file not chosen was read:\n%s", r.out)
	}
}

// A tool that fits a request whose values are not in it is not run, and
// the person reads once why and what to say instead, not an internal
// schema verdict.
func TestUnfillableRequestSaysWhatToSay(t *testing.T) {
	r := newRig(t)
	r.start(Options{})
	m := r.expect(0, "> ")
	r.say("compare the two acme quotes")
	m = r.expect(m, "tool: compare")
	m = r.expect(m, "its arguments could not be taken from the request (the request gives no value for a, b): quote the text, or name the files it is in")
	m = r.expect(m, "not run\n")
	r.expect(m, "> ")
	r.stop()
	out := r.out.String()
	if strings.Contains(out, "do not match the tool's schema") || strings.Contains(out, "do not fit the schema") {
		t.Fatalf("the problem was said as a schema verdict:\n%s", out)
	}
	if len(r.auditTools()) != 0 {
		t.Fatalf("a call ran without its values: %v", r.auditTools())
	}
}
