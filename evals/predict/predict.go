// Package predict holds the BFCL predictors `airs eval bfcl` runs: "none",
// AIRS's no-LLM path (retrieval + ranking + ExtractArguments) choosing among
// each question's own candidate functions, and "ollama:MODEL", the
// selector's grammar-constrained generation through Ollama. Both go through
// the real selector.Selector with a per-question Catalog holding exactly the
// question's functions, so what is measured is what `airs chat` does.
package predict

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"

	"github.com/airs-dev/airs/embeddings"
	"github.com/airs-dev/airs/evals/bfcl"
	"github.com/airs-dev/airs/grammar"
	"github.com/airs-dev/airs/pipeline"
	"github.com/airs-dev/airs/selector"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Options configure the predictors.
type Options struct {
	// Pool is the text of every function the run may see (e.g. all of
	// BFCL's), used to fit the lexical embedder once, so that inverse
	// document frequencies come from a realistic registry rather than from
	// the two to five candidates of one question. Nil: the embedder is
	// fitted on each question's candidates.
	Pool []string
	// MinSimilarity is the no-LLM irrelevance threshold on the best
	// candidate's dense similarity (see DefaultMinSimilarity); negative
	// disables it (always call the best tool).
	MinSimilarity float64
	// Fit is the selector's "does this candidate fit" model
	// (selector.Config.Fit); nil: the product's, selector.DefaultFitModel.
	// Only TrainFit's threshold search sets it.
	Fit *selector.FitModel
	// Parallel enables several calls in the parallel categories (no-LLM:
	// one per value group found in the request).
	Parallel bool
	// Model generates for "ollama:MODEL" (cmd/airs adapts the Ollama client
	// to it: ollamamodel.New); required for that predictor.
	Model selector.Model
}

// caller is the agent every BFCL question is asked as: the per-question
// catalog lets it call every candidate.
const caller = "bfcl"

// Factory returns the bfcl.PredictorFactory for `airs eval bfcl --model`.
func Factory(o Options) bfcl.PredictorFactory {
	return func(model string) (bfcl.Predictor, error) { return New(model, o) }
}

// New builds the predictor for a --model value: "none" or "ollama:MODEL".
func New(model string, o Options) (bfcl.Predictor, error) {
	switch {
	case model == "" || model == "none":
		return NewNoLLM(context.Background(), o)
	case strings.HasPrefix(model, "ollama:"):
		name := strings.TrimPrefix(model, "ollama:")
		if name == "" {
			return nil, errors.New(`say ollama:MODEL, e.g. ollama:qwen3:0.6b`)
		}
		if o.Model == nil {
			return nil, errors.New("predict: no model client for ollama:MODEL (Options.Model is nil)")
		}
		return &Model{Name: name, Client: o.Model, Parallel: o.Parallel}, nil
	}
	return nil, fmt.Errorf(`unknown model %q: say none or ollama:MODEL`, model)
}

// toolsCatalog is a Catalog of fixed entries, callable by anyone.
type toolsCatalog []selector.Entry

func (c toolsCatalog) Callable(string) []selector.Entry { return c }

func entriesOf(tools []bfcl.ToolSchemaJSON) toolsCatalog {
	out := make(toolsCatalog, 0, len(tools))
	seen := map[string]bool{}
	for _, t := range tools {
		if seen[t.Name] {
			continue
		}
		seen[t.Name] = true
		out = append(out, selector.Entry{Provider: "bfcl", Tool: pipeline.Tool{
			Name: t.Name, Version: "1", Description: t.Description, Parameters: t.Parameters,
			Trust: pipeline.TrustLevel(2), Idempotent: true,
		}})
	}
	return out
}

// callsOf turns a selection into BFCL calls (none for "no tool").
func callsOf(sel *selector.Selection) ([]bfcl.Call, error) {
	if sel == nil || sel.Function == grammar.NoneTool || sel.Function == "" {
		return nil, nil
	}
	c, err := bfcl.DecodeCall(mustCall(sel.Function, sel.Arguments))
	if err != nil {
		return nil, err
	}
	return []bfcl.Call{c}, nil
}

func mustCall(name string, args json.RawMessage) []byte {
	if len(args) == 0 {
		args = json.RawMessage(`{}`)
	}
	n, _ := json.Marshal(name)
	return []byte(`{"name":` + string(n) + `,"arguments":` + string(args) + `}`)
}

// isParallel reports whether the category asks for several calls.
func isParallel(category string) bool { return strings.Contains(category, "parallel") }

// Model is the "ollama:MODEL" predictor: the selector's generate path
// (grammar-constrained through Ollama's format, temperature 0, fixed seed)
// over the question's candidates. It makes one call per question; the
// parallel categories, which want several, are scored as they come.
type Model struct {
	Name     string
	Client   selector.Model
	Parallel bool
}

// Predict implements bfcl.Predictor.
func (m *Model) Predict(ctx context.Context, q bfcl.Question, tools []bfcl.ToolSchemaJSON) ([]bfcl.Call, error) {
	cat := entriesOf(tools)
	ix, err := questionIndex(ctx, cat, nil)
	if err != nil {
		return nil, err
	}
	sel := selector.New(selector.Parts{
		Catalog:  cat,
		Index:    ix,
		Validate: Validator(),
		Model:    m.Client,
		Config:   selector.Config{Model: m.Name, TopK: len(cat)},
	})
	s, err := sel.Select(ctx, caller, q.Text())
	if err != nil {
		var inv *selector.InvalidCallError
		if errors.As(err, &inv) {
			// Scored as no call, like a model that answered nothing usable.
			return nil, nil
		}
		return nil, err
	}
	if s.Mode != selector.ModeModel {
		return nil, fmt.Errorf("model %s unreachable: %s", m.Name, s.Notice)
	}
	return callsOf(s)
}

// Validator validates arguments against the tool's schema with the same
// validator (and draft) the BFCL runner counts validity with. Compiled
// schemas are cached by their text.
func Validator() selector.Validator {
	var cache sync.Map // schema text → *jsonschema.Schema
	return func(t pipeline.Tool, args json.RawMessage) error {
		key := string(t.Parameters)
		v, ok := cache.Load(key)
		if !ok {
			s, err := bfcl.CompileSchema(t.Parameters)
			if err != nil {
				return err
			}
			v, _ = cache.LoadOrStore(key, s)
		}
		var m map[string]any
		dec := json.NewDecoder(strings.NewReader(string(args)))
		dec.UseNumber()
		if err := dec.Decode(&m); err != nil {
			return err
		}
		if m == nil {
			m = map[string]any{}
		}
		return bfcl.ValidateArgs(v.(*jsonschema.Schema), m)
	}
}

// questionIndex indexes the question's candidates in memory. With a fitted
// pool embedder, the index keeps its basis (no refit on so few documents).
func questionIndex(ctx context.Context, cat toolsCatalog, pool *embeddings.Lexical) (*embeddings.Index, error) {
	var emb embeddings.Embedder
	opts := embeddings.Options{}
	if pool != nil {
		emb = pool
		opts.RefitFraction = math.MaxFloat64
	} else {
		emb = embeddings.NewLexical(embeddings.LexicalOptions{})
	}
	ix, err := embeddings.Open(ctx, emb, opts)
	if err != nil {
		return nil, err
	}
	if _, err := ix.Sync(ctx, selector.Docs(cat)); err != nil {
		return nil, err
	}
	return ix, nil
}
