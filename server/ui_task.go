package server

// The page's task box. A task may change in three places: this page, another
// page, or the CLI and API (`airs task set`, PUT /v1/context). The page
// shows the task with its version (a short hash of the text) and sends,
// with a change, the version it edited: when the task changed since, the
// change is refused (409 task_conflict, with the task as it is now) instead
// of overwriting newer text with old. The event stream sends the task again
// whenever it changes (ui_events.go).

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"

	"github.com/airs-dev/airs/pipeline"
)

// taskVersion names one task text; "" has a version too, so that clearing
// is a change like any other.
func taskVersion(task string) string {
	sum := sha256.Sum256([]byte(task))
	return hex.EncodeToString(sum[:8])
}

// uiTaskBody is the page's PUT /ui/api/task.
type uiTaskBody struct {
	Task *string `json:"task"`
	// BaseVersion is the version the page's text was edited from; ""
	// skips the check (a client that does not care).
	BaseVersion string `json:"base_version"`
}

// uiPutTask sets the caller's task unless it changed since base_version:
// 200 {"task", "version"}, or 409 task_conflict {"task", "version"} with
// the newer task.
func (s *Server) uiPutTask(w http.ResponseWriter, r *http.Request) {
	var body uiTaskBody
	if !decode(w, r, &body) {
		return
	}
	if body.Task == nil {
		writeError(w, http.StatusBadRequest, "bad_request", `say "task" (the text; "" clears it)`)
		return
	}
	if !checkText(w, r.Method+" "+r.URL.Path, `"task"`, *body.Task, s.cfg.Limits.ChatText, "http.limits.chat_text") {
		return
	}
	caller := Caller(r.Context())
	if cur := s.ub().Task(caller); body.BaseVersion != "" && body.BaseVersion != taskVersion(cur) {
		writeErrorBody(w, http.StatusConflict, map[string]any{"error": "task_conflict",
			"message": "the task was changed elsewhere since this page showed it",
			"hint":    "keep the newer task, or send yours again with its version as base_version",
			"task":    cur, "version": taskVersion(cur)})
		return
	}
	s.owe(r, costOf(len(*body.Task), costUnit))
	if err := s.rb().SetContext(r.Context(), caller, ContextUpdate{Task: body.Task}); err != nil {
		var ce *pipeline.ToolCapabilityDenied
		if errors.As(err, &ce) {
			writeCallError(w, nil, err)
			return
		}
		writeError(w, http.StatusUnprocessableEntity, "invalid_context", err.Error())
		return
	}
	cur := s.ub().Task(caller)
	writeJSON(w, http.StatusOK, map[string]any{"task": cur, "version": taskVersion(cur)})
}
