package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/airs-dev/airs/pipeline"
	"github.com/airs-dev/airs/recommender"
)

// RecommendBackend is what a Backend offers when it recommends tools; the
// /v1/recommendations and /v1/context endpoints exist only then.
type RecommendBackend interface {
	Recommendations(caller string) []recommender.Recommendation
	SubscribeRecommendations(caller string) (<-chan recommender.Update, func())
	// AcceptRecommendation takes the caller's yes and, when the tool is
	// not destructive, runs the call through the pipeline (res, callErr);
	// otherwise res is nil and the client confirms by POSTing the call to
	// /v1/call. err is the recommendation's own (not found).
	AcceptRecommendation(ctx context.Context, caller, id string) (rec *recommender.Recommendation, res *pipeline.Result, callErr, err error)
	DismissRecommendation(caller, id string) error
	SetContext(ctx context.Context, caller string, c ContextUpdate) error
}

// ContextUpdate is the body of PUT /v1/context: what the recommender
// should know of the caller's context. Absent fields are left as they are.
type ContextUpdate struct {
	// Task is the caller's task text ("" clears it).
	Task *string `json:"task,omitempty"`
	// Files the client opened (or created or changed) in a space.
	Files []ContextFile `json:"files,omitempty"`
	// Turn is a conversation turn of the user's, from a chat the client runs.
	Turn string `json:"turn,omitempty"`
}

// ContextFile names a file in a space.
type ContextFile struct {
	Space string `json:"space"`
	Path  string `json:"path"`
}

// MaxContextFiles bounds the files of one PUT /v1/context.
const MaxContextFiles = 64

// streamKeepAlive is how often an idle recommendation stream sends a
// comment, so that proxies and clients see it alive.
const streamKeepAlive = 15 * time.Second

// streamWriteTimeout bounds one write to an event stream's client (a
// variable for tests).
var streamWriteTimeout = 5 * time.Second

func (s *Server) registerRecommend() {
	if _, ok := s.backend.(RecommendBackend); !ok {
		return
	}
	stop := make(chan struct{})
	var once sync.Once
	s.http.RegisterOnShutdown(func() { once.Do(func() { close(stop) }) })
	s.streamsStop = stop
	s.mux.HandleFunc("GET /v1/recommendations", s.auth(s.admit(s.recommendations)))
	s.mux.HandleFunc("GET /v1/recommendations/stream", s.auth(s.admit(s.recommendationStream)))
	s.mux.HandleFunc("POST /v1/recommendations/{id}/accept", s.auth(s.admit(s.acceptRecommendation)))
	s.mux.HandleFunc("POST /v1/recommendations/{id}/dismiss", s.auth(s.admit(s.dismissRecommendation)))
	s.mux.HandleFunc("PUT /v1/context", s.auth(s.admit(s.putContext)))
}

func (s *Server) rb() RecommendBackend { return s.backend.(RecommendBackend) }

func (s *Server) recommendations(w http.ResponseWriter, r *http.Request) {
	recs := s.rb().Recommendations(Caller(r.Context()))
	if recs == nil {
		recs = []recommender.Recommendation{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"recommendations": recs})
}

// recommendationStream sends the caller's live list ("snapshot"), then
// each change as an event named by its type (new, expired, accepted,
// dismissed), until the client leaves, the request's time is up (an
// EventSource reconnects by itself: retry is 1 s) or the server shuts down.
func (s *Server) recommendationStream(w http.ResponseWriter, r *http.Request) {
	es, ok := newEventStream(w)
	if !ok {
		return
	}
	defer es.done()
	caller := Caller(r.Context())
	updates, cancel := s.rb().SubscribeRecommendations(caller)
	defer cancel()
	if !es.start() {
		return
	}
	recs := s.rb().Recommendations(caller)
	if recs == nil {
		recs = []recommender.Recommendation{}
	}
	if !es.send("snapshot", jsonBytes(map[string]any{"recommendations": recs})) {
		return
	}
	tick := time.NewTicker(streamKeepAlive)
	defer tick.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-s.streamsStop:
			return
		case <-tick.C:
			if !es.keepAlive() {
				return
			}
		case u, ok := <-updates:
			if !ok || !es.send(u.Type, jsonBytes(u.Recommendation)) {
				return
			}
		}
	}
}

func (s *Server) acceptRecommendation(w http.ResponseWriter, r *http.Request) {
	rec, res, callErr, err := s.rb().AcceptRecommendation(r.Context(), Caller(r.Context()), r.PathValue("id"))
	if err != nil {
		writeRecommendationError(w, err)
		return
	}
	if res == nil && callErr == nil {
		writeJSON(w, http.StatusOK, map[string]any{"recommendation": rec, "ran": false,
			"confirm": map[string]any{"tool": rec.Tool, "provider": rec.Provider, "arguments": rec.Arguments},
			"hint":    "the tool is destructive: POST the confirm object to /v1/call to run it"})
		return
	}
	if callErr != nil {
		writeCallError(w, res, callErr)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"recommendation": rec, "ran": true, "result": res})
}

func (s *Server) dismissRecommendation(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if err := s.rb().DismissRecommendation(Caller(r.Context()), id); err != nil {
		writeRecommendationError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"dismissed": id})
}

func (s *Server) putContext(w http.ResponseWriter, r *http.Request) {
	var c ContextUpdate
	if !decode(w, r, &c) {
		return
	}
	if c.Task == nil && len(c.Files) == 0 && c.Turn == "" {
		writeError(w, http.StatusBadRequest, "bad_request", `say at least one of "task", "files" ([{"space","path"}]) or "turn"`)
		return
	}
	if len(c.Files) > MaxContextFiles {
		writeError(w, http.StatusBadRequest, "bad_request", fmt.Sprintf(`"files" holds at most %d entries`, MaxContextFiles))
		return
	}
	// The task and a turn are read like a chat's text (the recommender
	// retrieves tools for them): bounded and charged the same way.
	task := ""
	if c.Task != nil {
		task = *c.Task
	}
	if !checkText(w, r.Method+" "+r.URL.Path, `"task"`, task, s.cfg.Limits.ChatText, "http.limits.chat_text") ||
		!checkText(w, r.Method+" "+r.URL.Path, `"turn"`, c.Turn, s.cfg.Limits.ChatText, "http.limits.chat_text") {
		return
	}
	s.owe(r, costOf(len(task)+len(c.Turn), costUnit))
	for _, f := range c.Files {
		if f.Space == "" || f.Path == "" {
			writeError(w, http.StatusBadRequest, "bad_request", `each of "files" needs "space" and "path"`)
			return
		}
	}
	if err := s.rb().SetContext(r.Context(), Caller(r.Context()), c); err != nil {
		var ce *pipeline.ToolCapabilityDenied
		if errors.As(err, &ce) {
			writeCallError(w, nil, err)
			return
		}
		writeError(w, http.StatusUnprocessableEntity, "invalid_context", err.Error())
		return
	}
	recs := s.rb().Recommendations(Caller(r.Context()))
	if recs == nil {
		recs = []recommender.Recommendation{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"recommendations": recs})
}

func writeRecommendationError(w http.ResponseWriter, err error) {
	if errors.Is(err, recommender.ErrNotFound) {
		writeErrorBody(w, http.StatusNotFound, map[string]any{"error": "recommendation_not_found", "message": err.Error(),
			"hint": "GET /v1/recommendations lists the live ones"})
		return
	}
	writeError(w, http.StatusInternalServerError, "internal", err.Error())
}

// Unwrap lets http.ResponseController reach the connection (write
// deadlines for event streams).
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
