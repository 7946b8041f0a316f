package selector

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/airs-dev/airs/chains"
	"github.com/airs-dev/airs/grammar"
	"github.com/airs-dev/airs/internal/turns"
	"github.com/airs-dev/airs/pipeline"
	"github.com/airs-dev/airs/understand"
)

// No-LLM planning from the request's interpretation (understand.Parse):
// the tool is the one whose words cover the request's action, and its
// arguments are filled by type from what the interpretation resolved —
// a file the request names for a parameter that takes a path (with the
// space it is in), the arithmetic for one that takes an expression, the
// given text, or the text a reading step produces, for one that takes a
// text. Which tools read which files, and which outputs feed which
// parameters, come from the tools' schemas (a required path parameter
// and a text output make a reader; a PDF path only a PDF's), not from
// their names, so outside tools combine the same way.

// Understand reads a request for caller against the spaces it may read.
func (s *Selector) Understand(caller, request string) *understand.Interpretation {
	return understand.Parse(request, s.envFor(caller))
}

func (s *Selector) envFor(caller string) understand.Env {
	if s.Env != nil {
		return s.Env(caller)
	}
	return understand.Env{Spaces: s.Config.Hints.Spaces}
}

// envOf is envFor whose reading gives way to light work when ctx's work
// is heavy (internal/turns).
func (s *Selector) envOf(ctx context.Context, caller string) understand.Env {
	env := s.envFor(caller)
	env.Yield = turns.Func(ctx)
	return env
}

// typed reports whether the interpretation has something for typed filling.
func typed(in *understand.Interpretation) bool {
	return in.Expression != "" || in.Body != "" || len(in.Objects) > 0 || in.Folder != nil ||
		in.MissingSpace != "" || in.Has(understand.List) || in.Space != "" && len(in.Actions) > 0
}

// PlanUnderstood plans a request in no-LLM mode from its interpretation.
// It answers (nil, nil) when the interpretation gives typed filling
// nothing to go on (the request is then planned as before); a
// *MissingSpaceError or *AmbiguousError when it names a space that is
// none, or several files equally well.
func (s *Selector) PlanUnderstood(ctx context.Context, caller, request string, cat chains.Catalog) (*PlanResult, error) {
	pr, _, err := s.planUnderstood(ctx, caller, request, cat, nil)
	return pr, err
}

// retrieved is one retrieval's candidates, kept for reuse by the no-LLM
// fallback when the query was the request itself.
type retrieved struct {
	query   string
	cands   []Candidate
	entries map[string]Entry
}

