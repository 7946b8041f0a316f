package config

import (
	"path/filepath"
	"time"
)

// Affinity configures tool affinity (guard.affinity): a caller that calls a
// tool Threshold times within Window has an affinity for it; its
// providers are pre-warmed at the next start (chat, serve) and kept warm
// while it lasts, and the Ollama model the selector uses is kept loaded
// (KeepAlive) meanwhile.
type Affinity struct {
	Enabled   bool          // default true
	Window    time.Duration // default DefaultAffinityWindow
	Threshold int           // default DefaultAffinityThreshold
	// KeepAlive is how long Ollama keeps the selector's model loaded after
	// each request or warm-up while affinities are active; the engine warms
	// again at half this period, so the model stays loaded as long as they
	// last.
	KeepAlive time.Duration // default DefaultAffinityKeepAlive
}

// Affinity defaults and bounds.
const (
	DefaultAffinityWindow    = 30 * time.Minute
	DefaultAffinityThreshold = 3
	DefaultAffinityKeepAlive = 5 * time.Minute

	minAffinityWindow    = time.Minute // 6 buckets of at least 10 s
	maxAffinityWindow    = 24 * time.Hour
	maxAffinityThreshold = 1_000_000
	minAffinityKeepAlive = 10 * time.Second // re-warmed every 5 s at most
	maxAffinityKeepAlive = 24 * time.Hour
)

// AffinityFile is where the engine keeps the affinities it learned:
// $AIRS_HOME/guard/affinity.json.
func (c *Config) AffinityFile() string { return filepath.Join(c.GuardDir(), "affinity.json") }

// fileAffinity is the file's guard.affinity: section.
type fileAffinity struct {
	Enabled   *bool    `yaml:"enabled"`
	Window    Duration `yaml:"window"`
	Threshold *int     `yaml:"threshold"`
	KeepAlive Duration `yaml:"keep_alive"`
}

// buildAffinity reads guard.affinity; buildGuard calls it after it has set
// c.Guard.
func (p *parser) buildAffinity(fa *fileAffinity, c *Config) {
	a := Affinity{Enabled: true, Window: DefaultAffinityWindow, Threshold: DefaultAffinityThreshold, KeepAlive: DefaultAffinityKeepAlive}
	if fa.Enabled != nil {
		a.Enabled = *fa.Enabled
	}
	if p.has("guard", "affinity", "window") {
		if d := time.Duration(fa.Window); d < minAffinityWindow || d > maxAffinityWindow {
			p.add(p.line("guard", "affinity", "window"), "guard.affinity.window %v: want a duration from %v to %v, e.g. 30m (remove it for the default, 30m)", d, minAffinityWindow, maxAffinityWindow)
		} else {
			a.Window = d
		}
	}
	if n := fa.Threshold; n != nil {
		if *n < 1 || *n > maxAffinityThreshold {
			p.add(p.line("guard", "affinity", "threshold"), "guard.affinity.threshold %d: want the number of calls within the window that makes an affinity, from 1 to %d (remove it for the default, 3)", *n, maxAffinityThreshold)
		} else {
			a.Threshold = *n
		}
	}
	if p.has("guard", "affinity", "keep_alive") {
		if d := time.Duration(fa.KeepAlive); d < minAffinityKeepAlive || d > maxAffinityKeepAlive {
			p.add(p.line("guard", "affinity", "keep_alive"), "guard.affinity.keep_alive %v: want a duration from %v to %v, e.g. 5m (remove it for the default, 5m)", d, minAffinityKeepAlive, maxAffinityKeepAlive)
		} else {
			a.KeepAlive = d
		}
	}
	c.Guard.Affinity = a
}
