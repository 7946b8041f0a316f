package server

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// HTTPHandler serves MCP over streamable HTTP: one Server per caller,
// built on the caller's first request and kept (the callers are the
// configured agents, a bounded set). Authentication is the channel's: the
// handler sits behind it and callerOf reads the agent it authenticated
// (airs serve: server.Caller, from the bearer token). A session belongs
// to the agent that opened it: a request with another agent's token on
// that session is refused (403), so a leaked session id is not a way in.
type HTTPHandler struct {
	b        Backend
	callerOf func(*http.Request) string
	opts     Options
	h        http.Handler

	mu      sync.Mutex
	servers map[string]*Server
}

// SessionTimeout closes an MCP session idle this long; a client opens a
// new one with initialize.
const SessionTimeout = 30 * time.Minute

// NewHTTPHandler returns the /mcp handler. Close it to stop following the
// registry.
func NewHTTPHandler(b Backend, callerOf func(*http.Request) string, opts Options) *HTTPHandler {
	h := &HTTPHandler{b: b, callerOf: callerOf, opts: opts, servers: map[string]*Server{}}
	sh := mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server {
		caller := callerOf(r)
		if caller == "" {
			return nil
		}
		return h.server(caller).Server
	}, &mcp.StreamableHTTPOptions{Logger: opts.Logger, SessionTimeout: SessionTimeout})
	// The SDK binds a session to TokenInfo.UserID: the agent is that id.
	verify := func(_ context.Context, _ string, r *http.Request) (*auth.TokenInfo, error) {
		caller := callerOf(r)
		if caller == "" {
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{UserID: caller}, nil
	}
	h.h = auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(sh)
	return h
}

func (h *HTTPHandler) server(caller string) *Server {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.servers[caller]
	if s == nil {
		s = New(h.b, caller, h.opts)
		h.servers[caller] = s
	}
	return s
}

func (h *HTTPHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.h.ServeHTTP(w, r) }

// Close stops every caller's server from following the registry.
func (h *HTTPHandler) Close() {
	h.mu.Lock()
	servers := h.servers
	h.servers = map[string]*Server{}
	h.mu.Unlock()
	for _, s := range servers {
		s.Close()
	}
}
