package embeddings

import (
	"context"
	"math"
	"reflect"
	"slices"
	"testing"
)

// featureIndex is the position of a named feature.
func featureIndex(t testing.TB, name string) int {
	i := slices.Index(RerankFeatures, name)
	if i < 0 {
		t.Fatalf("no feature %q", name)
	}
	return i
}

// TestCandidateFeatures: the features read what they say for a request
// whose words are one tool's name and another tool's description.
func TestCandidateFeatures(t *testing.T) {
	ctx := context.Background()
	ix, err := Open(ctx, NewLexical(LexicalOptions{}), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ix.Sync(ctx, adapterDocs()); err != nil {
		t.Fatal(err)
	}
	docs := adapterDocs()
	known := KnownTools([]string{ToolKey(&docs[1])}) // mail.send
	hits, rows, err := ix.Candidates(ctx, "send mail", 5, known)
	if err != nil || len(hits) == 0 {
		t.Fatalf("candidates: %v, %v", hits, err)
	}
	if len(rows) != len(hits) || len(rows[0]) != len(RerankFeatures) {
		t.Fatalf("%d rows of %d features for %d hits; want one row of %d each", len(rows), len(rows[0]), len(hits), len(RerankFeatures))
	}
	row := map[string][]float64{}
	for i, h := range hits {
		row[h.ID] = rows[i]
	}
	mail := row["mail.send"]
	if mail == nil {
		t.Fatalf("mail.send not among the candidates %v", hits)
	}
	for name, want := range map[string]float64{
		"name_cover": 1, // both name words are in the request
		"name_first": 1, // "mail"
		"name_last":  1, // "send"
		"name_exact": 1,
		"cover":      1, // both request words are in the tool
		"fused_rel":  1, // it is the best candidate
		"known":      1,
	} {
		if got := mail[featureIndex(t, name)]; math.Abs(got-want) > 1e-9 {
			t.Errorf("mail.send %s = %v, want %v", name, got, want)
		}
	}
	for id, x := range row {
		if id != "mail.send" && x[featureIndex(t, "known")] != 0 {
			t.Errorf("%s reads as known", id)
		}
	}
	if w := row["weather.now"]; w != nil && w[featureIndex(t, "cover")] != 0 {
		t.Errorf("weather.now covers %v of \"send mail\", want 0", w[featureIndex(t, "cover")])
	}
	if hits[0].ID != "mail.send" || mail[featureIndex(t, "fused_rank")] != math.Log1p(1) {
		t.Errorf("first candidate %s, fused_rank %v", hits[0].ID, mail[featureIndex(t, "fused_rank")])
	}
}

// synthetic groups: relevance follows feature a when feature b is high and
// feature c otherwise (an interaction no linear score can express
// alone), with the other features noise.
func syntheticGroups(n int, seed uint64) []RerankGroup {
	nf := len(RerankFeatures)
	s := seed | 1
	rnd := func() float64 {
		s ^= s >> 12
		s ^= s << 25
		s ^= s >> 27
		return float64((s*2685821657736338717)>>11) / (1 << 53)
	}
	var out []RerankGroup
	for q := 0; q < n; q++ {
		g := RerankGroup{Gold: 1, Weight: 1}
		gate := rnd() < 0.5
		best, bestV := 0, -1.0
		for i := 0; i < 10; i++ {
			x := make([]float64, nf)
			for f := range x {
				x[f] = rnd()
			}
			if gate {
				x[1] = 1
			} else {
				x[1] = 0
			}
			v := x[2]
			if gate {
				v = x[0]
			}
			if v > bestV {
				best, bestV = i, v
			}
			g.Rows = append(g.Rows, x)
		}
		g.Relevant = make([]bool, len(g.Rows))
		g.Relevant[best] = true
		out = append(out, g)
	}
	return out
}

// TestTrainRerankerLearnsAndIsDeterministic: a linear reranker fitted on
// requests whose right candidate is the one with the highest feature 0
// ranks held-out requests' right candidate first, and fitting twice gives
// the same weights.
func TestTrainRerankerLearnsAndIsDeterministic(t *testing.T) {
	nf := len(RerankFeatures)
	mk := func(n int, seed uint64) []RerankGroup {
		gs := syntheticGroups(n, seed)
		for _, g := range gs {
			best := 0
			for i, x := range g.Rows {
				if x[0] > g.Rows[best][0] {
					best = i
				}
			}
			for i := range g.Relevant {
				g.Relevant[i] = i == best
			}
		}
		return gs
	}
	train, test := mk(400, 1), mk(200, 2)
	for _, lambda := range []bool{false, true} {
		o := RerankTrainOptions{Depth: 10, Embedder: "e", Lambda: lambda}
		r, err := TrainReranker(train, o)
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Weights) != nf || r.check() != nil {
			t.Fatalf("reranker malformed: %v", r.check())
		}
		before := (*Reranker)(nil).NDCG10(test)
		if got := r.NDCG10(test); got < 0.95 || got <= before {
			t.Errorf("lambda %v: held-out NDCG@10 %.3f (given order %.3f), want ≥ 0.95", lambda, got, before)
		}
		again, _ := TrainReranker(train, o)
		if !reflect.DeepEqual(r.Weights, again.Weights) {
			t.Errorf("lambda %v: two fits differ", lambda)
		}
	}
	if _, err := TrainReranker([]RerankGroup{{Rows: [][]float64{make([]float64, nf)}, Relevant: []bool{false}, Weight: 1}}, RerankTrainOptions{}); err == nil {
		t.Error("a fit with no right candidate succeeded")
	}
}

