package server

// The guard's "always" grants in the attention page: a reviewer sees them
// (in the page's guard state) and revokes one.
//
//	POST /ui/api/grants/revoke  {"caller", "tool"} (session, CSRF; reviewers):
//	                            {"revoked", "caller", "tool", "grants": the grants left}

import (
	"net/http"

	"github.com/airs-dev/airs/guard"
)

// GrantBackend is a ReviewBackend that lists and revokes the guard's
// "always" grants.
type GrantBackend interface {
	Grants() ([]guard.Grant, error)
	// RevokeGrant removes agent's grant for tool; false when there was none.
	RevokeGrant(by, agent, tool string) (bool, error)
}

func (s *Server) gb() (GrantBackend, bool) {
	b, ok := s.backend.(GrantBackend)
	return b, ok
}

type revokeBody struct {
	Caller string `json:"caller"`
	Tool   string `json:"tool"`
}

func (s *Server) uiRevokeGrant(w http.ResponseWriter, r *http.Request) {
	rb, _ := s.rvb()
	gb, _ := s.gb()
	var body revokeBody
	if !decode(w, r, &body) {
		return
	}
	caller := Caller(r.Context())
	if !rb.GuardEnabled() {
		writeReviewError(w, ErrNoGuard)
		return
	}
	if !rb.CanReview(caller) {
		writeErrorBody(w, http.StatusForbidden, map[string]any{"error": "not_a_reviewer",
			"message": caller + " may not revoke grants", "hint": "a reviewer revokes it, or `airs review` on the server's machine"})
		return
	}
	if body.Caller == "" || body.Tool == "" {
		writeError(w, http.StatusBadRequest, "bad_request", `say "caller" and "tool" of the grant`)
		return
	}
	found, err := gb.RevokeGrant(caller, body.Caller, body.Tool)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "internal", err.Error())
		return
	}
	s.hub.reviews.fire()
	if !found {
		writeError(w, http.StatusNotFound, "grant_not_found", body.Caller+" has no standing grant for "+body.Tool)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"revoked": true, "caller": body.Caller, "tool": body.Tool, "grants": s.grantsOf()})
}

// grantsOf are the grants a reviewer sees in the page, never null.
func (s *Server) grantsOf() []guard.Grant {
	gb, ok := s.gb()
	if !ok {
		return []guard.Grant{}
	}
	gs, err := gb.Grants()
	if err != nil || gs == nil {
		return []guard.Grant{}
	}
	return gs
}
