package selector

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/airs-dev/airs/chains"
	"github.com/airs-dev/airs/grammar"
	"github.com/airs-dev/airs/internal/ollama"
)

// RefPattern is the ECMA-262 pattern a whole-value reference to an earlier
// step's output (or the chain's input) must match in a plan. The grammar
// lets a model emit only well-formed references; that each one names an
// earlier step is checked by chains.Validate after parsing.
//
// Its bounds are kept small on purpose: a step ID is what the plan schema
// lets a step be called (^[a-z][a-z0-9_]{0,31}$), and a path has at most
// four keys or indexes. A reference is then 11 to refMaxLen bytes long, so
// most string parameters (those with only length bounds that admit every
// reference) need no union with it at all, and the remaining unions
// (enums, patterns) stay small automata: a union of a length-bounded string
// with a large reference automaton is a product the grammar compiler
// cannot build in the time a request has.
const RefPattern = `^\{\{(steps\.[a-z][a-z0-9_]{0,31}\.output(\.[A-Za-z0-9_$-]{1,32}|\[[0-9]{1,4}\]){0,4}|input\.[A-Za-z0-9_-]{1,32})\}\}$`

// refMinLen and refMaxLen bound the length of a string matching RefPattern:
// "{{input.x}}", and "{{steps." + 32 + ".output" + 4×(1+32) + "}}".
const (
	refMinLen = 11
	refMaxLen = 8 + 32 + 7 + 4*33 + 2
)

// PlanSchema is the JSON Schema of a plan over the given tools:
//
//	{"steps":[{"id":"a","function":"<tool>","arguments":{...}}, ...]}
//
// Each step's arguments follow its tool's schema, except that any top-level
// argument may instead be a reference string (RefPattern). Only the tools
// given can be named, so a tool the caller may not call cannot be planned.
func PlanSchema(entries []Entry, maxSteps int) (json.RawMessage, error) {
	if maxSteps <= 0 {
		maxSteps = 8
	}
	var branches []any
	for _, e := range entries {
		params, err := referable(e.Tool.Parameters)
		if err != nil {
			return nil, fmt.Errorf("tool %s: %w", e.Tool.Name, err)
		}
		branches = append(branches, map[string]any{
			"type": "object",
			"properties": map[string]any{
				"id":        map[string]any{"type": "string", "pattern": `^[a-z][a-z0-9_]{0,31}$`},
				"function":  map[string]any{"const": e.Tool.Name},
				"arguments": params,
			},
			"required":             []string{"id", "function", "arguments"},
			"additionalProperties": false,
		})
	}
	if len(branches) == 0 {
		return nil, ErrNoTools
	}
	s := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"steps": map[string]any{"type": "array", "minItems": 1, "maxItems": maxSteps, "items": map[string]any{"anyOf": branches}},
		},
		"required":             []string{"steps"},
		"additionalProperties": false,
	}
	return json.Marshal(s)
}

// referable rewrites a parameters schema so each top-level property also
// accepts a reference string.
func referable(params json.RawMessage) (map[string]any, error) {
	var s map[string]any
	if len(params) == 0 {
		return map[string]any{"type": "object"}, nil
	}
	if err := json.Unmarshal(params, &s); err != nil {
		return nil, err
	}
	props, _ := s["properties"].(map[string]any)
	out := make(map[string]any, len(s))
	for k, v := range s {
		out[k] = v
	}
	np := make(map[string]any, len(props))
	ref := map[string]any{"type": "string", "pattern": RefPattern}
	for name, ps := range props {
		if admitsRefs(ps) {
			np[name] = ps // the same language as anyOf [ps, ref], and far cheaper to compile
			continue
		}
		np[name] = map[string]any{"anyOf": []any{ps, ref}}
	}
	if props != nil {
		out["properties"] = np
	}
	return out, nil
}

// PlanResult is a plan with how it was made.
type PlanResult struct {
	Mode        Mode            `json:"mode"`
	Notice      string          `json:"notice,omitempty"`
	Plan        json.RawMessage `json:"plan"`
	Chain       *chains.Chain   `json:"-"`
	Candidates  []Candidate     `json:"candidates"`
	GrammarHash string          `json:"grammar_hash,omitempty"`
	Raw         string          `json:"raw,omitempty"`
	Latency     time.Duration   `json:"latency_ns"`
}

