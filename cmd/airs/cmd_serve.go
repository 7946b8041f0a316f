package main

import (
	"context"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/airs-dev/airs/internal/engine"
	"github.com/airs-dev/airs/internal/engine/httpapi"
	"github.com/airs-dev/airs/internal/engine/mcpapi"
	"github.com/airs-dev/airs/internal/telemetry"
	mcpserver "github.com/airs-dev/airs/mcp/server"
	"github.com/airs-dev/airs/server"
	"github.com/airs-dev/airs/server/compat"
	"github.com/airs-dev/airs/server/compat/complete"
)

var serveCmd = &command{
	Name:    "serve",
	Summary: "serve the HTTP API (call, select, plan, chat, pipelines, metrics)",
	Usage: `Usage:
  airs serve [--listen ADDR] [--model M|none] [--engine ollama|inproc] [--gguf FILE] [--pipelines PATH]...

Serves the HTTP API on loopback (http.listen in airs.yaml, default
127.0.0.1:7777) until SIGINT or SIGTERM, then drains in-flight requests.

--engine inproc serves on the in-process engine (a binary built with the
inproc tag): --gguf FILE, or --model NAME read from Ollama's store, as
'airs chat'. Requests take turns on its one sequence.

Every endpoint but /healthz needs "Authorization: Bearer TOKEN"; tokens are
configured in airs.yaml under http.tokens (stored as SHA-256) and each maps
to an agent id. The caller is always the token's agent, never a body field.

  POST /v1/call            {"tool","arguments","provider"?,"timeout_ms"?}
  POST /v1/select          {"text"}   → the chosen call and its candidates
  POST /v1/plan            {"text"}   → a validated plan (DAG of calls)
  POST /v1/chat            {"text"}   → server-sent events
  POST /v1/pipelines/run   {"yaml","input"?}
  GET  /v1/tools, /metrics (Prometheus text), /healthz
  POST /v1/chat/completions, GET /v1/models   OpenAI-compatible (the token is the API key)
  POST /api/chat, GET /api/tags, /api/version Ollama-compatible ('docs/compat.md')
  /mcp                     MCP (streamable HTTP): the token's agent's tools,
                           the files of its spaces as resources, the
                           pipelines of --pipelines as prompts ('airs help mcp')

Examples:
  airs serve
  airs serve --listen 127.0.0.1:9000 --model none
  curl -s -H "Authorization: Bearer $TOKEN" localhost:7777/v1/tools
  npx -y @modelcontextprotocol/inspector@2.12.0 --cli http://127.0.0.1:7777/mcp --transport http --header "Authorization: Bearer $TOKEN" --method tools/list
`,
	Run: func(a *app, args []string) error {
		fs := a.flags()
		listen := fs.String("listen", "", "address to listen on (default: http.listen in airs.yaml)")
		model := fs.String("model", "", "the model for selection and chat (Ollama's; with --engine inproc, one pulled into Ollama, read from its store), or none for no-LLM mode (default: ollama.model in airs.yaml)")
		ef := addEngineFlags(fs)
		drain := fs.Duration("drain", 30*time.Second, "how long shutdown waits for in-flight requests")
		var pipelines multiFlag
		fs.Var(&pipelines, "pipelines", "a YAML pipeline `file` or folder of them that /mcp serves as prompts (repeatable; default: $AIRS_HOME/pipelines)")
		pos, err := parseArgs(fs, args)
		if err != nil {
			return err
		}
		if len(pos) > 0 {
			return usagef("'serve' takes no arguments")
		}
		ctx, stop := signal.NotifyContext(a.context(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		// The first signal starts the drain; a second one has its default
		// effect and ends the process at once.
		context.AfterFunc(ctx, stop)
		a.closeWait = *drain
		cfg, err := a.config()
		if err != nil {
			return err
		}
		// Tracing (telemetry.otlp in airs.yaml), before the Manager is built:
		// its calls are observed from the first.
		tr, err := telemetry.Start(ctx, telemetry.Options{Endpoint: cfg.Telemetry.Endpoint, Headers: cfg.Telemetry.Headers,
			SampleRatio: cfg.Telemetry.SampleRatio, ServiceName: cfg.Telemetry.ServiceName, ServiceVersion: versionString()})
		if err != nil {
			return err
		}
		defer func() {
			sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = tr.Shutdown(sctx) // the spans still buffered
		}()
		a.observer = tr.Observer()
		logger := slog.New(telemetry.LogHandler(a.logger().Handler()))
		e, closeE, err := a.build(ctx, engineSpec{Channel: "serve", Model: *model, Local: &ef, LocalModel: *model})
		if err != nil {
			return err
		}
		defer closeE()
		addr := cfg.HTTP.Listen
		if *listen != "" {
			addr = *listen
		}
		var toks []server.Token
		for _, t := range cfg.HTTP.Tokens {
			toks = append(toks, server.Token{SHA256: t.SHA256, Agent: t.Agent})
			if rc := e.Recommender(); rc != nil {
				rc.Known(t.Agent) // file events in the spaces reach the agents served
			}
		}
		if err := e.WatchSpaces(); err != nil {
			a.warnf("suggestions from files in the spaces are off: %v", err)
		}
		if len(toks) == 0 {
			a.warnf("no http.tokens in airs.yaml: every request will be refused with 401 (see 'airs help config')")
		}
		mh := mcpserver.NewHTTPHandler(mcpapi.New(e), func(r *http.Request) string { return server.Caller(r.Context()) }, mcpserver.Options{
			Version: versionString(), Pipelines: pipelineDirs(pipelines, cfg.Home), Logger: a.quietLogger(),
			ToolSearch: cfg.MCP.Serve.ToolSearch, SearchLimit: cfg.MCP.Serve.SearchLimit})
		defer mh.Close()
		be := httpapi.New(e)
		s := server.New(be, server.Config{Addr: addr, Tokens: toks, ShutdownTimeout: *drain, Logger: logger, MCP: mh, Middleware: tr.Middleware,
			MaxBody: cfg.HTTP.MaxBody, Limits: server.Limits(cfg.HTTP.Limits)})
		// The OpenAI- and Ollama-compatible endpoints (docs/compat.md).
		cb, err := complete.New(ctx, complete.Options{Model: e.SelectionModel(), ModelName: e.SelectionModelName(), AIRS: be,
			TextModel:       e.AnswerModel(), // the answers' model
			RequireEvidence: true, MinCoverage: engine.MinCoverage(cfg)})
		if err != nil {
			return err
		}
		compat.Mount(s, cb, compat.Options{Version: versionString(), Logger: logger})
		// Bind first: "serving on" is said only once it is true, and a port
		// in use or a bad address is the one error the user sees.
		l, err := s.Listen()
		if err != nil {
			return err
		}
		a.warnf("serving on http://%s (%s)", l.Addr(), e.Mode())
		if tr.Enabled() {
			a.warnf("tracing to %s (telemetry.otlp in airs.yaml)", cfg.Telemetry.Endpoint)
		}
		a.warnf("the attention UI: open http://%s/ in a browser and sign in with a token of http.tokens", l.Addr())
		return s.Serve(ctx, l)
	},
}
