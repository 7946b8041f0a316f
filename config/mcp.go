package config

import (
	"fmt"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// MCP configures the Model Context Protocol: outside servers whose tools
// AIRS offers (client mode, Servers). Server mode's keys (`mcp.serve`)
// belong beside Servers, in their own file.
type MCP struct {
	// Servers are the outside MCP servers, by name. Their tools are
	// registered as NAME.tool (or PREFIX.tool) with provider "mcp:NAME".
	Servers map[string]MCPServer
	// Sampling is the default of every server's Sampling (mcp.sampling).
	Sampling MCPSampling
	// Serve configures AIRS as an MCP server (airs mcp, /mcp): mcp.serve.
	Serve MCPServe
}

// MCPSampling bounds how AIRS's model answers a server's
// sampling/createMessage: Enabled false refuses every request (the
// capability is not advertised); a request's maxTokens is capped at
// MaxTokens, and the model gets Timeout per request.
type MCPSampling struct {
	Enabled   bool
	MaxTokens int
	Timeout   time.Duration
}

// Defaults of sampling (mcp.sampling).
const (
	DefaultMCPSampleMaxTokens = 1024
	DefaultMCPSampleTimeout   = 60 * time.Second
	// MaxMCPSampleMaxTokens and MaxMCPSampleTimeout bound what airs.yaml
	// may allow one request: a server is not the user, and each request
	// takes the model from everything else for its time.
	MaxMCPSampleMaxTokens = 32768
	MaxMCPSampleTimeout   = 600 * time.Second
)

// DefaultMCPSampling is sampling when airs.yaml says nothing.
var DefaultMCPSampling = MCPSampling{Enabled: true, MaxTokens: DefaultMCPSampleMaxTokens, Timeout: DefaultMCPSampleTimeout}

// MCPServer is one outside MCP server: a command AIRS starts and talks to
// over stdio, or a streamable HTTP URL.
type MCPServer struct {
	Name string
	// Command (stdio): the program and its first arguments; Args are
	// appended. The server's environment is HOME, PATH, LANG, TERM, USER,
	// LOGNAME and SHELL of AIRS's (mcp/client.InheritedEnv), Env, and the
	// variables PassEnv names with their values in AIRS's environment:
	// nothing else of AIRS's environment reaches it. Dir is the working
	// directory ("" = AIRS's own).
	Command []string
	Args    []string
	Env     map[string]string
	PassEnv []string
	Dir     string
	// URL (streamable HTTP). HeadersFromEnv maps a header name to the
	// environment variable its value is read from when AIRS connects, so
	// no secret is written in airs.yaml.
	URL            string
	HeadersFromEnv map[string]string
	// Requires are what a caller must hold, beside MCP(NAME), to call any of
	// this server's tools.
	Requires []Capability
	// Prefix is the namespace of the server's tools ("" = Name).
	Prefix string
	// Timeout bounds one call when the caller asks for none (0: the
	// pipeline's Fast class default, 5 s).
	Timeout time.Duration
	// Bounds: tools listed, bytes of one JSON-RPC message read from the
	// server, bytes of one tool result, restarts of a stdio server within a
	// minute (past it the server rests and is tried again with back-off;
	// 0: never restarted, its tools deregistered).
	MaxTools          int
	MaxMessageBytes   int
	MaxResponseBytes  int
	RestartsPerMinute int
	// Grace is how long a server that was sent notifications/cancelled may
	// stay unresponsive before AIRS kills (and restarts) it.
	Grace time.Duration
	// Sampling is mcp.sampling with this server's sampling: keys over it.
	Sampling MCPSampling
	// ToolEffects state what a tool may do (by the server's name of it):
	// read, write or destructive, over its annotations, which are the
	// server's claims (mcp.servers.NAME.tools.TOOL.effect).
	ToolEffects map[string]string
}

// MCPToolEffects are the effects mcp.servers.NAME.tools.TOOL.effect takes.
var MCPToolEffects = []string{"read", "write", "destructive"}

// Defaults of an MCP server's bounds.
const (
	DefaultMCPMaxTools          = 1000
	DefaultMCPMaxMessageBytes   = 16 << 20 // the go-sdk's own default line limit
	DefaultMCPMaxResponseBytes  = 4 << 20
	DefaultMCPRestartsPerMinute = 3
	DefaultMCPGrace             = 2 * time.Second
)

// MCPSpace is the space a server's resources are read as (list-files
// and read-file with space mcp-NAME, granted by ReadSpace(mcp-NAME)).
func MCPSpace(server string) string { return "mcp-" + server }

// MCPCapabilityKind is the capability every tool of server NAME requires as
// MCP(NAME): nothing an outside server offers is callable until an agent is
// granted it, whatever else the server's requires list.
const MCPCapabilityKind = "MCP"

// ReservedProviders are provider ids an MCP server's name may not take.
var ReservedProviders = []string{"builtin"}

var envNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

var mcpNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]*$`)

type fileMCP struct {
	Servers  map[string]fileMCPServer `yaml:"servers"`
	Sampling *fileMCPSampling         `yaml:"sampling"`
	Serve    *fileMCPServe            `yaml:"serve"`
}

type fileMCPServer struct {
	Command           []string          `yaml:"command"`
	Args              []string          `yaml:"args"`
	Env               map[string]string `yaml:"env"`
	PassEnv           []string          `yaml:"pass_env"`
	Dir               string            `yaml:"dir"`
	URL               string            `yaml:"url"`
	HeadersFromEnv    map[string]string `yaml:"headers_from_env"`
	Requires          []string          `yaml:"requires"`
	Prefix            string            `yaml:"prefix"`
	Timeout           Duration          `yaml:"timeout"`
	MaxTools          *int              `yaml:"max_tools"`
	MaxMessageBytes   *int              `yaml:"max_message_bytes"`
	MaxResponseBytes  *int              `yaml:"max_response_bytes"`
	RestartsPerMinute *int              `yaml:"restarts_per_minute"`
	Grace             Duration          `yaml:"grace"`
	Sampling          *fileMCPSampling  `yaml:"sampling"`
	Tools             map[string]struct {
		Effect string `yaml:"effect"`
	} `yaml:"tools"`
}

type fileMCPSampling struct {
	Enabled   *bool     `yaml:"enabled"`
	MaxTokens *int      `yaml:"max_tokens"`
	Timeout   *Duration `yaml:"timeout"`
}

// sampling is base with f's keys over it; a bad value is a problem at
// its line (key is the path of the sampling block).
func (p *parser) sampling(base MCPSampling, f *fileMCPSampling, key ...string) MCPSampling {
	if f == nil {
		return base
	}
	at := func(k string) int { return p.line(append(slices.Clone(key), k)...) }
	where := strings.Join(key, ".")
	if f.Enabled != nil {
		base.Enabled = *f.Enabled
	}
	if v := f.MaxTokens; v != nil {
		if *v < 1 || *v > MaxMCPSampleMaxTokens {
			p.add(at("max_tokens"), "%s.max_tokens %d: want 1 to %d tokens (a request asking for more gets this many), e.g. %d", where, *v, MaxMCPSampleMaxTokens, DefaultMCPSampleMaxTokens)
		} else {
			base.MaxTokens = *v
		}
	}
	if v := f.Timeout; v != nil {
		if d := time.Duration(*v); d <= 0 || d > MaxMCPSampleTimeout {
			p.add(at("timeout"), "%s.timeout %v: want a duration above 0 and at most %v, e.g. 60s", where, d, MaxMCPSampleTimeout)
		} else {
			base.Timeout = d
		}
	}
	return base
}

// buildMCP reads the mcp section.
func (p *parser) buildMCP(fc *fileConfig, c *Config) {
	c.MCP.Servers = map[string]MCPServer{}
	c.MCP.Sampling = p.sampling(DefaultMCPSampling, fc.MCP.Sampling, "mcp", "sampling")
	c.MCP.Serve = p.mcpServe(fc.MCP.Serve)
	prefixes := map[string]string{}
	for _, name := range sortedKeys(fc.MCP.Servers) {
		fs := fc.MCP.Servers[name]
		at := func(key ...string) int { return p.line(append([]string{"mcp", "servers", name}, key...)...) }
		bad := func(line int, format string, args ...any) {
			p.add(line, "mcp.servers.%s: %s", name, fmt.Sprintf(format, args...))
		}
		if !mcpNameRE.MatchString(name) || contains(ReservedProviders, name) {
			bad(at(), "the name must be letters, digits, _ or - (no dot: tools are named NAME.tool), and not %s", strings.Join(ReservedProviders, ", "))
			continue
		}
		s := MCPServer{Name: name, Args: fs.Args, Env: fs.Env, PassEnv: fs.PassEnv, URL: fs.URL, HeadersFromEnv: fs.HeadersFromEnv,
			Prefix: fs.Prefix, Timeout: time.Duration(fs.Timeout), Grace: time.Duration(fs.Grace),
			MaxTools: DefaultMCPMaxTools, MaxMessageBytes: DefaultMCPMaxMessageBytes, MaxResponseBytes: DefaultMCPMaxResponseBytes,
			RestartsPerMinute: DefaultMCPRestartsPerMinute,
			Sampling:          p.sampling(c.MCP.Sampling, fs.Sampling, "mcp", "servers", name, "sampling")}
		for i, a := range fs.Command {
			if i == 0 {
				a = p.expandCommand(a)
			} else {
				a = expandArg(a)
			}
			s.Command = append(s.Command, a)
		}
		for i, a := range s.Args {
			s.Args[i] = expandArg(a)
		}
		switch {
		case len(s.Command) == 0 && s.URL == "":
			bad(at(), "say how to reach it: command: [program, args…] (stdio) or url: https://… (streamable HTTP)")
		case len(s.Command) > 0 && s.URL != "":
			bad(at("url"), "has both command and url: keep one (command starts a stdio server, url connects to an HTTP one)")
		case s.URL != "":
			if u, err := url.Parse(s.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				bad(at("url"), "url %q: want http://host[:port]/path or https://…", s.URL)
			}
			if fs.Dir != "" || len(fs.Env) > 0 || len(fs.PassEnv) > 0 || len(fs.Args) > 0 {
				bad(at(), "dir, env, pass_env and args are for a command (stdio); an HTTP server takes url and headers_from_env")
			}
		case len(fs.HeadersFromEnv) > 0:
			bad(at("headers_from_env"), "headers_from_env is for an HTTP server (url); a command gets env")
		}
		if fs.Dir != "" {
			s.Dir = p.expandPath(fs.Dir)
		}
		for _, tool := range sortedKeys(fs.Tools) {
			e := fs.Tools[tool].Effect
			if !contains(MCPToolEffects, e) {
				bad(at("tools", tool, "effect"), "tools.%s.effect %q: want one of %s (what a call of it may do; its annotations are the server's claims)", tool, e, strings.Join(MCPToolEffects, ", "))
				continue
			}
			if s.ToolEffects == nil {
				s.ToolEffects = map[string]string{}
			}
			s.ToolEffects[tool] = e
		}
		for i, v := range fs.PassEnv {
			if !envNameRE.MatchString(v) {
				bad(at("pass_env", strconv.Itoa(i)), "pass_env[%d] %q: want the name of an environment variable (LETTERS_DIGITS_), e.g. GITHUB_TOKEN", i, v)
			}
		}
		for h, v := range fs.HeadersFromEnv {
			if h == "" || v == "" || strings.ContainsAny(h, " :\r\n") {
				bad(at("headers_from_env"), "want Header-Name: ENV_VAR, got %q: %q", h, v)
			}
		}
		for i, r := range fs.Requires {
			cp, err := ParseCapability(r)
			if err != nil {
				bad(at("requires", strconv.Itoa(i)), "requires[%d]: %v (e.g. \"ReadSpace(documents)\")", i, err)
				continue
			}
			s.Requires = append(s.Requires, cp)
		}
		if s.Prefix != "" && !mcpNameRE.MatchString(s.Prefix) {
			bad(at("prefix"), "prefix %q: letters, digits, _ or - (tools are named PREFIX.tool)", s.Prefix)
		}
		ns := s.Prefix
		if ns == "" {
			ns = name
		}
		if other, ok := prefixes[ns]; ok {
			bad(at("prefix"), "its tools would be named %s.* like those of server %s: give one of them another prefix", ns, other)
		}
		prefixes[ns] = name
		if s.Timeout < 0 || s.Timeout > 600*time.Second {
			bad(at("timeout"), "timeout %v: want a duration above 0 and at most 600s, e.g. 30s", s.Timeout)
		}
		if s.Grace < 0 {
			bad(at("grace"), "grace must not be negative")
		} else if s.Grace == 0 {
			s.Grace = DefaultMCPGrace
		}
		positive := func(v *int, dst *int, key, example string) {
			if v == nil {
				return
			}
			if *v < 1 {
				bad(at(key), "%s %d: want a positive number, e.g. %s", key, *v, example)
				return
			}
			*dst = *v
		}
		positive(fs.MaxTools, &s.MaxTools, "max_tools", "1000")
		positive(fs.MaxMessageBytes, &s.MaxMessageBytes, "max_message_bytes", "16777216")
		positive(fs.MaxResponseBytes, &s.MaxResponseBytes, "max_response_bytes", "4194304")
		if v := fs.RestartsPerMinute; v != nil {
			if *v < 0 {
				bad(at("restarts_per_minute"), "restarts_per_minute %d: want 0 (never restart) or more", *v)
			} else {
				s.RestartsPerMinute = *v
			}
		}
		c.MCP.Servers[name] = s
	}
}

// expandCommand expands $VARS and ~ in a command's program; a program
// given as a relative path with a slash (./server) is anchored like any
// path, a bare name (npx) is looked up in $PATH when started.
func (p *parser) expandCommand(s string) string {
	if strings.ContainsRune(s, '/') || s == "~" || strings.HasPrefix(s, "~/") {
		return p.expandPath(s)
	}
	return os.ExpandEnv(s)
}

// expandArg expands $VARS and a leading ~ in an argument; it is never
// anchored (an argument need not be a path).
func expandArg(s string) string {
	s = os.ExpandEnv(s)
	if s == "~" || strings.HasPrefix(s, "~/") {
		if h, err := os.UserHomeDir(); err == nil {
			s = h + s[1:]
		}
	}
	return s
}
