package engine

import (
	"github.com/airs-dev/airs/pipeline"
	"github.com/airs-dev/airs/selector"
	"github.com/airs-dev/airs/session"
)

// Accessors for the packages that drive an Engine through an interface of
// their own (evals/replay's Service) instead of *Engine's fields.

// SessionLog is the recorder turns are written to; nil when recording is off.
func (e *Engine) SessionLog() *session.Recorder { return e.Recorder }

// Tools are every registered tool with its provider.
func (e *Engine) Tools() []pipeline.Registered { return e.Registry.List() }

// CallableTool is the tool name as caller may call it, or why not.
func (e *Engine) CallableTool(caller, name string) (pipeline.Tool, error) {
	return e.toolCatalog().Tool(caller, name)
}

// Hints are the selector's argument-extraction hints (the spaces' names).
func (e *Engine) Hints() selector.Hints { return e.Selector.Config.Hints }

// Lookup is the tool as the caller may call it (nil when it may not) and
// whether running it needs the user's confirmation (a provider of that
// name is destructive).
func (e *Engine) Lookup(caller, name, provider string) (*pipeline.Tool, bool) {
	return e.lookup(caller, name, provider)
}
