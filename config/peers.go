package config

import (
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Peer is another AIRS instance used as a provider (peers: in airs.yaml):
// AIRS connects to its /mcp endpoint (streamable HTTP, bearer token) as to
// any outside MCP server, and offers its tools as peer.NAME.tool under
// provider "mcp:peer.NAME".
//
// Delegation is explicit: every tool of the peer requires MCP(peer.NAME),
// which no agent holds unless airs.yaml grants it — by listing the agent
// in the peer's grant:, or with MCP(peer.NAME) in the agent's
// capabilities. The peer itself still applies its own grants to the token
// AIRS presents, so a call needs both sides' consent.
type Peer struct {
	Name string
	// URL is the peer's /mcp endpoint, e.g. http://lab.example:7777/mcp.
	URL string
	// TokenEnv is the environment variable holding the bearer token AIRS
	// presents to the peer (token: ${VAR} in the file); it is read when
	// AIRS connects, so the secret is never written in airs.yaml.
	TokenEnv string
	// Grant are the local agents given MCP(peer.NAME).
	Grant []string
	// Requires are what a caller must hold beside MCP(peer.NAME).
	Requires []Capability
	// Timeout bounds one call (0: the pipeline's Fast class default, 5 s).
	Timeout time.Duration
}

// PeerNamespace is the namespace of peer name's tools and its provider
// name: peer.NAME (so its tools are peer.NAME.tool, its provider
// mcp:peer.NAME, its capability MCP(peer.NAME)). No MCP server can take it:
// their names allow no dot.
func PeerNamespace(name string) string { return "peer." + name }

// PeerCapability is what a caller must hold to use peer name's tools.
func PeerCapability(name string) Capability {
	return Capability{Kind: MCPCapabilityKind, Arg: PeerNamespace(name)}
}

type filePeer struct {
	Name     string   `yaml:"name"`
	URL      string   `yaml:"url"`
	Token    string   `yaml:"token"`
	Grant    []string `yaml:"grant"`
	Requires []string `yaml:"requires"`
	Timeout  Duration `yaml:"timeout"`
}

// tokenRefRE is a token written as a reference to the environment:
// ${VAR} or $VAR.
var tokenRefRE = regexp.MustCompile(`^\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))$`)

// buildPeers reads the peers section; it runs after the agents (a grant
// adds to them) and the MCP servers (a server whose tools would be named
// peer.* is refused).
func (p *parser) buildPeers(fc *fileConfig, c *Config) {
	seen := map[string]bool{}
	for name, s := range c.MCP.Servers {
		ns := s.Prefix
		if ns == "" {
			ns = name
		}
		if ns == "peer" && len(fc.Peers) > 0 {
			p.add(p.line("mcp", "servers", name), "mcp.servers.%s: its tools would be named peer.*, the namespace of peers: give it another prefix", name)
		}
	}
	for i, fp := range fc.Peers {
		idx := strconv.Itoa(i)
		at := func(key ...string) int { return p.line(append([]string{"peers", idx}, key...)...) }
		bad := func(line int, format string, args ...any) {
			who := fp.Name
			if who == "" {
				who = "[" + idx + "]"
			}
			p.add(line, "peers %s: %s", who, fmt.Sprintf(format, args...))
		}
		if !mcpNameRE.MatchString(fp.Name) {
			bad(at("name"), "name %q: want letters, digits, _ or - (its tools are named peer.NAME.tool), e.g. name: lab", fp.Name)
			continue
		}
		if seen[fp.Name] {
			bad(at("name"), "a peer of that name is listed twice: give one another name")
			continue
		}
		seen[fp.Name] = true
		pe := Peer{Name: fp.Name, URL: fp.URL, Timeout: time.Duration(fp.Timeout)}
		if u, err := url.Parse(fp.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad(at("url"), "url %q: want the peer's MCP endpoint, http://host:port/mcp or https://…", fp.URL)
		}
		switch m := tokenRefRE.FindStringSubmatch(strings.TrimSpace(fp.Token)); {
		case fp.Token == "":
			bad(at(), "token: say which environment variable holds the bearer token the peer maps to an agent, e.g. token: ${LAB_TOKEN}")
		case m == nil:
			bad(at("token"), "token must name an environment variable, e.g. token: ${LAB_TOKEN}, and the token be exported there: a token written in airs.yaml is a secret in a file")
		default:
			pe.TokenEnv = m[1] + m[2]
		}
		for j, r := range fp.Requires {
			cp, err := ParseCapability(r)
			if err != nil {
				bad(at("requires", strconv.Itoa(j)), "requires[%d]: %v (e.g. \"Network(*)\")", j, err)
				continue
			}
			pe.Requires = append(pe.Requires, cp)
		}
		for j, id := range fp.Grant {
			a, ok := c.Agents[id]
			if !ok {
				bad(at("grant", strconv.Itoa(j)), "grant[%d]: agent %q is not defined under agents (defined: %s)", j, id, strings.Join(sortedKeys(c.Agents), ", "))
				continue
			}
			pe.Grant = append(pe.Grant, id)
			a.Capabilities = append(a.Capabilities, PeerCapability(fp.Name))
			c.Agents[id] = a
		}
		if pe.Timeout < 0 || pe.Timeout > 600*time.Second {
			bad(at("timeout"), "timeout %v: want a duration above 0 and at most 600s, e.g. 30s", pe.Timeout)
		}
		c.Peers = append(c.Peers, pe)
	}
}
