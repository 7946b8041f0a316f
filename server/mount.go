package server

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/airs-dev/airs/pipeline"
)

// Handle serves pattern with h on the server's mux, inside what ServeHTTP
// gives every endpoint (the body bound, the request timeout, draining on
// shutdown, the status counts). h is not behind the server's own
// authentication: an endpoint that speaks another API (server/compat)
// authenticates with Authenticate and answers in that API's error shape.
// Call it before serving.
func (s *Server) Handle(pattern string, h http.Handler) { s.mux.Handle(pattern, h) }

// wrapped is the server's handler with Config.Middleware around it.
func (s *Server) wrapped() http.Handler {
	if s.cfg.Middleware == nil {
		return s
	}
	return s.cfg.Middleware(s)
}

// AuthError is why Authenticate refused a request.
type AuthError struct {
	Status     int           // 400, 401 or 429
	Message    string        // what to do, in a sentence
	RetryAfter time.Duration // for a 429: the wait after failed attempts
	Invalid    bool          // a token was sent and is unknown
}

func (e *AuthError) Error() string { return e.Message }

// Authenticate is the server's bearer-token check for a mounted endpoint:
// the request with its caller set (Caller), or why not. Failed attempts
// are throttled as on every other endpoint.
func (s *Server) Authenticate(r *http.Request) (*http.Request, *AuthError) {
	if len(r.Header.Values("Authorization")) > 1 {
		return nil, &AuthError{Status: http.StatusBadRequest, Message: "more than one Authorization header: send exactly one, Authorization: Bearer <token>"}
	}
	tok, ok := bearer(r)
	if !ok {
		return nil, &AuthError{Status: http.StatusUnauthorized, Message: "send Authorization: Bearer <token> (an OpenAI client sends its API key so); tokens are configured in airs.yaml (http.tokens)"}
	}
	addr := clientAddr(r)
	if wait := s.throttle.wait(addr, tok); wait > 0 {
		return nil, &AuthError{Status: http.StatusTooManyRequests, RetryAfter: wait,
			Message: "too many wrong tokens from this address: wait " + retryAfterSeconds(wait) + " s"}
	}
	agent := s.agentOf(tok)
	if agent == "" {
		s.throttle.failed(addr, tok)
		return nil, &AuthError{Status: http.StatusUnauthorized, Invalid: true, Message: "unknown token: use a token of http.tokens in airs.yaml as the API key"}
	}
	s.throttle.succeeded(tok)
	noteAgent(r, agent)
	return r.WithContext(context.WithValue(r.Context(), callerKey{}, agent)), nil
}

// Admit charges a costly request of the caller (what it still owes first,
// then one token), as the server's own costly endpoints are charged; it
// answers *pipeline.RateLimited when the caller is over its rate limit.
func (s *Server) Admit(r *http.Request) error { return s.charge(Caller(r.Context())) }

// Owe records the rest of an admitted request's cost once its input is
// read: cost tokens in all for n bytes of input, the admitting one
// included.
func (s *Server) Owe(r *http.Request, n int) { s.oweTokens(Caller(r.Context()), costOf(n, costUnit)-1) }

// Limits are the server's input limits (the defaults filled in).
func (s *Server) Limits() Limits { return s.cfg.Limits }

// RetryAfter is how long a client should wait before sending again after
// err (a rate limit, an unavailable provider); 0 when err says nothing.
func RetryAfter(err error) time.Duration {
	var rl *pipeline.RateLimited
	if errors.As(err, &rl) {
		return time.Duration(max(rl.RetryAfterMs, 1)) * time.Millisecond
	}
	var pu *pipeline.ProviderUnavailable
	if errors.As(err, &pu) {
		return max(pu.RetryAfter, time.Second)
	}
	return 0
}

// StatusFor is the HTTP status the server answers err with.
func StatusFor(err error) int { return statusFor(err) }
