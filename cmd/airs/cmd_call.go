package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"

	"github.com/airs-dev/airs/guard"
	"github.com/airs-dev/airs/internal/strictjson"
	"github.com/airs-dev/airs/pipeline"
	xterm "golang.org/x/term"
)

var callCmd = &command{
	Name:    "call",
	Summary: "call one tool through the pipeline and print its result",
	Usage: `Usage:
  airs call NAME [--args JSON | --args @FILE | --args -] [--provider P] [--timeout D] [--json]

Runs one call of tool NAME through all seven stages of the Tool Manager:
lookup, capability checks, schema validation, dispatch with a timeout, the
tool itself, and a durable record in the audit log. You call as the agent
your OS user maps to in airs.yaml (cli.users); identity never comes from a
flag. The tool's output (JSON) goes to stdout; errors go to stderr with a
hint, and the exit code says which kind of error it was (see
'airs help exit-codes'). Nothing is retried. Ctrl-C cancels the call; any
partial output is printed.

A destructive tool (delete-file) waits for a person: at a terminal, airs
asks "agent X wants to call delete-file({…}): allow [o]nce, [a]lways for
this agent, or [d]eny?" and then makes the call (or records the denial).
Without a terminal the call exits 23 (intent_verification_required) with a
confirmation id: 'airs review approve ID', then run the same command again.

--args is the tool's parameters as a JSON object ('airs tools show NAME'
prints the schema and an example); @FILE reads them from a file, - from
stdin. Without --args, the parameters are {}.

Examples:
  airs call calculator --args '{"expression": "round(100 * 19 / 23, 1)"}'
  airs call list-files --args '{"space": "documents", "pattern": "*.pdf", "recursive": true}'
  airs call read-file --args '{"space": "cwd", "path": "README.md"}' | jq -r .text
  airs call pdf-extract --args @params.json --timeout 2m
  echo '{"a": "x = 1", "b": "x = 2"}' | airs call compare --args -
  airs call calculator --args '{"expression": "1/0"}'; echo "exit $?"   # 20: rejected
`,
	Run: runCall,
}

func runCall(a *app, args []string) error {
	fs := a.flags()
	argsFlag := fs.String("args", "", "the tool's parameters: a JSON `object`, @FILE, or - for stdin")
	provider := fs.String("provider", "", "prefer this `provider` when several offer the tool")
	version := fs.String("version", "", "call this tool `version` (default: the highest)")
	timeout := fs.Duration("timeout", 0, "give up after this `duration`, e.g. 500ms, 30s, 2m (max 600s; default: the tool's latency class)")
	asJSON := fs.Bool("json", false, "print the whole result (call id, outcome, latency, output) as JSON")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("give exactly one tool NAME (see 'airs tools list'), got %d", len(pos))
	}
	if err := checkTimeout(fs, "timeout"); err != nil {
		return err
	}
	params, err := readArgs(*argsFlag, a.stdin)
	if err != nil {
		return err
	}
	caller, err := a.caller()
	if err != nil {
		return err
	}
	m, closeManager, err := a.manager()
	if err != nil {
		return err
	}
	defer closeManager()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	// The first Ctrl-C cancels the call; from then on Ctrl-C has its
	// default effect again, so a second one ends a process that some
	// handler ignoring its context keeps alive.
	context.AfterFunc(ctx, stop)
	req := pipeline.Request{
		Tool:     pos[0],
		Provider: *provider,
		Version:  *version,
		Params:   params,
		Encoding: pipeline.JSON,
		Timeout:  *timeout,
		Caller:   caller,
	}
	// A destructive call waits for a person: at a terminal, that is the
	// person at it, asked by the pipeline's gate (its answer is the
	// decision in the call's audit record; the wait is not the call's
	// time budget).
	if a.guard != nil && *argsFlag != "-" && stdinTerminal(a.stdin) {
		ctx = guard.WithAsker(ctx, cliReviewer(), terminalAsker(a))
	}
	res, callErr := m.Call(ctx, req)
	if res != nil && res.Warning != "" {
		fmt.Fprintf(a.stderr, "warning: %s\n", res.Warning)
	}
	if *asJSON && res != nil {
		if err := writeJSON(a.stdout, resultJSON{Result: res, Error: errString(callErr)}); err != nil {
			return err
		}
	} else if res != nil && len(res.Output) > 0 {
		if callErr != nil {
			fmt.Fprintln(a.stderr, "partial output:")
		}
		if err := writeRawJSON(a.stdout, res.Output); err != nil {
			return err
		}
	}
	return callErr
}

