package compat

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/airs-dev/airs/server"
)

// Options configure the endpoints; zero values take the defaults in
// brackets.
type Options struct {
	// Version is what /api/version answers (AIRS's version).
	Version string
	// MaxText bounds the bytes of the last user message, the request in
	// natural language [the server's http.limits.chat_text].
	MaxText int
	// Logger gets one line per completion, logged with the request's
	// context (so with its trace id when tracing is on); nil: none.
	Logger *slog.Logger
}

// Paths are the endpoints Mount serves.
var Paths = []string{
	"POST /v1/chat/completions", "GET /v1/models", "GET /v1/models/{id}",
	"POST /api/chat", "GET /api/tags", "GET /api/version", "POST /api/show",
}

// Mount serves both APIs on s, answered by b.
func Mount(s *server.Server, b Backend, o Options) {
	if o.MaxText <= 0 {
		o.MaxText = s.Limits().ChatText
	}
	if o.Logger != nil {
		b = logged{b, o.Logger}
	}
	h := &handler{s: s, b: b, o: o}
	s.Handle("POST /v1/chat/completions", h.guard(openAI{}, true, h.openAIChat))
	s.Handle("GET /v1/models", h.guard(openAI{}, false, h.openAIModels))
	s.Handle("GET /v1/models/{id}", h.guard(openAI{}, false, h.openAIModel))
	s.Handle("POST /api/chat", h.guard(ollamaAPI{}, true, h.ollamaChat))
	s.Handle("GET /api/tags", h.guard(ollamaAPI{}, false, h.ollamaTags))
	s.Handle("GET /api/version", h.guard(ollamaAPI{}, false, h.ollamaVersion))
	s.Handle("POST /api/show", h.guard(ollamaAPI{}, false, h.ollamaShow))
}

type handler struct {
	s *server.Server
	b Backend
	o Options
}

// api is what differs in how the two APIs answer an error.
type api interface {
	// writeError answers status with msg in the API's error shape; code is
	// a short machine-readable kind ("invalid_api_key", "rate_limit_exceeded").
	writeError(w http.ResponseWriter, status int, code, msg string)
}

// guard authenticates the request with the server's tokens and, for a
// request that costs (a completion), charges it to the caller's rate
// limit, answering in the API's own error shape.
func (h *handler) guard(a api, costly bool, next func(http.ResponseWriter, *http.Request)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r2, aerr := h.s.Authenticate(r)
		if aerr != nil {
			code := "invalid_api_key"
			switch {
			case aerr.Status == http.StatusTooManyRequests:
				w.Header().Set("Retry-After", seconds(aerr.RetryAfter))
				code = "too_many_failures"
			case aerr.Status == http.StatusBadRequest:
				code = "invalid_request"
			default:
				w.Header().Set("WWW-Authenticate", `Bearer realm="airs"`)
			}
			a.writeError(w, aerr.Status, code, aerr.Message)
			return
		}
		if costly {
			if err := h.s.Admit(r2); err != nil {
				writeBackendError(w, a, err)
				return
			}
		}
		next(w, r2)
	})
}

// readJSON reads the body into v (the server bounds its size): a client
// of another API sends fields AIRS does not read (temperature, user …),
// so unknown fields are ignored, not refused.
func readJSON(w http.ResponseWriter, r *http.Request, a api, v any) bool {
	b, err := io.ReadAll(r.Body)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			a.writeError(w, http.StatusRequestEntityTooLarge, "request_too_large",
				fmt.Sprintf("the body is over %d bytes: send less, or raise http.max_body in airs.yaml on the server", mbe.Limit))
			return false
		}
		a.writeError(w, http.StatusBadRequest, "invalid_request", "reading the body: "+err.Error())
		return false
	}
	if err := json.Unmarshal(b, v); err != nil {
		a.writeError(w, http.StatusBadRequest, "invalid_json", "the body is not the JSON this endpoint takes: "+err.Error())
		return false
	}
	return true
}

// admitText checks the request's text against the size limit and owes
// its cost to the caller's rate limit (a long conversation costs more,
// as on /v1/chat; the tools' definitions are not counted).
func (h *handler) admitText(w http.ResponseWriter, r *http.Request, a api, req *Request) bool {
	if n := len(req.LastUser()); n > h.o.MaxText {
		a.writeError(w, http.StatusRequestEntityTooLarge, "request_too_large",
			fmt.Sprintf("the last user message has %d bytes; this server takes at most %d: send less, or raise http.limits.chat_text in airs.yaml on the server", n, h.o.MaxText))
		return false
	}
	n := 0
	for _, m := range req.Messages {
		n += len(m.Content)
	}
	h.s.Owe(r, n)
	return true
}

// writeBackendError answers an error of the Backend or the rate limit.
func writeBackendError(w http.ResponseWriter, a api, err error) {
	var re *RequestError
	if errors.As(err, &re) {
		a.writeError(w, http.StatusBadRequest, "invalid_request", re.Message)
		return
	}
	if d := server.RetryAfter(err); d > 0 {
		w.Header().Set("Retry-After", seconds(d))
	}
	status := server.StatusFor(err)
	code := "server_error"
	switch status {
	case http.StatusTooManyRequests:
		code = "rate_limit_exceeded"
	case http.StatusNotFound:
		code = "model_not_found"
	case 499:
		return // the client left: nobody reads an answer
	}
	a.writeError(w, status, code, err.Error())
}

func seconds(d time.Duration) string {
	return strconv.FormatInt(max(int64((d+time.Second-1)/time.Second), 1), 10)
}

// setMode says in headers how the reply was made.
func setMode(w http.ResponseWriter, mode Mode, notice string) {
	if mode != "" {
		w.Header().Set("X-AIRS-Mode", string(mode))
	}
	if notice != "" {
		w.Header().Set("X-AIRS-Notice", headerSafe(notice))
	}
}

// headerSafe keeps a header value to printable ASCII on one line.
func headerSafe(s string) string {
	b := make([]byte, 0, min(len(s), 512))
	for i := 0; i < len(s) && len(b) < 512; i++ {
		if c := s[i]; c >= 0x20 && c < 0x7f {
			b = append(b, c)
		}
	}
	return string(b)
}

// newID is a random identifier with a prefix ("chatcmpl-", "call_").
func newID(prefix string) string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

// fillIDs gives every call an id the client can answer with.
func fillIDs(calls []Call) {
	for i := range calls {
		if calls[i].ID == "" {
			calls[i].ID = newID("call_")
		}
		if len(calls[i].Arguments) == 0 {
			calls[i].Arguments = json.RawMessage(`{}`)
		}
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// logged logs each completion with its request's context.
type logged struct {
	Backend
	log *slog.Logger
}

func (l logged) Complete(ctx context.Context, caller string, req *Request, onText func(Mode, string) error) (*Reply, error) {
	start := time.Now()
	rep, err := l.Backend.Complete(ctx, caller, req, onText)
	attrs := []any{"caller", caller, "model", req.Model, "tools", len(req.Tools), "choice", string(req.Choice.Mode), "took", time.Since(start)}
	if err != nil {
		l.log.WarnContext(ctx, "compat completion failed", append(attrs, "error", err)...)
		return rep, err
	}
	l.log.InfoContext(ctx, "compat completion", append(attrs, "mode", string(rep.Mode), "calls", len(rep.Calls))...)
	return rep, err
}
