package config

import (
	"time"
)

// Speculation configures speculative execution (guard.speculation): after
// each delivered call the engine runs the calls it predicts next — of
// read-only, idempotent tools only — ahead of time, and a matching real
// call is answered from the result. Off by default: it spends CPU on
// guesses. Zero values take the pipeline's defaults (SpeculationConfig).
type Speculation struct {
	Enabled     bool
	MaxInflight int           // speculative calls at once [2]
	PerMinute   int           // per caller [30]
	TTL         time.Duration // a result's life [10s]
	IdleBelow   int           // run only while fewer real calls are in flight [4]
	// Top is how many predicted calls the engine speculates after each
	// call [2].
	Top int
}

// MaxSpeculationTTL bounds guard.speculation.ttl: a result older than this
// is too likely stale to be the answer (files change outside AIRS).
const MaxSpeculationTTL = 5 * time.Minute

type fileSpeculation struct {
	Enabled     *bool    `yaml:"enabled"`
	MaxInflight *int     `yaml:"max_inflight"`
	PerMinute   *int     `yaml:"per_minute"`
	TTL         Duration `yaml:"ttl"`
	IdleBelow   *int     `yaml:"idle_below"`
	Top         *int     `yaml:"top"`
}

// buildSpeculation reads guard.speculation (after buildGuard, which sets
// c.Guard).
func (p *parser) buildSpeculation(fc *fileConfig, c *Config) {
	fs := fc.Guard.Speculation
	s := Speculation{}
	if fs.Enabled != nil {
		s.Enabled = *fs.Enabled
	}
	counts := []struct {
		key, what string
		v         *int
		dst       *int
		def       int
	}{
		{"max_inflight", "speculative calls running at once", fs.MaxInflight, &s.MaxInflight, 2},
		{"per_minute", "speculative calls per caller per minute", fs.PerMinute, &s.PerMinute, 30},
		{"idle_below", "real calls in flight under which speculation runs", fs.IdleBelow, &s.IdleBelow, 4},
		{"top", "predicted calls speculated after each call", fs.Top, &s.Top, 2},
	}
	for _, n := range counts {
		if n.v == nil {
			continue
		}
		if *n.v < 1 {
			p.add(p.line("guard", "speculation", n.key), "guard.speculation.%s %d: must be at least 1 (%s; remove it for the default, %d)", n.key, *n.v, n.what, n.def)
			continue
		}
		*n.dst = *n.v
	}
	if d := time.Duration(fs.TTL); d < 0 || d > MaxSpeculationTTL || (p.has("guard", "speculation", "ttl") && d == 0) {
		p.add(p.line("guard", "speculation", "ttl"), "guard.speculation.ttl %v: want a duration above 0 and at most %v, e.g. 10s (remove it for the default, 10s)", d, MaxSpeculationTTL)
	} else {
		s.TTL = d
	}
	c.Guard.Speculation = s
}
