// Package server makes AIRS an MCP server: a channel like the HTTP API.
// The caller is fixed by the channel that built the server (the CLI's OS
// user, or a bearer token), never by anything a client sends, and every
// tools/call goes through the Tool Manager's seven stages.
//
// What a client sees is the caller's:
//
//   - tools/list: the tools the caller may call (Backend.Tools, capability
//     filtered like the selector's context), with MCP annotations; kept up
//     to date with the registry when the Backend is a Watcher (the SDK then
//     sends notifications/tools/list_changed).
//   - resources: the files of the spaces the caller may read, as
//     airs://SPACE/PATH (resources.go); listing and reading are calls of
//     list-files, read-file and pdf-extract through the Backend, so the
//     capability checks and the audit log apply to them as to any call.
//   - prompts: the YAML pipelines of Options.Pipelines whose tools the
//     caller may call (prompts.go).
//   - with Options.ToolSearch, tools/list starts with search_tools alone
//     and grows with the tools it finds (search.go).
//
// NewHTTPHandler serves it over streamable HTTP, one server per caller.
package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"reflect"
	"sync"

	"github.com/airs-dev/airs/mcp/relay"
	"github.com/airs-dev/airs/pipeline"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Backend is what the MCP server needs of AIRS; internal/engine
// implements it over pipeline.Manager.
type Backend interface {
	// Tools returns the tools caller may call (capability-filtered), one
	// per name.
	Tools(caller string) []pipeline.Tool
	// Call runs one call through the pipeline.
	Call(ctx context.Context, req pipeline.Request) (*pipeline.Result, error)
}

// Watcher is an optional Backend method: a channel that receives after the
// tool set changed (pipeline.Registry.Watch), and a function that stops it.
type Watcher interface {
	Watch() (<-chan struct{}, func())
}

// Options configure a server; the zero value serves tools and resources.
type Options struct {
	// Version is AIRS's, as the server names itself in initialize.
	Version string
	// Pipelines are YAML pipeline files or directories of them (*.yaml,
	// *.yml), served as prompts; none: no prompts.
	Pipelines []string
	// PageSize bounds one page of resources/list [100].
	PageSize int
	// Logger receives what a client cannot be told (a tool left out of
	// tools/list, a pipeline that does not parse) [discard].
	Logger *slog.Logger
	// ToolSearch serves search_tools and lists only the tools found so far
	// (search.go); the Backend must be a Searcher, else every tool is
	// listed as without it.
	ToolSearch bool
	// SearchLimit is how many tools one search returns when the client
	// asks for no number [5].
	SearchLimit int
}

// Server is one caller's MCP server.
type Server struct {
	*mcp.Server
	b      Backend
	caller string
	opts   Options

	mu     sync.Mutex
	listed map[string]*mcp.Tool // what tools/list answers now, by name (search_tools aside)
	stop   func()               // ends the registry watch and waits for its goroutine

	// With tool search: every tool the caller may call now (what tools/list
	// would show without it), their handlers, and the names found so far.
	search   Searcher
	callable map[string]*mcp.Tool
	handlers map[string]mcp.ToolHandler
	found    map[string]bool
}

