package pipeline

import (
	"cmp"
	"slices"
	"time"
)

// ToolBreaker is one registered tool version's circuit breaker as a
// read-only view (the attention UI shows it).
type ToolBreaker struct {
	Provider string `json:"provider"`
	Tool     string `json:"tool"`
	Version  string `json:"version"`
	// State is "closed", "degraded" (open: calls refused) or "half_open".
	State string `json:"state"`
	// OpenUntil is when an open breaker lets a trial call through (zero
	// unless degraded).
	OpenUntil time.Time `json:"open_until,omitzero"`
	// RecentFailures counts the provider failures the breaker holds now
	// (within its window, at most its threshold).
	RecentFailures int `json:"recent_failures"`
}

// Breakers is a snapshot of every registered tool's breaker, sorted by
// tool, provider, version. A tool never called has no breaker yet and
// shows "closed"; with breakers disabled every tool shows "closed". It
// changes nothing (an open breaker past its cooldown still shows
// "degraded" until a call asks).
func (m *Manager) Breakers() []ToolBreaker {
	now := m.now()
	var out []ToolBreaker
	for _, e := range m.reg.entries() {
		tb := ToolBreaker{Provider: e.prov.id, Tool: e.tool.Name, Version: e.tool.Version, State: BreakerClosed.String()}
		if b := e.brk.Load(); b != nil {
			b.mu.Lock()
			st := BreakerState(b.state.Load())
			tb.State = st.String()
			if st == BreakerOpen {
				tb.OpenUntil = b.openUntil
			}
			for _, t := range b.fails {
				if now.Sub(t) <= b.cfg.Window {
					tb.RecentFailures++
				}
			}
			b.mu.Unlock()
		}
		out = append(out, tb)
	}
	slices.SortFunc(out, func(a, b ToolBreaker) int {
		return cmp.Or(cmp.Compare(a.Tool, b.Tool), cmp.Compare(a.Provider, b.Provider), cmp.Compare(a.Version, b.Version))
	})
	return out
}
