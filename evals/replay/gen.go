package replay

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/airs-dev/airs/grammar"
	"github.com/airs-dev/airs/pipeline"
	"github.com/airs-dev/airs/selector"
	"github.com/airs-dev/airs/session"
	"github.com/airs-dev/airs/understand"
)

// RecordOf is the session record of one selection: the request, the ranked
// candidates with every score component, the grammar hash, the model, the
// raw output, the parsed call and its validation. The channel adds the
// execution and the feedback.
func RecordOf(channel, caller, request string, sel *selector.Selection) session.Record {
	r := session.Record{V: session.Version, Kind: session.KindRequest, Channel: channel, Caller: caller, Request: request, Time: time.Now().UTC()}
	if sel == nil {
		return r
	}
	for _, c := range sel.Candidates {
		comp := make(map[string]float64, len(c.Score))
		for k, v := range c.Score {
			comp[k] = v
		}
		r.Candidates = append(r.Candidates, session.Candidate{Tool: c.Name, Score: c.Composite(), Components: comp})
	}
	r.GrammarHash, r.RawOutput = sel.GrammarHash, sel.Raw
	if sel.Mode == selector.ModeModel {
		r.Model = &session.Model{Backend: "ollama", Name: sel.Model}
	}
	if sel.Function != grammar.NoneTool && sel.Function != "" {
		var args map[string]any
		dec := json.NewDecoder(strings.NewReader(string(sel.Arguments)))
		dec.UseNumber()
		_ = dec.Decode(&args)
		if args == nil {
			args = map[string]any{}
		}
		r.Call = &session.Call{Tool: sel.Function, Arguments: args}
		r.Validation = &session.Validation{Valid: sel.Validation == "ok"}
		if sel.Validation != "ok" {
			r.Validation.Errors = []string{sel.Validation}
		}
	}
	r.Latency = &session.Latency{TotalMS: float64(sel.Latency) / float64(time.Millisecond)}
	return r
}

// Request is a request with its known right call (Tool "" = no tool fits).
type Request struct {
	Text string
	Tool string
	Args map[string]any // nil: whatever the extractor finds is accepted
}

// BuiltinRequests are realistic requests over the builtin tools, with the
// right call for each; space is the configured space the file requests
// name.
func BuiltinRequests(r *rand.Rand, n int, space string) []Request {
	files := []string{"report.pdf", "invoice-2024.pdf", "contract_v2.pdf", "notes.txt", "prices.csv", "todo.md", "paper.pdf", "readme.md"}
	words := []string{"budget", "quarterly results", "the meeting", "travel costs", "the new policy"}
	gens := []func() Request{
		func() Request {
			a, b := r.IntN(900)+10, r.IntN(90)+2
			ops := []struct{ w, s string }{{"times", "*"}, {"plus", "+"}, {"minus", "-"}, {"divided by", "/"}}
			o := ops[r.IntN(len(ops))]
			t := []string{"What is %d %s %d?", "Calculate %d %s %d", "how much is %d %s %d", "Compute %d %s %d for me"}[r.IntN(4)]
			return Request{Text: fmt.Sprintf(t, a, o.w, b), Tool: "calculator"}
		},
		func() Request {
			a, b := r.IntN(500)+1, r.IntN(40)+1
			return Request{Text: fmt.Sprintf("What is %d%% of %d?", b, a), Tool: "calculator"}
		},
		func() Request {
			e := fmt.Sprintf("(%d + %d) * %d", r.IntN(99), r.IntN(99), r.IntN(9)+1)
			return Request{Text: fmt.Sprintf("Evaluate the expression %s", e), Tool: "calculator", Args: map[string]any{"expression": e}}
		},
		func() Request {
			p := []string{"*.pdf", "*.txt", "*.csv", "*.md"}[r.IntN(4)]
			t := []string{"List the %s files in my %s folder", "Which %s files are in %s?", "show me all %s documents in %s"}[r.IntN(3)]
			return Request{Text: fmt.Sprintf(t, p, space), Tool: "list-files"}
		},
		func() Request {
			return Request{Text: fmt.Sprintf("What files do I have in %s?", space), Tool: "list-files"}
		},
		func() Request {
			f := files[3+r.IntN(3)]
			t := []string{"Read the file %s in %s", "Open %s from %s and show me its text", "what does %s in %s say?"}[r.IntN(3)]
			return Request{Text: fmt.Sprintf(t, f, space), Tool: "read-file"}
		},
		func() Request {
			f := []string{"report.pdf", "invoice-2024.pdf", "contract_v2.pdf", "paper.pdf"}[r.IntN(4)]
			t := []string{"Extract the text of the PDF %s in %s", "Get the text from pages 1 to 3 of %s in %s", "pull the text out of the pdf document %s (space %s)"}[r.IntN(3)]
			return Request{Text: fmt.Sprintf(t, f, space), Tool: "pdf-extract"}
		},
		func() Request {
			t := []string{"Summarize this text in 50 words: %s was discussed at length and everyone agreed to revisit it next week.",
				"Give me a short summary of the following: %s went over plan by ten percent this year.",
				"summarise: the article about %s, in a few sentences"}[r.IntN(3)]
			return Request{Text: fmt.Sprintf(t, words[r.IntN(len(words))]), Tool: "summarize"}
		},
		func() Request {
			t := []string{"Compare the two price lists 'apples 3, pears 4' and 'apples 3, pears 5' and tell me what changed",
				"What are the differences between the old and the new version of the contract text?",
				"compare these two texts and show the diff: 'hello world' vs 'hello there world'"}[r.IntN(3)]
			return Request{Text: t, Tool: "compare"}
		},
	}
	out := make([]Request, n)
	for i := range out {
		out[i] = gens[r.IntN(len(gens))]()
	}
	_ = files
	return out
}

