package complete

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/airs-dev/airs/grammar"
	"github.com/airs-dev/airs/selector"
	"github.com/airs-dev/airs/server/compat"
)

// calls chooses the reply's calls among the client's tools: none when no
// tool fits and the choice allows it. The notice says how it was decided
// when the client should know (no-LLM mode, nothing fitting).
func (b *Backend) calls(ctx context.Context, caller string, req *compat.Request) ([]compat.Call, string, compat.Mode, error) {
	ts, err := b.tools(ctx, req.Tools)
	if err != nil {
		return nil, "", "", err
	}
	cat := ts.cat
	if req.Choice.Mode == compat.ChoiceFunction {
		cat = cat.only(req.Choice.Name)
	}
	forced := req.Choice.Mode == compat.ChoiceRequired || req.Choice.Mode == compat.ChoiceFunction
	text := req.LastUser()
	sel := selector.New(selector.Parts{Catalog: cat, Index: ts.index, Ranker: ts.ranker, Validate: b.validate,
		Config: selector.Config{TopK: b.o.TopK, MinSimilarity: b.o.MinSimilarity,
			RequireEvidence: b.o.RequireEvidence, MinCoverage: b.o.MinCoverage}})
	// The no-LLM selection is also the narrowing: its candidates are the
	// top k by retrieval and ranking, the tools the model's grammar offers.
	s, err := sel.Select(ctx, caller, text)
	if err != nil {
		return nil, "", "", err
	}
	notice := selector.NoLLMNotice
	var parts []string
	if req.Choice.Mode == compat.ChoiceAuto || req.Choice.Mode == compat.ChoiceRequired {
		parts = requestParts(text)
	}
	selPart := func(ctx context.Context, part string) (*selector.Selection, error) {
		return sel.Select(ctx, caller, part)
	}
	if b.Mode() == compat.ModeModel {
		if len(parts) > 1 && req.Parallel {
			pc, err := b.parallelModel(ctx, req, cat, parts, selPart)
			switch {
			case err == nil && len(pc) > 0:
				return pc, "", compat.ModeModel, nil
			case err != nil && !errors.Is(err, selector.ErrModelUnavailable):
				return nil, "", "", err
			}
		}
		calls, mnotice, err := b.generateCall(ctx, req, cat, s.Candidates, forced)
		if !errors.Is(err, selector.ErrModelUnavailable) {
			return calls, mnotice, compat.ModeModel, err
		}
		// As the selector does: the model's server is down, the call is
		// chosen without it, and the reply says so.
		notice = "the model server does not answer (" + err.Error() + "); " + notice
	}
	if len(parts) > 1 && s.Function != grammar.NoneTool && s.Function != "" && s.Validation == "ok" && !spansParts(s.Arguments, parts) {
		pc, err := b.parallelNoLLM(ctx, cat, parts, selPart)
		if err != nil {
			return nil, "", "", err
		}
		if len(pc) > 0 && !req.Parallel {
			// One call at a time: the first thing asked first (the
			// client sends its result, and asks again for the rest).
			pc = pc[:1]
		}
		if len(pc) > 0 {
			return pc, notice, compat.ModeNoLLM, nil
		}
	}
	if s.Function != grammar.NoneTool && s.Function != "" && s.Validation == "ok" {
		if !forced && b.o.MinSimilarity > 0 && unfillable(cat, s.Function, text) != "" {
			return nil, notice + "; no tool can be called with the request's own values", compat.ModeNoLLM, nil
		}
		return []compat.Call{{Name: s.Function, Arguments: s.Arguments}}, notice, compat.ModeNoLLM, nil
	}
	if !forced {
		return nil, cmpOr(s.Notice, notice), compat.ModeNoLLM, nil
	}
	c, err := b.force(cat, s.Candidates, text)
	return c, notice, compat.ModeNoLLM, err
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// force makes the call a forced choice asks for without a model: the
// first candidate (in rank order, then the rest) whose arguments taken
// from the request validate.
func (b *Backend) force(cat catalog, cands []selector.Candidate, text string) ([]compat.Call, error) {
	order := make([]string, 0, len(cat))
	seen := map[string]bool{}
	for _, c := range cands {
		order, seen[c.Name] = append(order, c.Name), true
	}
	for _, e := range cat {
		if !seen[e.Tool.Name] {
			order = append(order, e.Tool.Name)
		}
	}
	var errs []error
	for _, name := range order {
		e := cat.only(name)[0]
		args, err := selector.ExtractArguments(e.Tool.Parameters, text, selector.Hints{})
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
			continue
		}
		raw, _ := json.Marshal(args)
		if err := b.validate(e.Tool, raw); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
			continue
		}
		return []compat.Call{{Name: name, Arguments: raw}}, nil
	}
	return nil, &compat.RequestError{Param: "tool_choice", Message: fmt.Sprintf(
		"tool_choice asks for a call, but no tool's arguments could be taken from the request without a model (%v): say the values in the request, or configure a model", errors.Join(errs...))}
}