// TestBoostLearnsAnInteraction: trees on top of the linear part learn
// what it cannot (which feature matters depends on a third), and their
// JSON round trip keeps the scores.
func TestBoostLearnsAnInteraction(t *testing.T) {
	train, test := syntheticGroups(300, 3), syntheticGroups(300, 4)
	lin, err := TrainReranker(train, RerankTrainOptions{Depth: 10, Embedder: "e", Lambda: true})
	if err != nil {
		t.Fatal(err)
	}
	boosted := BoostReranker(lin, train, BoostOptions{Trees: 60})
	l, b := lin.NDCG10(test), boosted.NDCG10(test)
	if b < l+0.05 {
		t.Errorf("held-out NDCG@10: linear %.3f, boosted %.3f; want the trees ≥ 0.05 ahead", l, b)
	}
	if len(lin.Trees) != 0 {
		t.Error("boosting changed the linear reranker it started from")
	}
	js, err := boosted.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	back, err := ReadReranker(js)
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range test[:20] {
		for _, x := range g.Rows {
			if a, c := boosted.Score(x), back.Score(x); a != c {
				t.Fatalf("score %v after the JSON round trip, %v before", c, a)
			}
		}
	}
	// A tree whose node points back at itself would never end.
	bad := *back
	bad.Trees = slices.Clone(back.Trees)
	tr := bad.Trees[0]
	tr.Left = slices.Clone(tr.Left)
	tr.Left[0] = 0
	bad.Trees[0] = tr
	js, _ = bad.Marshal()
	if _, err := ReadReranker(js); err == nil {
		t.Error("a tree with a cycle was read")
	}
}

