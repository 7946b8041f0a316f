package embeddings

import (
	"context"
	"fmt"
	"math"
	"math/rand"
	"slices"
	"strings"
	"testing"
)

func TestSplitRequest(t *testing.T) {
	for _, c := range []struct {
		text string
		want []string
	}{
		{"Find the weather in Paris. Then book a table for two!", []string{"Find the weather in Paris.", "Then book a table for two!"}},
		// Abbreviations, initials and decimals end no sentence.
		{"Compare e.g. the U.S. rates at 3.5 percent. Dr. Smith asked for it.", []string{"Compare e.g. the U.S. rates at 3.5 percent.", "Dr. Smith asked for it."}},
		// Clauses are cut before their connective, which stays with them.
		{"get the forecast, then email it to Bob and also post it on Slack", []string{"get the forecast", "then email it to Bob", "and also post it on Slack"}},
		{"resize the image; upload it", []string{"resize the image", "upload it"}},
		// List items, numbered or not, and blank lines.
		{"I need:\n- the stock price of ACME\n2. a chart of it\n\n* a summary", []string{"I need:", "the stock price of ACME", "a chart of it", "a summary"}},
		// CJK sentence stops cut without a space.
		{"東京の天気を調べて。メールを送って。", []string{"東京の天気を調べて。", "メールを送って。"}},
		// A closing quote stays with its sentence.
		{`He said "stop." Then he left.`, []string{`He said "stop."`, "Then he left."}},
		{"one need only", []string{"one need only"}},
		{"", nil},
	} {
		if got := SplitRequest(c.text); !slices.Equal(got, c.want) {
			t.Errorf("SplitRequest(%q) = %q, want %q", c.text, got, c.want)
		}
	}
}

func TestRequestPartsGate(t *testing.T) {
	long := "Hey there. Please find the current weather forecast for Seattle this weekend. " +
		"Then convert the temperatures from Fahrenheit to Celsius for my European friends. " +
		"After that, look up a few vegetarian restaurants near Pike Place Market that take reservations. Thanks!"
	parts := RequestParts(long, PartsOptions{})
	if len(parts) != 3 {
		t.Fatalf("parts of the long request: %q, want 3 (greeting and thanks joined to a neighbour)", parts)
	}
	if !strings.HasPrefix(parts[0], "Hey there.") || !strings.HasSuffix(parts[2], "Thanks!") {
		t.Errorf("short parts not joined to their neighbours: %q", parts)
	}
	// Every word of the request is in exactly one part.
	if got, want := strings.Fields(strings.Join(parts, " ")), strings.Fields(long); !slices.Equal(got, want) {
		t.Errorf("parts lose or repeat words:\n got %q\nwant %q", got, want)
	}
	for _, q := range []string{
		"weather in Paris",
		"What is the weather in Paris? And the time?", // two sentences, few words
		strings.Repeat("a long request with many words but one single sentence ", 6),
	} {
		if p := RequestParts(q, PartsOptions{}); p != nil {
			t.Errorf("RequestParts(%q) = %q, want nil (searched whole)", q, p)
		}
	}
	// Two parts are often a context and one ask: searched whole, unless
	// MinParts allows it.
	two := "I need to rent a car in Los Angeles for a family trip from March 9th to March 10th next year, ideally a roomy sedan. " +
		"Could you check which rental companies have one available at the airport at nine in the morning?"
	if p := RequestParts(two, PartsOptions{}); p != nil {
		t.Errorf("two parts: %q, want nil", p)
	}
	if p := RequestParts(two, PartsOptions{MinParts: 2}); len(p) != 2 {
		t.Errorf("two parts with MinParts 2: %q", p)
	}
	if p := RequestParts(long, PartsOptions{Off: true}); p != nil {
		t.Errorf("Off: %q, want nil", p)
	}
	if p := RequestParts(long, PartsOptions{MinWords: 1000}); p != nil {
		t.Errorf("MinWords 1000: %q, want nil", p)
	}
	if p := RequestParts(long, PartsOptions{MaxParts: 2}); len(p) != 2 {
		t.Errorf("MaxParts 2: %d parts %q", len(p), p)
	}
	// A pasted document of thousands of sentences keeps every word in at
	// most MaxParts parts.
	var doc strings.Builder
	for i := range 3000 {
		fmt.Fprintf(&doc, "Sentence number %d talks about topic %d at length. ", i, i%17)
	}
	p := RequestParts(doc.String(), PartsOptions{})
	if len(p) != DefaultParts.MaxParts {
		t.Errorf("document: %d parts, want %d", len(p), DefaultParts.MaxParts)
	}
	if got, want := len(strings.Fields(strings.Join(p, " "))), len(strings.Fields(doc.String())); got != want {
		t.Errorf("document: %d words in the parts, %d in the text", got, want)
	}
}

