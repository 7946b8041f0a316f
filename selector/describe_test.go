package selector

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/airs-dev/airs/pipeline"
	"github.com/airs-dev/airs/pipeline/builtin"
)

// The whole schema shown to an agent (every description in it) names only
// the spaces the agent can reach; an agent holding all sees all.
func TestDescriptionsNameOnlyReachableSpaces(t *testing.T) {
	reg := pipeline.NewRegistry(pipeline.RegistryConfig{})
	pol := &pipeline.StaticPolicy{
		Channels: map[string][]string{"*": {"*"}},
		Capabilities: map[string][]pipeline.Capability{
			"alice": {{Kind: "ReadSpace", Arg: "documents"}},
			"root":  {{Kind: "ReadSpace", Arg: "*"}},
		},
	}
	dir := t.TempDir()
	spaces := map[string]string{"documents": dir, "hr-salaries": dir, "vault": dir}
	if err := builtin.Register(reg, builtin.Options{Spaces: spaces, Policy: pol}); err != nil {
		t.Fatal(err)
	}
	cat := &RegistryCatalog{Registry: reg, Policy: pol}
	seen := 0
	for _, e := range cat.Callable("alice") {
		if !strings.Contains(string(e.Tool.Parameters), `"space"`) {
			continue
		}
		seen++
		for _, hidden := range []string{"hr-salaries", "vault"} {
			if strings.Contains(string(e.Tool.Parameters), hidden) || strings.Contains(e.Tool.Description, hidden) {
				t.Errorf("%s shows alice the space %s: %s", e.Tool.Name, hidden, e.Tool.Parameters)
			}
		}
		var s struct {
			Properties map[string]struct {
				Description string `json:"description"`
			} `json:"properties"`
		}
		if err := json.Unmarshal(e.Tool.Parameters, &s); err != nil {
			t.Fatal(err)
		}
		if d := s.Properties["space"].Description; !strings.Contains(d, "one of documents.") || !strings.Contains(d, "shared") {
			t.Errorf("%s: space description %q", e.Tool.Name, d)
		}
	}
	if seen != 3 {
		t.Errorf("alice has %d space tools, want 3", seen)
	}
	for _, e := range cat.Callable("root") {
		if e.Tool.Name == "read-file" && !strings.Contains(string(e.Tool.Parameters), "one of documents, hr-salaries, vault.") {
			t.Errorf("root's read-file: %s", e.Tool.Parameters)
		}
	}
}

func TestScrubDescription(t *testing.T) {
	all := []any{"a", "b-1", "c"}
	keep := []any{"a", "c"}
	for in, want := range map[string]string{
		"Name of a space: one of a, b-1, c.":       "Name of a space: one of a, c.",
		"A space. Use b-1 for reports. Default a.": "A space. Default a. One of: a, c.",
		"A space such as b-12 or ab-1.":            "A space such as b-12 or ab-1.", // not the word b-1
		"Spaces: a | b-1 | c":                      "One of: a, c.",
		"Name of a configured space.":              "Name of a configured space.",
	} {
		if got := scrubDescription(in, all, keep); got != want {
			t.Errorf("%q: %q, want %q", in, got, want)
		}
	}
}
