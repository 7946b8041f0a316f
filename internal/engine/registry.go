package engine

import (
	"fmt"

	"github.com/airs-dev/airs/config"
	"github.com/airs-dev/airs/pipeline"
	"github.com/airs-dev/airs/pipeline/builtin"
)

// Registry builds the tool registry a configuration describes, as `airs`
// does at start: the builtin tools over the configured spaces (checking
// ReadSpace against policy), then the tools of the manifests, whose
// handlers may be bound to builtin ones ("builtin.read-file", …).
func Registry(c *config.Config, policy pipeline.AccessPolicy) (*pipeline.Registry, error) {
	return RegistryMCP(c, policy, nil)
}

// RegistryMCP is Registry with the MCP servers' resources as spaces
// (mcp_spaces.go): Bind them once StartMCP has connected the servers.
func RegistryMCP(c *config.Config, policy pipeline.AccessPolicy, spaces *MCPSpaces) (*pipeline.Registry, error) {
	reg := pipeline.NewRegistry(pipeline.RegistryConfig{})
	opts := builtin.Options{Spaces: c.Spaces, Policy: policy, Remote: spaces.builtin()}
	if h := c.Level2.HTTPFetch; h.Enabled {
		opts.HTTPFetch = &builtin.HTTPFetchOptions{MaxBytes: h.MaxBytes, Timeout: h.Timeout, AllowPrivate: h.AllowPrivate}
	}
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
