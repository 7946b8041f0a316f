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
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/airs-dev/airs/pipeline"
)

// Backend is what the server serves. The app package implements it over the
// real Manager, Selector and chains; each method gets the caller from the
// channel.
type Backend interface {
	Call(ctx context.Context, req pipeline.Request) (*pipeline.Result, error)
	Select(ctx context.Context, caller, text string) (any, error)
	Plan(ctx context.Context, caller, text string) (any, error)
	// Chat answers a request, emitting events (tool, result, token, done)
	// as they happen.
	Chat(ctx context.Context, caller, text string, emit func(event string, data any) error) error
	RunPipeline(ctx context.Context, caller string, yaml []byte, input map[string]any) (any, error)
	Tools(caller string) any
	WriteMetrics(w io.Writer) error
}

// Token is one accepted bearer token, by its SHA-256.
type Token struct {
	SHA256 [32]byte
	Agent  string
}

// Config configures the server; zero values take the defaults in brackets.
type Config struct {
	Addr            string        // [127.0.0.1:8080]
	Tokens          []Token       // no tokens: every request is 401
	MaxBody         int64         // bytes per request body [2 MiB]
	RequestTimeout  time.Duration // per request, chat and pipelines included [120s]
	ShutdownTimeout time.Duration // drain budget on shutdown [30s]
	Logger          *slog.Logger
}

// Server is the HTTP API.
type Server struct {
	cfg     Config
	backend Backend
	mux     *http.ServeMux
	http    *http.Server

	inflight sync.WaitGroup
	requests atomic.Int64
	statuses sync.Map // int → *atomic.Int64
}

// New builds a server; call ListenAndServe or use Handler in tests.
func New(b Backend, cfg Config) *Server {
	if cfg.Addr == "" {
		cfg.Addr = "127.0.0.1:8080"
	}
	if cfg.MaxBody <= 0 {
		cfg.MaxBody = 2 << 20
	}
	if cfg.RequestTimeout <= 0 {
		cfg.RequestTimeout = 120 * time.Second
	}
	if cfg.ShutdownTimeout <= 0 {
		cfg.ShutdownTimeout = 30 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	s := &Server{cfg: cfg, backend: b, mux: http.NewServeMux()}
	s.mux.HandleFunc("GET /healthz", s.healthz)
	s.mux.HandleFunc("GET /metrics", s.auth(s.metrics))
	s.mux.HandleFunc("GET /v1/tools", s.auth(s.tools))
	s.mux.HandleFunc("POST /v1/call", s.auth(s.call))
	s.mux.HandleFunc("POST /v1/select", s.auth(s.selectTool))
	s.mux.HandleFunc("POST /v1/plan", s.auth(s.plan))
	s.mux.HandleFunc("POST /v1/chat", s.auth(s.chat))
	s.mux.HandleFunc("POST /v1/pipelines/run", s.auth(s.runPipeline))
	s.http = &http.Server{
		Addr:              cfg.Addr,
		Handler:           s,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       30 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
	}
	return s
}

// ServeHTTP counts the request as in flight (for draining), bounds its
// body and its time, and records its status.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.inflight.Add(1)
	defer s.inflight.Done()
	s.requests.Add(1)
	r.Body = http.MaxBytesReader(w, r.Body, s.cfg.MaxBody)
	ctx, cancel := context.WithTimeout(r.Context(), s.cfg.RequestTimeout)
	defer cancel()
	sw := &statusWriter{ResponseWriter: w, status: 200}
	s.mux.ServeHTTP(sw, r.WithContext(ctx))
	c, _ := s.statuses.LoadOrStore(sw.status, new(atomic.Int64))
	c.(*atomic.Int64).Add(1)
}

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

// ListenAndServe listens on Config.Addr and serves until ctx ends.
func (s *Server) ListenAndServe(ctx context.Context) error {
	l, err := net.Listen("tcp", s.cfg.Addr)
	if err != nil {
		return fmt.Errorf("server: listen %s: %w", s.cfg.Addr, err)
	}
	s.cfg.Logger.Info("airs serve listening", "addr", l.Addr().String())
	return s.Serve(ctx, l)
}

type callerKey struct{}

// Caller is the agent id the channel authenticated, "" outside a request.
func Caller(ctx context.Context) string {
	c, _ := ctx.Value(callerKey{}).(string)
	return c
}

// HashToken is how tokens are stored in configuration.
func HashToken(token string) [32]byte { return sha256.Sum256([]byte(token)) }

func (s *Server) auth(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		tok, ok := bearer(r)
		if !ok {
			w.Header().Set("WWW-Authenticate", `Bearer realm="airs"`)
			writeError(w, http.StatusUnauthorized, "unauthorized", "send Authorization: Bearer <token>; tokens are configured in airs.yaml (http.tokens)")
			return
		}
		sum := HashToken(tok)
		agent := ""
		for _, t := range s.cfg.Tokens {
			if subtle.ConstantTimeCompare(sum[:], t.SHA256[:]) == 1 {
				agent = t.Agent
			}
		}
		if agent == "" {
			w.Header().Set("WWW-Authenticate", `Bearer realm="airs", error="invalid_token"`)
			writeError(w, http.StatusUnauthorized, "unauthorized", "unknown token")
			return
		}
		h(w, r.WithContext(context.WithValue(r.Context(), callerKey{}, agent)))
	}
}

func bearer(r *http.Request) (string, bool) {
	h := r.Header.Get("Authorization")
	const p = "Bearer "
	if len(h) <= len(p) || h[:len(p)] != p {
		return "", false
	}
	return h[len(p):], true
}

func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"ok": true})
}

