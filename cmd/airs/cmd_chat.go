package main

import (
	"context"
	"os"
	"os/signal"
	"path/filepath"

	"github.com/airs-dev/airs/internal/chat"
	"github.com/airs-dev/airs/pipeline"
)

var chatCmd = &command{
	Name:    "chat",
	Summary: "talk to AIRS: requests in plain words become tool calls",
	Usage: `Usage:
  airs chat [--model MODEL | --model none] [--engine ollama|inproc] [--gguf FILE] [--json]

A conversation with AIRS. Type a request in plain words; AIRS picks a tool
among those you may call, shows the call it chose (tool and arguments, and
whether a model or the no-LLM mode chose it), runs it through the Tool
Manager and shows the result. With a model (Ollama), the result goes back
to the model, whose answer is streamed; large results are cut for the
model's context, with a note. Without one, AIRS says so at the start and
prints the result itself, as the answer it holds: a calculation's value, a
file's first lines (and how much was cut; for a question, the lines that
answer it first), a listing's file names, a comparison's differences, a
summary. /json prints the last results' whole JSON; --json (or /json on)
shows every result as JSON.

A model that is asked for (--model, or ollama.model in airs.yaml) must be
there: when Ollama does not answer, or has not pulled it, chat does not
start (exit 5) and says how to start Ollama or pull the model. Only with
no model set, or --model none, does it run in the no-LLM mode.

--engine inproc runs the model in process (a binary built with the inproc
tag, make inproc): --gguf FILE, or --model NAME pulled into Ollama and read
from its store. Calls are decoded under AIRS's token masks, answers are
sampled until the model ends its turn; Ollama need not run.

A destructive tool (delete-file, say) never runs unasked:
AIRS shows the call and asks "[y/N]"; anything but y, Ctrl-C and Ctrl-D
mean No. Ctrl-C while a call runs cancels that call (any partial output is
shown) and keeps the session; Ctrl-D or /quit leaves.

Commands at the prompt:
  /why       score components of the last request's candidate tools
  /tools     the tools you may call (* = asks before running)
  /history   the lines typed in this session
  /json      the last request's results as JSON (/json on, /json off:
             every result as JSON, or as its answer)
  /accept    the last call was right; /dismiss: it was wrong (both feed
             the ranking and, when recording is on, the session log)
  /help, /quit

Every line typed is appended to $AIRS_HOME/chat_history. With
recording.enabled in airs.yaml, every request (candidates and their
scores, the call, its validation, outcome and latency) and your feedback
go to the session log for 'airs eval replay'.

Examples:
  airs chat
  airs chat --model qwen3:0.6b
  airs chat --model none            # no-LLM mode even when Ollama runs
  airs chat --model none --json     # results as JSON, for a script
  airs chat --engine inproc --model qwen3:4b
`,
	Run: runChat,
}

// chatTestTools, when set, registers extra tools before the engine is
// built. Only binaries built with -tags airs_chattest set it (see
// chat_testtools.go), so that the pseudo-terminal test has a tool slow
// enough to interrupt; release binaries have no such tool.
var chatTestTools func(reg *pipeline.Registry) error

func runChat(a *app, args []string) error {
	fs := a.flags()
	model := fs.String("model", "", "the `model` that generates the calls (Ollama's; with --engine inproc, one pulled into Ollama, read from its store), or none for the no-LLM mode (default: ollama.model in airs.yaml)")
	asJSON := fs.Bool("json", false, "show each result as JSON instead of as its answer (a value, a text's first lines, a listing's names, a comparison's differences); /json on in the chat does the same")
	ef := addEngineFlags(fs)
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("'chat' takes no arguments: type your requests at its prompt")
	}
	cfg, err := a.config()
	if err != nil {
		return err
	}
	caller, err := a.caller()
	if err != nil {
		return err
	}
	ctx := context.Background()
	eng, closeEngine, err := a.build(ctx, engineSpec{Channel: "chat", Model: *model, Local: &ef, LocalModel: *model})
	if err != nil {
		return err
	}
	defer closeEngine()
	if err := eng.WatchSpaces(); err != nil {
		a.warnf("suggestions from files in the spaces are off: %v", err)
	}

	// From here on Ctrl-C belongs to the REPL: it cancels a running call
	// or prints a hint at the prompt, it does not end the process.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt)
	defer signal.Stop(sigs)
	return chat.New(eng, chat.Options{
		In:          a.stdin,
		Out:         a.stdout,
		Caller:      caller,
		Interrupts:  sigs,
		HistoryFile: filepath.Join(cfg.Home, "chat_history"),
		Dim:         isTerminal(a.stdout),
		JSON:        *asJSON,
	}).Run(ctx)
}
