package embeddings

import (
	"bytes"
	"context"
	"sort"
	"testing"
)

func TestWordVectorsLoad(t *testing.T) {
	w, err := NewWordVectors(WordVectorOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if w.Dim() != 100 || w.Vocabulary() != 40000 {
		t.Fatalf("dim %d, vocabulary %d; want 100 and 40000 (rebuild model/words.bin.gz with model/make_words.py)", w.Dim(), w.Vocabulary())
	}
	for _, word := range []string{"repository", "weather", "forecast", "email", "translate"} {
		if _, ok := w.index[word]; !ok {
			t.Errorf("%q has no vector", word)
		}
	}
}

// The committed file is the one EVALS.md and embeddings/model/README.md
// record: vectors made from another file would not match the fitted
// weights.
func TestWordVectorsChecksum(t *testing.T) {
	tab, err := readWordTable(defaultWordBytes)
	if err != nil {
		t.Fatal(err)
	}
	const want = "6fd377758620bcd2"
	if tab.sum != want {
		t.Fatalf("model/words.bin.gz sha256 starts %s, want %s", tab.sum, want)
	}
}

func wcos(a, b []float32) float64 {
	s := 0.0
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

func TestWordVectorsRelateParaphrases(t *testing.T) {
	w, err := NewWordVectors(WordVectorOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct{ a, near, far string }{
		{"source code repository", "git project", "weather forecast"},
		{"gather insights about a codebase", "GitHub repository", "currency exchange rate"},
		{"will it rain tomorrow", "weather forecast", "send an email"},
		{"send a message to my colleague", "post to a Slack channel", "stock prices"},
	}
	for _, c := range cases {
		v, _ := w.Embed(context.Background(), []string{c.a, c.near, c.far})
		n, f := wcos(v[0], v[1]), wcos(v[0], v[2])
		if n <= f {
			t.Errorf("%q: cos to %q %.3f not above cos to %q %.3f", c.a, c.near, n, c.far, f)
		}
		t.Logf("%q: %.3f (%q) vs %.3f (%q)", c.a, n, c.near, f, c.far)
	}
	z, _ := w.Embed(context.Background(), []string{"天気予報"})
	if wcos(z[0], z[0]) != 0 {
		t.Error("a text with no known word should be the zero vector")
	}
}

func TestBlendDotIsWeightedCosines(t *testing.T) {
	m, err := DefaultModel()
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewBlend(m, BlendOptions{WordWeight: 0.4})
	if err != nil {
		t.Fatal(err)
	}
	texts := []string{"list the issues of a GitHub repository", "show open bugs in my codebase"}
	ctx := context.Background()
	bv, _ := b.Embed(ctx, texts)
	mv, _ := m.Embed(ctx, texts)
	wv, _ := b.Words().Embed(ctx, texts)
	want := 0.6*wcos(unit(mv[0]), unit(mv[1])) + 0.4*wcos(wv[0], wv[1])
	if got := wcos(bv[0], bv[1]); got < want-1e-4 || got > want+1e-4 {
		t.Fatalf("blend dot %.5f, want 0.6·cos_model + 0.4·cos_words = %.5f", got, want)
	}
	if len(bv[0]) != b.Dim() {
		t.Fatalf("vector length %d, Dim %d", len(bv[0]), b.Dim())
	}
}

func BenchmarkWordVectorsLoad(b *testing.B) {
	for i := 0; i < b.N; i++ {
		tab, err := readWordTable(defaultWordBytes)
		if err != nil {
			b.Fatal(err)
		}
		_ = newWordVectors(tab, WordVectorOptions{})
	}
}

func TestCommittedWordMap(t *testing.T) {
	m, err := DefaultWordMap()
	if err != nil {
		t.Fatal(err)
	}
	w, err := NewWordVectors(WordVectorOptions{Map: m})
	if err != nil {
		t.Fatal(err)
	}
	if w.Dim() != 100 {
		t.Fatalf("mapped width %d, want 100", w.Dim())
	}
	raw, _ := NewWordVectors(WordVectorOptions{})
	if w.ID() == raw.ID() {
		t.Fatal("a mapped embedder must not share the raw one's ID (its vectors differ)")
	}
	v, _ := w.Embed(context.Background(), []string{"list the open issues of a GitHub repository", "show the bugs reported in my codebase", "convert 100 dollars to euros"})
	if n, f := wcos(v[0], v[1]), wcos(v[0], v[2]); n <= f {
		t.Errorf("mapped: paraphrase %.3f not above unrelated %.3f", n, f)
	}
}

// A map trained on pairs that the raw vectors confuse learns to separate
// them: requests about weather paired with a weather tool, about email with
// a mail tool, and so on, and the trained map ranks each request's tool
// first more often than the identity does.
func TestTrainWordMapLearnsPairs(t *testing.T) {
	w, err := NewWordVectors(WordVectorOptions{})
	if err != nil {
		t.Fatal(err)
	}
	corpus := map[string]string{
		"weather": "get the forecast for a city: temperature, rain and wind",
		"mail":    "send an email message to a recipient with a subject",
		"stock":   "look up the latest share price of a listed company",
		"repo":    "list the issues and pull requests of a GitHub repository",
		"map":     "find driving directions and travel time between two places",
		"music":   "play a song or playlist on the speaker",
	}
	reqs := map[string][]string{
		"weather": {"will it rain in Paris tomorrow", "how hot is it going to be this weekend", "is it windy at the coast today"},
		"mail":    {"write to my boss that I am late", "notify the team by mail about the release", "send a note to alice"},
		"stock":   {"how is apple trading right now", "what does a share of tesla cost", "check the market value of microsoft"},
		"repo":    {"what bugs are open in our codebase", "show the merge requests awaiting review", "which tickets were filed against the project"},
		"map":     {"how long does it take to drive to boston", "route from the airport to the hotel", "how far is the station from here"},
		"music":   {"put on some jazz", "I want to hear the latest album by adele", "start my workout tunes"},
	}
	var ex []TrainExample
	for k, qs := range reqs {
		for _, q := range qs {
			ex = append(ex, TrainExample{Query: q, Gold: []string{k}})
		}
	}
	sort.Slice(ex, func(i, j int) bool { return ex[i].Query < ex[j].Query })
	m, err := TrainWordMap(context.Background(), w, corpus, ex, WordMapOptions{Epochs: 30, Batch: 6, LearningRate: 0.05})
	if err != nil {
		t.Fatal(err)
	}
	mw, err := w.WithMap(m)
	if err != nil {
		t.Fatal(err)
	}
	hits := func(e *WordVectors) int {
		keys := []string{"weather", "mail", "stock", "repo", "map", "music"}
		var docs []string
		for _, k := range keys {
			docs = append(docs, corpus[k])
		}
		dv, _ := e.Embed(context.Background(), docs)
		n := 0
		for _, x := range ex {
			qv, _ := e.Embed(context.Background(), []string{x.Query})
			best, bi := -2.0, -1
			for i := range keys {
				if c := wcos(qv[0], dv[i]); c > best {
					best, bi = c, i
				}
			}
			if keys[bi] == x.Gold[0] {
				n++
			}
		}
		return n
	}
	before, after := hits(w), hits(mw)
	t.Logf("top-1 on the training pairs: identity %d/%d, trained map %d/%d", before, len(ex), after, len(ex))
	if after <= before {
		t.Fatalf("trained map %d/%d top-1, not above the identity's %d", after, len(ex), before)
	}
}

// BenchmarkBlendLoad measures what the first Blend of a process pays:
// decoding the tool model, the word vectors and the word map.
func BenchmarkBlendLoad(b *testing.B) {
	for i := 0; i < b.N; i++ {
		m, err := ReadDefaultModel()
		if err != nil {
			b.Fatal(err)
		}
		tab, err := readWordTable(defaultWordBytes)
		if err != nil {
			b.Fatal(err)
		}
		wm, err := ReadWordMap(bytes.NewReader(defaultWordMapBytes))
		if err != nil {
			b.Fatal(err)
		}
		w, err := newWordVectors(tab, WordVectorOptions{}).WithMap(wm)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(m.MemoryBytes()+w.MemoryBytes())/(1<<20), "MiB")
	}
}

// removeCommonReference subtracts the mean vector from every row of vec
// and projects out the top k principal directions (estimated on the first
// 10,000 rows), in float32 rows as a table of every word's vector would
// hold them.
func removeCommonReference(vec []float32, n, dim, k int) {
	mean := make([]float64, dim)
	for i := 0; i < n; i++ {
		for j := 0; j < dim; j++ {
			mean[j] += float64(vec[i*dim+j])
		}
	}
	for j := range mean {
		mean[j] /= float64(n)
	}
	for i := 0; i < n; i++ {
		for j := 0; j < dim; j++ {
			vec[i*dim+j] -= float32(mean[j])
		}
	}
	cov := make([]float64, dim*dim)
	for i := 0; i < min(n, 10000); i++ {
		row := vec[i*dim : (i+1)*dim]
		for a := 0; a < dim; a++ {
			for b := 0; b < dim; b++ {
				cov[a*dim+b] += float64(row[a]) * float64(row[b])
			}
		}
	}
	var dirs [][]float64
	for d := 0; d < k; d++ {
		dirs = append(dirs, principal(cov, dim, dirs))
	}
	for i := 0; i < n; i++ {
		row := vec[i*dim : (i+1)*dim]
		for _, u := range dirs {
			s := 0.0
			for j, x := range row {
				s += float64(x) * u[j]
			}
			for j := range row {
				row[j] -= float32(s * u[j])
			}
		}
	}
}

// The word vectors stay int8 in memory and each word's float32 vector is
// rebuilt when a text uses it: it must be, bit for bit, the row a float32
// table with the common directions removed up front would hold, so that
// no text's vector (and no ranking, and no retrained map) changes.
func TestWordRowsEqualTheFloat32Table(t *testing.T) {
	tab, err := readWordTable(defaultWordBytes)
	if err != nil {
		t.Fatal(err)
	}
	n, dim := len(tab.words), tab.dim
	for _, common := range []int{-1, 1, 2} {
		w := newWordVectors(tab, WordVectorOptions{Common: common})
		vec := make([]float32, n*dim)
		for i := 0; i < n; i++ {
			tab.raw(i, vec[i*dim:(i+1)*dim])
		}
		if common > 0 {
			removeCommonReference(vec, n, dim, common)
		}
		buf := make([]float32, dim)
		for i := 0; i < n; i++ {
			row := w.row(i, buf)
			for j := range row {
				if row[j] != vec[i*dim+j] {
					t.Fatalf("common=%d, word %d (%q) component %d: %v, the float32 table %v", common, i, tab.words[i], j, row[j], vec[i*dim+j])
				}
			}
		}
	}
}