// Plan turns a multi-step request into a validated chain. With a model, the
// plan is generated under the plan grammar over the caller's top candidates;
// in no-LLM mode it is the one-step plan of Select.
func (s *Selector) Plan(ctx context.Context, caller, request string, cat chains.Catalog) (*PlanResult, error) {
	start := time.Now()
	cfg := s.Config.withDefaults()
	cands, entries, err := s.candidates(ctx, caller, request, cfg.TopK)
	if err != nil {
		return nil, err
	}
	if s.Model != nil && cfg.Model != "" {
		pr, err := s.generatePlan(ctx, cands, entries, request, cfg, cat, caller)
		if !errors.Is(err, ollama.ErrUnavailable) {
			if pr != nil {
				pr.Latency = time.Since(start)
			}
			return pr, err
		}
	}
	sel, err := s.noLLM(cands, entries, request, cfg)
	if err != nil {
		return nil, err
	}
	pr := &PlanResult{Mode: ModeNoLLM, Notice: NoLLMNotice, Candidates: cands}
	steps := []map[string]any{}
	if sel.Function != grammar.NoneTool {
		steps = append(steps, map[string]any{"id": "step1", "function": sel.Function, "arguments": sel.Arguments})
	}
	pr.Plan, _ = json.Marshal(map[string]any{"steps": steps})
	if len(steps) > 0 {
		c, err := chains.ParsePlan(pr.Plan)
		if err != nil {
			return nil, err
		}
		pr.Chain = c
	}
	pr.Latency = time.Since(start)
	return pr, nil
}

func (s *Selector) generatePlan(ctx context.Context, cands []Candidate, entries map[string]Entry, request string, cfg Config, cat chains.Catalog, caller string) (*PlanResult, error) {
	list := make([]Entry, 0, len(cands))
	for _, c := range cands {
		list = append(list, entries[c.Name])
	}
	schema, err := PlanSchema(list, 8)
	if err != nil {
		return nil, err
	}
	g, err := grammar.Compile(schema, grammar.Options{Whitespace: grammar.WhitespaceFlexible, MaxWhitespace: 32, Lenient: true})
	if err != nil {
		return nil, fmt.Errorf("selector: plan grammar: %w", err)
	}
	format := schema
	if s.FormatSchema != nil {
		if format, _, err = s.FormatSchema(schema); err != nil {
			return nil, fmt.Errorf("selector: plan format export: %w", err)
		}
	}
	pr := &PlanResult{Mode: ModeModel, Candidates: cands, GrammarHash: hashOf(schema)}
	msgs := []ollama.Message{
		{Role: "system", Content: planPrompt(cands, entries)},
		{Role: "user", Content: request},
	}
	for attempt := 0; attempt < 2; attempt++ {
		raw, err := s.chat(ctx, g, format, msgs, cfg)
		pr.Raw = raw
		if err != nil {
			return nil, err
		}
		c, perr := chains.ParsePlan([]byte(raw))
		if perr == nil && cat != nil {
			perr = c.Validate(cat, caller)
		}
		if perr == nil {
			pr.Plan, pr.Chain = json.RawMessage(raw), c
			return pr, nil
		}
		msgs = append(msgs,
			ollama.Message{Role: "assistant", Content: raw},
			ollama.Message{Role: "user", Content: "That plan is invalid: " + perr.Error() + "\nAnswer again with one corrected plan, JSON only."})
		err = perr
		if attempt == 1 {
			return pr, &InvalidCallError{Raw: raw, Reason: err.Error()}
		}
	}
	return pr, nil
}

func planPrompt(cands []Candidate, entries map[string]Entry) string {
	var b strings.Builder
	b.WriteString("You plan the tool calls that do what the user asks. Answer with JSON only: ")
	b.WriteString(`{"steps": [{"id": "a", "function": "<tool>", "arguments": {...}}, ...]}. `)
	b.WriteString(`An argument may be "{{steps.ID.output.FIELD}}" to use an earlier step's output. Steps that do not use each other's output run in parallel; do not add references that are not needed.` + "\nTools:\n")
	for _, c := range cands {
		t := entries[c.Name].Tool
		fmt.Fprintf(&b, "- %s: %s\n  parameters: %s\n", t.Name, t.Description, compactJSON(t.Parameters))
	}
	return b.String()
}

// admitsRefs reports whether a property schema already accepts every string
// matching RefPattern: a plain string schema whose only constraints are
// length bounds wide enough for any reference.
func admitsRefs(ps any) bool {
	m, ok := ps.(map[string]any)
	if !ok || m["type"] != "string" {
		return false
	}
	for k, v := range m {
		switch k {
		case "type", "description", "title", "default", "examples", "$comment":
		case "minLength":
			if n, ok := v.(float64); !ok || n > refMinLen {
				return false
			}
		case "maxLength":
			if n, ok := v.(float64); !ok || n < refMaxLen {
				return false
			}
		default:
			return false
		}
	}
	return true
}