// ToolRequests are requests for arbitrary tools, phrased from their
// descriptions the way a user asks: a lead-in, the description's first
// clause reworded into a request, and sometimes a value for a required
// string parameter.
func ToolRequests(r *rand.Rand, n int, tools []pipeline.Tool) []Request {
	leads := []string{"Please ", "Can you ", "I need to ", "Could you ", "", "Help me "}
	values := []string{"alice@example.com", "ACME-42", "prod-eu-1", "00u1abcd", "marketing"}
	out := make([]Request, 0, n)
	for len(out) < n {
		t := tools[r.IntN(len(tools))]
		first := t.Description
		if i := strings.IndexAny(first, ".\n"); i > 0 {
			first = first[:i]
		}
		ws := strings.Fields(first)
		if len(ws) > 9 {
			ws = ws[:6+r.IntN(4)]
		}
		if len(ws) == 0 {
			continue
		}
		ws[0] = strings.ToLower(ws[0])
		text := leads[r.IntN(len(leads))] + strings.Join(ws, " ")
		if r.IntN(2) == 0 {
			text += " for " + values[r.IntN(len(values))]
		}
		out = append(out, Request{Text: text, Tool: t.Name})
	}
	return out
}

// NoneRequests are requests no tool serves.
func NoneRequests(r *rand.Rand, n int) []Request {
	texts := []string{"tell me a joke about penguins", "good morning!", "who won the world cup in 1998?",
		"thanks, that's all", "write a haiku about autumn leaves", "what's your favourite colour?",
		"translate 'good night' into Italian", "how are you today?"}
	out := make([]Request, n)
	for i := range out {
		out[i] = Request{Text: texts[r.IntN(len(texts))]}
	}
	return out
}

// Service is what Generate drives: a running AIRS that serves chat turns
// and records them (cmd/airs adapts the engine to it). Defined here so the
// evaluation depends on the few things it uses, not on the engine.
type Service interface {
	// Serve serves text as one chat turn of a single step, in the session
	// named session, as a silent channel: a call that needs the user's
	// confirmation runs only when confirm says yes. An error with no
	// Served is a turn that could not be served at all.
	Serve(ctx context.Context, caller, text, session string, confirm func(pipeline.Tool) bool) (*Served, error)
	// Feedback records the user's verdict on a served turn and teaches the
	// ranker.
	Feedback(ctx context.Context, s *Served, verdict string) error
	// SessionLog is where turns are recorded; nil when recording is off.
	SessionLog() *session.Recorder
	Tools() []pipeline.Registered
	CallableTool(caller, name string) (pipeline.Tool, error)
	Hints() selector.Hints
}

