package server

// The attention UI: a web page at / where the caller's suggestions, calls
// and circuit breakers meet the user. The assets are embedded (server/ui/);
// the page's own requests go to /ui/api/..., which authenticate by a
// session cookie (ui_session.go) and reuse the API's handlers, so the agent,
// the capability checks (403) and the rate limits (admit) are the API's.
//
// Routes (the UI exists only when the Backend is a UIBackend):
//
//	GET  /                     the page (no session: 303 to /ui/signin)
//	GET  /ui/signin            the sign-in form (public)
//	POST /ui/signin            token → session cookie, 303 to / (public, Origin checked)
//	GET  /ui/static/ui.css     the style sheet (public: the sign-in form uses it)
//	GET  /ui/static/app.js     the page's script (session)
//	GET  /ui/api/session       {agent, csrf, task} (session)
//	GET  /ui/api/events        server-sent events (session, admit; ui_events.go)
//	POST /ui/api/recommendations/{id}/accept   {"confirmed"?} (session, CSRF, admit)
//	POST /ui/api/recommendations/{id}/dismiss  (session, CSRF, admit)
//	PUT  /ui/api/context       as PUT /v1/context (session, CSRF, admit)
//	PUT  /ui/api/task          {"task", "base_version"}: 409 when it changed since (ui_task.go)
//	POST /ui/api/call          as POST /v1/call (session, CSRF; the pipeline limits it)
//	POST /ui/api/signout       ends the session (session, CSRF)
//	GET  /ui/api/reviews       as GET /v1/reviews (session; with a ReviewBackend)
//	POST /ui/api/reviews/{id}/approve|deny  as /v1/reviews/... (session, CSRF; reviewers)
//	POST /ui/api/grants/revoke {"caller", "tool"} (session, CSRF; reviewers; review_grants.go)

import (
	"bytes"
	"embed"
	"encoding/json"
	"html/template"
	"io"
	"io/fs"
	"net/http"
	"path"
	"path/filepath"
	"time"

	"github.com/airs-dev/airs/pipeline"
	"github.com/airs-dev/airs/recommender"
)

// UIBackend is what a Backend offers for the attention UI, beside its
// recommendations: the pipeline's call events, the breakers and the task.
type UIBackend interface {
	RecommendBackend
	// SubscribeCalls follows every call the pipeline delivers, of every
	// caller (the server shows each agent its own); buffer bounds it.
	SubscribeCalls(buffer int) *pipeline.Subscription
	// Breakers are the circuit breakers of the tools caller may call.
	Breakers(caller string) []pipeline.ToolBreaker
	// Task is the caller's task text as the recommender sees it.
	Task(caller string) string
}

//go:embed ui
var uiFiles embed.FS

// uiCSP is the page's Content-Security-Policy: nothing inline, nothing
// from elsewhere, never framed.
const uiCSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
	"frame-ancestors 'none'; base-uri 'none'; form-action 'self'"

var signinTmpl = template.Must(template.ParseFS(uiFiles, "ui/signin.html"))

func (s *Server) ub() UIBackend { return s.backend.(UIBackend) }

// registerUI adds the page and its endpoints when the backend can serve
// them.
func (s *Server) registerUI() {
	if _, ok := s.backend.(UIBackend); !ok {
		return
	}
	// registerRecommend has run (a UIBackend is a RecommendBackend): the
	// streams end on s.streamsStop.
	s.ui = newUISessions(uiMaxSessions, uiIdle, uiAbsolute)
	s.ui.log = s.cfg.Logger
	if sb, ok := s.backend.(UIStateBackend); ok && sb.UIStateDir() != "" {
		s.ui.path = filepath.Join(sb.UIStateDir(), uiSessionsFile)
		if err := s.ui.load(); err != nil && s.cfg.Logger != nil {
			s.cfg.Logger.Warn("ui: the kept sessions could not be read: everyone signs in again", "err", err)
		}
	}
	s.hub = newCallHub(s.ub)
	s.http.RegisterOnShutdown(s.hub.stop)

	page := func(h http.HandlerFunc) http.HandlerFunc { return uiHeaders(s.uiAuth(h, false)) }
	api := func(h http.HandlerFunc) http.HandlerFunc { return uiHeaders(s.uiAuth(h, true)) }
	change := func(h http.HandlerFunc) http.HandlerFunc { return api(s.uiCSRF(h)) }

	s.mux.HandleFunc("GET /{$}", page(s.uiPage))
	s.mux.HandleFunc("GET /ui/signin", uiHeaders(s.uiSigninForm))
	s.mux.HandleFunc("POST /ui/signin", uiHeaders(s.uiSignin))
	s.mux.HandleFunc("GET /ui/static/ui.css", uiHeaders(uiAsset("ui/ui.css")))
	s.mux.HandleFunc("GET /ui/static/app.js", page(uiAsset("ui/app.js")))
	s.mux.HandleFunc("GET /ui/api/session", api(s.uiSessionInfo))
	s.mux.HandleFunc("GET /ui/api/events", api(s.admit(s.uiEvents)))
	s.mux.HandleFunc("POST /ui/api/recommendations/{id}/accept", change(s.admit(s.uiAccept)))
	s.mux.HandleFunc("POST /ui/api/recommendations/{id}/dismiss", change(s.admit(s.dismissRecommendation)))
	s.mux.HandleFunc("PUT /ui/api/context", change(s.admit(s.putContext)))
	s.mux.HandleFunc("PUT /ui/api/task", change(s.admit(s.uiPutTask)))
	s.mux.HandleFunc("POST /ui/api/call", change(s.call))
	s.mux.HandleFunc("POST /ui/api/signout", change(s.uiSignout))
	if _, ok := s.rvb(); ok {
		s.mux.HandleFunc("GET /ui/api/reviews", api(s.reviews))
		s.mux.HandleFunc("POST /ui/api/reviews/{id}/approve", change(s.decideReview(true)))
		s.mux.HandleFunc("POST /ui/api/reviews/{id}/deny", change(s.decideReview(false)))
		if _, ok := s.gb(); ok {
			s.mux.HandleFunc("POST /ui/api/grants/revoke", change(s.uiRevokeGrant))
		}
	}
}

