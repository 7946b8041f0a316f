// Package server is `airs serve`: the HTTP API over the Tool Manager, the
// selector and chains. It lives apart from cmd/airs because it is a concern
// of its own (authentication, limits, status mapping, server-sent events)
// that tests drive directly with net/http/httptest.
//
// Identity comes only from the channel: a bearer token, hashed with SHA-256
// and looked up in the configured table, gives the agent id. No token, no
// access (401); a request body never names the caller.
package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/airs-dev/airs/chains"
	"github.com/airs-dev/airs/config"
	"github.com/airs-dev/airs/internal/turns"
	"github.com/airs-dev/airs/pipeline"
	"github.com/vmihailenco/msgpack/v5"
)

// Backend is what the server serves. internal/engine implements it
// (Engine.Backend) over the real Manager, Selector and chains; each method
// gets the caller from the channel.
type Backend interface {
	Call(ctx context.Context, req pipeline.Request) (*pipeline.Result, error)
	Select(ctx context.Context, caller, text string) (any, error)
	Plan(ctx context.Context, caller, text string) (any, error)
	// Chat answers a request, emitting events (tool, result, token, done)
	// as they happen.
	Chat(ctx context.Context, caller, text string, emit func(event string, data any) error) error
	RunPipeline(ctx context.Context, caller string, yaml []byte, input map[string]any) (any, error)
	Tools(caller string) any
	// WriteMetrics writes the metrics caller may see (its own tools').
	WriteMetrics(caller string, w io.Writer) error
	// Admit charges one request that costs (selection, planning, chat, a
	// pipeline) to the caller's rate limit, the one its calls take from;
	// it answers *pipeline.RateLimited when the caller is over it. Calls
	// are limited by Call itself.
	Admit(caller string) error
}

// Token is one accepted bearer token, by its SHA-256.
type Token struct {
	SHA256 [32]byte
	Agent  string
}

// Config configures the server; zero values take the defaults in brackets.
type Config struct {
	Addr            string        // [config.DefaultListen, 127.0.0.1:7777]
	Tokens          []Token       // no tokens: every request is 401
	MaxBody         int64         // bytes per request body [2 MiB] (http.max_body)
	Limits          Limits        // each endpoint's input (limits.go)
	RequestTimeout  time.Duration // per request, chat and pipelines included [120s]
	ShutdownTimeout time.Duration // drain budget on shutdown [30s]
	Logger          *slog.Logger
	// HeavyCPUPerToken: heavy work (a selection or plan over
	// Limits.HeavyText, the reading of a call body over HeavyCallBody) is
	// charged one rate-limit token per this much of the CPU it used, when
	// that comes to more than its size was charged
	// [DefaultHeavyCPUPerToken]. Not an airs.yaml key: an agent's
	// rate_limit is what bounds its share of the CPU.
	HeavyCPUPerToken time.Duration
	// MCP serves /mcp (MCP's streamable HTTP transport) behind the same
	// bearer-token authentication: the handler reads the agent with
	// Caller. cmd/airs builds it (mcp/server.NewHTTPHandler); nil: no /mcp.
	MCP http.Handler
	// Middleware wraps the whole server (tracing: internal/telemetry's
	// span per request, W3C traceparent accepted); nil: none.
	Middleware func(http.Handler) http.Handler
}

// Server is the HTTP API.
type Server struct {
	cfg     Config
	backend Backend
	mux     *http.ServeMux
	http    *http.Server

	inflight    sync.WaitGroup
	streamsStop chan struct{} // closed when shutdown begins: ends event streams
	requests    atomic.Int64
	statuses    sync.Map // int → *atomic.Int64

	throttle    *authThrottle // failed authentications, per address and token prefix (throttle.go)
	tokenChecks atomic.Int64  // tokens hashed and compared (agentOf): what refusing a flood must not cost
	flood       *floodGate    // clients that did not wait as told, requests per address (flood.go)
	heavyGate   *heavyGate    // slots for heavy work, per agent and in all (heavy.go)

	owed  owed              // the costly requests' cost still to pay, per caller (limits.go)
	scrub *strings.Replacer // the host's paths in error texts → names (scrub.go); nil: none

	ui  *uiSessions // the attention UI's sessions (ui_session.go); nil without a UIBackend
	hub *callHub    // the pipeline's call events for the UI's pages (ui_events.go)
}

