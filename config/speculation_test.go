package config

import (
	"strings"
	"testing"
	"time"
)

// guard.speculation: off by default, every value read into the pipeline's
// config, every mistake named at its line.
func TestSpeculationSection(t *testing.T) {
	d, err := Parse("", nil)
	if err != nil || d.Guard.Speculation.Enabled {
		t.Fatalf("default: %+v %v", d.Guard.Speculation, err)
	}
	c, err := Parse("airs.yaml", []byte("guard:\n  speculation:\n    enabled: true\n    max_inflight: 3\n    per_minute: 12\n    ttl: 20s\n    idle_below: 2\n    top: 1\n"))
	if err != nil {
		t.Fatal(err)
	}
	s := c.Guard.Speculation
	if !s.Enabled || s.MaxInflight != 3 || s.PerMinute != 12 || s.TTL != 20*time.Second || s.IdleBelow != 2 || s.Top != 1 {
		t.Fatalf("parsed: %+v", s)
	}
	_, err = Parse("airs.yaml", []byte("guard:\n  speculation:\n    max_inflight: 0\n    per_minute: -1\n    ttl: 1h\n    idle_below: 0\n    top: 0\n"))
	for _, want := range []string{
		"airs.yaml:3: guard.speculation.max_inflight 0: must be at least 1",
		"airs.yaml:4: guard.speculation.per_minute -1: must be at least 1",
		"airs.yaml:5: guard.speculation.ttl 1h0m0s: want a duration above 0 and at most 5m0s",
		"airs.yaml:6: guard.speculation.idle_below 0: must be at least 1",
		"airs.yaml:7: guard.speculation.top 0: must be at least 1",
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("missing %q in:\n%v", want, err)
		}
	}
	if _, err := Parse("airs.yaml", []byte("guard:\n  speculation:\n    ttl: 0s\n")); err == nil {
		t.Error("ttl 0s accepted")
	}
}
