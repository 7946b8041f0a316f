// Package chat is the `airs chat` REPL without the terminal: it reads lines
// from an io.Reader, writes to an io.Writer, and takes Ctrl-C as values on a
// channel, so tests drive it the way a terminal would.
//
// Each line is a request (served by engine.Turn: select, confirm when the
// tool is destructive, call through the pipeline, result to the model)
// or a command: /why, /tools, /history, /accept, /dismiss, /prompt, /help,
// /quit. /prompt NAME [ARGS] gets an MCP server's prompt (prompts/get) and
// takes its text as the line typed.
//
// Ctrl-C while a request runs cancels it (the context, and the pipeline
// call by its ID) and returns to the prompt with any partial output;
// Ctrl-C at the prompt only prints a hint, it never ends the session;
// Ctrl-C or end of input at a confirmation answers No.
package chat

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"

	"github.com/airs-dev/airs/grammar"
	"github.com/airs-dev/airs/internal/engine"
	"github.com/airs-dev/airs/recommender"
	"github.com/airs-dev/airs/selector"
	"github.com/airs-dev/airs/session"
)

// Options configure a REPL.
type Options struct {
	In  io.Reader
	Out io.Writer
	// Caller is the agent id, from the channel (the CLI's OS user).
	Caller string
	// Interrupts delivers Ctrl-C (os.Interrupt from signal.Notify).
	Interrupts <-chan os.Signal
	// HistoryFile, when set, gets every line typed appended to it.
	HistoryFile string
	// Session names the conversation in the session log ("" = a new ID).
	Session string
	// MaxShowBytes bounds a result printed in no-LLM mode; more is cut
	// with a note (default 8 KiB).
	MaxShowBytes int
	// Prompt is printed before each line (default "> ").
	Prompt string
	// Dim prints suggestions dimmed (ANSI), for a terminal.
	Dim bool
	// JSON shows every result as its JSON (as /json on does); otherwise a
	// result is shown as its answer (a value, a text's first lines, a
	// listing's names, a comparison's differences) and /json prints it.
	JSON bool
}

// REPL is one chat session.
type REPL struct {
	e    *engine.Engine
	opts Options
	out  *syncWriter

	lines   chan string // closed at end of input
	history []string
	last    *engine.TurnResult
	// lastReq is the last request typed, whatever became of it: /why
	// explains it even when it failed before a session record existed.
	lastReq *lastRequest

	mu     sync.Mutex
	callID string // the running call's ID, for Manager.Cancel

	suggestions []recommender.Recommendation // as last listed, numbered from 1
	shown       map[string]bool              // suggestion ids printed already

	// choosing: the last request named several files equally well; the
	// next line may be the number of the one meant.
	choosing *pendingChoice

	// outputs are the results of the last turn's calls, for /json (under
	// mu: the turn's goroutine adds them).
	outputs []json.RawMessage
}

// pendingChoice is a request waiting for the user to say which file.
type pendingChoice struct {
	request string
	amb     *selector.AmbiguousError
}

// New returns a REPL over an engine.
func New(e *engine.Engine, opts Options) *REPL {
	if opts.Prompt == "" {
		opts.Prompt = "> "
	}
	if opts.MaxShowBytes <= 0 {
		opts.MaxShowBytes = 8 << 10
	}
	if opts.Session == "" {
		opts.Session = session.NewID()
	}
	return &REPL{e: e, opts: opts, out: &syncWriter{w: opts.Out}}
}

// History returns the lines typed in this session, oldest first.
func (r *REPL) History() []string { return append([]string(nil), r.history...) }

// Run serves lines until /quit, the end of input, or ctx's end.
func (r *REPL) Run(ctx context.Context) error {
	r.lines = make(chan string)
	go r.read()
	r.banner()
	for {
		r.printf("%s", r.opts.Prompt)
		var line string
		var ok bool
		select {
		case line, ok = <-r.lines:
		case <-r.opts.Interrupts:
			// A terminal has echoed ^C and dropped the line being typed.
			r.printf("\n(Ctrl-D or /quit to leave)\n")
			continue
		case <-ctx.Done():
			r.printf("\n")
			return ctx.Err()
		}
		if !ok {
			r.printf("\nbye\n")
			return nil
		}
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		r.remember(line)
		if strings.HasPrefix(line, "/") {
			if quit := r.command(ctx, line); quit {
				return nil
			}
			continue
		}
		if c := r.choosing; c != nil {
			r.choosing = nil
			if text, ok := c.answer(line); ok {
				r.printf("→ %s\n", text)
				line = text
			}
		}
		r.turn(ctx, line)
	}
}

