// Package settings turns airs.yaml's plain data (config) into the settings
// of the packages that run: the Tool Manager's pipeline.Config and access
// policy, capabilities, the ranking's weights. config stays a leaf; this is
// the one place that knows both sides.
package settings

import (
	"slices"

	"github.com/airs-dev/airs/config"
	"github.com/airs-dev/airs/pipeline"
	"github.com/airs-dev/airs/scoring"
)

// Policy is the access policy the Manager (and the builtin space tools)
// enforce: each agent's providers and capabilities.
func Policy(c *config.Config) *pipeline.StaticPolicy {
	p := &pipeline.StaticPolicy{
		Channels:     map[string][]string{},
		Capabilities: map[string][]pipeline.Capability{},
	}
	for id, a := range c.Agents {
		p.Channels[id] = slices.Clone(a.Providers)
		p.Capabilities[id] = Capabilities(a.Capabilities)
	}
	return p
}

// RateLimits returns the per-agent rate limits that differ from the default.
func RateLimits(c *config.Config) map[string]pipeline.RateLimit {
	m := map[string]pipeline.RateLimit{}
	for id, a := range c.Agents {
		if a.RateLimit != nil {
			m[id] = RateLimit(*a.RateLimit)
		}
	}
	return m
}

// ManagerConfig fills the parts of a pipeline.Config that come from
// configuration (policy, breaker, rate limits, payload limit, latency,
// speculation). The caller adds the Registry, the audit sink and the rest.
func ManagerConfig(c *config.Config) pipeline.Config {
	return pipeline.Config{
		Policy:         Policy(c),
		Breaker:        pipeline.BreakerConfig(c.Breaker),
		CallerTimeouts: pipeline.CallerTimeoutLimit(c.CallerTimeouts),
		RateLimit:      RateLimit(c.RateLimit),
		RateLimits:     RateLimits(c),
		MaxPayload:     c.MaxPayload,
		Speculation:    Speculation(c.Guard.Speculation),
		Latency:        pipeline.LatencyConfig{Off: c.Latency.Off, NoWouldTimeout: c.Latency.NoWouldTimeout},
	}
}

// RateLimit is the pipeline's form of a configured rate limit.
func RateLimit(r config.RateLimit) pipeline.RateLimit {
	return pipeline.RateLimit{PerSecond: r.PerSecond, Burst: r.Burst}
}

// Speculation is the pipeline's view of guard.speculation.
func Speculation(s config.Speculation) pipeline.SpeculationConfig {
	return pipeline.SpeculationConfig{Enabled: s.Enabled, MaxInflight: s.MaxInflight, PerMinute: s.PerMinute,
		TTL: s.TTL, IdleBelow: s.IdleBelow}
}

// Capability is the pipeline's form of a configured capability.
func Capability(c config.Capability) pipeline.Capability {
	return pipeline.Capability{Kind: c.Kind, Arg: c.Arg}
}

// Capabilities converts a list; nil stays nil.
func Capabilities(cs []config.Capability) []pipeline.Capability {
	if cs == nil {
		return nil
	}
	out := make([]pipeline.Capability, len(cs))
	for i, c := range cs {
		out[i] = Capability(c)
	}
	return out
}

// Weights is the ranking's weights of selection.weights, or nil when the
// file sets none (the ranking then keeps its defaults).
func Weights(c *config.Config) *scoring.SelectionWeights {
	if c.Selection.Weights == nil {
		return nil
	}
	w := scoring.SelectionWeights(*c.Selection.Weights)
	return &w
}
