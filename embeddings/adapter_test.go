package embeddings

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func adapterDocs() []Doc {
	return []Doc{
		{ID: "chat.post", Name: "chat.post", Description: "Post a message to a chat channel."},
		{ID: "mail.send", Name: "mail.send", Description: "Send an email message to a recipient."},
		{ID: "calendar.add", Name: "calendar.add", Description: "Add an event to the calendar."},
		{ID: "files.read", Name: "files.read", Description: "Read the text of a file."},
		{ID: "weather.now", Name: "weather.now", Description: "Current weather for a city."},
	}
}

// TestAdapterLearnsAnInstallationsWords: this installation's users say
// "ping the crew" for a chat post, which the base ranking does not know;
// trained on recorded requests, the adapter ranks chat.post first for a
// request it did not see, while a query without learned words ranks
// exactly as the base did.
func TestAdapterLearnsAnInstallationsWords(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	ix, err := Open(ctx, NewLexical(LexicalOptions{}), Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ix.Sync(ctx, adapterDocs()); err != nil {
		t.Fatal(err)
	}
	train := []AdapterExample{
		{Query: "ping the crew about lunch", Tool: "chat.post"},
		{Query: "ping the crew that the build is green", Tool: "chat.post"},
		{Query: "crew ping: standup moved", Tool: "chat.post"},
		{Query: "email bob the weekly report", Tool: "mail.send"},
	}
	held := []AdapterExample{{Query: "ping the crew when the deploy is done", Tool: "chat.post"}}
	base, err := ScoreAdapter(ctx, ix, nil, held)
	if err != nil {
		t.Fatal(err)
	}
	if base.Top1 != 0 {
		t.Skipf("the base already ranks chat.post first for %q: nothing to learn", held[0].Query)
	}
	unrelated := "what is the weather in Lisbon"
	before, _ := ix.Search(ctx, unrelated, 5, Filter{})

	a, err := TrainAdapter(ctx, ix, train, AdapterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	after, err := ScoreAdapter(ctx, ix, a, held)
	if err != nil || after.Top1 != 1 {
		t.Fatalf("held-out top-1 with the adapter = %+v, %v; want 1", after, err)
	}
	for _, ws := range a.Weights {
		for tool, w := range ws {
			if w > 0.6 || w < -0.6 {
				t.Errorf("weight %s = %v beyond the bound", tool, w)
			}
		}
	}

	if err := ix.SaveAdapter(a); err != nil {
		t.Fatal(err)
	}
	hits, _ := ix.Search(ctx, held[0].Query, 3, Filter{})
	if len(hits) == 0 || hits[0].ID != "chat.post" {
		t.Fatalf("Search with the adapter = %+v", hits)
	}
	if got, _ := ix.Search(ctx, unrelated, 5, Filter{}); !reflect.DeepEqual(got, before) {
		t.Errorf("a query with no learned word moved:\nbefore %+v\nafter  %+v", before, got)
	}
	// The filter still applies: a tool the caller may not call is not
	// brought back by the adapter.
	if hits, _ := ix.Search(ctx, held[0].Query, 3, Filter{IDs: []string{"mail.send", "files.read"}}); len(hits) > 0 && hits[0].ID == "chat.post" {
		t.Errorf("filtered search = %+v", hits)
	}

	// Reopened, the index loads it.
	re, err := Open(ctx, NewLexical(LexicalOptions{}), Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if re.Adapter() == nil || !reflect.DeepEqual(re.Adapter().Weights, a.Weights) {
		t.Fatal("the saved adapter is not loaded by Open")
	}
}

// TestAdapterUnreadableSaysWhatToDo: a damaged adapter file stops Open with
// an error naming the file and the command that rewrites it.
func TestAdapterUnreadableSaysWhatToDo(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, AdapterFile), []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Open(context.Background(), NewLexical(LexicalOptions{}), Options{Dir: dir})
	if err == nil || !strings.Contains(err.Error(), AdapterFile) || !strings.Contains(err.Error(), "airs train retrieval --from-sessions") {
		t.Fatalf("Open = %v", err)
	}
}
