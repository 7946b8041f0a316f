package selector

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/airs-dev/airs/chains"
	"github.com/airs-dev/airs/grammar"
	"github.com/airs-dev/airs/grammar/export"
	"github.com/airs-dev/airs/pipeline"
)

// Planning runs in two grammar-constrained passes, so that every plan a
// model can emit is valid by construction — it parses (chains.ParsePlan)
// and validates (Chain.Validate) — and every output ends within a length
// known before generation starts:
//
//  1. The outline: which tools to call, in order, {"steps": ["pdf-extract",
//     "pdf-extract", "compare"]} — an enum of the caller's candidates per
//     step, at most PlanLimits.MaxSteps steps.
//  2. The plan for that outline (PlanSchema): step K has the fixed id "sK",
//     the outline's tool, and arguments in which each top-level argument is
//     a bounded literal or a whole-value reference to the output of an
//     EARLIER step, {{steps.sJ.output.PATH}}, restricted to the paths of
//     sJ's tool's return schema whose type fits the parameter (the same
//     resolution and typing Chain.Validate does: chains.OutputPaths).
//
// A reference to a later or unknown step, to a field the earlier output does
// not have, or of the wrong type, cannot be written; neither can a literal
// string over PlanLimits.MaxLiteral characters or one holding "{", which
// ParsePlan would read as a reference inside a string. Big contents (a
// document's text) flow through references, which is what plans are for.
//
// One pass cannot do this: which fields a reference to sJ may name depends
// on the tool sJ calls, and a grammar that remembered the tool of every
// earlier step would have (tools)^(steps) states.
//
// Both schemas are written for what Ollama's converter (llama.cpp's
// json-schema-to-grammar, through grammar/export) enforces exactly. It
// ignores maxLength beside a pattern, so the format sent to Ollama has each
// string's length bounds folded into its pattern (PlanFormat: ^[^{]{0,256}$)
// and the bounds reach the model, not only the stream check (a tool's own
// pattern that is not one repeated character class keeps its bound in the
// stream check alone, and the export reports that loosening). Each pass's
// num_predict is its schema's Budget — the most bytes, hence tokens, any
// document of the schema can take — not a guess.

// PlanLimits bound what a plan may hold. Zero values take the defaults in
// brackets.
type PlanLimits struct {
	MaxSteps   int // steps in a plan [8]
	MaxLiteral int // characters in a literal string argument (or the parameter's maxLength if smaller) [256]
	MaxItems   int // items in a literal array argument (or its maxItems if smaller) [16]
	MaxRefPath int // keys and indexes after .output in a reference [4]
}

// DefaultPlanLimits are the limits Plan uses.
var DefaultPlanLimits = PlanLimits{MaxSteps: 8, MaxLiteral: 256, MaxItems: 16, MaxRefPath: 4}

func (l PlanLimits) withDefaults() PlanLimits {
	d := DefaultPlanLimits
	if l.MaxSteps <= 0 {
		l.MaxSteps = d.MaxSteps
	}
	if l.MaxLiteral <= 0 {
		l.MaxLiteral = d.MaxLiteral
	}
	if l.MaxItems <= 0 {
		l.MaxItems = d.MaxItems
	}
	if l.MaxRefPath <= 0 {
		l.MaxRefPath = d.MaxRefPath
	}
	return l
}

// StepID is the id of the k-th step (1-based) of a generated plan.
func StepID(k int) string { return "s" + strconv.Itoa(k) }

// PlanResult is a plan with how it was made.
type PlanResult struct {
	Mode   Mode          `json:"mode"`
	Notice string        `json:"notice,omitempty"`
	Plan   Plan          `json:"plan"`
	Chain  *chains.Chain `json:"-"`
	// Outline is the tools of the first pass, in step order.
	Outline     []string    `json:"outline,omitempty"`
	Candidates  []Candidate `json:"candidates"`
	GrammarHash string      `json:"grammar_hash,omitempty"`
	// OutlineRaw and Raw are the model's outputs of the two passes.
	OutlineRaw string `json:"outline_raw,omitempty"`
	Raw        string `json:"raw,omitempty"`
	// Budget is the second pass's num_predict (its schema's bound).
	Budget   int           `json:"budget,omitempty"`
	Repaired bool          `json:"repaired,omitempty"`
	Latency  time.Duration `json:"latency_ns"`
}

