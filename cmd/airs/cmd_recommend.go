package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/airs-dev/airs/recommender"
)

var recommendCmd = &command{
	Name:    "recommend",
	Summary: "show the tools AIRS suggests now, from your context, with the reasons",
	Usage: `Usage:
  airs recommend [--json]

Prints what AIRS would suggest to you right now, before you ask, and why.
It reads your context back from AIRS_HOME: the task you set ('airs task
set'), your calls of the last hour (the audit log), the files changed in
the spaces you may read in the last 10 minutes, and the chat lines you typed
in the last hour. Each suggestion names the tool, arguments filled in from
that context (checked against the tool's schema, never run), the signals
behind it (space, recent, task, conversation, history) and when it expires.

Nothing is run. In 'airs chat' suggestions appear after a turn and are
taken with /accept N or refused with /dismiss N; 'airs serve' offers them at
GET /v1/recommendations and as a live stream; what you answer there is
learned (and kept in AIRS_HOME/recommender).

--json prints the list as JSON: [{id, tool, provider, arguments, score,
signals: [{signal, score, why}], reason, urgency, context, expires}, …].

Examples:
  airs task set "summarize this week's reports"
  airs recommend
  airs recommend --json | jq '.[0].arguments'
`,
	Run: runRecommend,
}

func runRecommend(a *app, args []string) error {
	fs := a.flags()
	asJSON := fs.Bool("json", false, "print JSON instead of text")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("'recommend' takes no arguments, got %q", pos)
	}
	caller, err := a.caller()
	if err != nil {
		return err
	}
	e, closeE, err := a.build(a.context(), engineSpec{Channel: "recommend", Model: "none"})
	if err != nil {
		return err
	}
	defer closeE()
	rc := e.Recommender()
	if rc == nil {
		return fmt.Errorf("suggestions are off (recommend.enabled: false in %s): remove that line to turn them on", cfgName(a))
	}
	e.PrimeRecommender(caller)
	recs := rc.List(caller)
	if *asJSON {
		if recs == nil {
			recs = []recommender.Recommendation{}
		}
		b, err := json.MarshalIndent(recs, "", "  ")
		if err != nil {
			return err
		}
		fmt.Fprintln(a.stdout, string(b))
		return nil
	}
	if len(recs) == 0 {
		fmt.Fprintln(a.stdout, "No suggestions: nothing in your context points to a tool yet.")
		fmt.Fprintln(a.stdout, "Set a task ('airs task set \"…\"'), add a file to a space, or call a tool, then ask again.")
		return nil
	}
	writeRecommendations(a, recs, time.Now())
	return nil
}

func writeRecommendations(a *app, recs []recommender.Recommendation, now time.Time) {
	for i, r := range recs {
		fmt.Fprintf(a.stdout, "%d. %s %s   (score %.2f)\n", i+1, r.Tool, r.Arguments, r.Score)
		var why []string
		for _, s := range r.Signals {
			why = append(why, fmt.Sprintf("%s %.2f: %s", s.Signal, s.Score, s.Why))
		}
		fmt.Fprintf(a.stdout, "   because %s\n", strings.Join(why, "; "))
		fmt.Fprintf(a.stdout, "   expires in %s\n", r.Expires.Sub(now).Round(time.Second))
	}
}

var taskCmd = &command{
	Name:    "task",
	Summary: "set, show or clear the task text that steers AIRS's suggestions",
	Usage: `Usage:
  airs task set TEXT...
  airs task show
  airs task clear

The task is a sentence about what you are working on ("research solar
panel prices", "close the quarter's invoices"). AIRS's recommender reads it
as one of its signals and suggests tools that fit it, in 'airs recommend',
'airs chat' and a running 'airs serve' (which picks a change up within a
second). It is kept per agent in AIRS_HOME/recommender/tasks.json, at most
4 KiB. Over HTTP, PUT /v1/context {"task": "…"} does the same.

Examples:
  airs task set "compare this year's reports with last year's"
  airs task show
  airs task clear
`,
	Run: runTask,
}

func runTask(a *app, args []string) error {
	fs := a.flags()
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return usagef("say 'set TEXT', 'show' or 'clear'")
	}
	caller, err := a.caller()
	if err != nil {
		return err
	}
	cfg, err := a.config()
	if err != nil {
		return err
	}
	st, err := a.taskStore(cfg)
	if err != nil {
		return err
	}
	switch pos[0] {
	case "set":
		text := strings.TrimSpace(strings.Join(pos[1:], " "))
		if text == "" {
			return usagef("'task set' needs the TEXT of the task (to remove it: 'airs task clear')")
		}
		if err := st.Set(caller, text); err != nil {
			return err
		}
		fmt.Fprintf(a.stdout, "Task set for %s: %s\n", caller, text)
	case "show":
		if len(pos) > 1 {
			return usagef("'task show' takes no arguments")
		}
		text, err := st.Get(caller)
		if err != nil {
			return err
		}
		if text == "" {
			fmt.Fprintln(a.stdout, "No task set. Set one with: airs task set TEXT")
			return nil
		}
		fmt.Fprintln(a.stdout, text)
	case "clear":
		if len(pos) > 1 {
			return usagef("'task clear' takes no arguments")
		}
		if err := st.Set(caller, ""); err != nil {
			return err
		}
		fmt.Fprintf(a.stdout, "Task cleared for %s.\n", caller)
	default:
		return usagef("unknown 'task' action %q: say 'set TEXT', 'show' or 'clear'", pos[0])
	}
	return nil
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w any) bool {
	f, ok := w.(interface{ Stat() (os.FileInfo, error) })
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// cfgName names the configuration file in messages.
func cfgName(a *app) string {
	if a.cfg != nil && a.cfg.File != "" {
		return a.cfg.File
	}
	return "airs.yaml"
}