// planUnderstood is PlanUnderstood reusing have (a retrieval for the
// request, when the caller made one) and returning the retrieval it made.
func (s *Selector) planUnderstood(ctx context.Context, caller, request string, cat chains.Catalog, have *retrieved) (*PlanResult, *retrieved, error) {
	start := time.Now()
	in := understand.Parse(request, s.envOf(ctx, caller))
	if in.MissingSpace != "" && in.Space == "" {
		var spaces []string
		if s.Env != nil {
			spaces = s.Env(caller).Spaces
		}
		sort.Strings(spaces)
		return nil, nil, &MissingSpaceError{Name: in.MissingSpace, Usual: in.MissingHint, Spaces: spaces}
	}
	cfg := s.Config.withDefaults()
	query := request
	if in.Body != "" {
		query = strings.Replace(request, in.Body, " text ", 1)
	}
	if at := in.ActionText(); at != "" {
		query += " " + at
	}
	var cands []Candidate
	var entries map[string]Entry
	if have != nil && have.query == query {
		cands, entries = have.cands, have.entries
	} else {
		var err error
		if cands, entries, err = s.candidates(ctx, caller, query, 2*cfg.TopK); err != nil {
			return nil, nil, err
		}
	}
	got := &retrieved{query: query, cands: cands, entries: entries}
	pl := &planner{s: s, env: s.envOf(ctx, caller), in: in, request: request, entries: entries, shapes: map[string]*toolShape{}}

	// The tool whose words cover the request's main action first (a
	// summary of a file is summarize's, reading it only a means).
	act := in.ActionWords()
	order := slices.Clone(cands)
	scores := make(map[string]float64, len(cands))
	if act != "" {
		q := coverageTerms(act)
		for _, c := range cands {
			scores[c.Name] = coverageOf(q, entries[c.Name].Tool)
		}
	}
	score := func(c Candidate) float64 { return scores[c.Name] }
	sort.SliceStable(order, func(i, j int) bool { return score(order[i]) > score(order[j]) })
	pr := &PlanResult{Mode: ModeNoLLM, Notice: NoLLMNotice, Candidates: cands}
	var firstErr error
	tried := 0
	for _, c := range order {
		if tried == noLLMTries+1 {
			break
		}
		turns.Yield(ctx)
		sh := pl.shape(c.Name)
		if sh == nil {
			continue
		}
		if sh.t.Destructive && !in.ExplicitDestructive {
			continue // never the fallback
		}
		if in.Main().Destructive() && score(c) == 0 {
			continue // a request to delete is not served by a read
		}
		if c.Score[ScoreSimilarity] < cfg.MinSimilarity {
			continue // not similar enough at all (selection.min_similarity)
		}
		// A tool the request's words are about, or — held to values of
		// telling types for every argument — one they touch.
		covered := score(c) > 0 || c.Score[ScoreCoverage] >= cfg.MinCoverage
		if !covered && c.Score[ScoreCoverage] == 0 {
			continue
		}
		if !covered && in.Verb != "" && coverageOf(coverageTerms(in.Verb), entries[c.Name].Tool) == 0 {
			continue // "send 'x' to #general" is no summary of 'x'
		}
		tried++
		err := pl.fill(sh, !covered)
		if ur, ok := err.(errUseReader); ok {
			err = pl.fill(ur.r, !covered)
		}
		if err == nil {
			break
		}
		pl.steps = nil
		var amb errAmbiguous
		if asAmb(err, &amb) && (score(c) > 0 || amb.err.Phrase != "which space") {
			return nil, got, amb.err
		}
		if firstErr == nil {
			firstErr = fmt.Errorf("%s: %w", c.Name, err)
		}
	}
	if len(pl.steps) == 0 {
		if err := s.withheldFit(caller, in, request); err != nil {
			return nil, got, err
		}
		if firstErr != nil {
			pr.Notice += "; " + firstErr.Error()
		}
		pr.Plan = emptyPlan()
		pr.Latency = time.Since(start)
		if !typed(in) {
			return nil, got, nil // nothing typed resolved: planned as before
		}
		return pr, got, nil
	}
	pr.Plan = Plan{Steps: pl.steps}
	c, err := pr.Plan.Compile()
	if err == nil && cat != nil {
		err = c.Validate(cat, caller)
	}
	if err != nil {
		return nil, got, fmt.Errorf("selector: the no-LLM plan is invalid: %w", err)
	}
	pr.Chain = c
	for _, st := range pl.steps {
		pr.Outline = append(pr.Outline, st.Function)
	}
	if len(pl.steps) > 1 {
		pr.Notice = fmt.Sprintf("%s; planned as %d steps from what the tools take and give", NoLLMNotice, len(pl.steps))
	}
	for _, o := range in.Objects {
		// An ordinal chose one file of several: say which, and how.
		if e := o.Resolved(); e != nil && o.Chose != "" {
			pr.Notice += fmt.Sprintf("; chose %s (space %s): %s", e.Path, e.Space, o.Chose)
		}
	}
	if in.NameHas != "" {
		pr.Notice += fmt.Sprintf("; files whose names contain %q (no tool here searches inside files)", in.NameHas)
	}
	if len(in.Destination) > 0 && !pl.writes() {
		// "save the summary as notes.md" with no tool that writes: the
		// answer is still worth giving, but the user must know it is not saved.
		pr.Notice += fmt.Sprintf("; %s: no step of this plan writes files, so the result is shown, not saved", strings.Join(in.Destination, ", "))
	}
	pr.Latency = time.Since(start)
	return pr, got, nil
}

