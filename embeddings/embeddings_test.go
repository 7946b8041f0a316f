package embeddings

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
)

// loadFixture reads testdata/mcp_tools.jsonl (39 real MCP tools from the
// Docker MCP registry, MIT) as Docs, with trust and capabilities assigned
// by server so filters have something to act on.
func loadFixture(t testing.TB) []Doc {
	t.Helper()
	f, err := os.Open("testdata/mcp_tools.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var docs []Doc
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			InputSchema json.RawMessage `json:"inputSchema"`
			Server      string          `json:"server"`
		}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		d := Doc{ID: r.Server + "/" + r.Name, Name: r.Name, Description: r.Description,
			Params: ParamsFromSchema(r.InputSchema), Group: r.Server,
			Metadata: map[string]string{"server": r.Server}}
		switch r.Server {
		case "gmail-mcp":
			d.Trust, d.Capabilities = 2, []string{"Network(gmail.googleapis.com)"}
		case "stripe-remote", "zerodha-kite":
			d.Trust, d.Capabilities = 1, []string{"Network(" + r.Server + ")", "Payments(live)"}
		case "sqlite-mcp-server":
			d.Trust, d.Capabilities = 3, []string{"ReadSpace(db)"}
		default:
			d.Trust = 0
		}
		docs = append(docs, d)
	}
	if len(docs) < 30 {
		t.Fatalf("fixture has %d tools", len(docs))
	}
	return docs
}

type fixtureQuery struct {
	Query string `json:"query"`
	Gold  string `json:"gold"`
}

func loadQueries(t testing.TB) []fixtureQuery {
	t.Helper()
	b, err := os.ReadFile("testdata/queries.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var qs []fixtureQuery
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var q fixtureQuery
		if err := json.Unmarshal([]byte(line), &q); err != nil {
			t.Fatal(err)
		}
		qs = append(qs, q)
	}
	return qs
}

