package main

import (
	"errors"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/airs-dev/airs/internal/engine/mcpapi"
	mcpserver "github.com/airs-dev/airs/mcp/server"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

var mcpCmd = &command{
	Name:    "mcp",
	Summary: "serve AIRS's tools to an MCP client (editor, desktop assistant) over stdio",
	Usage: `Usage:
  airs mcp [--pipelines PATH]...

Runs AIRS as a Model Context Protocol server on stdin/stdout, for an MCP
client that starts it (an editor, a desktop assistant, the MCP Inspector).
Nothing but MCP messages goes to stdout; notes go to stderr.

The client acts as the agent your OS user maps to in airs.yaml (cli.users),
as 'airs call' does; nothing the client sends changes that. It sees:

  tools      what that agent may call ('airs tools list'), with MCP's
             readOnly/destructive/idempotent hints; every tools/call takes
             the pipeline's seven stages (capabilities, schema, timeout,
             audit). A destructive call waits for a person: the result says
             'airs review approve ID', then the client calls again. The list
             follows the registry (notifications/tools/list_changed).
  resources  the files of the spaces the agent may read, as
             airs://SPACE/PATH (paged, up to 10,000 entries per space); a
             read is a read-file call (pdf-extract for a PDF), checked and
             audited like one.
  prompts    the YAML pipelines (see 'airs run') in --pipelines, by default
             $AIRS_HOME/pipelines when it exists, whose tools the agent may
             call; prompts/get gives the pipeline's description, its inputs
             as arguments and its steps.

To use it from a client, add a server whose command is airs and whose
arguments are ["mcp"]. In the JSON most clients read (Claude Desktop's
claude_desktop_config.json, Cursor's and VS Code's mcp.json, under
"mcpServers" or "servers"):

  {"mcpServers": {"airs": {"command": "airs", "args": ["mcp"],
      "env": {"AIRS_CONFIG": "/home/me/.config/airs/airs.yaml"}}}}

Use the absolute path of airs if the client does not start it with your
PATH. Over HTTP, 'airs serve' serves the same at /mcp with a bearer token
('airs help serve').

Examples:
  airs mcp
  airs mcp --pipelines chains/examples
  npx -y @modelcontextprotocol/inspector@2.12.0 --cli airs mcp --method tools/list
`,
	Run: runMCP,
}

func runMCP(a *app, args []string) error {
	fs := a.flags()
	var pipelines multiFlag
	fs.Var(&pipelines, "pipelines", "a YAML pipeline `file` or folder of them to serve as prompts (repeatable; default: $AIRS_HOME/pipelines)")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("'mcp' takes no arguments: an MCP client starts it and speaks on stdin/stdout")
	}
	caller, err := a.caller()
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(a.context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// No model: an MCP client brings its own and only calls tools.
	e, closeE, err := a.build(ctx, engineSpec{Channel: "mcp", Model: "none"})
	if err != nil {
		return err
	}
	defer closeE()
	s := mcpserver.New(mcpapi.New(e), caller, mcpserver.Options{
		Version:    versionString(),
		Pipelines:  pipelineDirs(pipelines, a.cfg.Home),
		Logger:     a.quietLogger(),
		ToolSearch: a.cfg.MCP.Serve.ToolSearch, SearchLimit: a.cfg.MCP.Serve.SearchLimit,
	})
	defer s.Close()
	t := &mcp.IOTransport{Reader: io.NopCloser(a.stdin), Writer: nopWriteCloser{a.stdout}}
	err = s.Run(ctx, t)
	if err == nil || errors.Is(err, io.EOF) || ctx.Err() != nil {
		return nil // the client closed stdin, or a signal: a normal end
	}
	return err
}

// pipelineDirs are the pipelines served as prompts: the flags' paths, else
// $AIRS_HOME/pipelines when that folder exists.
func pipelineDirs(flags []string, home string) []string {
	if len(flags) > 0 {
		return flags
	}
	if home == "" {
		return nil
	}
	d := filepath.Join(home, "pipelines")
	if st, err := os.Stat(d); err == nil && st.IsDir() {
		return []string{d}
	}
	return nil
}

// quietLogger writes warnings and errors to stderr: an MCP client shows a
// server's stderr to its user, who needs no news of every session.
func (a *app) quietLogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(a.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

// nopWriteCloser keeps the transport from closing the process's stdout.
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
