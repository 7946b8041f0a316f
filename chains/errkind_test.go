package chains

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// billionLaughs is the YAML alias bomb: nine levels of nine aliases, 9^9
// values once expanded, in under a kilobyte.
func billionLaughs() string {
	var b strings.Builder
	b.WriteString("a0: &a0 [lol]\n")
	for i := 1; i <= 9; i++ {
		fmt.Fprintf(&b, "a%d: &a%d [", i, i)
		for j := 0; j < 9; j++ {
			if j > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, "*a%d", i-1)
		}
		b.WriteString("]\n")
	}
	return "pipeline: bomb\nanchors:\n" + indent(b.String()) + "steps:\n  - id: s\n    tool: t\n    params: {x: *a9}\n"
}

func indent(s string) string {
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	for i := range lines {
		lines[i] = "  " + lines[i]
	}
	return strings.Join(lines, "\n") + "\n"
}

// Parse's errors say whether the text was unreadable (ErrSyntax) or a
// readable but wrong pipeline (ErrInvalid only), so a server can answer
// 400 or 422 instead of 500.
func TestParseErrorKinds(t *testing.T) {
	cases := []struct {
		name, yaml string
		syntax     bool
		msg        string
	}{
		{"malformed", "pipeline: x\nsteps: [\n", true, ""},
		{"tab indentation", "pipeline: x\nsteps:\n\t- id: a\n", true, ""},
		{"two documents", "pipeline: x\nsteps: []\n---\npipeline: y\n", true, "more than one YAML document"},
		{"alias bomb", billionLaughs(), true, "document too large"},
		{"duplicate key", "pipeline: x\npipeline: y\nsteps:\n  - {id: a, tool: t}\n", true, "duplicate key"},
		{"duplicate param", "steps:\n  - id: a\n    tool: t\n    params: {n: 1, n: 2}\n", true, "duplicate key"},
		{"cycle", "steps:\n  - {id: a, tool: t, needs: [b]}\n  - {id: b, tool: t, needs: [a]}\n", false, "cycle"},
		{"unknown key", "steps:\n  - {id: a, tool: t}\nextra: 1\n", false, "unknown key"},
		{"no steps", "pipeline: x\n", false, "no steps"},
	}
	for _, c := range cases {
		_, err := Parse("p.yaml", []byte(c.yaml))
		if err == nil {
			t.Errorf("%s: parsed", c.name)
			continue
		}
		if !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v is not ErrInvalid", c.name, err)
		}
		if errors.Is(err, ErrSyntax) != c.syntax {
			t.Errorf("%s: ErrSyntax = %v, want %v (%v)", c.name, !c.syntax, c.syntax, err)
		}
		if !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: %v, want %q", c.name, err, c.msg)
		}
	}
}