// partsRegistry is a registry where each of threeNeeds' needs has its own
// tool, among the forty tools of a large server each of which shares a few
// of the request's other words. (That parts find more needs than the whole
// request does on real requests is TestPartsOnMCPBenchDev's.)
func partsRegistry() []Doc {
	docs := []Doc{
		{ID: "weather/forecast", Name: "get_forecast", Description: "Weather forecast for a city: temperature, rain and wind for the coming days.", Group: "weather"},
		{ID: "units/convert_temperature", Name: "convert_temperature", Description: "Convert a temperature between Fahrenheit, Celsius and Kelvin.", Group: "units"},
		{ID: "places/find_restaurants", Name: "find_restaurants", Description: "Find restaurants near a place, by cuisine (vegetarian, vegan, …), with reservation availability.", Group: "places"},
	}
	// A large server whose tools together mention most of the request's
	// words, one or two words each.
	words := []string{"current", "weekend", "friends", "European", "look", "market", "few", "near", "Pike", "Place", "take", "account", "record", "status", "owner"}
	for i := 0; i < 40; i++ {
		docs = append(docs, Doc{
			ID:          fmt.Sprintf("bigco/tool_%02d", i),
			Name:        fmt.Sprintf("bigco_tool_%02d", i),
			Description: fmt.Sprintf("Get the %s %s %s %s of a BigCo account record.", words[i%len(words)], words[(i*7+3)%len(words)], words[(i*5+1)%len(words)], words[(i*3+2)%len(words)]),
			Group:       "bigco",
		})
	}
	return docs
}

const threeNeeds = "Hey there. Please find the current weather forecast for Seattle this weekend, I want the latest details. " +
	"Then convert the temperatures from Fahrenheit to Celsius for my European friends. " +
	"After that, look up a few vegetarian restaurants near Pike Place Market that take reservations. Thanks!"

func partsIndex(t testing.TB, emb Embedder, o Options) *Index {
	ix, err := Open(context.Background(), emb, o)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ix.Sync(context.Background(), partsRegistry()); err != nil {
		t.Fatal(err)
	}
	return ix
}

func ids(hits []Hit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.ID
	}
	return out
}

func TestSearchFindsEveryNeedOfALongRequest(t *testing.T) {
	m, err := DefaultModel()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ix := partsIndex(t, m, Options{})
	hits, err := ix.Search(ctx, threeNeeds, 3, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	got := ids(hits)
	for _, want := range []string{"weather/forecast", "units/convert_temperature", "places/find_restaurants"} {
		if !slices.Contains(got, want) {
			t.Errorf("top 3 %q lacks %s", got, want)
		}
	}
	for _, h := range hits {
		if h.Dense <= 0 || h.Fused <= 0 {
			t.Errorf("%s: dense %v fused %v, want both positive", h.ID, h.Dense, h.Fused)
		}
	}
}

func TestShortRequestsTakeTheWholePath(t *testing.T) {
	m, err := DefaultModel()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	on := partsIndex(t, m, Options{})
	off := partsIndex(t, m, Options{Parts: PartsOptions{Off: true}})
	for _, q := range []string{
		"weather forecast for Seattle",
		"convert 70 Fahrenheit to Celsius. Then find vegetarian restaurants.",
		"find vegetarian restaurants near the market and convert the temperature",
	} {
		a, err := on.Search(ctx, q, 10, Filter{})
		if err != nil {
			t.Fatal(err)
		}
		b, err := off.Search(ctx, q, 10, Filter{})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(a, b) {
			t.Errorf("%q: with parts %v, whole only %v: a short request must be searched as before", q, a, b)
		}
	}
	// The long request does take the other path.
	a, _ := on.Search(ctx, threeNeeds, 10, Filter{})
	b, _ := off.Search(ctx, threeNeeds, 10, Filter{})
	if slices.Equal(a, b) {
		t.Error("the long request was searched the same with and without parts")
	}
}

func TestSearchPartsHonoursFilterAndK(t *testing.T) {
	m, err := DefaultModel()
	if err != nil {
		t.Fatal(err)
	}
	ix := partsIndex(t, m, Options{})
	allowed := []string{"units/convert_temperature", "bigco/tool_01", "bigco/tool_02"}
	hits, err := ix.Search(context.Background(), threeNeeds, 10, Filter{IDs: allowed})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) == 0 || len(hits) > len(allowed) {
		t.Fatalf("hits %q, want some of %q", ids(hits), allowed)
	}
	for _, h := range hits {
		if !slices.Contains(allowed, h.ID) {
			t.Errorf("%s passed the filter", h.ID)
		}
	}
	if hits[0].ID != "units/convert_temperature" {
		t.Errorf("first %s, want units/convert_temperature", hits[0].ID)
	}
	for k := 1; k <= 4; k++ {
		hits, err := ix.Search(context.Background(), threeNeeds, k, Filter{})
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) != k {
			t.Errorf("k=%d: %d hits", k, len(hits))
		}
		for i := 1; i < len(hits); i++ {
			if hits[i].Fused > hits[i-1].Fused {
				t.Errorf("k=%d: hits out of order: %v", k, hits)
			}
		}
	}
}

