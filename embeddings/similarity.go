package embeddings

import (
	"math"
	"sync"
)

// ModelSimilarity returns the cosine of the committed tool model's vectors
// of two texts, the model read on first use. When the model cannot be read
// it answers 1 for every pair: no mismatch is claimed on a signal that is
// not there.
func ModelSimilarity() func(a, b string) float64 {
	var once sync.Once
	var m *ToolModel
	return func(a, b string) float64 {
		once.Do(func() { m, _ = DefaultModel() })
		if m == nil {
			return 1
		}
		return cosine(m.Encode(a), m.Encode(b))
	}
}

func cosine(x, y []float32) float64 {
	var dot, nx, ny float64
	for i := range min(len(x), len(y)) {
		dot += float64(x[i]) * float64(y[i])
		nx += float64(x[i]) * float64(x[i])
		ny += float64(y[i]) * float64(y[i])
	}
	if nx == 0 || ny == 0 {
		return 0
	}
	return dot / math.Sqrt(nx*ny)
}
