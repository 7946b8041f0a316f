package server

import (
	"context"
	"crypto/sha256"
	"net/http"
	"time"
)

type callerKey struct{}

// authNote is where auth notes, for ServeHTTP, the agent a request's
// credential authenticated as.
type authNote struct{ agent string }

type authNoteKey struct{}

// noteAgent notes, for ServeHTTP, that r authenticated as agent.
func noteAgent(r *http.Request, agent string) {
	if n, ok := r.Context().Value(authNoteKey{}).(*authNote); ok {
		n.agent = agent
	}
}

// Caller is the agent id the channel authenticated, "" outside a request.
func Caller(ctx context.Context) string {
	c, _ := ctx.Value(callerKey{}).(string)
	return c
}

// HashToken is how tokens are stored in configuration.
func HashToken(token string) [32]byte { return sha256.Sum256([]byte(token)) }

func (s *Server) auth(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if len(r.Header.Values("Authorization")) > 1 {
			// Two credentials: which one a proxy or a library keeps differs,
			// so the request is refused rather than read one way.
			writeError(w, http.StatusBadRequest, "bad_request", "more than one Authorization header: send exactly one, Authorization: Bearer <token>")
			return
		}
		tok, ok := bearer(r)
		if !ok {
			w.Header().Set("WWW-Authenticate", `Bearer realm="airs"`)
			writeError(w, http.StatusUnauthorized, "unauthorized", "send Authorization: Bearer <token>; tokens are configured in airs.yaml (http.tokens)")
			return
		}
		addr := clientAddr(r)
		if wait := s.throttle.wait(addr, tok); wait > 0 {
			writeThrottled(w, wait)
			return
		}
		agent := s.agentOf(tok)
		if agent == "" {
			s.throttle.failed(addr, tok)
			w.Header().Set("WWW-Authenticate", `Bearer realm="airs", error="invalid_token"`)
			writeError(w, http.StatusUnauthorized, "unauthorized", "unknown token")
			return
		}
		s.throttle.succeeded(tok)
		noteAgent(r, agent)
		h(w, r.WithContext(context.WithValue(r.Context(), callerKey{}, agent)))
	}
}

// writeThrottled answers an attempt that must wait after failed ones.
func writeThrottled(w http.ResponseWriter, wait time.Duration) {
	w.Header().Set("Retry-After", retryAfterSeconds(wait))
	writeErrorBody(w, http.StatusTooManyRequests, map[string]any{"error": "too_many_failures",
		"message": "too many wrong tokens from this address: wait " + retryAfterSeconds(wait) + " s",
		"hint":    "check the token (airs.yaml http.tokens holds its SHA-256); each further wrong one doubles the wait"})
}

// admit charges a request that costs to the caller's rate limit before
// its body is even read (and what earlier ones still owe, limits.go): 429
// with Retry-After when the caller is over it.
func (s *Server) admit(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := s.charge(Caller(r.Context())); err != nil {
			writeCallError(w, nil, err)
			return
		}
		h(w, r)
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