// Served is a served turn as the generator reads it.
type Served struct {
	// Selection is the request's own selection; nil when the turn stopped
	// before one was kept (a file it names is not there, say).
	Selection *selector.Selection
	// RecordID is the turn's record in the session log.
	RecordID string
	// RecordErr is why the turn could not be recorded.
	RecordErr error
	// Turn is the service's own result, handed back to its Feedback.
	Turn any
}

// Generate serves each request through the engine's Turn, as `airs chat`
// does, so the engine itself records it (recording.enabled in airs.yaml):
// selection (no-LLM mode without a model), the call run through the
// pipeline — except calls of tools outside the builtin provider, which
// the generator declines at the confirmation (the fixture manifest's
// handlers are placeholders) — then explicit feedback: accepted when AIRS
// chose the right tool (and the expected arguments, when given), else
// corrected to the right call (or to "no tool"). It returns how many
// selections were right.
func Generate(ctx context.Context, e Service, caller string, reqs []Request) (right int, err error) {
	rec := e.SessionLog()
	if rec == nil {
		return 0, fmt.Errorf("replay: the engine records nothing (recording.enabled is off)")
	}
	builtins := map[string]bool{}
	for _, r := range e.Tools() {
		if r.Provider == "builtin" {
			builtins[r.Tool.Name] = true
		}
	}
	// Only the builtins run: the fixture manifest's handlers are placeholders.
	confirm := func(t pipeline.Tool) bool { return builtins[t.Name] }
	for i, rq := range reqs {
		// One step: the label is about the request's one call, and further
		// steps (or a no-LLM plan) would run calls no label covers.
		tr, err := e.Serve(ctx, caller, rq.Text, fmt.Sprintf("gen-%d", i/5), confirm)
		if err != nil && tr == nil {
			return right, fmt.Errorf("serving %q: %w", rq.Text, err)
		}
		if tr.RecordErr != nil {
			return right, tr.RecordErr
		}
		sel := tr.Selection
		if sel == nil {
			continue
		}
		ok := sel.Function == rq.Tool || rq.Tool == "" && sel.Function == grammar.NoneTool
		var args map[string]any
		if sel.Function != grammar.NoneTool {
			dec := json.NewDecoder(strings.NewReader(string(sel.Arguments)))
			dec.UseNumber()
			_ = dec.Decode(&args)
		}
		if ok && rq.Args != nil {
			b1, _ := json.Marshal(args)
			b2, _ := json.Marshal(rq.Args)
			ok = string(b1) == string(b2)
		}
		if ok {
			right++
			if err := e.Feedback(ctx, tr, session.Accepted); err != nil {
				return right, err
			}
			continue
		}
		var fix *session.Call
		if rq.Tool != "" {
			want := rq.Args
			switch {
			case want != nil:
			case sel.Function == rq.Tool && args != nil:
				want = args
			default:
				want = map[string]any{}
				if t, ok := toolOf(e, caller, rq.Tool); ok {
					if a, _, err := selector.ArgumentsUnderstood(t, understand.ParsePlain(rq.Text), e.Hints()); err == nil {
						want = a
					}
				}
			}
			fix = &session.Call{Tool: rq.Tool, Arguments: want}
		}
		if err := rec.Feedback(ctx, tr.RecordID, session.Feedback{Verdict: session.Corrected, Corrected: fix}); err != nil {
			return right, err
		}
	}
	return right, nil
}

func toolOf(e Service, caller, name string) (pipeline.Tool, bool) {
	t, err := e.CallableTool(caller, name)
	return t, err == nil
}
