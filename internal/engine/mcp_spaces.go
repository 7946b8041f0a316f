package engine

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/airs-dev/airs/config"
	"github.com/airs-dev/airs/internal/settings"
	"github.com/airs-dev/airs/mcp/client"
	"github.com/airs-dev/airs/mcp/install"
	"github.com/airs-dev/airs/pipeline"
	"github.com/airs-dev/airs/pipeline/builtin"
)

// MCPSpaces are the spaces mcp-NAME of the configured MCP servers: each
// server's resources, read by list-files and read-file. The builtins are
// registered before the servers start (their schemas name every space),
// so a space is a slot Bind fills with the connected server; until then,
// or for a server that did not start, it is provider_unavailable.
type MCPSpaces struct {
	mu    sync.RWMutex
	conns map[string]*client.Conn
	names []string
	req   map[string][]pipeline.Capability
}

// NewMCPSpaces has a space for every server of airs.yaml and every
// approved one of AIRS_HOME (their names only: nothing starts here).
func NewMCPSpaces(c *config.Config) *MCPSpaces {
	s := &MCPSpaces{conns: map[string]*client.Conn{}, req: map[string][]pipeline.Capability{}}
	for n, cs := range c.MCP.Servers {
		s.names = append(s.names, n)
		s.req[n] = settings.Capabilities(cs.Requires)
	}
	if c.Home != "" {
		list, _ := install.Load(c.Home) // a bad list is StartMCP's problem to report
		for _, is := range list {
			if _, dup := s.req[is.Name]; dup || !is.Approved {
				continue
			}
			var req []pipeline.Capability
			for _, r := range is.Requires {
				if cp, err := pipeline.ParseCapability(r); err == nil {
					req = append(req, cp)
				}
				// One that does not parse: the server is not started
				// (InstalledMCP), so its space never binds.
			}
			s.names = append(s.names, is.Name)
			s.req[is.Name] = req
		}
	}
	slices.Sort(s.names)
	return s
}

// builtin is the spaces for builtin.Options.Remote: each needs what the
// server's tools need, MCP(NAME) and its requires.
func (s *MCPSpaces) builtin() map[string]builtin.RemoteSpace {
	if s == nil {
		return nil
	}
	out := map[string]builtin.RemoteSpace{}
	for _, n := range s.names {
		out[client.ResourceSpace(n)] = builtin.RemoteSpace{Remote: mcpSpace{s, n},
			Requires: append([]pipeline.Capability{client.Capability(n)}, s.req[n]...)}
	}
	return out
}

// Bind makes each connected server of m its space's.
func (s *MCPSpaces) Bind(m *MCP) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range m.Conns() {
		s.conns[c.Name()] = c
	}
}

type mcpSpace struct {
	s    *MCPSpaces
	name string
}

func (m mcpSpace) remote() (builtin.Remote, error) {
	m.s.mu.RLock()
	c := m.s.conns[m.name]
	m.s.mu.RUnlock()
	if c == nil {
		return nil, &pipeline.ProviderUnavailable{Provider: client.ProviderID(m.name), Tool: "space " + client.ResourceSpace(m.name),
			Reason: fmt.Sprintf("mcp server %s is not connected (see the warnings at start)", m.name)}
	}
	return c.Space(), nil
}

func (m mcpSpace) List(ctx context.Context) ([]builtin.RemoteEntry, error) {
	r, err := m.remote()
	if err != nil {
		return nil, err
	}
	return r.List(ctx)
}

func (m mcpSpace) Read(ctx context.Context, p string) (builtin.RemoteFile, error) {
	r, err := m.remote()
	if err != nil {
		return builtin.RemoteFile{}, err
	}
	return r.Read(ctx, p)
}