// New builds a server; call ListenAndServe or use Handler in tests.
func New(b Backend, cfg Config) *Server {
	if cfg.Addr == "" {
		cfg.Addr = config.DefaultListen
	}
	if cfg.MaxBody <= 0 {
		cfg.MaxBody = 2 << 20
	}
	if cfg.RequestTimeout <= 0 {
		cfg.RequestTimeout = 120 * time.Second
	}
	cfg.Limits = cfg.Limits.withDefaults()
	if cfg.HeavyCPUPerToken <= 0 {
		cfg.HeavyCPUPerToken = DefaultHeavyCPUPerToken
	}
	if cfg.ShutdownTimeout <= 0 {
		cfg.ShutdownTimeout = 30 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	s := &Server{cfg: cfg, backend: b, mux: http.NewServeMux(), throttle: newAuthThrottle(),
		flood: newFloodGate(cfg.Limits), heavyGate: newHeavyGate(cfg.Limits)}
	if hp, ok := b.(HostPaths); ok {
		s.scrub = newScrubber(hp.HostPaths())
	}
	s.mux.HandleFunc("GET /healthz", s.healthz)
	s.mux.HandleFunc("GET /metrics", s.auth(s.metrics))
	s.mux.HandleFunc("GET /v1/tools", s.auth(s.tools))
	s.mux.HandleFunc("POST /v1/call", s.auth(s.call))
	s.mux.HandleFunc("POST /v1/select", s.auth(s.admit(s.selectTool)))
	s.mux.HandleFunc("POST /v1/plan", s.auth(s.admit(s.plan)))
	s.mux.HandleFunc("POST /v1/chat", s.auth(s.admit(s.chat)))
	s.mux.HandleFunc("POST /v1/pipelines/run", s.auth(s.admit(s.runPipeline)))
	if cfg.MCP != nil {
		// Every method: the transport POSTs messages, GETs its event
		// stream and DELETEs its session. The token is the one place the
		// agent comes from; an MCP message never names it.
		s.mux.HandleFunc("/mcp", s.auth(cfg.MCP.ServeHTTP))
	}
	s.http = &http.Server{
		Addr:              cfg.Addr,
		Handler:           s.wrapped(),
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       30 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
	}
	s.registerRecommend()
	s.registerReviews()
	s.registerUI()
	return s
}

// ServeHTTP counts the request as in flight (for draining), bounds its
// body and its time, answers a flood before anything else (flood.go), and
// records its status.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.inflight.Add(1)
	defer s.inflight.Done()
	s.requests.Add(1)
	r.Body = http.MaxBytesReader(w, r.Body, s.cfg.MaxBody)
	ctx, cancel := context.WithTimeout(r.Context(), s.cfg.RequestTimeout)
	defer cancel()
	// auth notes the agent the credential authenticated as: this client's
	// early requests, when it floods, are charged to it (flood.go).
	var who authNote
	ctx = context.WithValue(ctx, authNoteKey{}, &who)
	sw := &statusWriter{ResponseWriter: w, status: 200, msgpack: wantsMsgpack(r.Header.Get("Accept")), scrub: s.scrub}
	sw.Header().Add("Vary", "Accept")
	r = r.WithContext(ctx)
	defer func() {
		c, _ := s.statuses.LoadOrStore(sw.status, new(atomic.Int64))
		c.(*atomic.Int64).Add(1)
	}()
	var client uint64
	// Only API clients are held: they name themselves by their credential
	// (the page's requests carry a session cookie instead).
	keyed := r.Header.Get("Authorization") != ""
	if r.URL.Path != "/healthz" {
		addr := clientAddr(r)
		if keyed {
			client = s.flood.clientKey(addr, r)
			d, tax := s.flood.holdFor(client)
			if tax != "" {
				s.oweFloodTax(tax)
			}
			if d > 0 && !s.flood.hold(r, d) {
				// Its client left while it was held: nothing is done for a
				// request nobody waits for (no token, no body, no answer).
				sw.status = statusClientLeft
				return
			}
		}
		if wait := s.flood.takeAddr(addr); wait > 0 {
			writeAddressLimited(sw, wait)
			if keyed {
				s.flood.told(client, retryAfterOf(sw.Header()), "")
			}
			return
		}
	}
	if !streams(r) {
		// Light work until it says otherwise (heavy work, s.heavy): heavy
		// work gives way while it is in flight.
		lctx, end := turns.Light(r.Context())
		defer end()
		r = r.WithContext(lctx)
	}
	if _, pattern := s.mux.Handler(r); pattern == "" {
		s.noRoute(sw, r)
	} else {
		s.mux.ServeHTTP(sw, r)
	}
	if keyed && sw.status == http.StatusTooManyRequests {
		if d := retryAfterOf(sw.Header()); d > 0 {
			s.flood.told(client, d, who.agent)
		}
	}
}

