package embeddings

import (
	"context"
	"math"
	"slices"
	"testing"
)

// softDocsFixture is a small registry whose tools are described in other
// words than the requests below use.
func softDocsFixture() []Doc {
	return []Doc{
		{ID: "weather.forecast", Name: "weather_forecast", Description: "Forecast of rain, snow and temperature for a city in the coming days."},
		{ID: "calendar.add", Name: "calendar_add", Description: "Add an event to the calendar on a given day, for example tomorrow.", Params: []Param{{Name: "day", Description: "the day of the event"}}},
		{ID: "repo.browse", Name: "repo_browse", Description: "Explore a GitHub repository: its folders, programs and commits."},
		{ID: "qr.create", Name: "create_qr_code", Description: "Create a QR code for any text or url."},
		{ID: "beauty.shop", Name: "beauty_shop", Description: "Shop cosmetics, skincare and health products from top beauty brands."},
		{ID: "habits.track", Name: "mini_habits", Description: "Form new habits through small, daily actions."},
		{ID: "stocks.quote", Name: "stock_quote", Description: "Latest price of a company's stock on the exchange."},
		{ID: "music.identify", Name: "identify_track", Description: "Recognise the tune and artist from a recording."},
		{ID: "mail.send", Name: "send_email", Description: "Send an email message to a recipient."},
		{ID: "slack.post", Name: "slack_post", Description: "Post a message to a Slack channel or a colleague."},
		{ID: "translate.text", Name: "translate", Description: "Translate text from one language into another."},
		{ID: "recipes.find", Name: "recipe_search", Description: "Find recipes and dishes to prepare from ingredients."},
		{ID: "notes.add", Name: "note_add", Description: "Write a note to remember something later."},
	}
}

func softIndex(t testing.TB, o BlendOptions) (*Index, *Blend) {
	t.Helper()
	m, err := DefaultModel()
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewBlend(m, o)
	if err != nil {
		t.Fatal(err)
	}
	ix, err := Open(context.Background(), b, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ix.Sync(context.Background(), softDocsFixture()); err != nil {
		t.Fatal(err)
	}
	return ix, b
}

// TestSoftMatchScores: a request whose every word a tool has scores 1; a
// tool described in other words than the request's ("a codebase" and its
// "folders" for "a GitHub repository" and its "folders") scores well
// above one that shares a fragment of a word ("code" in a QR code tool);
// an unknown word counts only where it is written.
func TestSoftMatchScores(t *testing.T) {
	ix, _ := softIndex(t, BlendOptions{SoftMatch: SoftMatchOptions{Weight: 1}})
	ids := []string{"mail.send", "repo.browse", "qr.create", "recipes.find", "weather.forecast"}
	at := func(s []float64, id string) float64 { return s[slices.Index(ids, id)] }

	s := ix.SoftMatchScores("send an email", ids)
	if at(s, "mail.send") != 1 {
		t.Errorf("send an email → send_email scores %.3f, want 1 (every word is the tool's)", at(s, "mail.send"))
	}
	s = ix.SoftMatchScores("browse the folders of a codebase", ids)
	if r, q := at(s, "repo.browse"), at(s, "qr.create"); r < 0.5 || r < 3*q {
		t.Errorf("codebase: repository tool %.3f, QR code tool %.3f; want ≥ 0.5 and three times the other", r, q)
	}
	s = ix.SoftMatchScores("find dishes to cook", ids)
	if r := at(s, "recipes.find"); r < 0.5 || r <= at(s, "weather.forecast") {
		t.Errorf("dishes to cook: recipe tool %.3f, weather %.3f", r, at(s, "weather.forecast"))
	}
	// "zorblax" has no vector: it matches nothing but itself.
	ix2, _ := softIndex(t, BlendOptions{SoftMatch: SoftMatchOptions{Weight: 1}})
	docs := append(softDocsFixture(), Doc{ID: "z", Name: "zorblax_tool", Description: "Runs zorblax."})
	if _, err := ix2.Sync(context.Background(), docs); err != nil {
		t.Fatal(err)
	}
	s = ix2.SoftMatchScores("zorblax", []string{"z", "mail.send"})
	if s[0] != 1 || s[1] != 0 {
		t.Errorf("an unknown word scores %v for the tool that has it and the one that does not, want [1 0]", s)
	}
	if ix3, _ := softIndex(t, BlendOptions{}); ix3.SoftMatchScores("zorblax", ids) != nil {
		t.Error("a blend without soft matching reports soft-match scores")
	}
}

// TestSoftMatchReorders: the blend's soft match re-scores the first
// Depth candidates as their fused score over the best plus Weight × their
// soft match, and orders them so; Search still returns k hits.
func TestSoftMatchReorders(t *testing.T) {
	ctx := context.Background()
	q := "browse the folders of a codebase"
	plain, _ := softIndex(t, BlendOptions{})
	soft, b := softIndex(t, BlendOptions{SoftMatch: SoftMatchOptions{Weight: 5, Depth: 5}})
	if b.SoftMatch() == nil || b.SoftMatch().Options().Depth != 5 {
		t.Fatal("the blend's soft match is not set as asked")
	}
	ph, err := plain.Search(ctx, q, 5, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	sh, err := soft.Search(ctx, q, 3, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(sh) != 3 || len(ph) != 5 {
		t.Fatalf("%d and %d hits, want 3 and 5", len(sh), len(ph))
	}
	fused := map[string]float64{}
	var ids []string
	for _, h := range ph {
		fused[h.ID] = h.Fused / ph[0].Fused
		ids = append(ids, h.ID)
	}
	sm := soft.SoftMatchScores(q, ids)
	want := map[string]float64{}
	for i, id := range ids {
		want[id] = fused[id] + 5*sm[i]
	}
	slices.SortFunc(ids, func(a, b string) int {
		switch {
		case want[a] > want[b]:
			return -1
		case want[a] < want[b]:
			return 1
		}
		return 0
	})
	for i, h := range sh {
		if h.ID != ids[i] || math.Abs(h.Fused-want[h.ID]) > 1e-9 {
			t.Errorf("hit %d: %s %.4f, want %s %.4f", i, h.ID, h.Fused, ids[i], want[ids[i]])
		}
	}
	if sh[1].ID == ph[1].ID {
		t.Errorf("the soft match changed nothing in the first three (%s second in both): the fixture no longer tests it", sh[1].ID)
	}
}
