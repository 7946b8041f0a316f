package engine

import (
	"github.com/airs-dev/airs/config"
	"github.com/airs-dev/airs/guard"
	"github.com/airs-dev/airs/pipeline"
)

// What the channels' adapters (internal/engine/httpapi for `airs serve`,
// internal/engine/mcpapi for `airs mcp` and /mcp) need of the engine
// beyond its turn, calls and read accessors: the Manager's admission and
// call stream, the guard, and the configuration the engine was built from.

// Config is the configuration the engine was built from (nil for an
// engine built without one).
func (e *Engine) Config() *config.Config { return e.cfg }

// Guard is the intent gate the Manager runs; nil when guard.enabled is off.
func (e *Engine) Guard() *guard.Guard { return e.guard }

// SelfApprove: guard.self_approve, a reviewer may approve its own held
// calls.
func (e *Engine) SelfApprove() bool { return e.cfg != nil && e.cfg.Guard.SelfApprove }

// Admit charges a costly request to the caller's rate limit (the
// Manager's per-agent bucket, the one calls take from).
func (e *Engine) Admit(caller string) error { return e.manager.Admit(caller) }

// CallerRefused says why the caller's calls are refused before any work
// (held back), nil when they are not (pipeline.Manager.CallerRefused).
func (e *Engine) CallerRefused(caller string) error { return e.manager.CallerRefused(caller) }

// SubscribeCalls follows the pipeline's delivered calls.
func (e *Engine) SubscribeCalls(buffer int) *pipeline.Subscription {
	return e.manager.Subscribe(buffer)
}

// Breakers are the circuit breakers of every tool version.
func (e *Engine) Breakers() []pipeline.ToolBreaker { return e.manager.Breakers() }

// WatchTools is the registry's change signal: a value each time the tools
// change, and the function that stops the watch.
func (e *Engine) WatchTools() (<-chan struct{}, func()) { return e.registry.Watch() }
