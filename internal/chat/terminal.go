package chat

// The terminal side of a turn: how selections, confirmations, results
// and the model's answer are shown, and /json.

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/airs-dev/airs/grammar"
	"github.com/airs-dev/airs/guard"
	"github.com/airs-dev/airs/internal/engine"
	"github.com/airs-dev/airs/pipeline"
	"github.com/airs-dev/airs/selector"
)

// termUI is the REPL's engine.TurnUI.
type termUI struct {
	r         *REPL
	streaming bool   // the model's answer is being written
	step      int    // the step being served, 0 before the second
	explained string // a selection's problem already said with what to do about it
	request   string // the request being served
	// steps and last: how many calls the turn's plan selected, and the
	// tool of its last; a result of another tool in a plan of several is
	// a middle step's (a text read for a comparison), shown in brief.
	steps int
	last  string
	// items names the foreach element each call of a plan was for, by
	// call ID (engine.ItemUI): "summarize each paper" says whose summary
	// each is.
	items map[string]string
}

// Item notes the foreach element a plan's call is for (engine.ItemUI).
func (u *termUI) Item(callID, label string) {
	if u.items == nil {
		u.items = map[string]string{}
	}
	u.items[callID] = label
}

// forItem is " for LABEL" when the call was made for a foreach element.
func (u *termUI) forItem(callID string) string {
	if l := u.items[callID]; l != "" {
		return " for " + l
	}
	return ""
}

// Step heads each step after the first of a turn that takes several.
func (u *termUI) Step(n, max int) {
	u.step = n
	u.r.printf("step %d/%d:\n", n, max)
}

func modeName(sel *selector.Selection) string {
	if sel.Mode == selector.ModeModel {
		return "model " + sel.Model
	}
	return "no-LLM mode"
}

func (u *termUI) Selected(sel *selector.Selection, tool *pipeline.Tool) {
	r := u.r
	if sel.Function == grammar.NoneTool && u.step > 1 {
		r.printf("[%s] no further call needed; the model answers:\n", modeName(sel))
		return
	}
	if sel.Function == grammar.NoneTool {
		r.printf("[%s] no tool fits this request", modeName(sel))
		if r.e.AnswerModel() != nil {
			r.printf("; the model answers directly:\n")
		} else {
			r.printf(" (/why shows the candidates; /tools lists what you may call)\n")
		}
		return
	}
	u.steps++
	u.last = sel.Function
	r.printf("[%s] tool: %s %s\n", modeName(sel), sel.Function, compactJSON(sel.Arguments))
	// The mode's own notice was said when the chat started; what the
	// selector adds after it (why the arguments could not be taken from
	// the request, and what to say instead) is for this request.
	notice := sel.Notice
	if strings.HasPrefix(notice, selector.NoLLMNotice) {
		notice = strings.TrimLeft(strings.TrimPrefix(notice, selector.NoLLMNotice), "; ")
	}
	if notice != "" {
		r.printf("  %s\n", notice) // a plan step's, e.g. once for each element
		if sel.Validation != "ok" && strings.Contains(notice, sel.Validation) {
			u.explained = sel.Validation
		}
	}
	if sel.Validation != "ok" && !strings.Contains(notice, sel.Validation) {
		r.printf("  the arguments do not fit the schema: %s\n", sel.Validation)
	}
}

func (u *termUI) Confirm(ctx context.Context, tool pipeline.Tool, args json.RawMessage) bool {
	r := u.r
	r.printf("%s is destructive. run %s with %s? [y/N] ", tool.Name, tool.Name, compactJSON(args))
	select {
	case line, ok := <-r.lines:
		if !ok {
			r.printf("\n")
			return false
		}
		switch strings.ToLower(strings.TrimSpace(line)) {
		case "y", "yes":
			return true
		}
		return false
	case <-ctx.Done():
		r.printf("\n")
		return false
	}
}

// ConfirmIntent is the guard's question (engine.IntentUI): o or y allows
// the call once, a always (for this agent and tool), d or n denies it;
// anything else, Ctrl-C and end of input leave it unrun and undecided.
func (u *termUI) ConfirmIntent(ctx context.Context, caller string, tool pipeline.Tool, args json.RawMessage) guard.Choice {
	r := u.r
	r.printf("agent %s wants to call %s(%s): allow [o]nce, [a]lways for this agent, or [d]eny? ", caller, tool.Name, compactJSON(args))
	select {
	case line, ok := <-r.lines:
		if !ok {
			r.printf("\n")
			return 0
		}
		switch strings.ToLower(strings.TrimSpace(line)) {
		case "o", "once", "y", "yes":
			return guard.Once
		case "a", "always":
			return guard.Always
		case "d", "deny", "n", "no":
			return guard.Deny
		}
		return 0
	case <-ctx.Done():
		r.printf("\n")
		return 0
	}
}

