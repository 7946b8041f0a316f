package embeddings

import (
	"math/rand"
	"testing"
)

// dot32Reference is the dot product summed in one pass over eight lanes
// (lane j: positions j, j+8, …; the rest into lane 0), the order whose
// float32 result the dense scan must keep so that rankings do not move.
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
			a, b := make([]float32, n), make([]float32, n)
			for i := range a {
				a[i] = r.Float32()*2 - 1
				b[i] = r.Float32()*2 - 1
			}
			if got, want := dot32(a, b), dot32Reference(a, b); got != want {
				t.Fatalf("n=%d: dot32 %v, one-pass reference %v (bits differ: rankings could move)", n, got, want)
			}
		}
	}
}

// BenchmarkDenseScan is the dense half of a search over 10,000 tools of
// the trained model's width: 10,000 dot products of 128 float32s.
func BenchmarkDenseScan(b *testing.B) {
	const n, d = 10000, 128
	r := rand.New(rand.NewSource(1))
	v := make([]float32, n*d)
	for i := range v {
		v[i] = r.Float32() - 0.5
	}
	q := v[:d]
	out := make([]float64, n)
	for b.Loop() {
		for i := range out {
			out[i] = float64(dot32(q, v[i*d:(i+1)*d]))
		}
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