func TestTokens(t *testing.T) {
	cases := map[string][]string{
		"getUserInfo":            {"get", "user", "info"},
		"HTMLParser v2":          {"html", "parser", "v", "2"},
		"country_info.capital":   {"country", "info", "capital"},
		"kebab-case-name":        {"kebab", "case", "name"},
		"user's OAuth2Token":     {"user", "s", "o", "auth", "2", "token"},
		"搜索关键词":                  {"搜", "索", "关", "键", "词"},
		"  ":                     nil,
		"ChaDri.change_drink":    {"cha", "dri", "change", "drink"},
		"airqualityforeast 2day": {"airqualityforeast", "2", "day"},
	}
	for in, want := range cases {
		if got := Tokens(in); !reflect.DeepEqual(got, want) {
			t.Errorf("Tokens(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestStem(t *testing.T) {
	same := [][]string{
		{"messages", "message"}, {"searching", "search"}, {"created", "create", "creating", "creates"},
		{"formatted", "format", "formats"}, {"translation", "translate"}, {"queries", "query"},
		{"boxes", "box"}, {"deployments", "deployment"},
	}
	for _, g := range same {
		for _, w := range g[1:] {
			if Stem(w) != Stem(g[0]) {
				t.Errorf("Stem(%q)=%q differs from Stem(%q)=%q", w, Stem(w), g[0], Stem(g[0]))
			}
		}
	}
	for _, w := range []string{"status", "address", "analysis", "news", "data"} {
		if Stem(w) != w {
			t.Errorf("Stem(%q) = %q, want it unchanged", w, Stem(w))
		}
	}
}

func TestBM25Scores(t *testing.T) {
	docs := []WeightedTerms{
		{Terms: []string{"send", "email"}},
		{Terms: []string{"read", "email", "email", "inbox"}},
		{Terms: []string{"weather", "forecast"}},
	}
	bm := NewBM25(docs, 1.2, 0.75)
	scores := make([]float64, 3)
	bm.Scores([]string{"email", "send", "send"}, nil, scores)
	// By hand: N=3, avgdl=8/3. idf(email)=ln(1+(3-2+.5)/(2+.5)), idf(send)=ln(1+2.5/1.5).
	idfE, idfS := math.Log(1+1.5/2.5), math.Log(1+2.5/1.5)
	tfpart := func(tf, dl float64) float64 {
		return tf * 2.2 / (tf + 1.2*(1-0.75+0.75*dl/(8.0/3)))
	}
	want0 := idfE*tfpart(1, 2) + idfS*tfpart(1, 2)
	want1 := idfE * tfpart(2, 4)
	if math.Abs(scores[0]-want0) > 1e-9 || math.Abs(scores[1]-want1) > 1e-9 || scores[2] != 0 {
		t.Fatalf("scores %v, want [%v %v 0]", scores, want0, want1)
	}
	res := bm.Search([]string{"email"}, 5, []bool{false, true, true})
	if len(res) != 1 || res[0].Doc != 1 {
		t.Fatalf("filtered search = %v, want only doc 1", res)
	}
}

func TestTopKTiesAndOrder(t *testing.T) {
	scores := []float64{0.5, 0.9, 0.5, 0.1, 0.9, 0.7}
	got := TopK(scores, 4, nil)
	want := []Scored{{1, 0.9}, {4, 0.9}, {5, 0.7}, {0, 0.5}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("TopK = %v, want %v", got, want)
	}
	if got := TopK(scores, 10, func(i int) bool { return i%2 == 0 }); len(got) != 3 || got[0].Doc != 4 || got[1].Doc != 0 || got[2].Doc != 2 {
		t.Fatalf("TopK with keep = %v", got)
	}
}

func fitted(t testing.TB, docs []Doc, o LexicalOptions) *Lexical {
	t.Helper()
	lx := NewLexical(o)
	texts := make([]string, len(docs))
	for i := range docs {
		texts[i] = docs[i].Text()
	}
	if err := lx.Fit(context.Background(), texts); err != nil {
		t.Fatal(err)
	}
	return lx
}

// With no more documents than components, the LSA basis spans the corpus
// and cosine similarity must rank documents exactly like TF-IDF cosine.
func TestLexicalFullRankEqualsTFIDF(t *testing.T) {
	docs := loadFixture(t)
	lx := fitted(t, docs, LexicalOptions{Dim: 64})
	if lx.Dim() > len(docs) || lx.Dim() < len(docs)/2 {
		t.Fatalf("Dim = %d for %d docs", lx.Dim(), len(docs))
	}
	m := lx.m
	texts := make([]string, len(docs))
	rows := make([]sparseRow, len(docs))
	for i := range docs {
		texts[i] = docs[i].Text()
		rows[i] = m.tfidf(m.Opts.features(texts[i]))
	}
	vecs, err := lx.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range loadQueries(t)[:8] {
		qv, _ := lx.Embed(context.Background(), []string{q.Query})
		qr := m.tfidf(m.Opts.features(q.Query))
		qmap := map[int32]float64{}
		for k, c := range qr.cols {
			qmap[c] = qr.vals[k]
		}
		for i := range docs {
			for j := range docs {
				a := float64(dot32(qv[0], vecs[i])) - float64(dot32(qv[0], vecs[j]))
				ti, tj := 0.0, 0.0
				for k, c := range rows[i].cols {
					ti += rows[i].vals[k] * qmap[c]
				}
				for k, c := range rows[j].cols {
					tj += rows[j].vals[k] * qmap[c]
				}
				b := ti - tj
				if math.Abs(b) > 1e-3 && (a > 0) != (b > 0) {
					t.Fatalf("%q: LSA orders %s/%s differently from TF-IDF (%.4f vs %.4f)", q.Query, docs[i].ID, docs[j].ID, a, b)
				}
			}
		}
	}
}

// The randomized SVD must agree with the exact one on the leading singular
// values when the sketch is smaller than the corpus.
func TestRandomizedBasis(t *testing.T) {
	docs := loadFixture(t)
	exact := fitted(t, docs, LexicalOptions{Dim: 64})
	approx := fitted(t, docs, LexicalOptions{Dim: 8, PowerIters: 3}) // sketch 24 < 39 docs
	if approx.Dim() != 8 {
		t.Fatalf("Dim = %d, want 8", approx.Dim())
	}
	for i := 0; i < 4; i++ {
		e, a := exact.m.Sigma[i], approx.m.Sigma[i]
		if math.Abs(e-a) > 0.02*e {
			t.Errorf("σ%d: randomized %.4f, exact %.4f", i, a, e)
		}
	}
	if exact.ID() == approx.ID() || !strings.HasPrefix(exact.ID(), "lexical:") {
		t.Fatalf("IDs %q %q", exact.ID(), approx.ID())
	}
}

func TestLexicalUnfitted(t *testing.T) {
	lx := NewLexical(LexicalOptions{})
	if _, err := lx.Embed(context.Background(), []string{"x"}); err == nil {
		t.Fatal("Embed before Fit succeeded")
	}
	if lx.Dim() != 0 || lx.Fitted() {
		t.Fatal("unfitted embedder reports a dimension")
	}
}

func openIndex(t testing.TB, dir string, docs []Doc) *Index {
	t.Helper()
	ix, err := Open(context.Background(), NewLexical(LexicalOptions{}), Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if docs != nil {
		if _, err := ix.Sync(context.Background(), docs); err != nil {
			t.Fatal(err)
		}
	}
	return ix
}

func TestSearchFindsGold(t *testing.T) {
	docs := loadFixture(t)
	ix := openIndex(t, "", docs)
	top1, top3 := 0, 0
	qs := loadQueries(t)
	for _, q := range qs {
		hits, err := ix.Search(context.Background(), q.Query, 3, Filter{})
		if err != nil {
			t.Fatal(err)
		}
		for i, h := range hits {
			if h.ID == q.Gold {
				top3++
				if i == 0 {
					top1++
				}
			}
		}
	}
	t.Logf("fixture: top-1 %d/%d, top-3 %d/%d", top1, len(qs), top3, len(qs))
	if top1 < len(qs)*3/4 || top3 < len(qs)*9/10 {
		t.Fatalf("top-1 %d, top-3 %d of %d", top1, top3, len(qs))
	}
}

// The index's own dense scan must rank exactly as chromem-go's
// QueryEmbedding over the same stored vectors.
func TestDenseMatchesChromem(t *testing.T) {
	docs := loadFixture(t)
	ix := openIndex(t, "", docs)
	for _, q := range loadQueries(t)[:6] {
		qv, _ := ix.emb.Embed(context.Background(), []string{q.Query})
		res, err := ix.col.QueryEmbedding(context.Background(), qv[0], 5, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		o := ix.opts
		o.SparseWeight, o.GroupWeight = 0, 0
		hits := ix.st.search(qv[0], nil, 5, Filter{}, &o)
		for i := range res {
			if math.Abs(float64(res[i].Similarity)-hits[i].Dense) > 1e-5 {
				t.Fatalf("%q rank %d: chromem %.5f, index %.5f", q.Query, i, res[i].Similarity, hits[i].Dense)
			}
			tie := (i > 0 && res[i].Similarity-res[i-1].Similarity > -1e-6) || (i+1 < len(res) && res[i].Similarity-res[i+1].Similarity < 1e-6)
			if !tie && res[i].ID != hits[i].ID || math.Abs(float64(res[i].Similarity)-hits[i].Dense) > 1e-5 {
				t.Fatalf("%q rank %d: chromem %s %.5f, index %s %.5f", q.Query, i, res[i].ID, res[i].Similarity, hits[i].ID, hits[i].Dense)
			}
		}
	}
}

func TestFilterBeforeRanking(t *testing.T) {
	docs := loadFixture(t)
	ix := openIndex(t, "", docs)
	ctx := context.Background()
	q := "send an email message"
	all, _ := ix.Search(ctx, q, 1, Filter{})
	if all[0].ID != "gmail-mcp/sendMessage" {
		t.Fatalf("unfiltered top = %s", all[0].ID)
	}
	// gmail is trust 2: MinTrust 3 must still return a (lower ranked) tool
	// with k=1, which a post-filter over the top-1 could not.
	hits, _ := ix.Search(ctx, q, 1, Filter{MinTrust: 3})
	if len(hits) != 1 || !strings.HasPrefix(hits[0].ID, "sqlite-mcp-server/") {
		t.Fatalf("MinTrust 3 hits = %v", hits)
	}
	// Capabilities: holding only Network(*) allows gmail, not stripe
	// (needs Payments(live)), and tools that need nothing.
	hits, _ = ix.Search(ctx, "create a customer and a coupon", 40, Filter{CheckCapabilities: true, Capabilities: []string{"Network(*)"}})
	for _, h := range hits {
		d, _ := ix.Doc(h.ID)
		for _, c := range d.Capabilities {
			if c != "Network(gmail.googleapis.com)" {
				t.Fatalf("hit %s needs %s, not held", h.ID, c)
			}
		}
	}
	if len(hits) == 0 {
		t.Fatal("no hits under capability filter")
	}
	hits, _ = ix.Search(ctx, "list things", 40, Filter{Where: map[string]string{"server": "notion-remote"}})
	if len(hits) == 0 {
		t.Fatal("no hits under where filter")
	}
	for _, h := range hits {
		if !strings.HasPrefix(h.ID, "notion-remote/") {
			t.Fatalf("where filter let %s through", h.ID)
		}
	}
	hits, _ = ix.Search(ctx, "order", 10, Filter{IDs: []string{"zerodha-kite/cancel_order"}})
	if len(hits) != 1 || hits[0].ID != "zerodha-kite/cancel_order" {
		t.Fatalf("IDs filter hits = %v", hits)
	}
	hits, _ = ix.Search(ctx, "order", 10, Filter{IDs: []string{}})
	if len(hits) != 0 {
		t.Fatalf("empty IDs filter returned %v", hits)
	}
}

func TestSearchDeterministicTies(t *testing.T) {
	docs := []Doc{
		{ID: "b", Name: "alpha", Description: "same text"},
		{ID: "a", Name: "alpha", Description: "same text"},
		{ID: "c", Name: "other", Description: "unrelated words here"},
	}
	ix := openIndex(t, "", docs)
	for i := 0; i < 5; i++ {
		hits, _ := ix.Search(context.Background(), "alpha same", 2, Filter{})
		if len(hits) != 2 || hits[0].ID != "a" || hits[1].ID != "b" {
			t.Fatalf("hits = %+v", hits)
		}
	}
}

// counting wraps an embedder and counts the texts it embeds.
type counting struct {
	Embedder
	mu sync.Mutex
	n  int
}

func (c *counting) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	c.mu.Lock()
	c.n += len(texts)
	c.mu.Unlock()
	return c.Embedder.Embed(ctx, texts)
}

func (c *counting) Fit(ctx context.Context, corpus []string) error {
	return c.Embedder.(Fitter).Fit(ctx, corpus)
}
func (c *counting) Fitted() bool { return c.Embedder.(Fitter).Fitted() }

func TestSyncReembedsOnlyChanged(t *testing.T) {
	docs := loadFixture(t)
	ctx := context.Background()
	emb := &counting{Embedder: NewLexical(LexicalOptions{})}
	ix, err := Open(ctx, emb, Options{RefitFraction: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	st, err := ix.Sync(ctx, docs)
	if err != nil {
		t.Fatal(err)
	}
	if st.Added != len(docs) || st.Embedded != len(docs) || !st.Refitted {
		t.Fatalf("first sync %+v", st)
	}
	// Change 2, remove 1, add 1: 3 embeddings, no refit (4/39 < 0.5).
	next := append([]Doc(nil), docs[1:]...)
	next[0].Description += " Also archives."
	next[5].Params = append(next[5].Params, Param{Name: "dry_run"})
	next = append(next, Doc{ID: "new/tool", Name: "summarize_text", Description: "Summarize a long text"})
	before := emb.n
	st, err = ix.Sync(ctx, next)
	if err != nil {
		t.Fatal(err)
	}
	want := SyncStats{Added: 1, Changed: 2, Removed: 1, Unchanged: len(docs) - 3, Embedded: 3}
	if st != want || emb.n-before != 3 {
		t.Fatalf("second sync %+v (embedded %d), want %+v", st, emb.n-before, want)
	}
	if ix.Len() != len(next) {
		t.Fatalf("Len = %d", ix.Len())
	}
	if _, ok := ix.Doc(docs[0].ID); ok {
		t.Fatal("removed doc still indexed")
	}
	hits, _ := ix.Search(ctx, "summarize this long text", 1, Filter{})
	if hits[0].ID != "new/tool" {
		t.Fatalf("new tool not found: %v", hits)
	}
	if _, err := ix.Sync(ctx, []Doc{{ID: "x"}, {ID: "x"}}); err == nil {
		t.Fatal("duplicate IDs accepted")
	}
}

func searchAll(t testing.TB, ix *Index) [][]Hit {
	var out [][]Hit
	for _, q := range loadQueries(t) {
		h, err := ix.Search(context.Background(), q.Query, 5, Filter{})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, h)
	}
	return out
}

func TestPersistAndReopen(t *testing.T) {
	docs := loadFixture(t)
	dir := t.TempDir()
	ix := openIndex(t, dir, docs)
	want := searchAll(t, ix)

	re := openIndex(t, dir, nil)
	if re.Len() != len(docs) {
		t.Fatalf("reopened Len = %d, want %d", re.Len(), len(docs))
	}
	if got := searchAll(t, re); !reflect.DeepEqual(got, want) {
		t.Fatal("reopened index ranks differently")
	}
	st, err := re.Sync(context.Background(), docs)
	if err != nil {
		t.Fatal(err)
	}
	if st.Embedded != 0 || st.Refitted || st.Unchanged != len(docs) {
		t.Fatalf("sync after reopen %+v, want nothing re-embedded", st)
	}
}

func TestSnapshotRoundTrip(t *testing.T) {
	docs := loadFixture(t)
	ix := openIndex(t, "", docs)
	want := searchAll(t, ix)
	var buf bytes.Buffer
	if err := ix.Export(&buf); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	dst := openIndex(t, dir, nil)
	if err := dst.Import(context.Background(), bytes.NewReader(buf.Bytes())); err != nil {
		t.Fatal(err)
	}
	if got := searchAll(t, dst); !reflect.DeepEqual(got, want) {
		t.Fatal("imported index ranks differently")
	}
	// Persisted: a fresh Open of the same dir sees the imported index.
	re := openIndex(t, dir, nil)
	if got := searchAll(t, re); !reflect.DeepEqual(got, want) {
		t.Fatal("imported index did not persist")
	}
	// A snapshot from another embedder is refused.
	other, _ := Open(context.Background(), NewOllama(batchClient{}, "nomic-embed-text"), Options{})
	if err := other.Import(context.Background(), bytes.NewReader(buf.Bytes())); err == nil {
		t.Fatal("import into an Ollama index succeeded")
	}
}

// batchClient embeds deterministically (a bag of letters) and records batch
// sizes; it stands in for the Ollama server, which the e2e tests run.
type batchClient struct{ sizes *[]int }

func (b batchClient) Embed(_ context.Context, model string, in []string) ([][]float32, error) {
	if b.sizes != nil {
		*b.sizes = append(*b.sizes, len(in))
	}
	out := make([][]float32, len(in))
	for i, s := range in {
		v := make([]float32, 26)
		for _, r := range strings.ToLower(s) {
			if r >= 'a' && r <= 'z' {
				v[r-'a']++
			}
		}
		v[0] += 0.01
		out[i] = v
	}
	return out, nil
}

func TestOllamaBatches(t *testing.T) {
	var sizes []int
	o := NewOllama(batchClient{&sizes}, "m")
	o.Batch = 4
	texts := make([]string, 10)
	for i := range texts {
		texts[i] = fmt.Sprint("text ", i)
	}
	vs, err := o.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != 10 || !reflect.DeepEqual(sizes, []int{4, 4, 2}) || o.Dim() != 26 || o.ID() != "ollama:m" {
		t.Fatalf("vectors %d, batches %v, dim %d, id %s", len(vs), sizes, o.Dim(), o.ID())
	}
	// An index over the Ollama embedder works without fitting.
	ix, _ := Open(context.Background(), o, Options{})
	if _, err := ix.Sync(context.Background(), loadFixture(t)); err != nil {
		t.Fatal(err)
	}
	hits, err := ix.Search(context.Background(), "list kubernetes deployments", 3, Filter{})
	if err != nil || len(hits) != 3 {
		t.Fatalf("hits %v, err %v", hits, err)
	}
}

func TestParamsFromSchema(t *testing.T) {
	ps := ParamsFromSchema(json.RawMessage(`{"type":"dict","properties":{"b":{"type":"string","description":"B"},"a":{"type":"integer"}}}`))
	want := []Param{{Name: "a"}, {Name: "b", Description: "B"}}
	if !reflect.DeepEqual(ps, want) {
		t.Fatalf("ParamsFromSchema = %v", ps)
	}
	d1 := Doc{ID: "x", Name: "n", Metadata: map[string]string{"a": "1", "b": "2"}}
	d2 := Doc{ID: "x", Name: "n", Metadata: map[string]string{"b": "2", "a": "1"}}
	d3 := Doc{ID: "x", Name: "n", Metadata: map[string]string{"b": "3", "a": "1"}}
	if d1.Hash() != d2.Hash() || d1.Hash() == d3.Hash() {
		t.Fatal("content hash is not a function of content")
	}
	_ = sort.Strings
}

func TestSplitName(t *testing.T) {
	vocab := map[string]bool{"dice": true, "roller": true, "keyword": true, "explorer": true, "key": true, "word": true, "calculator": true}
	cases := map[string][]string{
		"diceroller":      {"dice", "roller"},
		"keywordexplorer": {"keyword", "explorer"}, // fewest pieces, not key+word+explorer
		"calculator":      nil,                     // a word of its own
		"dicexroller":     nil,                     // no split covers it
		"short":           nil,
	}
	for in, want := range cases {
		if got := splitName(in, vocab); !reflect.DeepEqual(got, want) {
			t.Errorf("splitName(%q) = %v, want %v", in, got, want)
		}
	}
}
