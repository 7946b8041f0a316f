package config

import (
	"errors"
	"strings"
	"testing"
)

// A YAML syntax error names the line that holds the broken construct,
// whether yaml.v3's scanner or its parser found it.
func TestYAMLErrorLine(t *testing.T) {
	for _, c := range []struct {
		name, text string
		line       int
	}{
		{"unclosed flow sequence", "home: /tmp/x\nspaces:\n  docs: /tmp\n  bad: [\nollama:\n  model: x\n", 4},
		{"key at a wrong indent", "home: /tmp/x\nspaces:\n  docs: /tmp\n   bad: /x\n", 4},
		{"mapping value in a scalar", "home: /tmp/x\nollama:\n  model: x\n   foo: 1\n", 4},
		{"tab indent", "home: /tmp/x\nspaces:\n\tdocs: /tmp\n", 3},
		{"unclosed flow mapping", "home: /tmp/x\nollama: {model: x\nspaces: {}\n", 2},
	} {
		_, err := Parse("airs.yaml", []byte(c.text))
		var ce *Error
		if !errors.As(err, &ce) || len(ce.Problems) == 0 {
			t.Errorf("%s: %v, want a config error", c.name, err)
			continue
		}
		if got := ce.Problems[0].Line; got != c.line {
			t.Errorf("%s: line %d, want %d (%s)\n%s", c.name, got, c.line, ce.Problems[0], strings.TrimSpace(c.text))
		}
	}
}