// streams reports whether r asks for a stream of events (SSE): open for
// long and idle between its events, it is not light work in flight.
func streams(r *http.Request) bool {
	return r.Method == http.MethodGet && strings.Contains(r.Header.Get("Accept"), "text/event-stream") ||
		strings.HasSuffix(r.URL.Path, "/stream") || strings.HasSuffix(r.URL.Path, "/events")
}

// noRoute answers a path no endpoint serves (404) or a method the path
// does not take (405, with Allow) in JSON like every other error; the
// mux's own answers are plain text.
func (s *Server) noRoute(w http.ResponseWriter, r *http.Request) {
	h, _ := s.mux.Handler(r)
	cw := &captureWriter{header: http.Header{}, status: http.StatusOK}
	h.ServeHTTP(cw, r)
	if allow := cw.header.Get("Allow"); cw.status == http.StatusMethodNotAllowed && allow != "" {
		w.Header().Set("Allow", allow)
		writeError(w, http.StatusMethodNotAllowed, "method_not_allowed",
			fmt.Sprintf("%s does not take %s; use %s", r.URL.Path, r.Method, allow))
		return
	}
	writeError(w, http.StatusNotFound, "not_found",
		fmt.Sprintf("no endpoint %s: the API is POST /v1/call, /v1/select, /v1/plan, /v1/chat, /v1/pipelines/run, /v1/reviews/{id}/approve|deny and GET /v1/tools, /v1/reviews, /metrics, /healthz, and /mcp (MCP, streamable HTTP) when served", r.URL.Path))
}

// captureWriter records what the mux's fallback handlers would answer.
type captureWriter struct {
	header http.Header
	status int
}

func (c *captureWriter) Header() http.Header         { return c.header }
func (c *captureWriter) Write(b []byte) (int, error) { return len(b), nil }
func (c *captureWriter) WriteHeader(code int)        { c.status = code }

// Serve accepts on l until ctx is cancelled, then shuts down gracefully:
// no new connections, in-flight requests drain within ShutdownTimeout.
func (s *Server) Serve(ctx context.Context, l net.Listener) error {
	errc := make(chan error, 1)
	go func() { errc <- s.http.Serve(l) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), s.cfg.ShutdownTimeout)
	defer cancel()
	err := s.http.Shutdown(sctx)
	s.inflight.Wait()
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("server: shutdown: requests still running after %v", s.cfg.ShutdownTimeout)
	}
	return nil
}

// Listen binds Config.Addr. A caller that says where it serves should say
// so after Listen succeeded, with the listener's address (the port may
// have been 0). Its errors are one sentence with what to do.
func (s *Server) Listen() (net.Listener, error) {
	l, err := net.Listen("tcp", s.cfg.Addr)
	if err != nil {
		return nil, listenError(s.cfg.Addr, err)
	}
	return l, nil
}

// ListenError explains why addr cannot be listened on.
type ListenError struct {
	Addr string
	Err  error
	Why  string
}

func (e *ListenError) Error() string { return "cannot listen on " + e.Addr + ": " + e.Why }
func (e *ListenError) Unwrap() error { return e.Err }

