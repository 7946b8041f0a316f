package server

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
)

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

// admit charges a request that costs to the caller's rate limit before
// its body is even read: 429 with Retry-After when the caller is over it.
func (s *Server) admit(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := s.backend.Admit(Caller(r.Context())); err != nil {
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