// stdinTerminal reports whether r is a terminal someone can answer at
// (not /dev/null, which is a character device too).
func stdinTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	return ok && xterm.IsTerminal(int(f.Fd()))
}

// terminalAsker asks the person at the terminal about a call the gate
// holds: allow once, always for this agent, or deny. No answer (end of
// input) leaves the call held, its confirmation open for `airs review`.
func terminalAsker(a *app) guard.Asker {
	return func(_ context.Context, q guard.Question) guard.Choice {
		var b bytes.Buffer
		shown := string(q.Params)
		if json.Compact(&b, q.Params) == nil {
			shown = b.String()
		}
		if len(shown) > 300 {
			shown = shown[:300] + "…"
		}
		br := bufio.NewReader(a.stdin)
		if q.Reason != "" {
			fmt.Fprintf(a.stderr, "level 2 holds it: %s\n", q.Reason)
		}
		for {
			fmt.Fprintf(a.stderr, "agent %s wants to call %s(%s): allow [o]nce, [a]lways for this agent, or [d]eny? ", q.Caller, q.Tool.Name, shown)
			line, err := br.ReadString('\n')
			switch strings.ToLower(strings.TrimSpace(line)) {
			case "o", "once":
				return guard.Once
			case "a", "always":
				return guard.Always
			case "d", "deny", "n", "no":
				return guard.Deny
			}
			if err != nil {
				fmt.Fprintln(a.stderr)
				return 0
			}
		}
	}
}

// resultJSON is --json's output: the Result plus the error message.
type resultJSON struct {
	*pipeline.Result
	Error string `json:"error,omitempty"`
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// readArgs returns the call's params from --args: inline JSON, @FILE or -.
// The JSON is checked here for being exactly one object without duplicate
// keys (as the HTTP API checks its bodies: {"n":1,"n":2} has no one
// meaning), so a typo gets a usage error and exit 2 instead of a schema
// error; the schema is the pipeline's job.
func readArgs(v string, stdin io.Reader) ([]byte, error) {
	var b []byte
	switch {
	case v == "":
		return []byte("{}"), nil
	case v == "-":
		var err error
		if b, err = io.ReadAll(io.LimitReader(stdin, 64<<20)); err != nil {
			return nil, fmt.Errorf("reading --args from stdin: %w", err)
		}
	case strings.HasPrefix(v, "@"):
		var err error
		if b, err = os.ReadFile(v[1:]); err != nil {
			return nil, usagef("--args %s: %v", v, err)
		}
	default:
		b = []byte(v)
	}
	b = bytes.TrimSpace(b)
	if err := strictjson.Check(b); err != nil {
		if !errors.Is(err, strictjson.ErrSyntax) { // a second value, a repeated key
			return nil, usagef("--args: %v", err)
		}
		return nil, usagef("--args is not valid JSON: %v (quote it in single quotes: --args '{\"expression\": \"1+2\"}')", err)
	}
	var probe any
	_ = json.Unmarshal(b, &probe) // valid: Check passed
	if _, ok := probe.(map[string]any); !ok {
		return nil, usagef("--args must be a JSON object like '{\"name\": value}', got %s", jsonKind(probe))
	}
	return b, nil
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case []any:
		return "an array"
	case string:
		return "a string"
	case float64:
		return "a number"
	case bool:
		return "a boolean"
	}
	return "something else"
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

func writeRawJSON(w io.Writer, raw []byte) error {
	var out bytes.Buffer
	if err := json.Indent(&out, raw, "", "  "); err != nil {
		out.Reset()
		out.Write(raw)
	}
	out.WriteByte('\n')
	_, err := w.Write(out.Bytes())
	return err
}

func writeCompactJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