func listenError(addr string, err error) error {
	le := &ListenError{Addr: addr, Err: err}
	var ae *net.AddrError
	var dns *net.DNSError
	switch {
	case errors.Is(err, syscall.EADDRINUSE):
		le.Why = "the port is already in use (is another airs serve running?); stop that process or pick another port with --listen or http.listen in airs.yaml"
	case errors.Is(err, syscall.EADDRNOTAVAIL):
		le.Why = "no interface of this machine has that address; use 127.0.0.1:PORT for loopback"
	case errors.Is(err, syscall.EACCES):
		le.Why = "permission denied (ports below 1024 need privileges); pick a port above 1024"
	case errors.As(err, &ae):
		le.Why = ae.Err + "; want HOST:PORT, e.g. 127.0.0.1:7777"
	case errors.As(err, &dns):
		le.Why = "unknown host " + strconv.Quote(dns.Name) + "; want HOST:PORT, e.g. 127.0.0.1:7777"
	default:
		le.Why = err.Error()
	}
	return le
}

// ListenAndServe listens on Config.Addr and serves until ctx ends.
func (s *Server) ListenAndServe(ctx context.Context) error {
	l, err := s.Listen()
	if err != nil {
		return err
	}
	s.cfg.Logger.Info("airs serve listening", "addr", l.Addr().String())
	return s.Serve(ctx, l)
}

func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"ok": true})
}

func (s *Server) metrics(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; version=0.0.4")
	if err := s.backend.WriteMetrics(Caller(r.Context()), w); err != nil {
		return
	}
	fmt.Fprintf(w, "# HELP airs_http_requests_total HTTP requests served.\n# TYPE airs_http_requests_total counter\n")
	s.statuses.Range(func(k, v any) bool {
		fmt.Fprintf(w, "airs_http_requests_total{code=\"%d\"} %d\n", k.(int), v.(*atomic.Int64).Load())
		return true
	})
}

func (s *Server) tools(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, s.backend.Tools(Caller(r.Context())))
}

// CallRequest is the body of POST /v1/call. There is no caller field: the
// caller is the token's agent. It may be sent as JSON or, with
// Content-Type: application/msgpack, as a MessagePack map with the same
// keys (arguments then a MessagePack map, given to the pipeline as is).
type CallRequest struct {
	CallID    string          `json:"call_id,omitempty"`
	Tool      string          `json:"tool"`
	Provider  string          `json:"provider,omitempty"`
	Arguments json.RawMessage `json:"arguments"`
	TimeoutMs int64           `json:"timeout_ms,omitempty"`
	// Version pins the tool's version ("1", "1.x", "1.2.0"); an old major
	// is migrated when the tool declares a migration (pipeline/migrate.go).
	Version string `json:"version,omitempty"`
}

// msgpackCall is CallRequest on the MessagePack wire.
type msgpackCall struct {
	CallID    string             `msgpack:"call_id"`
	Tool      string             `msgpack:"tool"`
	Provider  string             `msgpack:"provider"`
	Arguments msgpack.RawMessage `msgpack:"arguments"`
	TimeoutMs int64              `msgpack:"timeout_ms"`
}

// CallerGate is what a Backend offers to refuse a caller's call before
// its body is read: a caller held back (its own deadlines keep expiring)
// would otherwise still cost the server the reading and decoding of every
// body it sends.
type CallerGate interface {
	CallerRefused(caller string) error
}