func (u *termUI) Running(callID string) {
	u.r.mu.Lock()
	u.r.callID = callID
	u.r.mu.Unlock()
}

func (u *termUI) Result(res *pipeline.Result, err error) {
	r := u.r
	u.r.mu.Lock()
	u.r.callID = ""
	u.r.mu.Unlock()
	switch {
	case err == nil:
		r.printf("ok: %s%s in %s\n", res.Tool, u.forItem(res.CallID), res.Latency.Round(time.Microsecond))
	case pipeline.KindOf(err) == pipeline.KindCancelled:
		r.printf("cancelled: %s%s after %s", res.Tool, u.forItem(res.CallID), res.Latency.Round(time.Microsecond))
		if len(res.Output) > 0 {
			r.printf("; partial output:\n")
			u.show(res.Output)
		} else {
			r.printf(" (no partial output)\n")
		}
		return
	default:
		r.printf("failed%s: %s: %v\n", u.forItem(res.CallID), pipeline.KindOf(err), err)
		if h := pipeline.Hint(err); h != "" {
			r.printf("hint: %s\n", h)
		}
	}
	if res.Warning != "" {
		r.printf("warning: %s\n", res.Warning)
	}
	if len(res.Output) > 0 && r.e.AnswerModel() == nil {
		u.showResult(res.Output, u.steps > 1 && res.Tool != u.last)
	}
}

// show prints a result as its answer (present), or as indented JSON when
// asked for JSON or when it has no shape present knows; cut with a note
// when large. The JSON is kept for /json.
func (u *termUI) show(out json.RawMessage) { u.showResult(out, false) }

// showResult is show; a middle step's result (middle) is shown by its
// first line only: the answer is the last step's.
func (u *termUI) showResult(out json.RawMessage, middle bool) {
	r := u.r
	r.mu.Lock()
	r.outputs = append(r.outputs, out)
	asJSON := r.opts.JSON
	r.mu.Unlock()
	if !asJSON {
		if s, ok := present(out, u.request); ok {
			if middle {
				first, _, _ := strings.Cut(s, "\n")
				r.printf("%s (read for the next step; /json shows it whole)\n", strings.TrimSuffix(first, ":"))
				return
			}
			s, _ = engine.Truncate([]byte(s), r.opts.MaxShowBytes)
			r.printf("%s", s)
			if !strings.HasSuffix(s, "\n") {
				r.printf("\n")
			}
			return
		}
	}
	r.printf("%s\n", indented(out, r.opts.MaxShowBytes))
}

// indented is out as indented JSON, cut at max bytes with a note (max 0:
// whole).
func indented(out json.RawMessage, max int) string {
	var b bytes.Buffer
	if json.Indent(&b, out, "", "  ") != nil {
		b.Reset()
		b.Write(out)
	}
	if max <= 0 {
		return b.String()
	}
	s, _ := engine.Truncate(b.Bytes(), max)
	return s
}

// json is /json: the last turn's results as whole JSON, or "on"/"off" to
// show every result as JSON or as its answer.
func (r *REPL) json(arg string) {
	switch a := strings.ToLower(arg); a {
	case "on", "off":
		r.mu.Lock()
		r.opts.JSON = a == "on"
		r.mu.Unlock()
		if a == "on" {
			r.printf("results are shown as JSON (/json off: as answers)\n")
		} else {
			r.printf("results are shown as answers (/json prints the last ones as JSON)\n")
		}
		return
	case "":
	default:
		r.printf("/json takes on, off or nothing (the last results as JSON)\n")
		return
	}
	r.mu.Lock()
	outs := append([]json.RawMessage(nil), r.outputs...)
	r.mu.Unlock()
	if len(outs) == 0 {
		r.printf("no result yet: /json prints the last request's results\n")
		return
	}
	for _, o := range outs {
		r.printf("%s\n", indented(o, 0))
	}
}

func (u *termUI) Note(msg string) { u.r.printf("note: %s\n", msg) }

func (u *termUI) Token(chunk string) error {
	u.streaming = true
	_, err := io.WriteString(u.r.out, chunk)
	return err
}

// endAnswer ends a streamed answer with a newline.
func (u *termUI) endAnswer() {
	if u.streaming {
		u.r.printf("\n")
		u.streaming = false
	}
}

func compactJSON(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}

// syncWriter serializes writes from the REPL and the running turn.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

var _ engine.IntentUI = (*termUI)(nil)