// BenchmarkSearchParts is one search of a request of several needs over
// 10,000 tools (the whole request and each part searched), against the same
// request searched whole; run with -cpu 1 for one core.
func BenchmarkSearchParts(b *testing.B) {
	m, err := DefaultModel()
	if err != nil {
		b.Fatal(err)
	}
	base := partsRegistry()
	r := rand.New(rand.NewSource(1))
	docs := make([]Doc, 0, 10000)
	for i := 0; len(docs) < 10000; i++ {
		d := base[i%len(base)]
		d.ID = fmt.Sprintf("%s#%d", d.ID, i)
		d.Group = fmt.Sprintf("%s-%d", d.Group, i/len(base))
		d.Description += fmt.Sprintf(" Variant %d.", r.Intn(1000))
		docs = append(docs, d)
	}
	for _, c := range []struct {
		name string
		o    PartsOptions
	}{{"parts", PartsOptions{}}, {"whole", PartsOptions{Off: true}}} {
		b.Run(c.name, func(b *testing.B) {
			ix, err := Open(context.Background(), m, Options{Parts: c.o})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := ix.Sync(context.Background(), docs); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if _, err := ix.Search(context.Background(), threeNeeds, 10, Filter{}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(RequestParts(threeNeeds, c.o))), "parts")
		})
	}
}

// Each part carries the terms of its own text, however it was joined:
// short parts carried into the next, the last one into the one before,
// neighbours joined down to MaxParts, and a pasted document cut into runs.
func TestPartTermsAreTheTermsOfTheirText(t *testing.T) {
	var doc strings.Builder
	for i := 0; i < 200; i++ {
		fmt.Fprintf(&doc, "Step %d: fetch the user's invoices, then e-mail them. OK. ", i)
	}
	requests := []string{
		doc.String(),
		"Find the weather in Paris. Then book a table for two at 8pm; after that, send the invite to Anna and also add it to my calendar. Thanks. Bye.",
		"検索して。東京の天気を教えて。それから会議室を予約して。ありがとう。then convert 100 USD to EUR, and also translate getUserInfo docs",
	}
	for _, q := range loadQueries(t) {
		requests = append(requests, q.Query)
	}
	checked := 0
	for _, o := range []PartsOptions{{MinWords: 1, MinParts: 2}, {MinWords: 1, MinParts: 2, MaxParts: 2}, {MinWords: 1, MinParts: 2, MinTerms: 6}} {
		o = o.resolved()
		for _, q := range requests {
			parts := requestPartTerms(q, o)
			texts := requestParts(q, o)
			if len(parts) != len(texts) {
				t.Fatalf("%q: %d parts with terms, %d parts", q, len(parts), len(texts))
			}
			for i, p := range parts {
				if p.text != texts[i] || !slices.Equal(p.terms, Terms(p.text)) {
					t.Fatalf("%q: part %d %q carries terms %q, its text's are %q", q, i, p.text, p.terms, Terms(p.text))
				}
				checked++
			}
		}
	}
	if checked < 20 {
		t.Fatalf("only %d parts checked", checked)
	}
}

