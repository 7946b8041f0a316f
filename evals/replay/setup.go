package replay

import (
	"github.com/airs-dev/airs/config"
	"github.com/airs-dev/airs/internal/engine"
	"github.com/airs-dev/airs/internal/settings"
	"github.com/airs-dev/airs/pipeline"
)

// Registry builds the registry a configuration describes: the builtins,
// then the tools of its manifests (as `airs` does at start).
func Registry(c *config.Config) (*pipeline.Registry, error) {
	return engine.Registry(c, settings.Policy(c))
}
