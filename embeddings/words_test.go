package embeddings

import (
	"context"
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
