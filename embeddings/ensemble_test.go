package embeddings

import (
	"bytes"
	"context"
	"math"
	"reflect"
	"testing"
)

func newTestEnsemble(t testing.TB, w float64) *Ensemble {
	t.Helper()
	m, err := DefaultModel()
	if err != nil {
		t.Fatal(err)
	}
	return NewEnsemble(m, EnsembleOptions{LexicalWeight: w})
}

func openEnsembleIndex(t testing.TB, dir string, docs []Doc) *Index {
	t.Helper()
	ix, err := Open(context.Background(), newTestEnsemble(t, 0), Options{Dir: dir})
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

// One dot product of two ensemble vectors is the weighted sum of the two
// halves' cosines, whatever the weight.
func TestEnsembleDotIsWeightedCosines(t *testing.T) {
	docs := loadFixture(t)
	corpus := make([]string, len(docs))
	for i := range docs {
		corpus[i] = DenseText(&docs[i])
	}
	texts := []string{"create a pull request on github", corpus[0], corpus[3], "send an email to my team", "読み込む ファイル"}
	for _, w := range []float64{0.2, 0.5, 0.8} {
		e := newTestEnsemble(t, w)
		if _, err := e.Embed(context.Background(), texts); err == nil {
			t.Fatal("an unfitted ensemble embedded")
		}
		if err := e.Fit(context.Background(), corpus); err != nil {
			t.Fatal(err)
		}
		if e.Dim() != e.Model().Dim()+e.Lexical().Dim() || e.Lexical().Dim() == 0 {
			t.Fatalf("Dim %d, want %d + %d", e.Dim(), e.Model().Dim(), e.Lexical().Dim())
		}
		ev, err := e.Embed(context.Background(), texts)
		if err != nil {
			t.Fatal(err)
		}
		mv, _ := e.Model().Embed(context.Background(), texts)
		lv, _ := e.Lexical().Embed(context.Background(), texts)
		for i := range texts {
			if len(ev[i]) != e.Dim() {
				t.Fatalf("vector %d has %d dims, want %d", i, len(ev[i]), e.Dim())
			}
			for j := range texts {
				got := float64(dot32(ev[i], ev[j]))
				want := (1-w)*cos(mv[i], mv[j]) + w*cos(lv[i], lv[j])
				if math.Abs(got-want) > 1e-4 {
					t.Fatalf("w=%v: dot(%q, %q) = %.5f, want (1-w)·%.5f + w·%.5f = %.5f", w, texts[i], texts[j], got, cos(mv[i], mv[j]), cos(lv[i], lv[j]), want)
				}
			}
		}
	}
}

// The ID changes with the lexical basis and the weight: vectors made under
// another basis or weight are never compared.
func TestEnsembleIDNamesBasisAndWeight(t *testing.T) {
	docs := loadFixture(t)
	corpus := make([]string, len(docs))
	for i := range docs {
		corpus[i] = DenseText(&docs[i])
	}
	a, b := newTestEnsemble(t, 0.3), newTestEnsemble(t, 0.4)
	unfitted := a.ID()
	for _, e := range []*Ensemble{a, b} {
		if err := e.Fit(context.Background(), corpus); err != nil {
			t.Fatal(err)
		}
	}
	if a.ID() == unfitted || a.ID() == b.ID() {
		t.Fatalf("IDs %q (unfitted %q) and %q should differ", a.ID(), unfitted, b.ID())
	}
	c := newTestEnsemble(t, 0.3)
	if err := c.Fit(context.Background(), corpus[:len(corpus)/2]); err != nil {
		t.Fatal(err)
	}
	if c.ID() == a.ID() {
		t.Fatal("a basis fitted on other documents has the same ID")
	}
}

// An index built with the ensemble keeps the lexical half's basis: reopened
// from its directory or imported from a snapshot, it ranks as before and
// re-embeds nothing.
func TestEnsembleIndexPersistsLexicalHalf(t *testing.T) {
	docs := loadFixture(t)
	dir := t.TempDir()
	ix := openEnsembleIndex(t, dir, docs)
	want := searchAll(t, ix)

	re := openEnsembleIndex(t, dir, nil)
	if got := searchAll(t, re); !reflect.DeepEqual(got, want) {
		t.Fatal("reopened ensemble index ranks differently")
	}
	st, err := re.Sync(context.Background(), docs)
	if err != nil {
		t.Fatal(err)
	}
	if st.Embedded != 0 || st.Refitted || st.Unchanged != len(docs) {
		t.Fatalf("sync after reopen %+v, want nothing re-embedded", st)
	}

	var buf bytes.Buffer
	if err := ix.Export(&buf); err != nil {
		t.Fatal(err)
	}
	dst := openEnsembleIndex(t, "", nil)
	if err := dst.Import(context.Background(), bytes.NewReader(buf.Bytes())); err != nil {
		t.Fatal(err)
	}
	if got := searchAll(t, dst); !reflect.DeepEqual(got, want) {
		t.Fatal("imported ensemble index ranks differently")
	}
}

// The ensemble advises the model's fitted fusion with its own dense weight
// (the default, or the one set) and scaling; a negative weight keeps the
// model's.
func TestEnsembleFusion(t *testing.T) {
	m, err := DefaultModel()
	if err != nil {
		t.Fatal(err)
	}
	if got := NewEnsemble(m, EnsembleOptions{DenseWeight: -1}).Fusion(); got != m.Fusion() {
		t.Fatalf("fusion %+v, want the model's %+v", got, m.Fusion())
	}
	for _, c := range []struct {
		o     EnsembleOptions
		dense float64
		norm  string
	}{
		{EnsembleOptions{}, DefaultEnsembleDenseWeight, m.Fusion().Norm},
		{EnsembleOptions{DenseWeight: 2.5, Norm: "minmax"}, 2.5, "minmax"},
	} {
		want := m.Fusion()
		want.Dense, want.Norm = c.dense, c.norm
		if f := NewEnsemble(m, c.o).Fusion(); f != want {
			t.Fatalf("options %+v: fusion %+v, want %+v", c.o, f, want)
		}
	}
}
