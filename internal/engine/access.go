package engine

import (
	"context"

	"github.com/airs-dev/airs/embeddings"
	"github.com/airs-dev/airs/pipeline"
	"github.com/airs-dev/airs/recommender"
	"github.com/airs-dev/airs/selector"
	"github.com/airs-dev/airs/session"
)

// The engine's read accessors: what a caller outside the package needs of
// its parts, each named for what it gives (the parts themselves stay the
// engine's own).

// SessionLog is the recorder turns are written to; nil when recording is off.
func (e *Engine) SessionLog() *session.Recorder { return e.recorder }

// Tools are every registered tool with its provider.
func (e *Engine) Tools() []pipeline.Registered { return e.registry.List() }

// CallableTool is the tool name as caller may call it, or why not.
func (e *Engine) CallableTool(caller, name string) (pipeline.Tool, error) {
	return e.toolCatalog().Tool(caller, name)
}

// Hints are the selector's argument-extraction hints (the spaces' names).
func (e *Engine) Hints() selector.Hints { return e.sel.Config.Hints }

// Lookup is the tool as the caller may call it (nil when it may not) and
// whether running it needs the user's confirmation (a provider of that
// name is destructive).
func (e *Engine) Lookup(caller, name, provider string) (*pipeline.Tool, bool) {
	return e.lookup(caller, name, provider)
}

// ModelName names the model that chooses calls and writes answers; "" in
// no-LLM mode.
func (e *Engine) ModelName() string { return e.modelName }

// ModelNotice says why there is no model (no-LLM mode); "" when there is one.
func (e *Engine) ModelNotice() string { return e.modelNotice }

// AnswerModel writes turns' answers and answers MCP sampling; nil in
// no-LLM mode.
func (e *Engine) AnswerModel() selector.Model { return e.model }

// SelectionModel is the model the selector's grammar-constrained requests
// go to (nil: calls are chosen without a model), named SelectionModelName.
func (e *Engine) SelectionModel() selector.Model { return e.sel.Model }

// SelectionModelName names SelectionModel ("" without one).
func (e *Engine) SelectionModelName() string { return e.sel.Config.Model }

// Selector is the selector the engine decides with; its Config tunes the
// selections and plans that follow.
func (e *Engine) Selector() *selector.Selector { return e.sel }

// Ranker is the ranker whose statistics (every call's outcome) and
// preferences (the user's feedback) order the candidates.
func (e *Engine) Ranker() *selector.StatsRanker { return e.ranker }

// Recommender suggests tools from the callers' context; nil when it is off.
func (e *Engine) Recommender() *recommender.Recommender { return e.recommender }

// CallableTools are the tools caller may call: the selector's context.
func (e *Engine) CallableTools(caller string) []selector.Entry { return e.catalog.Callable(caller) }

// ToolProviders lists who offers the tool name (highest version each).
func (e *Engine) ToolProviders(name string) []pipeline.Registered { return e.registry.Providers(name) }

// ToolIndex is the index the selector retrieves tools from (its learned
// adapter included).
func (e *Engine) ToolIndex() *embeddings.Index { return e.index }

// Cancel stops the running call id; false when no call has that id.
func (e *Engine) Cancel(id string) bool { return e.manager.Cancel(id) }

// Candidates is the selector's decision for text as it stands, without
// Select's check that the files it names exist: what a request that
// stopped before any call would have chosen, to show why.
func (e *Engine) Candidates(ctx context.Context, caller, text string) (*selector.Selection, error) {
	return e.sel.Select(ctx, caller, text)
}

// Catalog is the registry as each caller may see it (the access policy
// applied): the selector's context and the planner's tools.
func (e *Engine) Catalog() *selector.RegistryCatalog { return e.catalog }