// answer turns a line that is the number of one of the choices into the
// request naming that file (its path and space in place of the words that
// named several); any other line is a new request.
func (c *pendingChoice) answer(line string) (string, bool) {
	n, err := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(line), ".")))
	if err != nil || n < 1 || n > len(c.amb.Choices) {
		return "", false
	}
	ch := c.amb.Choices[n-1]
	ref := "in " + ch.Space
	if ch.Path != "" {
		ref = ch.Path + " " + ref
	}
	if i := strings.Index(strings.ToLower(c.request), strings.ToLower(c.amb.Phrase)); c.amb.Phrase != "" && i >= 0 {
		return c.request[:i] + ref + c.request[i+len(c.amb.Phrase):], true
	}
	return c.request + " " + ref, true
}

// read feeds lines to r.lines and closes it at end of input.
func (r *REPL) read() {
	defer close(r.lines)
	br := bufio.NewReader(r.opts.In)
	for {
		s, err := br.ReadString('\n')
		if s != "" {
			r.lines <- strings.TrimRight(s, "\r\n")
		}
		if err != nil {
			return
		}
	}
}

func (r *REPL) printf(format string, args ...any) { fmt.Fprintf(r.out, format, args...) }

func (r *REPL) banner() {
	r.printf("AIRS chat as %s — ", r.opts.Caller)
	if r.e.AnswerModel() != nil {
		r.printf("mode: model %s via Ollama (calls are generated under a grammar)\n", r.e.ModelName())
	} else {
		r.printf("mode: no-LLM\n%s\n", r.e.ModelNotice())
	}
	if p := r.e.RecordingPath(); p != "" {
		r.printf("recording this session to %s\n", p)
	}
	r.printf("Type a request, or /help. Ctrl-C cancels a running call; Ctrl-D or /quit leaves.\n")
}