// noLLMUnderstood is no-LLM selection: from the request's interpretation
// when the selector has an Env (the first step of PlanUnderstood's plan),
// else, or when the interpretation gives nothing typed, noLLM.
func (s *Selector) noLLMUnderstood(ctx context.Context, caller, request string, cands []Candidate, entries map[string]Entry, cfg Config) (*Selection, error) {
	if s.Env != nil {
		pr, _, err := s.planUnderstood(ctx, caller, request, nil, &retrieved{query: request, cands: cands, entries: entries})
		if err != nil {
			return nil, err
		}
		if pr != nil {
			sel := &Selection{Mode: ModeNoLLM, Notice: pr.Notice, Candidates: cands, Function: grammar.NoneTool, Arguments: json.RawMessage(`{}`), Validation: "ok"}
			plan := pr.Plan
			if len(plan.Steps) > 0 {
				st := plan.Steps[0]
				sel.Function, sel.Arguments, sel.Provider = st.Function, st.Arguments, entries[st.Function].Provider
				if len(plan.Steps) > 1 {
					sel.Notice += fmt.Sprintf("; this is the first of %d steps (airs plan shows them all)", len(plan.Steps))
				}
				if s.Validate != nil {
					if err := s.Validate(entries[st.Function].Tool, st.Arguments); err != nil {
						sel.Validation = err.Error()
					}
				}
			}
			return sel, nil
		}
	}
	return s.noLLM(ctx, cands, entries, request, cfg)
}

// withheldFit answers an explicit ask to delete, move or overwrite that no
// tool the caller holds serves: when a tool it may not call would (its
// arguments fill from the request), a *CapabilityNeededError names that
// tool, the call and the capabilities to grant, instead of "no tool fits";
// several files named equally well are still asked about first. nil when
// no withheld tool serves it either.
func (s *Selector) withheldFit(caller string, in *understand.Interpretation, request string) error {
	w, ok := s.Catalog.(Withholder)
	if !ok || !in.ExplicitDestructive {
		return nil
	}
	entries := map[string]Entry{}
	var names []string
	for _, e := range w.Withheld(caller) {
		if _, dup := entries[e.Tool.Name]; !dup && e.Tool.Destructive {
			entries[e.Tool.Name] = e
			names = append(names, e.Tool.Name)
		}
	}
	if len(names) == 0 {
		return nil
	}
	q := coverageTerms(in.ActionWords())
	cover := map[string]float64{}
	for _, n := range names {
		cover[n] = coverageOf(q, entries[n].Tool)
	}
	sort.SliceStable(names, func(i, j int) bool {
		if cover[names[i]] != cover[names[j]] {
			return cover[names[i]] > cover[names[j]]
		}
		return names[i] < names[j]
	})
	pl := &planner{s: s, env: s.envFor(caller), in: in, request: request, entries: entries, shapes: map[string]*toolShape{}}
	for _, n := range names {
		sh := pl.shape(n)
		if sh == nil || cover[n] == 0 {
			continue
		}
		err := pl.fill(sh, false)
		var amb errAmbiguous
		if asAmb(err, &amb) {
			return amb.err
		}
		if err != nil || len(pl.steps) == 0 {
			continue
		}
		raw := pl.steps[0].Arguments
		var args map[string]any
		_ = json.Unmarshal(raw, &args)
		if lacks := w.Lacks(caller, sh.t, args); len(lacks) > 0 {
			need := &CapabilityNeededError{Caller: caller, Tool: n, Arguments: raw, More: len(pl.steps) - 1, Missing: lacks}
			if h, ok := w.(interface {
				Held(caller string) []pipeline.Capability
			}); ok {
				need.Held = h.Held(caller)
			}
			return need
		}
	}
	return nil
}
