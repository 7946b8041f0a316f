package server

// The attention UI's sessions: a sign-in form exchanges one of the API's
// bearer tokens (never in a URL) for a random session id in an HttpOnly,
// SameSite=Strict cookie (Secure over TLS). The session lives on the
// server: its agent, its CSRF token, an idle and an absolute expiry; there
// are at most uiMaxSessions of them (the least recently used goes first),
// and signing out deletes it. Every change the page asks for carries the
// session's CSRF token in X-CSRF-Token (compared in constant time) and, when
// the browser says where it comes from, a same-origin Origin and
// Sec-Fetch-Site.

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"
)

const (
	uiCookie      = "airs_session"
	uiCSRFHeader  = "X-CSRF-Token"
	uiMaxSessions = 1024
	uiIdle        = 12 * time.Hour // a session unused this long ends
	uiAbsolute    = 24 * time.Hour // and every session ends this long after sign-in
)

type uiSession struct {
	agent    string
	csrf     string
	created  time.Time
	lastSeen time.Time
	saved    time.Time // lastSeen as last written to the file
}

// uiSessions is the server-side session table, keyed by the SHA-256 of
// the id (the id itself is not kept, and a lookup compares no secret).
type uiSessions struct {
	mu       sync.Mutex
	byHash   map[[32]byte]*uiSession
	max      int
	idle     time.Duration
	absolute time.Duration
	now      func() time.Time

	path   string     // the table on disk (ui_sessions_store.go); "" keeps it in memory only
	saveMu sync.Mutex // one save at a time
	log    *slog.Logger
}

func newUISessions(max int, idle, absolute time.Duration) *uiSessions {
	return &uiSessions{byHash: map[[32]byte]*uiSession{}, max: max, idle: idle, absolute: absolute, now: time.Now}
}

func randomToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	return base64.RawURLEncoding.EncodeToString(b)
}

// create starts a session for agent and returns its id (the cookie value).
func (u *uiSessions) create(agent string) (string, *uiSession) {
	id := randomToken()
	now := u.now()
	sess := &uiSession{agent: agent, csrf: randomToken(), created: now, lastSeen: now}
	u.mu.Lock()
	if len(u.byHash) >= u.max {
		u.evict(now)
	}
	u.byHash[sha256.Sum256([]byte(id))] = sess
	u.mu.Unlock()
	u.save()
	return id, sess
}

// evict drops the expired sessions and, if the table is still full, the
// least recently used one (u.mu held).
func (u *uiSessions) evict(now time.Time) {
	var oldest [32]byte
	var t time.Time
	found := false
	for k, s := range u.byHash {
		if u.expired(s, now) {
			delete(u.byHash, k)
			continue
		}
		if !found || s.lastSeen.Before(t) {
			oldest, t, found = k, s.lastSeen, true
		}
	}
	if len(u.byHash) >= u.max && found {
		delete(u.byHash, oldest)
	}
}

func (u *uiSessions) expired(s *uiSession, now time.Time) bool {
	return now.Sub(s.lastSeen) >= u.idle || now.Sub(s.created) >= u.absolute
}

// lookup is the live session of id, touched; nil when there is none (an
// expired one is deleted).
func (u *uiSessions) lookup(id string) *uiSession {
	if id == "" {
		return nil
	}
	k := sha256.Sum256([]byte(id))
	now := u.now()
	u.mu.Lock()
	s := u.byHash[k]
	if s == nil {
		u.mu.Unlock()
		return nil
	}
	if u.expired(s, now) {
		delete(u.byHash, k)
		u.mu.Unlock()
		return nil
	}
	s.lastSeen = now
	stale := now.Sub(s.saved) >= uiTouchSave
	u.mu.Unlock()
	if stale {
		u.save()
	}
	return s
}

func (u *uiSessions) remove(id string) {
	u.mu.Lock()
	delete(u.byHash, sha256.Sum256([]byte(id)))
	u.mu.Unlock()
	u.save()
}

func (u *uiSessions) count() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return len(u.byHash)
}

type uiSessionKey struct{}

// uiSessionOf is the session uiAuth found for r.
func uiSessionOf(r *http.Request) *uiSession {
	s, _ := r.Context().Value(uiSessionKey{}).(*uiSession)
	return s
}

func (s *Server) sessionFrom(r *http.Request) (string, *uiSession) {
	c, err := r.Cookie(uiCookie)
	if err != nil {
		return "", nil
	}
	return c.Value, s.ui.lookup(c.Value)
}

// uiAuth lets a request with a live session through as the session's
// agent. Without one, a page is redirected to the sign-in form and an API
// request is answered 401 in JSON.
func (s *Server) uiAuth(h http.HandlerFunc, api bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		_, sess := s.sessionFrom(r)
		if sess == nil {
			if _, err := r.Cookie(uiCookie); err == nil {
				s.clearCookie(w, r) // an expired or unknown session
			}
			if api {
				writeErrorBody(w, http.StatusUnauthorized, map[string]any{"error": "unauthorized",
					"message": "no session: sign in first", "hint": "open /ui/signin and sign in with a token from airs.yaml (http.tokens)"})
				return
			}
			http.Redirect(w, r, "/ui/signin", http.StatusSeeOther)
			return
		}
		ctx := context.WithValue(r.Context(), callerKey{}, sess.agent)
		ctx = context.WithValue(ctx, uiSessionKey{}, sess)
		h(w, r.WithContext(ctx))
	}
}

