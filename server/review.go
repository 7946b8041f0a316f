package server

// The guard's review queue over HTTP (a Backend that is a ReviewBackend):
//
//	GET  /v1/reviews[?all=true]        the open confirmations and reviews the
//	     [&limit=N&offset=M]           caller may see: all of them for a reviewer
//	                                   (guard.reviewers), its own otherwise; a
//	                                   page of at most limit (default 100, at
//	                                   most 1000), newest first, with
//	                                   "next_offset" when there are more
//	POST /v1/reviews/{id}/approve      {"always"?: true} (reviewers only)
//	POST /v1/reviews/{id}/deny         (reviewers only)
//
// and the same for the attention page under /ui/api/reviews (session;
// CSRF for the changes). A call the guard holds answers 428
// intent_verification_required with {"confirmation": {"id", ...}}; once a
// reviewer approved it, the same call (same agent, tool and arguments)
// sent again runs.

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/airs-dev/airs/guard"
	"github.com/airs-dev/airs/pipeline"
)

// ReviewBackend is what a Backend offers when it has a guard.
type ReviewBackend interface {
	// GuardEnabled says whether there is a guard at all (guard.enabled);
	// without one the other methods answer ErrNoGuard.
	GuardEnabled() bool
	// CanReview says whether caller may decide reviews here.
	CanReview(caller string) bool
	// Reviews lists what caller may see: every review for a reviewer, its
	// own otherwise; all adds the decided and expired ones.
	Reviews(caller string, all bool) ([]guard.Review, error)
	// DecideReview approves (always: every call of the tool by the agent)
	// or denies review id as caller, a reviewer. Approving a review of the
	// caller's own call answers ErrSelfApproval unless the configuration
	// allows it (guard.self_approve).
	DecideReview(caller, id string, ch guard.Choice) (guard.Review, error)
}

// ErrSelfApproval is a ReviewBackend's answer when a reviewer approves a
// call it held itself and the configuration does not allow that.
var ErrSelfApproval = errors.New("a reviewer cannot approve its own held call")

// ErrNoGuard is a ReviewBackend's answer when the guard is off.
var ErrNoGuard = errors.New("the guard is off (guard.enabled: false in airs.yaml): nothing is held for review")

func (s *Server) rvb() (ReviewBackend, bool) {
	b, ok := s.backend.(ReviewBackend)
	return b, ok
}

func (s *Server) registerReviews() {
	if _, ok := s.rvb(); !ok {
		return
	}
	s.mux.HandleFunc("GET /v1/reviews", s.auth(s.reviews))
	s.mux.HandleFunc("POST /v1/reviews/{id}/approve", s.auth(s.decideReview(true)))
	s.mux.HandleFunc("POST /v1/reviews/{id}/deny", s.auth(s.decideReview(false)))
}

// guardInfo is the page's view of the guard: null without one.
func (s *Server) guardInfo(caller string) any {
	b, ok := s.rvb()
	if !ok || !b.GuardEnabled() {
		return nil
	}
	rs, err := b.Reviews(caller, false)
	if err != nil || rs == nil {
		rs = []guard.Review{}
	}
	out := map[string]any{"reviewer": b.CanReview(caller), "reviews": rs}
	if b.CanReview(caller) {
		if _, ok := s.gb(); ok {
			out["grants"] = s.grantsOf()
		}
	}
	return out
}

func (s *Server) reviews(w http.ResponseWriter, r *http.Request) {
	b, _ := s.rvb()
	caller := Caller(r.Context())
	q := r.URL.Query()
	limit, offset := defaultReviewPage, 0
	for name, v := range map[string]*int{"limit": &limit, "offset": &offset} {
		if s := q.Get(name); s != "" {
			n, err := strconv.Atoi(s)
			if err != nil || n < 0 || (name == "limit" && (n < 1 || n > maxReviewPage)) {
				writeJSON(w, http.StatusBadRequest, map[string]any{"error": map[string]any{"kind": "bad_request",
					"message": fmt.Sprintf("%s=%q: want a whole number (limit 1 to %d, offset 0 or more)", name, s, maxReviewPage)}})
				return
			}
			*v = n
		}
	}
	rs, err := b.Reviews(caller, q.Get("all") == "true")
	if err != nil {
		writeReviewError(w, err)
		return
	}
	total := len(rs)
	rs = rs[min(offset, total):min(offset+limit, total)]
	out := map[string]any{"reviews": rs, "reviewer": b.CanReview(caller), "total": total}
	if offset+limit < total {
		out["next_offset"] = offset + limit
	}
	writeJSON(w, http.StatusOK, out)
}

// A page of GET /v1/reviews: its default and largest size.
const (
	defaultReviewPage = 100
	maxReviewPage     = 1000
)

type decideBody struct {
	Always bool `json:"always"`
}

func (s *Server) decideReview(approve bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		b, _ := s.rvb()
		var body decideBody
		if !decodeOptional(w, r, &body) {
			return
		}
		caller, id := Caller(r.Context()), r.PathValue("id")
		if !b.GuardEnabled() {
			writeReviewError(w, ErrNoGuard)
			return
		}
		if !b.CanReview(caller) {
			writeErrorBody(w, http.StatusForbidden, map[string]any{"error": "not_a_reviewer",
				"message": caller + " may not decide reviews",
				"hint":    "an admin lists the agent under guard.reviewers in airs.yaml, or decides with `airs review` on the server's machine"})
			return
		}
		ch := guard.Deny
		switch {
		case approve && body.Always:
			ch = guard.Always
		case approve:
			ch = guard.Once
		case body.Always:
			writeError(w, http.StatusBadRequest, "bad_request", `"always" goes with approve`)
			return
		}
		rv, err := b.DecideReview(caller, id, ch)
		if s.hub != nil {
			s.hub.reviews.fire() // the pages' queues change now, not at their next look
		}
		if err != nil {
			writeReviewError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"review": rv})
	}
}

func writeReviewError(w http.ResponseWriter, err error) {
	switch {
	case errors.Is(err, ErrNoGuard):
		writeError(w, http.StatusNotFound, "not_found", err.Error())
	case errors.Is(err, ErrSelfApproval):
		writeErrorBody(w, http.StatusForbidden, map[string]any{"error": "self_approval", "message": err.Error(),
			"hint": "another reviewer approves it (guard.reviewers), or an admin with `airs review` on the server's machine; guard.self_approve: true in airs.yaml allows it"})
	case errors.Is(err, guard.ErrNotFound):
		writeError(w, http.StatusNotFound, "review_not_found", err.Error())
	case errors.Is(err, guard.ErrDecided):
		writeError(w, http.StatusConflict, "review_decided", err.Error())
	case errors.Is(err, guard.ErrExpired):
		writeErrorBody(w, http.StatusGone, map[string]any{"error": "review_expired", "message": err.Error(),
			"hint": "send the call again: it asks for a new confirmation"})
	default:
		writeError(w, http.StatusBadRequest, "bad_request", err.Error())
	}
}

// confirmationBody is the "confirmation" of a 428 answer.
func confirmationBody(ivr *pipeline.IntentVerificationRequired) map[string]any {
	c := map[string]any{"id": ivr.ID, "caller": ivr.Caller, "tool": ivr.Tool,
		"approve": "/v1/reviews/" + ivr.ID + "/approve", "deny": "/v1/reviews/" + ivr.ID + "/deny"}
	if !ivr.Expires.IsZero() {
		c["expires_at"] = ivr.Expires.UTC().Format(time.RFC3339)
	}
	if ivr.Reason != "" { // level 2's flow or verdict: what the person approves
		c["reason"] = ivr.Reason
	}
	return c
}
