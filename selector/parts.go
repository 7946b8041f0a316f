package selector

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/airs-dev/airs/chains"
	"github.com/airs-dev/airs/internal/turns"
	"github.com/airs-dev/airs/pipeline"
	"github.com/airs-dev/airs/understand"
)

// No-LLM mode serves a request of several parts ("find the PDFs in papers,
// then summarize them") as a plan, since without a model nothing can choose
// a next call from a result. PlanParts recognises such a request and plans
// it without a model:
//
//  1. The request is cut into parts at the words that order tasks ("then",
//     "and then", "after that", "afterwards", "finally", ";", or a new
//     sentence). One part is not a multi-tool request: PlanParts answers
//     nil and the request is served by one call (Select).
//  2. Each part gets the tool no-LLM selection would give it (retrieval
//     over the part, the best few candidates above MinSimilarity), with its
//     arguments extracted from the part's own words.
//  3. A required argument the part does not spell out ("summarize them")
//     is bound to an earlier step's output: a field of the same name (or,
//     for a text, the earlier step's text or summary) as a reference, or a
//     field of each element of an array it returned as a foreach over that
//     array. When neither exists, one bridging step is inserted: the tool,
//     among the caller's, whose output has the missing field and whose own
//     required arguments all bind to earlier outputs (list-files' paths →
//     pdf-extract → text), the one retrieval ranks first for the request.
//  4. The plan is parsed and validated like a model's (chains.ParsePlan,
//     Chain.Validate). A part for which no candidate gives a valid step
//     makes the request not plannable: PlanParts says which part and why.
//
// The request is multi-tool when at least two parts give a step.

// SplitParts cuts a request into the parts a no-LLM plan gives a step each
// (the interpretation's Parts: understand.SplitParts).
func SplitParts(request string) []string {
	parts := understand.SplitParts(request)
	// A part that only says how to give the answer ("give it as JSON")
	// is no task: it gets no step.
	return slices.DeleteFunc(parts, understand.OnlyFormat)
}

// contentKeys are the output fields a text argument may take when no field
// has its name, in order of preference.
var contentKeys = []string{"text", "content", "summary", "diff"}

// maxPartPaths bounds the output paths considered per earlier step.
const maxPartPaths = 64

// partStep is a step planned so far.
type partStep struct {
	id      string
	tool    pipeline.Tool
	foreach bool // the step runs once per element: its output is an array of tool outputs
	paths   []chains.OutputPath
	plan    PlanStep // the step as it goes into the plan
	part    string   // the words it was planned from
}

