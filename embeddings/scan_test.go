package embeddings

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/rand"
	"slices"
	"testing"
)

// dot32Reference is the dot product summed in one pass over eight lanes
// (lane j: positions j, j+8, …; the rest into lane 0), the order whose
// float32 result dot32 must keep: the trainers use it, and retraining must
// write the same bytes.
func dot32Reference(a, b []float32) float32 {
	var s [8]float32
	i := 0
	for ; i+8 <= len(a); i += 8 {
		for j := range s {
			s[j] += a[i+j] * b[i+j]
		}
	}
	for ; i < len(a); i++ {
		s[0] += a[i] * b[i]
	}
	return (s[0] + s[1]) + (s[2] + s[3]) + (s[4] + s[5]) + (s[6] + s[7])
}

func TestDot32KeepsTheSummationOrder(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	for _, n := range []int{0, 1, 7, 8, 9, 15, 16, 63, 64, 96, 127, 128, 300} {
		for trial := 0; trial < 50; trial++ {
			a, b := randomVector(r, n), randomVector(r, n)
			if got, want := dot32(a, b), dot32Reference(a, b); got != want {
				t.Fatalf("n=%d: dot32 %v, one-pass reference %v (bits differ: retrained weights could change)", n, got, want)
			}
		}
	}
}

func randomVector(r *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = r.Float32()*2 - 1
	}
	return v
}

// dot64 is the dot product summed in float64.
func dot64(a, b []float32) (sum, abs float64) {
	for i := range a {
		p := float64(a[i]) * float64(b[i])
		sum += p
		abs += math.Abs(p)
	}
	return sum, abs
}

// The dense scan's products agree with float64 sums within float32
// rounding (a few ulps of the sum of the products' magnitudes), for widths
// the kernel's unrolled loops and tails all meet and registries small and
// large enough to be split across goroutines.
func TestRowDotsMatchFloat64(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	for _, d := range []int{0, 1, 3, 4, 5, 7, 8, 15, 16, 17, 31, 100, 128, 228, 300} {
		for _, n := range []int{0, 1, 2, 9, 100} {
			rows, q := randomVector(r, n*d), randomVector(r, d)
			y := make([]float32, n)
			for i := range y {
				y[i] = float32(math.NaN()) // must be overwritten
			}
			rowDots(rows, q, y)
			for i := range y {
				want, abs := dot64(q, rows[i*d:(i+1)*d])
				if tol := 4 * float64(d+1) * 0x1p-24 * abs; math.Abs(float64(y[i])-want) > tol || math.IsNaN(float64(y[i])) {
					t.Fatalf("d=%d n=%d row %d: %v, float64 sum %v (tolerance %g)", d, n, i, y[i], want, tol)
				}
				if got := dot(q, rows[i*d:(i+1)*d]); got != y[i] {
					t.Fatalf("d=%d n=%d row %d: the scan gives %v, a single dot %v (a part-only hit's cosine must be the scan's)", d, n, i, y[i], got)
				}
			}
			// The same query anywhere in memory gives the same bits.
			for off := 1; off < 4; off++ {
				moved := make([]float32, d+off)[off:]
				copy(moved, q)
				y2 := make([]float32, n)
				rowDots(rows, moved, y2)
				for i := range y {
					if y2[i] != y[i] {
						t.Fatalf("d=%d n=%d row %d: the query %d floats off its alignment gives %v, aligned %v", d, n, i, off, y2[i], y[i])
					}
				}
			}
		}
	}
}

// The index's scan over a registry large enough to be cut into chunks (one
// per goroutine) gives each document its own row's product: no chunk
// shifted, none left out.
func TestDenseScanChunksCoverEveryRow(t *testing.T) {
	const d = 20
	n := parallelDots + 37
	r := rand.New(rand.NewSource(5))
	st := &state{docs: make([]Doc, n), dim: d, vecs: randomVector(r, n*d)}
	q := randomVector(r, d)
	out := make([]float64, n)
	st.dots(q, out)
	for i := range out {
		if want := float64(dot(q, st.vector(i))); out[i] != want {
			t.Fatalf("row %d of %d: scan %v, its own dot %v", i, n, out[i], want)
		}
	}
}

