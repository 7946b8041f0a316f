package engine

import (
	"path/filepath"

	"github.com/airs-dev/airs/pipeline"
	"github.com/airs-dev/airs/server"
)

var _ server.UIBackend = recBackend{}

// SubscribeCalls follows the pipeline's delivered calls (the attention UI
// shows each agent its own).
func (b recBackend) SubscribeCalls(buffer int) *pipeline.Subscription {
	return b.e.manager.Subscribe(buffer)
}

// Breakers are the circuit breakers of the tool versions the caller may
// call: the others are not the caller's to see.
func (b recBackend) Breakers(caller string) []pipeline.ToolBreaker {
	type key struct{ provider, tool, version string }
	mine := map[key]bool{}
	for _, e := range b.e.catalog.Callable(caller) {
		mine[key{e.Provider, e.Tool.Name, e.Tool.Version}] = true
	}
	var out []pipeline.ToolBreaker
	for _, tb := range b.e.manager.Breakers() {
		if mine[key{tb.Provider, tb.Tool, tb.Version}] {
			out = append(out, tb)
		}
	}
	return out
}

// Task is the caller's task text as the recommender holds it.
func (b recBackend) Task(caller string) string { return b.e.recommender.Task(caller) }

// UIStateDir is where the attention page's sessions are kept across
// restarts: AIRS_HOME/ui ("" without a home: in memory only).
func (b recBackend) UIStateDir() string {
	if b.e.cfg == nil || b.e.cfg.Home == "" {
		return ""
	}
	return filepath.Join(b.e.cfg.Home, "ui")
}

// CallLogPath is the audit log other processes (the CLI) append their
// calls to: the page shows an agent's calls from there too.
func (b recBackend) CallLogPath() string {
	if b.e.cfg == nil || b.e.cfg.Home == "" {
		return ""
	}
	return b.e.cfg.AuditPath()
}