// TestIndexReranks: an index given a reranker that weighs only whether
// the tool's name words are in the request puts the tool named by the
// request first, where the fused list does not; Candidates and
// NoRerank keep the fused order; a reranker fitted over another embedder
// is refused.
func TestIndexReranks(t *testing.T) {
	ctx := context.Background()
	docs := []Doc{
		{ID: "a.notes", Name: "notes_append", Group: "notes", Description: "Append a line of text to the notes file; text, file, line, append, write."},
		{ID: "b.write", Name: "file_write", Group: "storage", Description: "Store bytes."},
	}
	emb := NewLexical(LexicalOptions{})
	q := "write text to a file"
	nf := len(RerankFeatures)
	r := &Reranker{Version: rerankerVersion, Depth: 10, Features: slices.Clone(RerankFeatures),
		Mean: make([]float64, nf), Scale: make([]float64, nf), Weights: make([]float64, nf)}
	f := featureIndex(t, "name_exact")
	r.Scale[f], r.Weights[f] = 1, 5
	open := func(o Options) *Index {
		ix, err := Open(ctx, emb, o)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ix.Sync(ctx, docs); err != nil {
			t.Fatal(err)
		}
		return ix
	}
	base := open(Options{NoRerank: true})
	fused, _ := base.Search(ctx, q, 2, Filter{})
	if len(fused) != 2 || fused[0].ID != "a.notes" {
		t.Skipf("the fused list already puts %v first: nothing to re-rank", fused)
	}
	r.Embedder = emb.ID()
	ix := open(Options{Reranker: r})
	got, err := ix.Search(ctx, q, 2, Filter{})
	if err != nil || len(got) != 2 || got[0].ID != "b.write" {
		t.Fatalf("re-ranked: %v, %v; want b.write first", got, err)
	}
	if got[0].Fused <= 0 || got[0].Fused >= 1 || got[1].Fused > got[0].Fused {
		t.Errorf("re-ranked scores %v, %v: want in (0, 1), best first", got[0].Fused, got[1].Fused)
	}
	cands, _, _ := ix.Candidates(ctx, q, 2, nil)
	if cands[0].ID != "a.notes" {
		t.Errorf("Candidates re-ranked: %v", cands)
	}
	r2 := *r
	r2.Embedder = "another"
	if _, err := Open(ctx, emb, Options{Reranker: &r2}); err == nil {
		t.Error("a reranker fitted over another embedder was accepted")
	}
}

// TestCommittedRerankerMatchesThisBuild: the committed reranker is read by
// this build (its features are RerankFeatures) and was fitted over the
// committed model, so 'airs eval retrieval --reranker model' can use it.
func TestCommittedRerankerMatchesThisBuild(t *testing.T) {
	r := CommittedReranker()
	if r == nil {
		_, err := ReadReranker(defaultRerankerBytes)
		t.Fatalf("the committed reranker cannot be read: %v", err)
	}
	m, err := DefaultModel()
	if err != nil {
		t.Fatal(err)
	}
	if r.Embedder != m.ID() {
		t.Errorf("committed reranker fitted over %s, the committed model is %s: refit it (airs train retrieval --reranker)", r.Embedder, m.ID())
	}
	if got := m.Reranker(); (got != nil) != r.Default {
		t.Errorf("model advises %v with Default %v", got != nil, r.Default)
	}
}