// PlanParts plans a request of several parts without a model (see above).
// It answers (nil, nil) when the request has fewer than two parts that give
// a step; an error when the request has several parts but one of them can
// be planned by no tool (the error names it).
func (s *Selector) PlanParts(ctx context.Context, caller, request string, cat chains.Catalog) (*PlanResult, error) {
	start := time.Now()
	turns.Yield(ctx)
	parts := SplitParts(request)
	if len(parts) < 2 {
		return nil, nil
	}
	cfg := s.Config.withDefaults()
	whole, entries, err := s.candidates(ctx, caller, request, len(s.Catalog.Callable(caller)))
	if err != nil {
		return nil, err
	}
	var steps []*partStep
	var failed []string
	for i, part := range parts {
		cands, _, err := s.candidates(ctx, caller, part, cfg.TopK)
		if err != nil {
			return nil, err
		}
		// Bridging tools are ranked for the part before this one, which
		// says what the objects are ("list the pdf files … then summarize
		// them": pdf-extract).
		bridges := whole
		if len(steps) > 0 {
			if bridges, _, err = s.candidates(ctx, caller, steps[len(steps)-1].part, len(entries)); err != nil {
				return nil, err
			}
			// By what the words say alone: a bridge's speed or trust does
			// not make it read the right kind of file.
			// And files of a type listed before ("*.pdf") go first to a
			// tool that says it reads that type.
			ext := fileTypeOf(steps[len(steps)-1])
			// (its name, then its description: read-file's says "for PDF
			// documents use pdf-extract").
			says := func(c Candidate) int {
				if ext == "" {
					return 0
				}
				re := regexp.MustCompile(`(?i)\b` + regexp.QuoteMeta(ext) + `\b`)
				switch {
				case re.MatchString(c.Name):
					return 2
				case re.MatchString(entries[c.Name].Tool.Description):
					return 1
				}
				return 0
			}
			bridges = slices.Clone(bridges)
			slices.SortStableFunc(bridges, func(a, b Candidate) int {
				if sa, sb := says(a), says(b); sa != sb {
					return cmp.Compare(sb, sa)
				}
				return cmp.Compare(b.Score[ScoreSimilarity], a.Score[ScoreSimilarity])
			})
		}
		added, why := s.planPart(steps, part, cands, entries, bridges, cfg, cat, caller)
		if added == nil {
			failed = append(failed, fmt.Sprintf("part %d (%q): %s", i+1, part, why))
			continue
		}
		steps = append(steps, added...)
	}
	if len(steps) < 2 && len(failed) == 0 {
		return nil, nil
	}
	if len(failed) > 0 {
		if len(steps) == 0 {
			return nil, nil // no part fits a tool: not a multi-tool request
		}
		return nil, fmt.Errorf("selector: the request has %d parts, but no-LLM mode could not plan %s; rephrase that part, or start Ollama so a model plans it", len(parts), strings.Join(failed, "; "))
	}
	pr := &PlanResult{Mode: ModeNoLLM, Candidates: whole,
		Notice: fmt.Sprintf("%s; the request has %d parts: planned as %d steps", NoLLMNotice, len(parts), len(steps))}
	pr.Plan = emptyPlan()
	for _, st := range steps {
		pr.Plan.Steps = append(pr.Plan.Steps, st.plan)
		pr.Outline = append(pr.Outline, st.tool.Name)
	}
	c, err := pr.Plan.Compile()
	if err == nil && cat != nil {
		err = c.Validate(cat, caller)
	}
	if err != nil {
		return nil, fmt.Errorf("selector: the no-LLM plan is invalid: %w", err)
	}
	pr.Chain = c
	pr.Latency = time.Since(start)
	return pr, nil
}

// planPart gives a part its step (with a bridging step before it when one
// is needed), trying the part's best candidates in order; the reason is the
// first candidate's problem when none fits.
func (s *Selector) planPart(prev []*partStep, part string, cands []Candidate, entries map[string]Entry, bridges []Candidate, cfg Config, cat chains.Catalog, caller string) ([]*partStep, string) {
	first := ""
	asks := understand.Parse(part, understand.Env{}).ExplicitDestructive
	for i, c := range cands {
		if i == noLLMTries || c.Score[ScoreSimilarity] < cfg.MinSimilarity {
			break
		}
		if c.Score[ScoreCoverage] < cfg.MinCoverage {
			continue // the part is not about what this tool does (as in noLLM)
		}
		e := entries[c.Name]
		if e.Tool.Destructive && !asks {
			continue // a destructive tool only where the part asks for it
		}
		st, missing, err := s.bindStep(prev, len(prev)+1, e.Tool, part, false)
		if err == nil && missing != "" && len(prev) > 0 {
			// A bridge: a tool whose output has the missing field.
			for _, b := range bridges {
				if b.Name == e.Tool.Name {
					continue
				}
				bt := entries[b.Name].Tool
				if bt.Destructive {
					continue // never a means to another step
				}
				bst, bmissing, berr := s.bindStep(prev, len(prev)+1, bt, part, true)
				if berr != nil || bmissing != "" || !hasField(bst, missing) {
					continue
				}
				st2, missing2, err2 := s.bindStep(append(slices.Clip(prev), bst), len(prev)+2, e.Tool, part, false)
				if err2 == nil && missing2 == "" && validPlan(append(slices.Clip(prev), bst, st2), cat, caller) == nil {
					return []*partStep{bst, st2}, ""
				}
			}
		}
		if err == nil && missing != "" {
			// Neither the part's words nor a step before (nor a bridge)
			// give it: a step with an empty value is no step of the part.
			err = fmt.Errorf("the part gives no %s", missing)
		}
		if err == nil {
			err = validPlan(append(slices.Clip(prev), st), cat, caller)
		}
		if err == nil {
			return []*partStep{st}, ""
		}
		if first == "" {
			first = fmt.Sprintf("%s: %v", e.Tool.Name, err)
		}
	}
	if first == "" {
		first = "no tool is close enough to it"
	}
	return nil, first
}

