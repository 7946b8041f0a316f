package recommender

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/airs-dev/airs/pipeline"
	"github.com/airs-dev/airs/selector"
	"github.com/airs-dev/airs/understand"
)

// every suggestion's arguments are values of their parameters' types.
func checkFit(t *testing.T, w *world, recs []Recommendation, when string) {
	t.Helper()
	for _, rec := range recs {
		var args map[string]any
		if err := json.Unmarshal(rec.Arguments, &args); err != nil {
			t.Fatal(err)
		}
		if e, ok := args["expression"].(string); ok && rec.Tool == "calculator" && !understand.IsExpression(e) {
			t.Errorf("%s: calculator suggested with %q", when, e)
		}
		if p, ok := args["path"].(string); ok {
			if _, err := os.Stat(filepath.Join(w.docs, p)); err != nil {
				t.Errorf("%s: %s suggested on %q, which is not there", when, rec.Tool, p)
			}
		}
	}
}

// TestSuggestionsThatWouldWork: suggestions carry arguments of the right
// type (no calculator over a word, no read of a folder's name); a
// destructive one comes only from an explicit ask, goes when the ask
// does, and never comes back once the person denied that call.
func TestSuggestionsThatWouldWork(t *testing.T) {
	w := newWorld(t)
	if err := os.WriteFile(filepath.Join(w.docs, "draft.txt"), []byte("a draft"), 0o644); err != nil {
		t.Fatal(err)
	}
	pol := &pipeline.StaticPolicy{
		Channels:     map[string][]string{"*": {"*"}},
		Capabilities: map[string][]pipeline.Capability{"alice": {{Kind: "ReadSpace", Arg: "documents"}, {Kind: "WriteSpace", Arg: "documents"}}},
	}
	w.cat = &selector.RegistryCatalog{Registry: w.reg, Policy: pol}
	r, err := New(Config{Catalog: w.cat, Validate: w.m.Validate, Spaces: []string{"documents"}, Home: w.home, Now: w.clock.Now,
		FileExists: func(space, rel string) bool {
			_, err := os.Stat(filepath.Join(w.docs, rel))
			return space == "documents" && err == nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })

	for _, turn := range []string{"compute the totals of the documents", "what does draft.txt say", "read the documents"} {
		r.ObserveTurn("alice", turn)
		recs := r.List("alice")
		checkFit(t, w, recs, turn)
		if rec := find(recs, "delete-file"); rec != nil {
			t.Errorf("after %q (no ask to delete) delete-file was suggested: %s", turn, rec.Arguments)
		}
	}
	if err := r.SetTask("alice", "clean up: delete draft.txt in documents"); err != nil {
		t.Fatal(err)
	}
	del := find(r.List("alice"), "delete-file")
	if del == nil {
		t.Skip("delete-file not suggested for an explicit ask at this threshold; the retirement and denial checks need one")
	}
	checkFit(t, w, []Recommendation{*del}, "explicit ask")
	// The task changes: the delete it justified is retired.
	if err := r.SetTask("alice", "read the quarterly notes"); err != nil {
		t.Fatal(err)
	}
	if rec := find(r.List("alice"), "delete-file"); rec != nil {
		t.Errorf("delete-file still suggested after the task changed")
	}
	// Asked again, then denied: never again, even with the ask standing.
	if err := r.SetTask("alice", "clean up: delete draft.txt in documents"); err != nil {
		t.Fatal(err)
	}
	r.Denied("alice", "delete-file", del.Arguments)
	r.ObserveTurn("alice", "please delete draft.txt")
	for _, rec := range r.List("alice") {
		if rec.Tool == "delete-file" && string(rec.Arguments) == string(del.Arguments) {
			t.Errorf("the denied call was suggested again")
		}
	}
}