// On the fixture registry, the trained model's and the blend's dense
// rankings (the ten best of each fixture query) are the float64 ranking:
// the scan's float32 sums move no document except across a near-tie.
func TestDenseRankingEqualsFloat64Ranking(t *testing.T) {
	docs := loadFixture(t)
	qs := loadQueries(t)
	model, err := DefaultModel()
	if err != nil {
		t.Fatal(err)
	}
	blend, err := DefaultBlend()
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range []Embedder{model, blend} {
		ix, err := Open(context.Background(), e, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ix.Sync(context.Background(), docs); err != nil {
			t.Fatal(err)
		}
		st := ix.st
		for _, q := range qs {
			qv, err := e.Embed(context.Background(), []string{q.Query})
			if err != nil {
				t.Fatal(err)
			}
			got := make([]float64, len(st.docs))
			st.dots(qv[0], got)
			want := make([]float64, len(st.docs))
			for i := range want {
				want[i], _ = dot64(qv[0], st.vector(i))
				want[i] -= st.biasOf(i) // the hubness correction, as the scan applies it
			}
			gl, wl := topK(got, 10, nil, false, nil), topK(want, 10, nil, false, nil)
			for r := range wl {
				if gl[r].Doc == wl[r].Doc {
					continue
				}
				if gap := math.Abs(want[gl[r].Doc] - want[wl[r].Doc]); gap > 1e-6 {
					t.Fatalf("%s, %q rank %d: scan has %s, float64 %s (%.8f apart)", e.ID(), q.Query, r+1, st.docs[gl[r].Doc].ID, st.docs[wl[r].Doc].ID, gap)
				}
			}
		}
	}
}

// BenchmarkDenseScan is the dense half of a search over 10,000 tools of
// the trained model's width (128) and the blend's (228).
func BenchmarkDenseScan(b *testing.B) {
	for _, d := range []int{128, 228} {
		b.Run(fmt.Sprintf("dim=%d", d), func(b *testing.B) {
			const n = 10000
			r := rand.New(rand.NewSource(1))
			st := &state{docs: make([]Doc, n), dim: d, vecs: randomVector(r, n*d)}
			q := randomVector(r, d)
			out := make([]float64, n)
			for b.Loop() {
				st.dots(q, out)
			}
		})
	}
}

// TestModelSumAddsRowsInOrder checks the quantized row sum against adding
// one row at a time in the features' order: the query vector, and so the
// dense ranking, must not change with how the sum is grouped.
func TestModelSumAddsRowsInOrder(t *testing.T) {
	m, err := ReadDefaultModel()
	if err != nil {
		t.Fatal(err)
	}
	if m.q == nil {
		t.Skip("the default model is not quantized")
	}
	d := m.hdr.Dim
	for _, text := range []string{
		"send an email to my manager about the quarterly report",
		"weather",
		"convert 100 US dollars to euros and book a flight to Tokyo next Tuesday",
		"検索 ファイル 東京の天気",
	} {
		fs := m.textFeatures(text)
		got := make([]float32, d)
		m.sum(fs, got)
		want := make([]float32, d)
		for _, f := range fs {
			s := f.w * m.scale[f.row]
			for j := range want {
				want[j] += s * float32(m.q[int(f.row)*d+j])
			}
		}
		for j := range want {
			if got[j] != want[j] {
				t.Fatalf("%q: component %d is %v, one row at a time gives %v", text, j, got[j], want[j])
			}
		}
	}
}

// The sparse list (the group term added only when a group scored, the
// mask read inline) is the list and the scores of adding every document's
// group term one by one, with and without a filter, group term on and off.
func TestSparseListEqualsFullRanking(t *testing.T) {
	docs := loadFixture(t)
	ix := openIndex(t, "", docs)
	st := ix.st
	filters := []Filter{{}, {MinTrust: 1}, {Where: map[string]string{"server": "gmail-mcp"}}}
	queries := []string{"send an email", "create a payment link for a customer", "query the database table", "the", "weather forecast tomorrow in Paris"}
	for _, q := range loadQueries(t) {
		queries = append(queries, q.Query)
	}
	listed := 0
	for _, gw := range []float64{0, 0.3, 1.2} {
		o := ix.opts
		o.GroupWeight = gw
		for fi, f := range filters {
			mask := st.allowed(&f)
			for _, q := range queries {
				terms := Terms(q)
				got, gl := st.sparseList(terms, max(o.Depth, 10), mask, &o, make([]float64, len(st.docs)))
				want := make([]float64, len(st.docs))
				st.bm.Scores(terms, mask, want)
				if st.nGroups > 0 && gw > 0 {
					gs := make([]float64, st.nGroups)
					st.groupBM.Scores(terms, nil, gs)
					for i, g := range st.groupOf {
						if g >= 0 && (mask == nil || mask[i]) {
							want[i] += gw * gs[g]
						}
					}
				}
				wl := topK(want, max(o.Depth, 10), mask, true, nil)
				listed += len(wl)
				if fmt.Sprint(gl) != fmt.Sprint(wl) {
					t.Fatalf("group %v, filter %d, %q: list %v, ranking every document %v", gw, fi, q, gl, wl)
				}
				for i := range want {
					if got[i] != want[i] {
						t.Fatalf("group %v, filter %d, %q: document %d scores %v, want %v", gw, fi, q, i, got[i], want[i])
					}
				}
			}
		}
	}
	if listed == 0 {
		t.Fatal("no query listed any document: the comparison tested nothing")
	}
}

// topK is the first k of sorting every passing document by score, ties by
// document number, over scores full of ties and zeros, with and without a
// mask, a keep function and the positive condition, for k below, at and
// above the number of passing documents.
func TestTopKEqualsFullSort(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	for trial := 0; trial < 300; trial++ {
		n := 1 + rng.Intn(400)
		scores := make([]float64, n)
		levels := 1 + rng.Intn(12) // few distinct values: many ties
		for i := range scores {
			scores[i] = float64(rng.Intn(levels)-levels/3) / 4
		}
		var mask []bool
		if trial%2 == 1 {
			mask = make([]bool, n)
			for i := range mask {
				mask[i] = rng.Intn(4) != 0
			}
		}
		var keep func(int) bool
		if trial%3 == 2 {
			keep = func(d int) bool { return d%5 != 1 }
		}
		positive := trial%4 >= 2
		k := 1 + rng.Intn(n+5)
		var want []Scored
		for d, s := range scores {
			if (!positive || s > 0) && (mask == nil || mask[d]) && (keep == nil || keep(d)) {
				want = append(want, Scored{d, s})
			}
		}
		slices.SortStableFunc(want, func(a, b Scored) int { return cmp.Compare(b.Score, a.Score) })
		want = want[:min(k, len(want))]
		got := topK(scores, k, mask, positive, keep)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("trial %d (n %d, k %d, positive %v): topK %v, sorting all %v", trial, n, k, positive, got, want)
		}
	}
}
