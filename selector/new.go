package selector

import (
	"encoding/json"

	"github.com/airs-dev/airs/embeddings"
	"github.com/airs-dev/airs/grammar/export"
)

// Parts are what New assembles a Selector from. Catalog and Index are
// required; the rest may be left zero.
type Parts struct {
	Catalog Catalog
	// Index is the tool index retrieval searches (IndexRetriever).
	Index *embeddings.Index
	// Ranker scores the retrieved tools; nil: a new StatsRanker.
	Ranker Ranker
	// Validate checks arguments in full; nil: only the grammar checks them.
	Validate Validator
	// Model generates the calls; nil (or Config.Model "") is no-LLM mode.
	Model  Model
	Config Config
}

// New is the one place a Selector is assembled, with its defaults: the
// model's output format from FormatFor (tool calls) and OllamaFormat (plans),
// and zero Config values taken as Config.WithDefaults says.
func New(p Parts) *Selector {
	s := &Selector{
		Catalog:      p.Catalog,
		Retriever:    &IndexRetriever{Index: p.Index},
		Ranker:       p.Ranker,
		Validate:     p.Validate,
		FormatFor:    FormatFor,
		FormatSchema: OllamaFormat,
		Config:       p.Config,
	}
	if s.Ranker == nil {
		s.Ranker = NewStatsRanker()
	}
	if p.Model != nil {
		s.Model = p.Model
	}
	return s
}

// OllamaFormat exports a JSON Schema (a plan's) for Ollama's `format`
// (grammar/export), reporting whether it had to loosen anything.
func OllamaFormat(schema json.RawMessage) (json.RawMessage, bool, error) {
	out, loose, err := export.OllamaFormat(schema)
	return out, len(loose) > 0, err
}

// WithDefaults is c with every zero value replaced by the default Select,
// Plan and Next use (the bracketed values in Config's fields): what a model
// is actually run with, e.g. for the session log.
func (c Config) WithDefaults() Config { return c.withDefaults() }
