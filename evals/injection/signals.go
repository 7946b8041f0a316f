package injection

import (
	"math"
	"sync"

	"github.com/airs-dev/airs/embeddings"
	"github.com/airs-dev/airs/pipeline"
	"github.com/airs-dev/airs/understand"
)

// Level2Options are the level-2 options the eval runs with: the defaults
// (flows, thresholds), the request read by package understand, the
// committed retrieval model for the purpose match, as `airs` wires them.
func Level2Options() pipeline.Level2Options {
	return pipeline.Level2Options{
		Purposes:   map[string]string{Agent: AgentPurpose},
		Asks:       Asks,
		Similarity: Similarity(),
	}
}

// Asks reads a request's actions with package understand.
func Asks(text string) pipeline.Asked {
	in := understand.Parse(text, understand.Env{})
	a := pipeline.Asked{Destructive: in.ExplicitDestructive}
	for _, x := range in.Actions {
		a.Actions = append(a.Actions, string(x))
	}
	return a
}

// Similarity is the cosine of the committed retrieval model's vectors.
func Similarity() func(a, b string) float64 {
	var once sync.Once
	var m *embeddings.ToolModel
	return func(a, b string) float64 {
		once.Do(func() { m, _ = embeddings.DefaultModel() })
		if m == nil {
			return 1
		}
		x, y := m.Encode(a), m.Encode(b)
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
}
