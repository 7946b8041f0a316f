package config

import (
	"strings"
	"testing"
)

func TestLevel2Defaults(t *testing.T) {
	c, err := Parse("airs.yaml", []byte("spaces: {}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if !c.Level2.Enabled || c.Level2.Flows != nil || c.Level2.HTTPFetch.Enabled {
		t.Errorf("defaults: %+v", c.Level2)
	}
}

func TestLevel2Parsed(t *testing.T) {
	c, err := Parse("airs.yaml", []byte(`
agents:
  researcher:
    purpose: " read and summarize papers "
level2:
  unsure: hold
  purpose_threshold: 0.4
  trusted_spaces: [notes]
  flows:
    - name: no-mcp-out
      from: [mcp]
      to: [send]
      action: deny
  http_fetch:
    enabled: true
    timeout: 5s
`))
	if err != nil {
		t.Fatal(err)
	}
	l := c.Level2
	if l.Unsure != "hold" || l.PurposeThreshold != 0.4 || len(l.Flows) != 1 || l.Flows[0].Action != "deny" ||
		!l.HTTPFetch.Enabled || l.HTTPFetch.Timeout.Seconds() != 5 || l.TrustedSpaces[0] != "notes" {
		t.Errorf("level2 = %+v", l)
	}
	if p := c.Purposes()["researcher"]; p != "read and summarize papers" {
		t.Errorf("purpose = %q", p)
	}
}

func TestLevel2Problems(t *testing.T) {
	_, err := Parse("airs.yaml", []byte(`
level2:
  unsure: maybe
  purpose_threshold: 2
  flows:
    - from: [elsewhere]
      to: [fly]
      action: perhaps
`))
	if err == nil {
		t.Fatal("bad level2 accepted")
	}
	for _, want := range []string{"level2.unsure", "purpose_threshold", `from "elsewhere"`, `to "fly"`, `action "perhaps"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
}
