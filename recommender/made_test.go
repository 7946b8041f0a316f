package recommender

import (
	"encoding/json"
	"testing"
	"time"
)

// A call the caller just made is no suggestion in other words (the same
// tool, no argument of another value), until a file changes: then the
// same call may answer differently. Opening a file changes nothing; a
// call of another value is another call.
func TestSameAsMadeUntilAFileChanges(t *testing.T) {
	at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	cs := &callerState{}
	cs.made = addMade(cs.made, newMadeCall("list-files", json.RawMessage(`{"space":"documents","pattern":"*.pdf","recursive":true}`), at, at))
	for params, want := range map[string]bool{
		`{"space":"documents"}`:                   true,
		`{"space":"documents","pattern":"*.pdf"}`: true,
		`{"space":"documents","pattern":"*.md"}`:  false,
		`{"space":"projects"}`:                    false,
	} {
		if got := sameAsMade(cs, "list-files", json.RawMessage(params)); got != want {
			t.Errorf("list-files %s: same as made %v, want %v", params, got, want)
		}
	}
	if sameAsMade(cs, "read-file", json.RawMessage(`{"space":"documents"}`)) {
		t.Error("another tool is the same call")
	}
	cs.files = append(cs.files, FileEvent{Space: "documents", Rel: "a.pdf", Op: "open", At: at.Add(time.Minute)})
	if !sameAsMade(cs, "list-files", json.RawMessage(`{"space":"documents"}`)) {
		t.Error("a file opened made the listing new")
	}
	cs.files = append(cs.files, FileEvent{Space: "documents", Rel: "b.pdf", Op: "create", At: at.Add(2 * time.Minute)})
	if sameAsMade(cs, "list-files", json.RawMessage(`{"space":"documents"}`)) {
		t.Error("a file arrived after the listing, yet listing again is the same call")
	}
	// The pipeline's event of a call Done told of is one call, and a
	// plan's many calls do not push its first step out.
	for i := range maxMade - 1 {
		b, _ := json.Marshal(map[string]any{"path": i})
		cs.made = addMade(cs.made, newMadeCall("pdf-extract", b, at, at))
		cs.made = addMade(cs.made, newMadeCall("pdf-extract", b, at, at))
	}
	if len(cs.made) != maxMade || cs.made[0].tool != "list-files" {
		t.Errorf("%d calls remembered, the first %s", len(cs.made), cs.made[0].tool)
	}
}
