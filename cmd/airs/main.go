// Command airs is AIRS's one binary: it lists and calls tools through the
// Tool Manager, checks the audit log and (in other files) chats, serves,
// runs pipelines and evaluates.
//
// # Adding a subcommand
//
// Write cmd_NAME.go with a *command value (see command below) and add one
// line to the commands list in this file. The command gets an *app, which
// loads the configuration and builds the Manager on demand, and the
// arguments after its name; it returns an error, which main turns into an
// exit code and a one-line hint (see exitCode).
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/airs-dev/airs/config"
	"github.com/airs-dev/airs/mcp/client"
	"github.com/airs-dev/airs/pipeline"
)

// commands is the registry of subcommands, in the order `airs help` shows
// them. Add new subcommands here: one line each.
var commands = []*command{
	toolsCmd,
	callCmd,
	runCmd,
	serveCmd,
	mcpCmd,
	grammarCmd,
	auditCmd,
	versionCmd,
	evalCmd,
	trainCmd,
	chatCmd,
	demoCmd,
	selectCmd,
	planCmd,
	recommendCmd,
	reviewCmd,
	guardCmd,
	taskCmd,
	workerCmd,
	doctorCmd,
}

// command is one subcommand.
type command struct {
	Name    string
	Summary string // one line, for `airs help`
	// Usage is the full help: synopsis, flags are appended by the
	// command's FlagSet, then examples. It should teach: say what the
	// command does, show real invocations.
	Usage string
	// Run executes the command with the arguments after its name.
	Run func(a *app, args []string) error
}

// Exit codes besides pipeline.ExitCode's 10–25 (one per error kind).
const (
	exitOK       = 0
	exitFailure  = 1 // anything not covered below
	exitUsage    = 2 // bad flags, unknown command, missing argument
	exitConfig   = 3 // airs.yaml is invalid
	exitAuditBad = 4 // audit verify found a break in the chain
	exitModel    = 5 // the model asked for is not there (Ollama down, or not pulled)
)

// usageError is a mistake in how airs was invoked. flags marks a flag the
// command does not know or could not parse: its hint points at the flags.
type usageError struct {
	msg   string
	flags bool
}

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// exitError makes a command exit with code. With err nil, the command has
// already said what went wrong and nothing more is printed.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.err.Error()
}
func (e *exitError) Unwrap() error { return e.err }

func main() {
	// A hidden mode first: the supervisor between AIRS and a stdio MCP
	// server, which kills what the server started when AIRS dies.
	client.MaybeSupervise()
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

const mainUsage = `airs — find, call and audit tools for local LLMs

Usage:
  airs [--config FILE] COMMAND [ARGS]
  airs --version

Commands:
%s
Global flags:
  --config FILE   configuration file (default: $AIRS_CONFIG, else %s)
  --version       print the version (as 'airs version')

Run 'airs help COMMAND' (or 'airs COMMAND --help') for a command's flags and
examples, and 'airs help config' for an annotated airs.yaml.

Examples:
  airs doctor                   # is this machine ready? each problem with its fix
  airs tools list
  airs call calculator --args '{"expression": "(12.5 + 7) * 3"}'
  airs call list-files --args '{"space": "cwd", "pattern": "*.pdf"}'
  airs audit verify

Exit codes:
  0 ok · 1 other error · 2 usage · 3 invalid or missing config · 4 audit chain broken
  5 the model asked for is not there (see 'airs doctor')
  10–25 a tool call failed; one code per error kind (see 'airs help exit-codes')
`

// run is main without the process: tests call it directly.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	a := &app{stdin: stdin, stdout: stdout, stderr: stderr}
	global := flag.NewFlagSet("airs", flag.ContinueOnError)
	global.SetOutput(io.Discard)
	global.StringVar(&a.configFlag, "config", "", "")
	help := global.Bool("help", false, "")
	global.BoolVar(help, "h", false, "")
	showVersion := global.Bool("version", false, "")
	// A bad global flag is one line and a hint, not the whole usage.
	global.Usage = func() {}
	if err := global.Parse(args); err != nil {
		fmt.Fprintf(stderr, "airs: %v\nRun 'airs --help' for the commands and global flags.\n", err)
		return exitUsage
	}
	rest := global.Args()
	if *showVersion && !*help {
		a.cmd = versionCmd
		return report(stderr, versionCmd, versionCmd.Run(a, rest))
	}
	if *help || len(rest) == 0 {
		printMainUsage(stdout)
		if len(rest) == 0 && !*help {
			return exitUsage
		}
		return exitOK
	}
	name, cmdArgs := rest[0], rest[1:]
	if name == "help" {
		return runHelp(a, cmdArgs)
	}
	cmd := lookup(name)
	if cmd == nil {
		fmt.Fprintf(stderr, "airs: unknown command %q%s\nRun 'airs help' for the list.\n", name, suggest(name))
		return exitUsage
	}
	a.cmd = cmd
	err := cmd.Run(a, cmdArgs)
	a.close()
	return report(stderr, cmd, err)
}