// TestBlendFeatures: over a Blend the last features are the model's and
// the word vectors' cosines and the soft match's recall and precision,
// each divided by the best among the candidates; over another embedder
// they are 0.
func TestBlendFeatures(t *testing.T) {
	ctx := context.Background()
	q := "browse the folders of a codebase"
	ix, _ := softIndex(t, BlendOptions{})
	hits, rows, err := ix.Candidates(ctx, q, 10, nil)
	if err != nil || len(hits) < 3 {
		t.Fatalf("candidates: %v, %v", hits, err)
	}
	for _, name := range []string{"model_cos_rel", "words_cos_rel", "soft_rel", "soft_prec_rel"} {
		f := featureIndex(t, name)
		best := 0.0
		for _, x := range rows {
			if x[f] < 0 || x[f] > 1 {
				t.Errorf("%s = %v, outside [0, 1]", name, x[f])
			}
			best = max(best, x[f])
		}
		if best != 1 {
			t.Errorf("%s: best %v, want 1", name, best)
		}
	}
	if i := slices.IndexFunc(hits, func(h Hit) bool { return h.ID == "repo.browse" }); i < 0 || rows[i][featureIndex(t, "soft_rel")] != 1 {
		t.Errorf("repo.browse is not the best soft match among %v", hits)
	}
	lx, err := Open(ctx, NewLexical(LexicalOptions{}), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lx.Sync(ctx, softDocsFixture()); err != nil {
		t.Fatal(err)
	}
	_, rows, err = lx.Candidates(ctx, q, 10, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range rows {
		for _, v := range x[rerankFeaturesV1:] {
			if v != 0 {
				t.Fatalf("a blend feature is %v under the lexical embedder", v)
			}
		}
	}
}

// TestFinalRerankerWholeOnly: a Final, WholeOnly reranker re-orders the
// final list of a request searched whole and leaves a request searched
// part by part in its fused order.
func TestFinalRerankerWholeOnly(t *testing.T) {
	ctx := context.Background()
	_, b := softIndex(t, BlendOptions{})
	nf := len(RerankFeatures)
	r := &Reranker{Version: rerankerVersion, Embedder: b.ID(), Depth: 30, Final: true, WholeOnly: true,
		Features: RerankFeatures, Mean: make([]float64, nf), Scale: make([]float64, nf), Weights: make([]float64, nf)}
	p := featureIndex(t, "params") // only calendar_add has parameters
	r.Scale[p], r.Weights[p] = 1, 10
	open := func(r *Reranker) *Index {
		ix, err := Open(ctx, b, Options{Reranker: r, NoRerank: r == nil})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ix.Sync(ctx, softDocsFixture()); err != nil {
			t.Fatal(err)
		}
		return ix
	}
	plain, ranked := open(nil), open(r)
	short := "browse the folders of a codebase"
	long := "I keep a small project on GitHub and want to look through its folders and recent commits before I change anything. " +
		"After that, send an email to my colleague with what I found in the code. " +
		"Finally, translate that message into Spanish as well, because half of the team reads it in Madrid."
	if RequestParts(long, PartsOptions{}) == nil || RequestParts(short, PartsOptions{}) != nil {
		t.Fatal("the fixture's requests are no longer searched as the test assumes (one part by part, one whole)")
	}
	h, err := ranked.Search(ctx, short, 5, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if h[0].ID != "calendar.add" {
		t.Errorf("short request re-ranked: first %s, want calendar.add (the only tool with parameters)", h[0].ID)
	}
	for i := 1; i < len(h); i++ {
		if h[i].Fused > h[i-1].Fused {
			t.Errorf("re-ranked hits out of order: %v", h)
		}
	}
	want, err := plain.Search(ctx, long, 5, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := ranked.Search(ctx, long, 5, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if want[0].ID == "calendar.add" {
		t.Fatal("the long request's fused list already starts with calendar.add: the fixture no longer tests it")
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("a request searched part by part was re-ranked:\n got %v\nwant %v", got, want)
	}
	r.WholeOnly = false
	all := open(r)
	if got, _ := all.Search(ctx, long, 5, Filter{}); got[0].ID != "calendar.add" {
		t.Errorf("without WholeOnly the long request is not re-ranked: first %s", got[0].ID)
	}
}

// TestRerankerFittedBeforeTheBlendFeatures: a reranker file with the
// features this build had before the blend's (the committed one) still
// loads, the new features weighed 0.
func TestRerankerFittedBeforeTheBlendFeatures(t *testing.T) {
	r := CommittedReranker()
	if r == nil {
		t.Fatal("the committed reranker does not load")
	}
	if len(r.Weights) != len(RerankFeatures) {
		t.Fatalf("%d weights for %d features", len(r.Weights), len(RerankFeatures))
	}
	for _, w := range r.Weights[rerankFeaturesV1:] {
		if w != 0 {
			t.Errorf("a feature the file does not name weighs %v", w)
		}
	}
}