// New returns the MCP server of caller. Its tools are those caller may
// call now; with a Watcher backend they follow the registry until Close.
func New(b Backend, caller string, opts Options) *Server {
	if opts.PageSize <= 0 {
		opts.PageSize = 100
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	version := opts.Version
	if version == "" {
		version = "dev"
	}
	s := &Server{b: b, caller: caller, opts: opts, listed: map[string]*mcp.Tool{}, found: map[string]bool{}}
	instructions := "AIRS's tools, as the agent " + caller + " may call them. Every call goes through AIRS's pipeline " +
		"(capabilities, schema validation, timeouts, audit); a destructive call may wait for a person ('airs review')."
	if opts.ToolSearch {
		if sr, ok := b.(Searcher); ok {
			s.search = sr
			instructions += " " + searchInstructions
		} else {
			opts.Logger.Warn("mcp: tool search is on but this server cannot search: every tool is listed")
		}
	}
	if s.opts.SearchLimit <= 0 {
		s.opts.SearchLimit = DefaultSearchLimit
	}
	s.opts.SearchLimit = min(s.opts.SearchLimit, MaxSearchLimit)
	s.Server = mcp.NewServer(&mcp.Implementation{Name: "airs", Version: version}, &mcp.ServerOptions{
		Logger:       opts.Logger,
		HasResources: true,
		HasPrompts:   len(opts.Pipelines) > 0,
		// Every list is this caller's (its capabilities decide it): no
		// intermediary may serve it to another.
		SetCacheable: func(_ context.Context, _ mcp.Request, c *mcp.Cacheable) { c.CacheScope = "private" },
		Instructions: instructions,
	})
	s.addSearch()
	s.addResources()
	s.addPrompts()
	s.Refresh()
	if w, ok := b.(Watcher); ok {
		ch, stop := w.Watch()
		quit, done := make(chan struct{}), make(chan struct{})
		go func() {
			defer close(done)
			for {
				select {
				case <-ch:
					s.Refresh()
				case <-quit:
					return
				}
			}
		}()
		s.stop = func() { stop(); close(quit); <-done }
	}
	return s
}

// Close stops following the registry. Sessions already connected keep
// the tool list of that moment.
func (s *Server) Close() {
	s.mu.Lock()
	stop := s.stop
	s.stop = nil
	s.mu.Unlock()
	if stop != nil {
		stop()
	}
}

// Refresh makes tools/list what the caller may call now: tools that went
// are removed, new or changed ones added. The SDK tells connected clients
// with one debounced notifications/tools/list_changed.
func (s *Server) Refresh() {
	s.mu.Lock() // held while asking the backend too: two refreshes never interleave
	defer s.mu.Unlock()
	want := map[string]*mcp.Tool{}
	handlers := map[string]mcp.ToolHandler{}
	for _, t := range s.b.Tools(s.caller) {
		if _, dup := want[t.Name]; dup {
			continue // the backend's first is the preferred provider's
		}
		mt, err := toolOf(t)
		if err != nil {
			s.opts.Logger.Warn("mcp: a tool is left out of tools/list", "tool", t.Name, "reason", err)
			continue
		}
		if s.search != nil && t.Name == SearchToolName {
			s.opts.Logger.Warn("mcp: a tool is left out: its name is tool search's", "tool", t.Name)
			continue
		}
		want[t.Name] = mt
		handlers[t.Name] = handler(s.b, s.caller, t.Name)
	}
	if s.search != nil {
		// Everything callable is kept for search_tools; tools/list shows
		// the found ones that are still callable.
		s.callable, s.handlers = want, handlers
		shown := map[string]*mcp.Tool{}
		for name := range s.found {
			if mt := want[name]; mt != nil {
				shown[name] = mt
			}
		}
		want = shown
	}
	var gone []string
	for name := range s.listed {
		if want[name] == nil {
			gone = append(gone, name)
		}
	}
	if len(gone) > 0 {
		s.Server.RemoveTools(gone...)
	}
	for name, mt := range want {
		if old := s.listed[name]; old != nil && reflect.DeepEqual(old, mt) {
			continue
		}
		s.Server.AddTool(mt, handlers[name])
	}
	s.listed = want
}

// toolOf is a pipeline tool as MCP describes it. MCP requires an input
// schema of type object: a schema without a type gets it (AIRS's calls are
// objects anyway), one of another type cannot be listed.
func toolOf(t pipeline.Tool) (*mcp.Tool, error) {
	schema := map[string]any{}
	if len(t.Parameters) > 0 {
		if err := json.Unmarshal(t.Parameters, &schema); err != nil {
			return nil, fmt.Errorf("its parameters schema is not a JSON object: %v", err)
		}
	}
	// The schema goes out as the registry's bytes: encoding it from a map
	// for every tools/list would sort its keys each time.
	raw := t.Parameters
	switch typ := schema["type"]; typ {
	case nil:
		schema["type"] = "object"
		b, err := json.Marshal(schema)
		if err != nil {
			return nil, err
		}
		raw = b
	case "object":
	default:
		return nil, fmt.Errorf("MCP needs an input schema of type object, this one has type %v", typ)
	}
	// MCP's destructiveHint defaults to true when absent, so it is always
	// stated: a tool AIRS does not call destructive is said not to be.
	destructive := t.Destructive
	mt := &mcp.Tool{
		Name:        t.Name,
		Description: t.Description,
		InputSchema: json.RawMessage(raw),
		Annotations: &mcp.ToolAnnotations{
			ReadOnlyHint:    t.ReadOnly,
			DestructiveHint: &destructive,
			IdempotentHint:  t.Idempotent,
		},
	}
	// The return schema is the outputSchema when it describes an object,
	// as MCP requires (a call's structuredContent is its output then).
	var out struct {
		Type any `json:"type"`
	}
	if len(t.ReturnSchema) > 0 && json.Unmarshal(t.ReturnSchema, &out) == nil && out.Type == "object" {
		mt.OutputSchema = t.ReturnSchema
	}
	return mt, nil
}

func handler(b Backend, caller, name string) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		params := []byte(req.Params.Arguments)
		if len(params) == 0 || string(params) == "null" {
			params = []byte("{}")
		}
		// An outside MCP server's tool (mcp/client) records its whole
		// result here, and sends its progress through it when the client
		// asked for progress.
		rc := &relay.Call{}
		if tok := req.Params.GetProgressToken(); tok != nil && req.Session != nil {
			// Sent in the context of this request, not the provider's (over
			// streamable HTTP that puts it on this request's stream), but
			// not ended with it: the provider's last progress may be
			// handled a moment after its result.
			nctx := context.WithoutCancel(ctx)
			rc.Progress = func(_ context.Context, p *mcp.ProgressNotificationParams) {
				p.ProgressToken = tok
				_ = req.Session.NotifyProgress(nctx, p)
			}
		}
		res, err := b.Call(relay.NewContext(ctx, rc), pipeline.Request{
			Tool: name, Params: params, Encoding: pipeline.JSON, Caller: caller,
		})
		if err != nil {
			return errorResult(err), nil
		}
		if r := rc.Result(name, res.Output); r != nil {
			// As the server sent it: every content block of its type,
			// structuredContent beside them.
			return &mcp.CallToolResult{Content: r.Content, StructuredContent: r.StructuredContent}, nil
		}
		out := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(res.Output)}}}
		var obj map[string]any
		if json.Unmarshal(res.Output, &obj) == nil {
			out.StructuredContent = obj
		}
		return out, nil
	}
}

