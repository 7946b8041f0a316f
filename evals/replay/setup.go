package replay

import (
	"fmt"

	"github.com/airs-dev/airs/config"
	"github.com/airs-dev/airs/pipeline"
	"github.com/airs-dev/airs/pipeline/builtin"
)

// Registry builds the registry a configuration describes: the builtins,
// then the tools of its manifests (as `airs` does at start).
func Registry(c *config.Config) (*pipeline.Registry, error) {
	reg := pipeline.NewRegistry(pipeline.RegistryConfig{})
	opts := builtin.Options{Spaces: c.Spaces, Policy: c.Policy()}
	if err := builtin.Register(reg, opts); err != nil {
		return nil, err
	}
	handlers, err := builtin.Handlers(opts)
	if err != nil {
		return nil, err
	}
	for _, path := range c.Manifests {
		m, err := pipeline.LoadManifest(path)
		if err != nil {
			return nil, fmt.Errorf("loading manifest: %w", err)
		}
		if err := m.Register(reg, handlers.Resolve); err != nil {
			return nil, fmt.Errorf("registering manifest %s: %w", path, err)
		}
	}
	return reg, nil
}