func (s *Server) call(w http.ResponseWriter, r *http.Request) {
	caller := Caller(r.Context())
	// What the caller owes of its heavy requests is paid first: calls
	// take from the same bucket.
	if err := s.payOwed(caller); err != nil {
		writeCallError(w, nil, err)
		return
	}
	if g, ok := s.backend.(CallerGate); ok {
		if err := g.CallerRefused(caller); err != nil {
			writeCallError(w, nil, err)
			return
		}
	}
	// A large body is heavy to read and decode: that takes a slot, and is
	// charged by its CPU beyond the call's own token.
	cost := s.newRequestCost(caller, 1)
	release, ok := s.heavy(w, r, r.ContentLength, int64(s.cfg.Limits.HeavyCallBody), cost)
	if !ok {
		return
	}
	var req CallRequest
	var params []byte
	enc := pipeline.JSON
	if isMsgpack(r.Header.Get("Content-Type")) {
		var mc msgpackCall
		if !decodeMsgpack(w, r, &mc) {
			release()
			return
		}
		req = CallRequest{CallID: mc.CallID, Tool: mc.Tool, Provider: mc.Provider, TimeoutMs: mc.TimeoutMs}
		params, enc = mc.Arguments, pipeline.MsgPack
	} else {
		if !decode(w, r, &req) {
			release()
			return
		}
		params = []byte(req.Arguments)
		if len(params) == 0 {
			params = []byte("{}")
		}
	}
	// The call itself is bounded by its tool's budget and may wait on I/O
	// for long: it holds no slot.
	release()
	if req.Tool == "" {
		writeError(w, http.StatusBadRequest, "bad_request", `"tool" is required`)
		return
	}
	if req.TimeoutMs < 0 || req.TimeoutMs > pipeline.MaxTimeout.Milliseconds() {
		writeError(w, http.StatusBadRequest, "bad_request",
			fmt.Sprintf(`"timeout_ms" must be between 1 and %d (omit it for the tool's latency-class default)`, pipeline.MaxTimeout.Milliseconds()))
		return
	}
	// A built-in tool's heavy work (a compare of long texts) runs on a
	// goroutine of its own: it reports its CPU, charged as the body's is.
	ctx := turns.WithCharge(r.Context(), func(cpu time.Duration) { cost.chargeCPU(cpu, s.cfg.HeavyCPUPerToken) })
	res, err := s.backend.Call(ctx, pipeline.Request{
		CallID: req.CallID, Tool: req.Tool, Provider: req.Provider, Params: params, Encoding: enc,
		Timeout: time.Duration(req.TimeoutMs) * time.Millisecond, Caller: Caller(r.Context()),
		Version: req.Version,
	})
	if err != nil {
		writeCallError(w, res, err)
		return
	}
	writeJSON(w, http.StatusOK, res)
}

type textRequest struct {
	Text string `json:"text"`
}

func (s *Server) selectTool(w http.ResponseWriter, r *http.Request) {
	var req textRequest
	if !decode(w, r, &req) || !needText(w, req.Text) ||
		!checkText(w, "POST /v1/select", `"text"`, req.Text, s.cfg.Limits.SelectText, "http.limits.select_text") {
		return
	}
	_, cost := s.owe(r, costOf(len(req.Text), costUnit))
	release, ok := s.heavy(w, r, int64(len(req.Text)), int64(s.cfg.Limits.HeavyText), cost)
	if !ok {
		return
	}
	defer release()
	out, err := s.backend.Select(r.Context(), Caller(r.Context()), req.Text)
	if err != nil {
		writeErrorBody(w, http.StatusUnprocessableEntity, ErrorBody(err, "selection_failed"))
		return
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) plan(w http.ResponseWriter, r *http.Request) {
	var req textRequest
	if !decode(w, r, &req) || !needText(w, req.Text) ||
		!checkText(w, "POST /v1/plan", `"text"`, req.Text, s.cfg.Limits.PlanText, "http.limits.plan_text") {
		return
	}
	// The Backend counts the request's parts, refuses too many and owes a
	// token for each part past the first.
	ctx, cost := s.owe(r, costOf(len(req.Text), costUnit))
	release, ok := s.heavy(w, r, int64(len(req.Text)), int64(s.cfg.Limits.HeavyText), cost)
	if !ok {
		return
	}
	defer release()
	out, err := s.backend.Plan(WithPlanParts(ctx, s.cfg.Limits.PlanParts), Caller(r.Context()), req.Text)
	var tl *TooLarge
	if errors.As(err, &tl) {
		writeTooLarge(w, tl)
		return
	}
	if err != nil {
		writeErrorBody(w, http.StatusUnprocessableEntity, ErrorBody(err, "planning_failed"))
		return
	}
	writeJSON(w, http.StatusOK, out)
}

// chat streams server-sent events: one `event:` per tool choice, result,
// text chunk, and a final `done` (or `error`).
func (s *Server) chat(w http.ResponseWriter, r *http.Request) {
	var req textRequest
	if !decode(w, r, &req) || !needText(w, req.Text) ||
		!checkText(w, "POST /v1/chat", `"text"`, req.Text, s.cfg.Limits.ChatText, "http.limits.chat_text") {
		return
	}
	// Its calls take their own tokens; its CPU is not metered: with a
	// model, most of a chat's work is the model's, in its own turn.
	s.owe(r, costOf(len(req.Text), costUnit))
	release, ok := s.heavy(w, r, int64(len(req.Text)), int64(s.cfg.Limits.HeavyText), nil)
	if !ok {
		return
	}
	defer release()
	fl, ok := w.(http.Flusher)
	if !ok {
		writeError(w, http.StatusInternalServerError, "internal", "streaming unsupported")
		return
	}
	turns.Idle(r.Context()) // a chat waits on its model for long: no light work in flight
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	emit := func(event string, data any) error {
		b, err := json.Marshal(data)
		if err != nil {
			return err
		}
		if m, ok := data.(map[string]any); event == "error" || ok && m["error"] != nil {
			b = []byte(scrubJSON(s.scrub, string(b)))
		}
		if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, b); err != nil {
			return err
		}
		fl.Flush()
		return nil
	}
	if err := s.backend.Chat(r.Context(), Caller(r.Context()), req.Text, emit); err != nil {
		b := ErrorBody(err, pipeline.KindOf(err))
		b["kind"] = b["error"]
		b["error"] = b["message"] // the event's fields as they were: kind, error, hint
		delete(b, "message")
		_ = emit("error", b)
		return
	}
	_ = emit("done", map[string]bool{"ok": true})
}