// remember adds a line to the history and appends it to the history file.
func (r *REPL) remember(line string) {
	r.history = append(r.history, line)
	if r.opts.HistoryFile == "" {
		return
	}
	f, err := os.OpenFile(r.opts.HistoryFile, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err == nil {
		_, err = f.WriteString(strings.ReplaceAll(line, "\n", " ") + "\n")
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		r.printf("warning: history not saved: %v\n", err)
		r.opts.HistoryFile = "" // say it once
	}
}

const helpText = `Type a request in plain words, e.g. "list the pdf files in documents".
AIRS picks a tool, shows the call, asks before running a destructive tool,
runs it through the pipeline and shows the result (or the
model's answer).

  /why       score components of the last request's candidate tools
  /tools     the tools you may call (* = destructive: asks before running)
  /history   the lines typed in this session
  /json      the last request's results as JSON, whole; /json on shows
             every result as JSON from now on, /json off as answers
  /prompt    the prompts of the MCP servers you may use
  /prompt SERVER.NAME [k=v ...]  run that prompt's text as your request
             (one argument: /prompt SERVER.NAME the value)
  /accept    the last call was right (raises the tool's preference)
  /dismiss   the last call was wrong (lowers it)
  /accept N  run suggestion N (shown dim after a turn; asks first if the
             tool is destructive)
  /dismiss N refuse suggestion N (AIRS suggests it less in that context)
  /help      this text
  /quit      leave (also Ctrl-D)

Ctrl-C cancels a running call and keeps the session.
`

// command runs a /command; it reports whether to quit.
func (r *REPL) command(ctx context.Context, line string) bool {
	name, _, _ := strings.Cut(line, " ")
	switch name {
	case "/quit", "/exit", "/q":
		r.printf("bye\n")
		return true
	case "/help", "/?":
		r.printf("%s", helpText)
	case "/tools":
		r.tools()
	case "/why":
		r.why()
	case "/prompt":
		_, arg, _ := strings.Cut(line, " ")
		r.prompt(ctx, strings.TrimSpace(arg))
	case "/json":
		_, arg, _ := strings.Cut(line, " ")
		r.json(strings.TrimSpace(arg))
	case "/history":
		for i, h := range r.history {
			r.printf("%4d  %s\n", i+1, h)
		}
	case "/accept", "/dismiss":
		if _, arg, ok := strings.Cut(line, " "); ok && strings.TrimSpace(arg) != "" {
			r.answerSuggestion(ctx, name == "/accept", arg)
			return false
		}
		verdict := session.Accepted
		if name == "/dismiss" {
			verdict = session.Dismissed
		}
		r.feedback(ctx, verdict)
	default:
		r.printf("unknown command %s; /help lists the commands\n", name)
	}
	return false
}

func (r *REPL) tools() {
	entries := r.e.CallableTools(r.opts.Caller)
	if len(entries) == 0 {
		r.printf("you may call no tool: grant %s capabilities in airs.yaml\n", r.opts.Caller)
		return
	}
	tw := tabwriter.NewWriter(r.out, 0, 4, 2, ' ', 0)
	seen := map[string]bool{}
	for _, c := range entries {
		key := c.Provider + "/" + c.Tool.Name
		if seen[key] {
			continue
		}
		seen[key] = true
		mark := " "
		if c.Tool.Destructive {
			mark = "*"
		}
		desc, _, _ := strings.Cut(c.Tool.Description, "\n")
		if len(desc) > 70 {
			desc = desc[:67] + "..."
		}
		fmt.Fprintf(tw, "%s %s\t%s\t%s\n", mark, c.Tool.Name, c.Provider, desc)
	}
	tw.Flush()
	r.printf("(* = destructive: AIRS asks before running it)\n")
}

// whyColumns are the score components /why shows, in order.
var whyColumns = []struct{ key, head string }{
	{selector.ScoreComposite, "score"},
	{selector.ScoreSemanticMatch, "semantic"},
	{selector.ScoreSimilarity, "cosine"},
	{selector.ScoreCoverage, "coverage"},
	{selector.ScoreTrustWeight, "trust"},
	{selector.ScoreSuccessRate, "success"},
	{selector.ScoreLatencyScore, "speed"},
	{selector.ScorePreferenceScore, "pref"},
}

// lastRequest is a request and what became of it.
type lastRequest struct {
	text string
	tr   *engine.TurnResult
	err  error
}

func (r *REPL) why() {
	lr := r.lastReq
	if lr == nil {
		r.printf("no request yet: /why explains the last one\n")
		return
	}
	var sel *selector.Selection
	if lr.tr != nil {
		sel = lr.tr.First().Selection
	}
	if sel == nil {
		// It stopped before a selection was kept (a file it names is not
		// there, say): the reason, then the candidates it had, chosen
		// again without running anything.
		if lr.err != nil {
			r.printf("the last request (%q) stopped before any call ran: %v\n", lr.text, lr.err)
		}
		s, err := r.e.Candidates(context.Background(), r.opts.Caller, lr.text)
		if err != nil || s == nil {
			r.printf("no candidate tools to show for it")
			if err != nil {
				r.printf(": %v", err)
			}
			r.printf("\n")
			return
		}
		sel = s
	}
	if len(sel.Candidates) == 0 {
		r.printf("no candidate tools were found for the last request\n")
		return
	}
	r.printf("candidates for the last request (%s), best first:\n", modeName(sel))
	// Components the table does not name (a scorer may add some).
	var extra []string
	for k := range sel.Candidates[0].Score {
		if !knownColumn(k) {
			extra = append(extra, k)
		}
	}
	sort.Strings(extra)
	tw := tabwriter.NewWriter(r.out, 0, 4, 2, ' ', 0)
	row := []string{"  tool"}
	for _, c := range whyColumns {
		row = append(row, c.head)
	}
	fmt.Fprintln(tw, strings.Join(append(row, extra...), "\t"))
	for _, c := range sel.Candidates {
		mark := " "
		if c.Name == sel.Function {
			mark = "→"
		}
		row = []string{mark + " " + c.Name}
		for _, col := range whyColumns {
			row = append(row, num(c.Score[col.key]))
		}
		for _, k := range extra {
			row = append(row, num(c.Score[k]))
		}
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	tw.Flush()
	r.printf("score = the weighted sum of semantic, trust, success, speed and pref; cosine is the raw similarity\n")
	if sel.Mode == selector.ModeNoLLM {
		r.printf("coverage = the share of the request's words the tool's text uses; no-LLM mode proposes a tool only from %.2f (selection.min_coverage)\n", r.e.NoFitThreshold())
	}
	r.whyLevel2()
}

// num formats a score component; no "-0.000".
func num(v float64) string {
	if math.Abs(v) < 0.0005 {
		v = 0
	}
	return strconv.FormatFloat(v, 'f', 3, 64)
}

func knownColumn(k string) bool {
	for _, c := range whyColumns {
		if c.key == k {
			return true
		}
	}
	return false
}

func (r *REPL) feedback(ctx context.Context, verdict string) {
	if r.last == nil {
		r.printf("no request yet to give feedback on\n")
		return
	}
	if err := r.e.Feedback(ctx, r.last, verdict); err != nil {
		r.printf("feedback not recorded: %v\n", err)
		return
	}
	what := "no tool"
	if s := r.last.First().Selection; s != nil && s.Function != grammar.NoneTool {
		what = s.Function
	}
	r.printf("noted: %s %s\n", verdict, what)
}

// turn serves one request, cancelling it on Ctrl-C.
func (r *REPL) turn(ctx context.Context, text string) {
	tctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ui := &termUI{r: r, request: text}
	r.mu.Lock()
	r.outputs = nil
	r.mu.Unlock()
	type outcome struct {
		tr  *engine.TurnResult
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		tr, err := r.e.Turn(tctx, r.opts.Caller, text, ui, engine.TurnOptions{Session: r.opts.Session})
		done <- outcome{tr, err}
	}()
	var o outcome
	interrupted := false
wait:
	for {
		select {
		case o = <-done:
			break wait
		case <-r.opts.Interrupts:
			if !interrupted {
				interrupted = true
				r.printf("\ncancelling…\n")
			}
			cancel()
			r.mu.Lock()
			id := r.callID
			r.mu.Unlock()
			if id != "" {
				r.e.Cancel(id)
			}
		}
	}
	r.mu.Lock()
	r.callID = ""
	r.mu.Unlock()
	ui.endAnswer()
	tr, err := o.tr, o.err
	if tr != nil && tr.RecordID != "" {
		r.last = tr
	}
	r.lastReq = &lastRequest{text: text, tr: tr, err: err}
	switch {
	case tr != nil && tr.First().Skipped != "" && ui.explained != "" && strings.HasSuffix(tr.First().Skipped, ui.explained):
		r.printf("not run\n") // why, and what to say instead, is on the line above
	case tr != nil && tr.First().Skipped != "":
		r.printf("not run: %s\n", tr.First().Skipped)
	}
	var amb *selector.AmbiguousError
	switch {
	case errors.As(err, &amb) && len(amb.Choices) > 0:
		// Nothing is guessed: the user says which one by its number.
		r.choosing = &pendingChoice{request: text, amb: amb}
		r.printf("%q fits %d equally well; which one? Answer with its number (anything else is a new request):\n", amb.Phrase, len(amb.Choices))
		for i, c := range amb.Choices {
			if c.Path == "" {
				r.printf("  %d. space %s\n", i+1, c.Space)
				continue
			}
			r.printf("  %d. %s (space %s)\n", i+1, c.Path, c.Space)
		}
	case err != nil && !(interrupted && errors.Is(err, context.Canceled)):
		r.printf("error: %v\n", err)
	}
	if interrupted {
		r.printf("cancelled; back at the prompt\n")
	}
	if tr != nil && tr.RecordErr != nil {
		r.printf("warning: this request was not recorded: %v\n", tr.RecordErr)
	}
	r.suggest()
}