func (s *Server) metrics(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; version=0.0.4")
	if err := s.backend.WriteMetrics(w); err != nil {
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
// caller is the token's agent.
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

func (s *Server) call(w http.ResponseWriter, r *http.Request) {
	var req CallRequest
	if !decode(w, r, &req) {
		return
	}
	if req.Tool == "" {
		writeError(w, http.StatusBadRequest, "bad_request", `"tool" is required`)
		return
	}
	params := []byte(req.Arguments)
	if len(params) == 0 {
		params = []byte("{}")
	}
	res, err := s.backend.Call(r.Context(), pipeline.Request{
		CallID: req.CallID, Tool: req.Tool, Provider: req.Provider, Params: params,
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
	if !decode(w, r, &req) || !needText(w, req.Text) {
		return
	}
	out, err := s.backend.Select(r.Context(), Caller(r.Context()), req.Text)
	if err != nil {
		writeError(w, http.StatusUnprocessableEntity, "selection_failed", err.Error())
		return
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) plan(w http.ResponseWriter, r *http.Request) {
	var req textRequest
	if !decode(w, r, &req) || !needText(w, req.Text) {
		return
	}
	out, err := s.backend.Plan(r.Context(), Caller(r.Context()), req.Text)
	if err != nil {
		writeError(w, http.StatusUnprocessableEntity, "planning_failed", err.Error())
		return
	}
	writeJSON(w, http.StatusOK, out)
}

// chat streams server-sent events: one `event:` per tool choice, result,
// text chunk, and a final `done` (or `error`).
func (s *Server) chat(w http.ResponseWriter, r *http.Request) {
	var req textRequest
	if !decode(w, r, &req) || !needText(w, req.Text) {
		return
	}
	fl, ok := w.(http.Flusher)
	if !ok {
		writeError(w, http.StatusInternalServerError, "internal", "streaming unsupported")
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	emit := func(event string, data any) error {
		b, err := json.Marshal(data)
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, b); err != nil {
			return err
		}
		fl.Flush()
		return nil
	}
	if err := s.backend.Chat(r.Context(), Caller(r.Context()), req.Text, emit); err != nil {
		_ = emit("error", map[string]string{"kind": pipeline.KindOf(err), "error": err.Error(), "hint": pipeline.Hint(err)})
		return
	}
	_ = emit("done", map[string]bool{"ok": true})
}

// PipelineRequest is the body of POST /v1/pipelines/run: the DSL text and
// the inputs.
type PipelineRequest struct {
	YAML  string         `json:"yaml"`
	Input map[string]any `json:"input,omitempty"`
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
	out, err := s.backend.RunPipeline(r.Context(), Caller(r.Context()), []byte(req.YAML), req.Input)
	if err != nil {
		writeError(w, statusFor(err), kindOr(err, "pipeline_failed"), err.Error())
		return
	}
	writeJSON(w, http.StatusOK, out)
}

func needText(w http.ResponseWriter, t string) bool {
	if t == "" {
		writeError(w, http.StatusBadRequest, "bad_request", `"text" (the request in natural language) is required`)
		return false
	}
	return true
}

func decode(w http.ResponseWriter, r *http.Request, v any) bool {
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			writeError(w, http.StatusRequestEntityTooLarge, "payload_too_large", fmt.Sprintf("body over %d bytes", mbe.Limit))
			return false
		}
		writeError(w, http.StatusBadRequest, "bad_request", "body: "+err.Error())
		return false
	}
	return true
}

// statusFor maps the 13 pipeline error kinds to HTTP statuses.
func statusFor(err error) int {
	switch pipeline.KindOf(err) {
	case pipeline.KindToolNotFound:
		return http.StatusNotFound
	case pipeline.KindToolDeprecated:
		return http.StatusGone
	case pipeline.KindChannelCapabilityDenied, pipeline.KindToolCapabilityDenied, pipeline.KindIntentMisaligned:
		return http.StatusForbidden
	case pipeline.KindSchemaValidationFailed, pipeline.KindProviderRejected:
		return http.StatusUnprocessableEntity
	case pipeline.KindPayloadTooLarge:
		return http.StatusRequestEntityTooLarge
	case pipeline.KindTimeout:
		return http.StatusGatewayTimeout
	case pipeline.KindProviderUnavailable:
		return http.StatusServiceUnavailable
	case pipeline.KindProviderCrashed:
		return http.StatusBadGateway
	case pipeline.KindRateLimited:
		return http.StatusTooManyRequests
	case pipeline.KindCancelled:
		return 499 // client closed request (nginx's convention)
	}
	return http.StatusInternalServerError
}

func kindOr(err error, def string) string {
	if k := pipeline.KindOf(err); k != "" && k != "internal" {
		return k
	}
	return def
}

func writeCallError(w http.ResponseWriter, res *pipeline.Result, err error) {
	var rl *pipeline.RateLimited
	if errors.As(err, &rl) {
		w.Header().Set("Retry-After", strconv.FormatInt((rl.RetryAfterMs+999)/1000, 10))
	}
	body := map[string]any{"error": kindOr(err, "internal"), "message": err.Error(), "hint": pipeline.Hint(err)}
	var sv *pipeline.SchemaValidationFailed
	if errors.As(err, &sv) {
		body["errors"] = sv.Errors
	}
	if res != nil && len(res.Output) > 0 {
		body["partial"] = res // a cancelled call's partial output is still delivered
	}
	writeJSON(w, statusFor(err), body)
}

func writeError(w http.ResponseWriter, status int, kind, msg string) {
	writeJSON(w, status, map[string]any{"error": kind, "message": msg})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}