// bindStep builds step n calling t for part: each argument the part spells
// out is kept; each required one it does not is bound to an earlier output
// (a reference, or {{item.…}} under a foreach). missing names a required
// argument left with no value (or an empty string) by both. With bindOnly, only
// earlier outputs give required arguments (a bridging step has no words
// of its own).
func (s *Selector) bindStep(prev []*partStep, n int, t pipeline.Tool, part string, bindOnly bool) (*partStep, string, error) {
	args, _, err := ArgumentsUnderstood(t, understand.ParsePlain(part), s.Config.Hints)
	if err != nil {
		return nil, "", err
	}
	props, required, err := topProps(t.Parameters)
	if err != nil {
		return nil, "", err
	}
	if !bindOnly {
		listingHints(props, args, part)
	}
	lower := strings.ToLower(part)
	foreach := ""
	missing := ""
	for _, name := range required {
		v, has := args[name]
		if str, ok := v.(string); has && ok && str != "" && strings.Contains(lower, strings.ToLower(str)) && !bindOnly {
			continue // the part says it
		}
		if has && !bindOnly {
			if _, isStr := v.(string); !isStr {
				continue // numbers, booleans: extracted on evidence
			}
		}
		ref, each := bindArg(prev, name, props[name], foreach)
		switch {
		case ref != "":
			args[name] = ref
			if each != "" {
				foreach = each
			}
		case bindOnly:
			return nil, name, nil
		default:
			// Nothing at all for a text: a step before may produce it.
			if str, isStr := v.(string); !has || isStr && str == "" {
				missing = name
			}
		}
	}
	if bindOnly {
		// A bridge's optional arguments would come from a part's words it has not.
		for name := range args {
			if !slices.Contains(required, name) {
				delete(args, name)
			}
		}
	}
	st := &partStep{id: StepID(n), tool: t, foreach: foreach != "", part: part}
	st.paths, _ = chains.OutputPaths(t, 3, maxPartPaths)
	raw, _ := json.Marshal(args)
	st.plan = PlanStep{ID: st.id, Function: t.Name, Arguments: raw, Foreach: foreach}
	return st, missing, nil
}

// bindArg finds an earlier output for parameter name, latest step first: a
// field of that name (or a content field, for a text) as a reference, or
// the field of each element of an array as {{item.…}} with the foreach
// source. A step has one foreach source: once one is chosen (foreach), only
// it gives items.
func bindArg(prev []*partStep, name string, schema json.RawMessage, foreach string) (ref, each string) {
	want := schemaTypes(schema)
	keys := []string{name}
	if slices.Contains(contentKeys, name) {
		keys = append(keys, contentKeys...)
	}
	for _, key := range keys {
		for j := len(prev) - 1; j >= 0; j-- {
			p := prev[j]
			for _, op := range p.paths {
				if !fits(op.Types, want) {
					continue
				}
				el := op.Elems
				switch {
				case !p.foreach && len(el) == 1 && el[0].IsKey() && el[0].Key == key:
					return "{{steps." + p.id + ".output." + key + "}}", ""
				case p.foreach && len(el) == 1 && el[0].IsKey() && el[0].Key == key:
					src := "{{steps." + p.id + ".output}}"
					if foreach == "" || foreach == src {
						return "{{item." + key + "}}", src
					}
				case !p.foreach && len(el) == 3 && el[0].IsKey() && el[1].IsIndex && el[1].Index == chains.AnyIndex && el[2].IsKey() && el[2].Key == key:
					src := "{{steps." + p.id + ".output." + el[0].Key + "}}"
					if foreach == "" || foreach == src {
						return "{{item." + key + "}}", src
					}
				}
			}
		}
	}
	return "", ""
}