// RetryAfterMeta is the _meta key of an error result that says, in
// milliseconds, when the call may succeed if made again (a provider
// unavailable for now, a rate limit): the text says it to a model, this to
// a program.
const RetryAfterMeta = "dev.airs/retryAfterMs"

// errorResult is a pipeline error as an MCP tool error: the model or the
// person behind the client reads the kind and what to do.
func errorResult(err error) *mcp.CallToolResult {
	r := &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: errorText(err)}}}
	if ms := retryAfterMs(err); ms > 0 {
		r.Meta = mcp.Meta{RetryAfterMeta: ms}
	}
	return r
}

// retryAfterMs is when err says to call again, in milliseconds (0: it
// does not say).
func retryAfterMs(err error) int64 {
	var pu *pipeline.ProviderUnavailable
	var rl *pipeline.RateLimited
	switch {
	case errors.As(err, &pu) && pu.RetryAfter > 0:
		return max(pu.RetryAfter.Milliseconds(), 1)
	case errors.As(err, &pu):
		// A provider that is down has no known end: a second, as HTTP's
		// Retry-After says, so a client does not call again at line rate.
		return 1000
	case errors.As(err, &rl):
		return max(rl.RetryAfterMs, 1)
	}
	return 0
}

func errorText(err error) string {
	var ivr *pipeline.IntentVerificationRequired
	if errors.As(err, &ivr) {
		s := fmt.Sprintf("%s: this destructive call waits for a person: run 'airs review approve %s', then call again", pipeline.KindOf(err), ivr.ID)
		if ivr.Reason != "" {
			s = fmt.Sprintf("%s: this call waits for a person because %s: run 'airs review approve %s', then call again", pipeline.KindOf(err), ivr.Reason, ivr.ID)
		}
		return s
	}
	return fmt.Sprintf("%s: %v", pipeline.KindOf(err), err)
}