// PipelineRequest is the body of POST /v1/pipelines/run: the DSL text, the
// inputs and, optionally, the whole run's budget (also the workflow's
// under chains.engine: temporal).
type PipelineRequest struct {
	YAML      string         `json:"yaml"`
	Input     map[string]any `json:"input,omitempty"`
	TimeoutMs int64          `json:"timeout_ms,omitempty"`
}

func (s *Server) runPipeline(w http.ResponseWriter, r *http.Request) {
	var req PipelineRequest
	if !decode(w, r, &req) {
		return
	}
	if req.YAML == "" {
		writeError(w, http.StatusBadRequest, "bad_request", `"yaml" (the pipeline text) is required`)
		return
	}
	if len(req.YAML) > s.cfg.Limits.PipelineYAML {
		writeTooLarge(w, &TooLarge{Endpoint: "POST /v1/pipelines/run", What: `"yaml"`, Unit: "bytes", Actual: len(req.YAML),
			Max: s.cfg.Limits.PipelineYAML, Setting: "http.limits.pipeline_yaml"})
		return
	}
	s.owe(r, costOf(len(req.YAML), costUnit)) // its steps' calls take their own tokens
	if req.TimeoutMs < 0 || req.TimeoutMs > pipeline.MaxTimeout.Milliseconds() {
		writeError(w, http.StatusBadRequest, "bad_request",
			fmt.Sprintf(`"timeout_ms" must be between 1 and %d (omit it for the pipeline's own timeout:, else none)`, pipeline.MaxTimeout.Milliseconds()))
		return
	}
	ctx := r.Context()
	if req.TimeoutMs > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Duration(req.TimeoutMs)*time.Millisecond)
		defer cancel()
	}
	out, err := s.backend.RunPipeline(ctx, Caller(r.Context()), []byte(req.YAML), req.Input)
	if err != nil {
		status, kind := statusFor(err), kindOr(err, "pipeline_failed")
		b := ErrorBody(err, kind)
		switch {
		case pipeline.KindOf(err) != "internal":
		case errors.Is(err, chains.ErrSyntax):
			status, b["error"] = http.StatusBadRequest, "invalid_yaml"
			b["hint"] = "fix the YAML at the lines shown (a pipeline is one YAML mapping: pipeline, steps, …; no repeated keys)"
		case errors.Is(err, chains.ErrInvalid):
			status, b["error"] = http.StatusUnprocessableEntity, "invalid_pipeline"
			b["hint"] = "fix the pipeline at the lines shown and send it again"
		}
		if out != nil {
			b["partial"] = out // what ran before the failure, with its trace
		}
		setRetryAfter(w, err)
		writeErrorBody(w, status, b)
		return
	}
	writeJSON(w, http.StatusOK, out)
}
