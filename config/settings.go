package config

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// The plain-data settings airs.yaml states for the Tool Manager and the
// ranking. config only reads and checks them; the program's assembly
// (internal/settings) turns them into pipeline's and scoring's types, so
// that config depends on nothing of AIRS.

// Capability is a capability as airs.yaml writes it, Kind(arg): held by an
// agent or required by a provider's tools.
type Capability struct {
	Kind, Arg string
}

func (c Capability) String() string { return c.Kind + "(" + c.Arg + ")" }

// ParseCapability reads "Kind(arg)" or "Kind", the syntax of airs.yaml's
// capabilities and requires lists.
func ParseCapability(s string) (Capability, error) {
	s = strings.TrimSpace(s)
	open := strings.IndexByte(s, '(')
	if open < 0 {
		if s == "" || strings.ContainsAny(s, ")") {
			return Capability{}, fmt.Errorf("capability %q: want Kind(arg)", s)
		}
		return Capability{Kind: s}, nil
	}
	if !strings.HasSuffix(s, ")") || open == 0 {
		return Capability{}, fmt.Errorf("capability %q: want Kind(arg)", s)
	}
	return Capability{Kind: strings.TrimSpace(s[:open]), Arg: strings.TrimSpace(s[open+1 : len(s)-1])}, nil
}

// RateLimit is a token bucket: PerSecond calls refill it (0: unlimited),
// Burst is its size.
type RateLimit struct {
	PerSecond float64
	Burst     int
}

// Breaker is the per-tool circuit breaker (breaker:): Failures within
// Window open it for Cooldown; 0 takes the pipeline's default, Failures < 0
// turns breakers off.
type Breaker struct {
	Failures int
	Window   time.Duration
	Cooldown time.Duration
}

// CallerTimeouts limits a caller whose own short deadlines keep expiring
// (caller_timeouts:): Timeouts within Window refuse its calls for Cooldown.
type CallerTimeouts struct {
	Timeouts int
	Window   time.Duration
	Cooldown time.Duration
}

// Latency is latency prediction (latency:). The zero value is on, with the
// WouldTimeout advisory.
type Latency struct {
	// Off: latency.enabled: false.
	Off bool
	// NoWouldTimeout: latency.would_timeout: false.
	NoWouldTimeout bool
}

// Weights are the ranking's components (selection.weights), the same five
// as scoring.SelectionWeights and with its JSON names (the file `airs eval
// tune --write` writes).
type Weights struct {
	Semantic   float64 `json:"semantic"`
	Trust      float64 `json:"trust"`
	Success    float64 `json:"success"`
	Latency    float64 `json:"latency"`
	Preference float64 `json:"preference"`
}

// Validate rejects negative, non-finite or all-zero weights, the ranking's
// own rule.
func (w Weights) Validate() error {
	sum := 0.0
	for _, v := range []float64{w.Semantic, w.Trust, w.Success, w.Latency, w.Preference} {
		if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("scoring: weight %v is not a non-negative number", v)
		}
		sum += v
	}
	if sum == 0 {
		return fmt.Errorf("scoring: all selection weights are zero")
	}
	return nil
}

// DefaultClaimRetention is how long a call claim is kept when claims.retention
// is not set: the pipeline's own default (internal/settings' test holds them
// equal).
const DefaultClaimRetention = 7 * 24 * time.Hour