// uiHeaders sets the security headers of every UI answer, errors included.
func uiHeaders(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		hd := w.Header()
		hd.Set("Content-Security-Policy", uiCSP)
		hd.Set("X-Content-Type-Options", "nosniff")
		hd.Set("Referrer-Policy", "no-referrer")
		hd.Set("X-Frame-Options", "DENY")
		hd.Set("Cross-Origin-Opener-Policy", "same-origin")
		hd.Set("Cross-Origin-Resource-Policy", "same-origin")
		hd.Set("Cache-Control", "no-store")
		h(w, r)
	}
}

var uiTypes = map[string]string{".html": "text/html; charset=utf-8", ".css": "text/css; charset=utf-8", ".js": "text/javascript; charset=utf-8"}

// uiAsset serves one embedded file.
func uiAsset(name string) http.HandlerFunc {
	b, err := fs.ReadFile(uiFiles, name)
	if err != nil {
		panic("server: embedded UI asset missing: " + name)
	}
	ct := uiTypes[path.Ext(name)]
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", ct)
		http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(b))
	}
}

var uiIndex = uiAsset("ui/index.html")

func (s *Server) uiPage(w http.ResponseWriter, r *http.Request) { uiIndex(w, r) }

// uiSessionInfo is what the page needs to start: who it is signed in as,
// the CSRF token for its changes, and the task text.
func (s *Server) uiSessionInfo(w http.ResponseWriter, r *http.Request) {
	sess := uiSessionOf(r)
	task := s.ub().Task(sess.agent)
	writeJSON(w, http.StatusOK, map[string]any{"agent": sess.agent, "csrf": sess.csrf,
		"task": task, "task_version": taskVersion(task), "guard": s.guardInfo(sess.agent)})
}

// uiAcceptBody is the body of the page's accept: confirmed says the user
// confirmed, in the page, a destructive tool.
type uiAcceptBody struct {
	Confirmed bool `json:"confirmed"`
}

// uiAccept is POST /v1/recommendations/{id}/accept for the page, with the
// confirmation in it: a destructive tool is refused (409, the
// suggestion kept) until the user confirmed it, and then runs through the
// pipeline as the caller, as POST /v1/call would run it.
func (s *Server) uiAccept(w http.ResponseWriter, r *http.Request) {
	var body uiAcceptBody
	if !decodeOptional(w, r, &body) {
		return
	}
	caller, id := Caller(r.Context()), r.PathValue("id")
	if !body.Confirmed {
		for _, rec := range s.ub().Recommendations(caller) {
			if rec.ID == id && rec.Destructive {
				writeErrorBody(w, http.StatusConflict, map[string]any{"error": "confirmation_required",
					"message": rec.Tool + " is destructive: the user confirms it before it runs",
					"hint":    `ask the user, then POST {"confirmed":true}`})
				return
			}
		}
	}
	rec, res, callErr, err := s.ub().AcceptRecommendation(r.Context(), caller, id)
	if err != nil {
		writeRecommendationError(w, err)
		return
	}
	if res == nil && callErr == nil {
		if !body.Confirmed {
			writeJSON(w, http.StatusOK, map[string]any{"recommendation": rec, "ran": false,
				"confirm": map[string]any{"tool": rec.Tool, "provider": rec.Provider, "arguments": rec.Arguments}})
			return
		}
		res, callErr = s.backend.Call(r.Context(), pipeline.Request{Tool: rec.Tool, Provider: rec.Provider,
			Params: rec.Arguments, Caller: caller})
	}
	if callErr != nil {
		writeCallError(w, res, callErr)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"recommendation": rec, "ran": true, "result": res})
}

// uiRecs is the caller's live list, never null.
func (s *Server) uiRecs(caller string) []recommender.Recommendation {
	recs := s.ub().Recommendations(caller)
	if recs == nil {
		recs = []recommender.Recommendation{}
	}
	return recs
}

// decodeOptional is decode for a body that may be empty (v left as is).
func decodeOptional(w http.ResponseWriter, r *http.Request, v any) bool {
	b, ok := readBody(w, r)
	if !ok {
		return false
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return true
	}
	r.Body = io.NopCloser(bytes.NewReader(b))
	return decode(w, r, v)
}

// jsonBytes marshals v for an event; v is always marshalable here.
func jsonBytes(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}
