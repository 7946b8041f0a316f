package selector

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Prior is a step of a turn that already ran (or was refused), as the model
// sees it when it chooses the next one.
type Prior struct {
	Function  string
	Arguments []byte // JSON
	// Result is the call's output as shown to the model (already cut to
	// the context's budget, with the cut said in it); "" when none.
	Result string
	// Error is the call's error with its hint, "" when it succeeded.
	Error string
}

// ErrNextNeedsModel: only a model chooses a next step from results (no-LLM
// mode plans multi-tool requests up front instead: Plan).
var ErrNextNeedsModel = errors.New("selector: choosing a next step from results needs a model (no-LLM mode plans multi-tool requests with Plan)")

// Next chooses the call that follows prior in a turn serving request: the
// model sees the request, the calls so far and their results, and answers
// under the same grammar as Select's first call — one of the caller's top
// candidates for the request with schema-valid arguments, or "none" when
// the results are enough to answer — validated in full, with one repair
// attempt. Candidates are retrieved for the request as a whole, so a
// request naming several tasks ("find the PDFs, then summarize the
// newest") offers the tools of every part.
func (s *Selector) Next(ctx context.Context, caller, request string, prior []Prior) (*Selection, error) {
	start := time.Now()
	cfg := s.Config.withDefaults()
	if s.Model == nil || cfg.Model == "" {
		return nil, ErrNextNeedsModel
	}
	cands, entries, err := s.candidates(ctx, caller, request, cfg.TopK)
	if err != nil {
		return nil, err
	}
	if prior == nil {
		prior = []Prior{}
	}
	sel, err := s.generateAfter(ctx, cands, entries, request, prior, cfg)
	if sel != nil {
		sel.Latency = time.Since(start)
	}
	return sel, err
}

// nextMessages are the conversation for the step after prior: the tools,
// the request, then each earlier call as the model's answer and its result
// as the user's next message. Results go in user messages, not "tool" ones:
// chat templates differ in how (and whether) they show a tool role.
func nextMessages(cands []Candidate, entries map[string]Entry, request string, prior []Prior) []Message {
	sys := systemPrompt(cands, entries) +
		"\nThe request may need several calls, one after another: after each call you are shown its result. " +
		`Answer with the next call the request still needs, or with {"function": "none", "arguments": {}} when the results so far are enough to answer it. ` +
		"Do not repeat a call that already ran."
	msgs := []Message{{Role: "system", Content: sys}, {Role: "user", Content: request}}
	for i, p := range prior {
		msgs = append(msgs, Message{Role: "assistant", Content: fmt.Sprintf(`{"function": %q, "arguments": %s}`, p.Function, compactJSON(p.Arguments))})
		var b strings.Builder
		fmt.Fprintf(&b, "Result of call %d (%s):\n", i+1, p.Function)
		if p.Error != "" {
			fmt.Fprintf(&b, "The call failed: %s\n", p.Error)
		}
		if p.Result != "" {
			b.WriteString(p.Result)
			b.WriteString("\n")
		} else if p.Error == "" {
			b.WriteString("(no output)\n")
		}
		b.WriteString(`Answer with the next call, or {"function": "none", "arguments": {}} if the request is done. JSON only.`)
		msgs = append(msgs, Message{Role: "user", Content: b.String()})
	}
	return msgs
}