// generateCall has the model choose among the top candidates under the
// tool-call grammar: the output is checked byte by byte against the
// grammar as it streams and validated in full; an invalid one gets one
// repair attempt, as the selector's own generation does.
func (b *Backend) generateCall(ctx context.Context, req *compat.Request, cat catalog, cands []selector.Candidate, forced bool) ([]compat.Call, string, error) {
	tools := make([]grammar.ToolSchema, 0, len(cands))
	entries := map[string]selector.Entry{}
	for _, c := range cands {
		e := cat.only(c.Name)
		if e == nil {
			continue
		}
		entries[c.Name] = e[0]
		tools = append(tools, grammar.ToolSchema{Name: c.Name, Parameters: e[0].Tool.Parameters})
	}
	if len(tools) == 0 {
		return nil, "no tool fits this request", nil
	}
	allowNone := !forced
	g, err := grammar.ToolCall(tools, grammar.ToolCallOptions{AllowNone: allowNone, Options: selector.ToolCallGrammar.Options})
	if err != nil {
		return nil, "", fmt.Errorf("complete: grammar: %w", err)
	}
	format, _, err := selector.FormatFor(tools, allowNone)
	if err != nil {
		return nil, "", fmt.Errorf("complete: format export: %w", err)
	}
	msgs := append([]selector.Message{{Role: "system", Content: callPrompt(tools, entries, allowNone)}}, conversation(req, true)...)
	var last string
	for attempt := 0; attempt < 2; attempt++ {
		raw, err := b.generate(ctx, g, format, msgs, b.maxTokens(req), nil)
		if err != nil {
			return nil, "", err
		}
		call, verr := b.check(raw, entries)
		if verr == nil {
			if call.Function == grammar.NoneTool {
				return nil, "", nil
			}
			return []compat.Call{{Name: call.Function, Arguments: compactRaw(call.Arguments)}}, "", nil
		}
		last = verr.Error()
		msgs = append(msgs,
			selector.Message{Role: "assistant", Content: raw},
			selector.Message{Role: "user", Content: "That call is invalid: " + last + "\nAnswer again with one corrected call, JSON only."})
	}
	// Nothing invalid is ever returned: no call, and the notice says why.
	notice := "the model's call was invalid after one repair attempt (" + last + "): no call returned"
	if forced {
		c, err := b.force(cat, cands, req.LastUser())
		if err != nil {
			return nil, "", err
		}
		return c, notice + "; the call was taken from the request's words instead", nil
	}
	return nil, notice, nil
}

// toolCall is the shape of every grammar-constrained call.
type toolCall struct {
	Function  string          `json:"function"`
	Arguments json.RawMessage `json:"arguments"`
}

func (b *Backend) check(raw string, entries map[string]selector.Entry) (*toolCall, error) {
	var call toolCall
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&call); err != nil {
		return nil, fmt.Errorf("output is not one JSON object: %v", err)
	}
	if call.Function == grammar.NoneTool {
		return &call, nil
	}
	e, ok := entries[call.Function]
	if !ok {
		return nil, fmt.Errorf("function %q is not one of the offered tools", call.Function)
	}
	if len(call.Arguments) == 0 {
		return nil, errors.New("arguments missing")
	}
	return &call, b.validate(e.Tool, call.Arguments)
}

// callPrompt tells the model the tools and the answer's shape.
func callPrompt(tools []grammar.ToolSchema, entries map[string]selector.Entry, allowNone bool) string {
	var s strings.Builder
	s.WriteString("You choose the tool call that does what the user asks. Answer with JSON only: ")
	s.WriteString(`{"function": "<tool name>", "arguments": {...}}.`)
	if allowNone {
		s.WriteString(` If no tool fits, or the results already answer the user, answer {"function": "none", "arguments": {}}.`)
	}
	s.WriteString("\nTools:\n")
	for _, t := range tools {
		e := entries[t.Name]
		fmt.Fprintf(&s, "- %s: %s\n  parameters: %s\n", t.Name, e.Tool.Description, compactRaw(t.Parameters))
	}
	return s.String()
}

// conversation is the request's messages for the model: the client's
// system text, the turns, earlier calls as the JSON the model would emit
// (asCalls) or as sentences, and results as user messages that say whose
// result they are (every chat template reads those).
func conversation(req *compat.Request, asCalls bool) []selector.Message {
	var out []selector.Message
	for _, m := range req.Messages {
		switch m.Role {
		case "system", "user":
			out = append(out, selector.Message{Role: m.Role, Content: m.Content})
		case "assistant":
			var s strings.Builder
			s.WriteString(m.Content)
			for _, c := range m.Calls {
				if s.Len() > 0 {
					s.WriteString("\n")
				}
				if asCalls {
					b, _ := json.Marshal(toolCall{Function: c.Name, Arguments: c.Arguments})
					s.Write(b)
				} else {
					fmt.Fprintf(&s, "I called %s with %s.", c.Name, compactRaw(c.Arguments))
				}
			}
			out = append(out, selector.Message{Role: "assistant", Content: s.String()})
		case "tool":
			name := m.Name
			if name == "" {
				name = "the tool"
			}
			out = append(out, selector.Message{Role: "user", Content: "Result of " + name + ": " + m.Content})
		}
	}
	return out
}
