package injection

import (
	"github.com/airs-dev/airs/embeddings"
	"github.com/airs-dev/airs/pipeline"
	"github.com/airs-dev/airs/selector"
)

// Level2Options are the level-2 options the eval runs with: the defaults
// (flows, thresholds), the request read by package understand, the
// committed retrieval model for the purpose match, as `airs` wires them.
func Level2Options() pipeline.Level2Options {
	return pipeline.Level2Options{
		Purposes:   map[string]string{Agent: AgentPurpose},
		Asks:       selector.RequestAsks,
		Similarity: embeddings.ModelSimilarity(),
	}
}