// uiCSRF refuses (403) a change that does not carry the session's CSRF
// token, or that the browser says comes from another origin.
func (s *Server) uiCSRF(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if why := crossOrigin(r); why != "" {
			writeErrorBody(w, http.StatusForbidden, map[string]any{"error": "csrf", "message": why,
				"hint": "the page's changes come from the page itself"})
			return
		}
		sess := uiSessionOf(r)
		tok := r.Header.Get(uiCSRFHeader)
		if sess == nil || tok == "" || subtle.ConstantTimeCompare([]byte(tok), []byte(sess.csrf)) != 1 {
			writeErrorBody(w, http.StatusForbidden, map[string]any{"error": "csrf",
				"message": "missing or wrong " + uiCSRFHeader,
				"hint":    "send the session's CSRF token (GET /ui/api/session) in " + uiCSRFHeader})
			return
		}
		h(w, r)
	}
}

// crossOrigin says why r does not come from this server's own pages, or "".
// Sec-Fetch-Site, when the browser sends it, decides; then a real Origin
// must be this server's. "Origin: null" says nothing: it is what a browser
// sends for its own same-origin POSTs under the page's Referrer-Policy
// no-referrer. A client that sends neither (not a browser) is judged by its
// CSRF token alone.
func crossOrigin(r *http.Request) string {
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" {
		return "a request from another site (Sec-Fetch-Site: " + site + ")"
	}
	if o := r.Header.Get("Origin"); o != "" && o != "null" && o != selfOrigin(r) {
		return "a request from another origin (" + strconv.Quote(o) + ")"
	}
	return ""
}

func selfOrigin(r *http.Request) string {
	if r.TLS != nil {
		return "https://" + r.Host
	}
	return "http://" + r.Host
}

func (s *Server) setCookie(w http.ResponseWriter, r *http.Request, id string) {
	http.SetCookie(w, &http.Cookie{Name: uiCookie, Value: id, Path: "/", MaxAge: int(s.ui.absolute / time.Second),
		HttpOnly: true, Secure: r.TLS != nil, SameSite: http.SameSiteStrictMode})
}

func (s *Server) clearCookie(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{Name: uiCookie, Value: "", Path: "/", MaxAge: -1,
		HttpOnly: true, Secure: r.TLS != nil, SameSite: http.SameSiteStrictMode})
}

// uiSigninForm shows the sign-in form, or sends a signed-in browser to /.
func (s *Server) uiSigninForm(w http.ResponseWriter, r *http.Request) {
	if _, sess := s.sessionFrom(r); sess != nil {
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	s.renderSignin(w, http.StatusOK, "")
}

func (s *Server) renderSignin(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_ = signinTmpl.Execute(w, map[string]string{"Error": msg})
}

// uiSignin takes the form's token (in the body only) and, when it is one of
// the configured tokens, starts a session as its agent.
func (s *Server) uiSignin(w http.ResponseWriter, r *http.Request) {
	if why := crossOrigin(r); why != "" {
		s.renderSignin(w, http.StatusForbidden, "Refused: "+why+".")
		return
	}
	if r.URL.RawQuery != "" {
		s.renderSignin(w, http.StatusBadRequest, "A token never goes in a URL: type it into the form.")
		return
	}
	if err := r.ParseForm(); err != nil {
		s.renderSignin(w, http.StatusBadRequest, "The form could not be read.")
		return
	}
	// Wrong tokens back off per address and per token prefix (throttle.go),
	// shared with the API's bearer tokens: a guesser waits, longer at each
	// wrong one, and nobody else does.
	tok, addr := r.PostForm.Get("token"), clientAddr(r)
	if wait := s.throttle.wait(addr, tok); wait > 0 {
		w.Header().Set("Retry-After", retryAfterSeconds(wait))
		s.renderSignin(w, http.StatusTooManyRequests, "Too many wrong tokens from here: wait "+retryAfterSeconds(wait)+" seconds.")
		return
	}
	agent := s.agentOf(tok)
	if agent == "" {
		s.throttle.failed(addr, tok)
		s.renderSignin(w, http.StatusUnauthorized, "Unknown token.")
		return
	}
	s.throttle.succeeded(tok)
	if old, _ := s.sessionFrom(r); old != "" {
		s.ui.remove(old) // a new sign-in never keeps the old id
	}
	id, _ := s.ui.create(agent)
	s.setCookie(w, r, id)
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

// agentOf is the agent of a configured token, "" for none, comparing every
// token in constant time.
func (s *Server) agentOf(tok string) string {
	if tok == "" {
		return ""
	}
	s.tokenChecks.Add(1)
	sum := HashToken(tok)
	agent := ""
	for _, t := range s.cfg.Tokens {
		if subtle.ConstantTimeCompare(sum[:], t.SHA256[:]) == 1 {
			agent = t.Agent
		}
	}
	return agent
}

func (s *Server) uiSignout(w http.ResponseWriter, r *http.Request) {
	if id, _ := s.sessionFrom(r); id != "" {
		s.ui.remove(id)
	}
	s.clearCookie(w, r)
	writeJSON(w, http.StatusOK, map[string]any{"signed_out": true})
}