// TestForPartsScalesTheWholeRequestsLists: the whole request's group term
// and dense list weigh min(1, GroupParts / n) and min(1, DenseParts / n)
// of their weights when it falls into n parts; a request of few parts, or
// a scale turned off, keeps the index's options.
func TestForPartsScalesTheWholeRequestsLists(t *testing.T) {
	base := Options{DenseWeight: 2, GroupWeight: 0.3, SparseWeight: 1}
	p := PartsOptions{}.resolved()
	p.GroupParts, p.DenseParts = 3, 1
	for _, c := range []struct {
		n            int
		dense, group float64
	}{{1, 2, 0.3}, {3, 2.0 / 3, 0.3}, {6, 2.0 / 6, 0.3 * 3 / 6}} {
		o := base.forParts(p, c.n)
		if o.DenseWeight != c.dense || o.GroupWeight != c.group || o.SparseWeight != base.SparseWeight {
			t.Errorf("%d parts: dense %v group %v sparse %v, want %v %v %v", c.n, o.DenseWeight, o.GroupWeight, o.SparseWeight, c.dense, c.group, base.SparseWeight)
		}
	}
	if o := base.forParts(p, 1); o != &base {
		t.Error("one part: want the index's own options, not a copy")
	}
	if base.DenseWeight != 2 || base.GroupWeight != 0.3 {
		t.Errorf("forParts changed the index's options: %+v", base)
	}
	off := PartsOptions{DenseParts: -1, GroupParts: -1}.resolved()
	if o := base.forParts(off, 6); o.DenseWeight != 2 || o.GroupWeight != 0.3 {
		t.Errorf("scales off: dense %v group %v, want 2 and 0.3", o.DenseWeight, o.GroupWeight)
	}
}

// TestDensePartsWeighsTheWholeVectorLess: in the search of a request of
// several needs, a tool that only the whole request's vector found (no
// BM25 rank) brings DenseParts / parts of what it brings when the dense
// list is not scaled, and the tools each part names still lead.
func TestDensePartsWeighsTheWholeVectorLess(t *testing.T) {
	m, err := DefaultModel()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	// Tools that share no word with the request: only the dense list
	// finds them.
	docs := append(partsRegistry(),
		Doc{ID: "sky/quasar_spectrum", Name: "quasar_spectrum", Description: "Spectral lines of distant quasars from a redshift catalogue.", Group: "sky"},
		Doc{ID: "sky/meteor_showers", Name: "meteor_showers", Description: "Upcoming meteor showers: peak nights and hourly rates.", Group: "sky"})
	index := func(o Options) *Index {
		ix, err := Open(ctx, m, o)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ix.Sync(ctx, docs); err != nil {
			t.Fatal(err)
		}
		return ix
	}
	scaled := index(Options{Parts: PartsOptions{DenseParts: 1}})
	flat := index(Options{Parts: PartsOptions{DenseParts: -1}})
	n := len(RequestParts(threeNeeds, PartsOptions{}))
	if n <= 1 {
		t.Fatalf("%d parts: the request must fall into more parts than DenseParts 1", n)
	}
	p := scaled.opts.Parts.resolved()
	ws, err := scaled.searchWholeWith(ctx, threeNeeds, len(docs), Filter{}, scaled.opts.forParts(p, n))
	if err != nil {
		t.Fatal(err)
	}
	wf, err := flat.searchWholeWith(ctx, threeNeeds, len(docs), Filter{}, flat.opts.forParts(flat.opts.Parts.resolved(), n))
	if err != nil {
		t.Fatal(err)
	}
	flatFused := map[string]float64{}
	for _, h := range wf {
		flatFused[h.ID] = h.Fused
	}
	checked := 0
	for _, h := range ws {
		f, ok := flatFused[h.ID]
		if h.BM25Rank != 0 || h.DenseRank == 0 || !ok {
			continue
		}
		checked++
		if want := f * p.DenseParts / float64(n); math.Abs(h.Fused-want) > 1e-12*math.Abs(f) || f == 0 {
			t.Errorf("%s (dense only): fused %v, want %v (unscaled %v × %v/%d)", h.ID, h.Fused, want, f, p.DenseParts, n)
		}
	}
	if checked == 0 {
		t.Fatal("no tool found by the dense list alone in both searches: the test checks nothing")
	}
	hits, err := scaled.Search(ctx, threeNeeds, 3, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"weather/forecast", "units/convert_temperature", "places/find_restaurants"} {
		if !slices.Contains(ids(hits), want) {
			t.Errorf("top 3 %q lacks %s", ids(hits), want)
		}
	}
}
