package httpapi

import (
	"path/filepath"

	"github.com/airs-dev/airs/pipeline"
	"github.com/airs-dev/airs/server"
)

var _ server.UIBackend = recBackend{}

// SubscribeCalls follows the pipeline's delivered calls (the attention UI
// shows each agent its own).
func (b recBackend) SubscribeCalls(buffer int) *pipeline.Subscription {
	return b.e.SubscribeCalls(buffer)
}

// Breakers are the circuit breakers of the tool versions the caller may
// call: the others are not the caller's to see.
func (b recBackend) Breakers(caller string) []pipeline.ToolBreaker {
	type key struct{ provider, tool, version string }
	mine := map[key]bool{}
	for _, en := range b.e.CallableTools(caller) {
		mine[key{en.Provider, en.Tool.Name, en.Tool.Version}] = true
	}
	var out []pipeline.ToolBreaker
	for _, tb := range b.e.Breakers() {
		if mine[key{tb.Provider, tb.Tool, tb.Version}] {
			out = append(out, tb)
		}
	}
	return out
}

// Task is the caller's task text as the recommender holds it.
func (b recBackend) Task(caller string) string { return b.e.Recommender().Task(caller) }

// UIStateDir is where the attention page's sessions are kept across
// restarts: AIRS_HOME/ui ("" without a home: in memory only).
func (b recBackend) UIStateDir() string {
	c := b.e.Config()
	if c == nil || c.Home == "" {
		return ""
	}
	return filepath.Join(c.Home, "ui")
}

// CallLogPath is the audit log other processes (the CLI) append their
// calls to: the page shows an agent's calls from there too.
func (b recBackend) CallLogPath() string {
	c := b.e.Config()
	if c == nil || c.Home == "" {
		return ""
	}
	return c.AuditPath()
}
