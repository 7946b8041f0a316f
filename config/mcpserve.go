package config

// MCPServe configures AIRS as an MCP server (`airs mcp`, /mcp of `airs
// serve`): mcp.serve in airs.yaml.
type MCPServe struct {
	// ToolSearch serves a search_tools tool and a tool list that starts with
	// it alone: a client whose agent may call a thousand tools sends its
	// model only the ones found so far (mcp.serve.tool_search).
	ToolSearch bool
	// SearchLimit is how many tools search_tools returns when the client
	// asks for no number (mcp.serve.search_limit).
	SearchLimit int
}

// Bounds of mcp.serve.search_limit.
const (
	DefaultMCPSearchLimit = 5
	// MaxMCPSearchLimit bounds one search's answer: past a few dozen tools a
	// client is better served by the whole list (tool_search: false).
	MaxMCPSearchLimit = 50
)

type fileMCPServe struct {
	ToolSearch  *bool `yaml:"tool_search"`
	SearchLimit *int  `yaml:"search_limit"`
}

// mcpServe is mcp.serve with its defaults; a bad value is a problem at its
// line.
func (p *parser) mcpServe(f *fileMCPServe) MCPServe {
	s := MCPServe{SearchLimit: DefaultMCPSearchLimit}
	if f == nil {
		return s
	}
	if f.ToolSearch != nil {
		s.ToolSearch = *f.ToolSearch
	}
	if f.SearchLimit != nil {
		if n := *f.SearchLimit; n < 1 || n > MaxMCPSearchLimit {
			p.add(p.line("mcp", "serve", "search_limit"), "mcp.serve.search_limit: %d: want 1 to %d tools per search", n, MaxMCPSearchLimit)
		} else {
			s.SearchLimit = n
		}
	}
	return s
}