// Plan turns a multi-step request into a validated chain. With a model, the
// plan is generated in two passes under grammars over the caller's top
// candidates (see OutlineSchema, PlanSchema), so that it is valid by
// construction; it is still parsed and validated against cat. Each pass's
// num_predict is its schema's Budget (Config.NumPredict does not apply: a
// lower cap could only cut a plan the grammar allows). In no-LLM mode a
// request of several parts is planned by PlanParts, and any other request
// gets the one-step plan of Select.
func (s *Selector) Plan(ctx context.Context, caller, request string, cat chains.Catalog) (*PlanResult, error) {
	start := time.Now()
	cfg := s.Config.withDefaults()
	if s.Model != nil && cfg.Model != "" {
		cands, entries, err := s.candidates(ctx, caller, request, cfg.TopK)
		if err != nil {
			return nil, err
		}
		pr, err := s.generatePlan(ctx, cands, entries, request, cfg, cat, caller)
		if !errors.Is(err, ErrModelUnavailable) {
			if pr != nil {
				pr.Latency = time.Since(start)
			}
			return pr, err
		}
	}
	// A request whose interpretation resolves typed values (files, an
	// expression, a given text) is planned from them (PlanUnderstood).
	var got *retrieved
	if s.Env != nil {
		var pr *PlanResult
		var err error
		if pr, got, err = s.planUnderstood(ctx, caller, request, cat, nil); pr != nil || err != nil {
			if pr != nil && len(SplitParts(request)) > 1 && len(pr.Outline) < 2 {
				// A request of several parts that typed filling served
				// with one step: PlanParts may serve every part.
				if parts, perr := s.PlanParts(ctx, caller, request, cat); parts != nil && perr == nil {
					return parts, nil
				}
			}
			return pr, err
		}
	}
	// A request of several parts is planned part by part (PlanParts);
	// otherwise, or when a part cannot be, the plan is Select's one call.
	parts, perr := s.PlanParts(ctx, caller, request, cat)
	if parts != nil {
		return parts, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var cands []Candidate
	var entries map[string]Entry
	if got != nil && got.query == request {
		cands, entries = got.cands, got.entries // the same retrieval, for this request
		if len(cands) > cfg.TopK {
			cands = cands[:cfg.TopK]
		}
	} else {
		var err error
		if cands, entries, err = s.candidates(ctx, caller, request, cfg.TopK); err != nil {
			return nil, err
		}
	}
	sel, err := s.noLLM(ctx, cands, entries, request, cfg)
	if err != nil {
		return nil, err
	}
	pr := &PlanResult{Mode: ModeNoLLM, Notice: sel.Notice, Candidates: cands}
	if perr != nil && ctx.Err() == nil {
		pr.Notice += "; " + perr.Error()
	}
	pr.Plan = emptyPlan()
	// A tool whose arguments the request lacks (sel.Validation) gives no
	// step: a plan holds only calls that can run.
	if sel.Function != grammar.NoneTool && sel.Validation == "ok" {
		pr.Plan.Steps = append(pr.Plan.Steps, PlanStep{ID: StepID(1), Function: sel.Function, Arguments: sel.Arguments})
	}
	if len(pr.Plan.Steps) > 0 {
		c, err := pr.Plan.Compile()
		if err != nil {
			return nil, err
		}
		pr.Chain = c
	}
	pr.Latency = time.Since(start)
	return pr, nil
}

func (s *Selector) generatePlan(ctx context.Context, cands []Candidate, entries map[string]Entry, request string, cfg Config, cat chains.Catalog, caller string) (*PlanResult, error) {
	lim := DefaultPlanLimits
	pr := &PlanResult{Mode: ModeModel, Candidates: cands}
	names := make([]string, len(cands))
	for i, c := range cands {
		names[i] = c.Name
	}

	// Pass 1: the outline.
	schema, budget, err := OutlineSchema(names, lim)
	if err != nil {
		return nil, err
	}
	msgs := []Message{
		{Role: "system", Content: outlinePrompt(cands, entries, lim)},
		{Role: "user", Content: request},
	}
	var outline []string
	raw, _, err := s.generateJSON(ctx, schema, budget, msgs, cfg, "outline", func(raw string) error {
		var o struct {
			Steps []string `json:"steps"`
		}
		if err := json.Unmarshal([]byte(raw), &o); err != nil {
			return fmt.Errorf("the outline is not JSON: %v", err)
		}
		for _, n := range o.Steps {
			if _, ok := entries[n]; !ok {
				return fmt.Errorf("the outline calls %q, which is not one of the offered tools", n)
			}
		}
		if len(o.Steps) == 0 {
			return errors.New("the outline has no steps")
		}
		outline = o.Steps
		return nil
	})
	pr.OutlineRaw = raw
	if err != nil {
		return pr, err
	}
	return pr, s.planOutline(ctx, pr, outline, entries, request, cfg, cat, caller, lim)
}

// PlanWith is Plan's second pass alone: the plan that calls the given
// tools in that order (an outline a caller already knows), generated under
// PlanSchema and validated against cat. It needs a model.
func (s *Selector) PlanWith(ctx context.Context, caller, request string, outline []string, cat chains.Catalog) (*PlanResult, error) {
	start := time.Now()
	cfg := s.Config.withDefaults()
	if s.Model == nil || cfg.Model == "" {
		return nil, errors.New("selector: PlanWith needs a model")
	}
	entries := map[string]Entry{}
	for _, e := range s.Catalog.Callable(caller) {
		if _, dup := entries[e.Tool.Name]; !dup {
			entries[e.Tool.Name] = e
		}
	}
	for _, n := range outline {
		if _, ok := entries[n]; !ok {
			return nil, fmt.Errorf("selector: the outline calls %q, which %s may not call", n, caller)
		}
	}
	pr := &PlanResult{Mode: ModeModel}
	err := s.planOutline(ctx, pr, outline, entries, request, cfg, cat, caller, DefaultPlanLimits)
	pr.Latency = time.Since(start)
	return pr, err
}

// planOutline is the second pass: the plan for outline, into pr.
func (s *Selector) planOutline(ctx context.Context, pr *PlanResult, outline []string, entries map[string]Entry, request string, cfg Config, cat chains.Catalog, caller string, lim PlanLimits) error {
	pr.Outline = outline
	tools := make([]pipeline.Tool, len(outline))
	for i, n := range outline {
		tools[i] = entries[n].Tool
	}
	schema, budget, err := PlanSchema(tools, lim)
	if err != nil {
		return err
	}
	pr.GrammarHash, pr.Budget = hashOf(schema), budget.Bytes
	msgs := []Message{
		{Role: "system", Content: planPrompt(tools, lim)},
		{Role: "user", Content: request},
	}
	var chain *chains.Chain
	raw, repaired, err := s.generateJSON(ctx, schema, budget, msgs, cfg, "plan", func(raw string) error {
		c, err := chains.ParsePlan([]byte(raw))
		if err == nil && cat != nil {
			err = c.Validate(cat, caller)
		}
		chain = c
		return err
	})
	pr.Raw, pr.Repaired = raw, repaired
	if err != nil {
		return err
	}
	plan, err := ReadPlan(compactRaw(json.RawMessage(raw)))
	if err != nil {
		return err
	}
	pr.Plan, pr.Chain = plan, chain
	return nil
}

// PlanFormat rewrites an OutlineSchema or PlanSchema schema for Ollama's
// format (before grammar/export): the same language, with string length
// bounds folded into patterns, the form llama.cpp's converter enforces.
func PlanFormat(schema json.RawMessage) (json.RawMessage, error) {
	return export.FoldPatternLengths(schema)
}

// generateJSON generates one document under schema, with the schema's
// budget as num_predict, and one repair attempt when accept rejects it.
func (s *Selector) generateJSON(ctx context.Context, schema json.RawMessage, budget Budget, msgs []Message, cfg Config, what string, accept func(string) error) (string, bool, error) {
	g, err := grammar.Compile(schema, grammar.Options{Strict: true, Lenient: true})
	if err != nil {
		return "", false, fmt.Errorf("selector: %s grammar: %w", what, err)
	}
	format, err := PlanFormat(schema)
	if err != nil {
		return "", false, fmt.Errorf("selector: %s format: %w", what, err)
	}
	if s.FormatSchema != nil {
		if format, _, err = s.FormatSchema(format); err != nil {
			return "", false, fmt.Errorf("selector: %s format export: %w", what, err)
		}
	}
	if budget.Bounded {
		// +1: the end-of-generation token.
		cfg.NumPredict = budget.Bytes + 1
		cfg.MaxOutputBytes = max(cfg.MaxOutputBytes, budget.Bytes)
	}
	var raw string
	for attempt := 0; attempt < 2; attempt++ {
		raw, err = s.chat(ctx, g, format, msgs, cfg)
		if err != nil {
			return raw, attempt == 1, err
		}
		err = accept(raw)
		if err == nil {
			return raw, attempt == 1, nil
		}
		msgs = append(msgs,
			Message{Role: "assistant", Content: raw},
			Message{Role: "user", Content: "That " + what + " is invalid: " + err.Error() + "\nAnswer again with one corrected " + what + ", JSON only."})
	}
	return raw, true, &InvalidCallError{Raw: raw, Reason: err.Error()}
}

func outlinePrompt(cands []Candidate, entries map[string]Entry, lim PlanLimits) string {
	var b strings.Builder
	b.WriteString("You plan the tool calls that do what the user asks. First list the calls, in the order they run: one tool name per call (a tool may be called more than once), at most ")
	b.WriteString(strconv.Itoa(lim.MaxSteps))
	b.WriteString(` calls; their arguments come next. Answer with JSON only: {"steps": ["<tool>", ...]}.` + "\nTools:\n")
	for _, c := range cands {
		t := entries[c.Name].Tool
		fmt.Fprintf(&b, "- %s: %s\n  parameters: %s\n", t.Name, t.Description, compactJSON(t.Parameters))
		if out := outputFields(t); out != "" {
			fmt.Fprintf(&b, "  output: %s\n", out)
		}
	}
	return b.String()
}

func planPrompt(tools []pipeline.Tool, lim PlanLimits) string {
	var b strings.Builder
	b.WriteString("You write the arguments of each step of the plan that does what the user asks. The steps, in order:\n")
	for k, t := range tools {
		fmt.Fprintf(&b, "- %s: %s: %s\n  parameters: %s\n", StepID(k+1), t.Name, t.Description, compactJSON(t.Parameters))
		if out := outputFields(t); out != "" {
			fmt.Fprintf(&b, "  output: %s\n", out)
		}
	}
	fmt.Fprintf(&b, `An argument may be a reference to an earlier step's output, written alone as its value: "{{steps.s1.output.text}}". `+
		`Steps that do not use each other's output run in parallel; do not add references that are not needed. `+
		`A literal string has at most %d characters and no "{": pass long texts by reference. `+
		`Answer with JSON only: {"steps": [{"id": "s1", "function": "%s", "arguments": {...}}, ...]}.`, lim.MaxLiteral, tools[0].Name)
	return b.String()
}

// outputFields lists the top-level fields of a tool's output with their
// types: "text (string), path (string)".
func outputFields(t pipeline.Tool) string {
	paths, err := chains.OutputPaths(t, 1, maxOutputPaths)
	if err != nil {
		return ""
	}
	var parts []string
	for _, p := range paths {
		if len(p.Elems) != 1 || p.Elems[0].IsIndex || p.Elems[0].Key == "" {
			continue
		}
		ty := "any"
		if p.Types != nil {
			ty = strings.Join(p.Types, " or ")
		}
		parts = append(parts, fmt.Sprintf("%s (%s)", p.Elems[0].Key, ty))
	}
	return strings.Join(parts, ", ")
}