var (
	reRecursive = regexp.MustCompile(`(?i)\b(?:recursive(?:ly)?|sub-?folders?|sub-?directories|at any depth|everywhere|find|search)\b`)
)

// listingHints fill what a listing's words say that extraction does not
// read: a glob "pattern" from a file type ("the PDFs", "pdf files" →
// *.pdf) and "recursive" from "recursively", "subfolders", "everywhere",
// and from "find" or "search" (which look everywhere, as find(1) does).
// Only parameters of those names and types, and only when unset.
func listingHints(props map[string]json.RawMessage, args map[string]any, part string) {
	if sch, ok := props["pattern"]; ok && slices.Contains(schemaTypes(sch), "string") {
		if v, set := args["pattern"]; !set || v == "*" {
			if kind := understand.FileTypeIn(part); kind != "" {
				args["pattern"] = understand.Glob(kind)
			}
		}
	}
	if sch, ok := props["recursive"]; ok && slices.Contains(schemaTypes(sch), "boolean") {
		if _, set := args["recursive"]; !set && reRecursive.MatchString(part) {
			args["recursive"] = true
		}
	}
}

// fileTypeOf is the extension a step's glob pattern selects ("*.pdf" →
// "pdf"), or "".
func fileTypeOf(st *partStep) string {
	var args map[string]any
	if json.Unmarshal(st.plan.Arguments, &args) != nil {
		return ""
	}
	pat, _ := args["pattern"].(string)
	if ext, ok := strings.CutPrefix(pat, "*."); ok && regexp.MustCompile(`^\w+$`).MatchString(ext) {
		return ext
	}
	return ""
}

// hasField reports whether a step's output (each element's, for a foreach)
// has a top-level field that a missing argument binds to.
func hasField(st *partStep, name string) bool {
	keys := []string{name}
	if slices.Contains(contentKeys, name) {
		keys = contentKeys
	}
	for _, op := range st.paths {
		if len(op.Elems) == 1 && op.Elems[0].IsKey() && slices.Contains(keys, op.Elems[0].Key) {
			return true
		}
	}
	return false
}

func validPlan(steps []*partStep, cat chains.Catalog, caller string) error {
	plan := emptyPlan()
	for _, st := range steps {
		plan.Steps = append(plan.Steps, st.plan)
	}
	c, err := plan.Compile()
	if err != nil || cat == nil {
		return err
	}
	return c.Validate(cat, caller)
}

// fits reports whether a value of the output's types may fill a parameter
// of the wanted types (unknown on either side fits).
func fits(have, want []string) bool {
	if len(have) == 0 || len(want) == 0 {
		return true
	}
	for _, h := range have {
		if slices.Contains(want, h) || h == "integer" && slices.Contains(want, "number") {
			return true
		}
	}
	return false
}

// topProps returns a parameters schema's properties and required names.
func topProps(schema json.RawMessage) (map[string]json.RawMessage, []string, error) {
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
	}
	if err := json.Unmarshal(schema, &s); err != nil {
		return nil, nil, fmt.Errorf("parameters schema: %w", err)
	}
	return s.Properties, s.Required, nil
}

// schemaTypes is a schema's "type" as a list (nil when absent).
func schemaTypes(schema json.RawMessage) []string {
	var s struct {
		Type any `json:"type"`
	}
	if json.Unmarshal(schema, &s) != nil {
		return nil
	}
	switch t := s.Type.(type) {
	case string:
		return []string{t}
	case []any:
		var out []string
		for _, v := range t {
			if str, ok := v.(string); ok {
				out = append(out, str)
			}
		}
		return out
	}
	return nil
}
