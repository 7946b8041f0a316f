package selector

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/airs-dev/airs/pipeline"
	"github.com/airs-dev/airs/pipeline/builtin"
)

func TestCatalogNarrowsBoundCapabilities(t *testing.T) {
	reg := pipeline.NewRegistry(pipeline.RegistryConfig{})
	pol := &pipeline.StaticPolicy{
		Channels: map[string][]string{"*": {"*"}},
		Capabilities: map[string][]pipeline.Capability{
			"alice": {{Kind: "ReadSpace", Arg: "documents"}},
			"root":  {{Kind: "ReadSpace", Arg: "*"}},
		},
	}
	dir := t.TempDir()
	if err := builtin.Register(reg, builtin.Options{Spaces: map[string]string{"documents": dir, "secrets": dir}, Policy: pol}); err != nil {
		t.Fatal(err)
	}
	cat := &RegistryCatalog{Registry: reg, Policy: pol}
	spaces := func(caller, tool string) []string {
		for _, e := range cat.Callable(caller) {
			if e.Tool.Name != tool {
				continue
			}
			var s struct {
				Properties struct {
					Space struct {
						Enum []string `json:"enum"`
					} `json:"space"`
				} `json:"properties"`
			}
			if err := json.Unmarshal(e.Tool.Parameters, &s); err != nil {
				t.Fatal(err)
			}
			return s.Properties.Space.Enum
		}
		return nil
	}
	if got := strings.Join(spaces("root", "list-files"), ","); got != "documents,secrets" {
		t.Errorf("root sees spaces %q", got)
	}
	if got := strings.Join(spaces("alice", "pdf-extract"), ","); got != "documents" {
		t.Errorf("alice sees spaces %q", got)
	}
	for _, e := range cat.Callable("bob") {
		if e.Tool.Name == "list-files" || e.Tool.Name == "read-file" || e.Tool.Name == "pdf-extract" {
			t.Errorf("bob, who may read no space, is offered %s", e.Tool.Name)
		}
	}
	if _, err := cat.Tool("bob", "read-file"); err == nil {
		t.Error("chains catalog lets bob call read-file")
	}
}
