package chat

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/airs-dev/airs/internal/engine"
	"github.com/airs-dev/airs/pipeline"
	"github.com/airs-dev/airs/recommender"
)

// suggest prints the recommender's suggestions not shown yet, one dim
// line each after a turn: low urgency, so nothing is asked and nothing
// waits for an answer.
func (r *REPL) suggest() {
	rc := r.e.Recommender()
	if rc == nil {
		return
	}
	recs := rc.List(r.opts.Caller)
	if len(recs) == 0 {
		return
	}
	if r.shown == nil {
		r.shown = map[string]bool{}
	}
	r.suggestions = recs
	for i, rec := range recs {
		if r.shown[rec.ID] {
			continue
		}
		r.shown[rec.ID] = true
		line := fmt.Sprintf("suggestion %d: %s %s — %s (/accept %d, /dismiss %d)", i+1, rec.Tool, rec.Arguments, rec.Reason, i+1, i+1)
		if r.opts.Dim {
			line = "\x1b[2m" + line + "\x1b[0m"
		}
		r.printf("%s\n", line)
	}
}

// suggestion is the numbered suggestion arg names ("1" is the first
// shown), or nil with a message printed.
func (r *REPL) suggestion(arg string) *recommender.Recommendation {
	n, err := strconv.Atoi(strings.TrimSpace(arg))
	if err != nil || n < 1 || n > len(r.suggestions) {
		if len(r.suggestions) == 0 {
			r.printf("no suggestions to answer; they appear after a turn\n")
		} else {
			r.printf("say a suggestion's number, 1 to %d\n", len(r.suggestions))
		}
		return nil
	}
	return &r.suggestions[n-1]
}

// answerSuggestion takes /accept N or /dismiss N. An accepted suggestion
// is run through the pipeline like any call (asking first when the tool is
// destructive); the recommender itself never runs anything.
func (r *REPL) answerSuggestion(ctx context.Context, accept bool, arg string) {
	s := r.suggestion(arg)
	if s == nil {
		return
	}
	rc := r.e.Recommender()
	if !accept {
		if err := rc.Dismiss(r.opts.Caller, s.ID); err != nil {
			r.printf("not dismissed: %v\n", err)
			return
		}
		r.printf("dismissed %s; AIRS will suggest it less in this context\n", s.Tool)
		return
	}
	rec, err := rc.Accept(r.opts.Caller, s.ID)
	if err != nil {
		r.printf("not accepted: %v\n", err)
		return
	}
	ui := &termUI{r: r}
	tool, needsConfirm := r.e.Lookup(r.opts.Caller, rec.Tool, rec.Provider)
	if tool == nil {
		r.printf("%s is no longer yours to call\n", rec.Tool)
		return
	}
	// A destructive tool's call is asked about by the pipeline's gate.
	res, err := r.e.CallAsking(ctx, ui, pipeline.Request{Tool: rec.Tool, Provider: rec.Provider, Params: rec.Arguments, Caller: r.opts.Caller},
		*tool, needsConfirm)
	if errors.Is(err, engine.ErrDeclined) {
		r.printf("not run\n")
		return
	}
	if res == nil {
		r.printf("failed: %v\n", err)
		return
	}
	ui.Result(res, err)
	if err == nil && r.e.AnswerModel() != nil && len(res.Output) > 0 {
		ui.show(res.Output)
	}
}
