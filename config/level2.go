package config

import (
	"slices"
	"strings"
	"time"
)

// Level2 configures level 2 beyond the person's gate (airs.yaml
// `level2:`): where each argument of a call came from, the flow policies,
// and the intent verifier (docs/level2.md). On by default with the safe
// flows; plain data, turned into the pipeline's options by the program.
type Level2 struct {
	// Enabled: level2.enabled [true].
	Enabled bool
	// Flows are level2.flows; nil: the pipeline's defaults
	// (no-exfiltration, untrusted-target, untrusted-read-elsewhere).
	Flows []Flow
	// TrustedSpaces and TrustedMCP are spaces and MCP servers whose
	// content the user vouches for (rules about untrusted values do not
	// fire on it; text from a space still may not leave by network).
	TrustedSpaces, TrustedMCP []string
	// SendTools are tools that send data out beyond http-fetch and those
	// requiring Network(...).
	SendTools []string
	// Unsure is what an "unsure" verdict does: "allow" [default] or "hold".
	Unsure string
	// PurposeThreshold is the retrieval model's similarity under which an
	// agent's purpose does not cover a tool; 0: the pipeline's default.
	PurposeThreshold float64
	// HTTPFetch turns on the http-fetch tool (level2.http_fetch).
	HTTPFetch HTTPFetch
	// Verifier is "model" to have the model judge write, send and
	// destructive calls (a model call each), "" for the verifier without a
	// model (level2.verifier).
	Verifier string
}

// Flow is one flow policy (level2.flows[i]).
type Flow struct {
	Name      string
	From      []string // label kinds: space, mcp, network, tool, user, untrusted
	To        []string // tool classes: read, write, send, destructive
	Args      []string // roles (target, body) or argument names
	Action    string   // hold [default], deny, allow
	SameSpace bool     // exempt a value from the space the call works in
}

// HTTPFetch bounds the http-fetch tool; zero values take its defaults.
type HTTPFetch struct {
	Enabled      bool
	MaxBytes     int64
	Timeout      time.Duration
	AllowPrivate bool
}

type fileLevel2 struct {
	Enabled *bool `yaml:"enabled"`
	Flows   []struct {
		Name      string   `yaml:"name"`
		From      []string `yaml:"from"`
		To        []string `yaml:"to"`
		Args      []string `yaml:"args"`
		Action    string   `yaml:"action"`
		SameSpace bool     `yaml:"same_space"`
	} `yaml:"flows"`
	TrustedSpaces    []string `yaml:"trusted_spaces"`
	TrustedMCP       []string `yaml:"trusted_mcp"`
	SendTools        []string `yaml:"send_tools"`
	Unsure           string   `yaml:"unsure"`
	PurposeThreshold *float64 `yaml:"purpose_threshold"`
	Verifier         string   `yaml:"verifier"`
	HTTPFetch        struct {
		Enabled      bool     `yaml:"enabled"`
		MaxBytes     int64    `yaml:"max_bytes"`
		Timeout      Duration `yaml:"timeout"`
		AllowPrivate bool     `yaml:"allow_private"`
	} `yaml:"http_fetch"`
}

var (
	flowKinds   = []string{"space", "mcp", "network", "tool", "user", "untrusted"}
	flowClasses = []string{"read", "write", "send", "destructive"}
)

// buildLevel2 reads level2.
func (p *parser) buildLevel2(fc *fileConfig, c *Config) {
	f := fc.Level2
	l := Level2{Enabled: true, TrustedSpaces: f.TrustedSpaces, TrustedMCP: f.TrustedMCP, SendTools: f.SendTools}
	if f.Enabled != nil {
		l.Enabled = *f.Enabled
	}
	for i, fl := range f.Flows {
		at := func(key string) int { return p.line("level2", "flows", itoa(i), key) }
		name := fl.Name
		if name == "" {
			name = "#" + itoa(i+1)
		}
		ok := true
		if len(fl.From) == 0 {
			p.add(at("from"), "level2.flows %s: from is empty: name the origins it applies to (%s)", name, strings.Join(flowKinds, ", "))
			ok = false
		}
		for _, k := range fl.From {
			if !slices.Contains(flowKinds, k) {
				p.add(at("from"), "level2.flows %s: from %q: want one of %s", name, k, strings.Join(flowKinds, ", "))
				ok = false
			}
		}
		for _, k := range fl.To {
			if !slices.Contains(flowClasses, k) {
				p.add(at("to"), "level2.flows %s: to %q: want one of %s", name, k, strings.Join(flowClasses, ", "))
				ok = false
			}
		}
		switch fl.Action {
		case "", "hold", "deny", "allow":
		default:
			p.add(at("action"), "level2.flows %s: action %q: want hold (ask a person), deny or allow", name, fl.Action)
			ok = false
		}
		if ok {
			l.Flows = append(l.Flows, Flow{Name: fl.Name, From: fl.From, To: fl.To, Args: fl.Args, Action: fl.Action, SameSpace: fl.SameSpace})
		}
	}
	switch f.Unsure {
	case "", "allow", "hold":
		l.Unsure = f.Unsure
	default:
		p.add(p.line("level2", "unsure"), "level2.unsure %q: want allow (log it) or hold (ask a person)", f.Unsure)
	}
	if t := f.PurposeThreshold; t != nil {
		if *t <= 0 || *t >= 1 {
			p.add(p.line("level2", "purpose_threshold"), "level2.purpose_threshold %v: want a similarity between 0 and 1 (remove it for the default)", *t)
		} else {
			l.PurposeThreshold = *t
		}
	}
	switch f.Verifier {
	case "", "none", "model":
		if f.Verifier == "model" {
			l.Verifier = "model"
		}
	default:
		p.add(p.line("level2", "verifier"), "level2.verifier %q: want model (the model judges write, send and destructive calls) or none", f.Verifier)
	}
	h := f.HTTPFetch
	if h.MaxBytes < 0 || time.Duration(h.Timeout) < 0 {
		p.add(p.line("level2", "http_fetch"), "level2.http_fetch: max_bytes and timeout must not be negative (remove them for the defaults, 1 MiB and 15s)")
	}
	l.HTTPFetch = HTTPFetch{Enabled: h.Enabled, MaxBytes: max(h.MaxBytes, 0), Timeout: max(time.Duration(h.Timeout), 0), AllowPrivate: h.AllowPrivate}
	c.Level2 = l
}

// Purposes are agents.NAME.purpose, for the intent verifier.
func (c *Config) Purposes() map[string]string {
	m := map[string]string{}
	for id, a := range c.Agents {
		if a.Purpose != "" {
			m[id] = a.Purpose
		}
	}
	return m
}

func itoa(i int) string {
	const digits = "0123456789"
	if i < 10 {
		return digits[i : i+1]
	}
	return itoa(i/10) + digits[i%10:i%10+1]
}