func lookup(name string) *command {
	for _, c := range commands {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// suggest names a command close to a mistyped one.
func suggest(name string) string {
	for _, c := range commands {
		if strings.HasPrefix(c.Name, name) || strings.HasPrefix(name, c.Name) || editDistance(name, c.Name) <= 2 {
			return fmt.Sprintf(" (did you mean %q?)", c.Name)
		}
	}
	return ""
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

func printMainUsage(w io.Writer) {
	var sb strings.Builder
	for _, c := range commands {
		fmt.Fprintf(&sb, "  %-9s %s\n", c.Name, c.Summary)
	}
	fmt.Fprintf(&sb, "  %-9s %s\n", "help", "show help for a command, 'config' or 'exit-codes'")
	fmt.Fprintf(w, mainUsage, sb.String(), config.DefaultPath())
}

// report prints err with a hint and returns the exit code.
func report(stderr io.Writer, cmd *command, err error) int {
	if err == nil {
		return exitOK
	}
	code := exitCode(err)
	prefix := "airs " + cmd.Name
	var ue *usageError
	var ce *config.Error
	switch {
	case errors.Is(err, flag.ErrHelp):
		return exitOK
	case errors.As(err, &ue) && ue.flags:
		fmt.Fprintf(stderr, "%s: %s\nRun 'airs %s --help' for its flags.\n", prefix, ue.msg, cmd.Name)
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "%s: %s\nRun 'airs help %s' for usage and examples.\n", prefix, ue.msg, cmd.Name)
	case errors.As(err, &ce):
		fmt.Fprintf(stderr, "%s: invalid configuration:\n", prefix)
		for _, p := range ce.Problems {
			fmt.Fprintf(stderr, "  %s\n", p)
		}
		fmt.Fprintln(stderr, "hint: fix the lines above; 'airs help config' shows every key with an example")
	default:
		var ee *exitError
		if errors.As(err, &ee) && ee.err == nil {
			return code // already reported
		}
		fmt.Fprintf(stderr, "%s: %v\n", prefix, err)
		if k := pipeline.KindOf(err); k != "" && k != "internal" {
			fmt.Fprintf(stderr, "hint: %s\n", pipeline.Hint(err))
		}
	}
	return code
}

// exitCode maps an error to the process exit code: pipeline errors to
// their kind's code (pipeline.ExitCode), then ours.
func exitCode(err error) int {
	var ee *exitError
	var ue *usageError
	var ce *config.Error
	var missing *config.MissingFileError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &ee):
		return ee.code
	case errors.As(err, &ue):
		return exitUsage
	case errors.As(err, &ce), errors.As(err, &missing):
		return exitConfig
	}
	if c := pipeline.ExitCode(err); c != 1 {
		return c
	}
	return exitFailure
}
