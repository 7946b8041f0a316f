package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/airs-dev/airs/config"
	"github.com/airs-dev/airs/internal/filelock"
	"github.com/airs-dev/airs/internal/settings"
	"github.com/airs-dev/airs/mcp/client"
	"github.com/airs-dev/airs/mcp/install"
	"github.com/airs-dev/airs/pipeline"
	"github.com/airs-dev/airs/selector"
)

// MCP is the outside MCP servers of airs.yaml (mcp.servers), connected:
// their tools are in the registry as providers "mcp:NAME", so every call
// takes the seven stages. A server that cannot start is reported in
// Problems and left out; the others, and AIRS, run.
type MCP struct {
	conns    []*client.Conn
	problems []error

	mu       sync.Mutex
	onChange func()
}

// StartMCP connects the configured servers (in parallel: npx may take
// seconds each) and registers their tools in reg. version is AIRS's,
// sent in initialize.
func StartMCP(ctx context.Context, cfg *config.Config, reg *pipeline.Registry, log *slog.Logger, version string) *MCP {
	m := &MCP{}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	servers := maps.Clone(cfg.MCP.Servers)
	if servers == nil {
		servers = map[string]config.MCPServer{}
	}
	if cfg.Home != "" {
		inst, probs := InstalledMCP(cfg)
		m.problems = append(m.problems, probs...)
		for _, s := range inst {
			servers[s.Name] = s
		}
	}
	names := make([]string, 0, len(servers))
	for n := range servers {
		names = append(names, n)
	}
	slices.Sort(names)
	specs := make([]client.Server, 0, len(names)+len(cfg.Peers))
	errs := make([]error, 0, cap(specs))
	pins := MCPPins(cfg)
	for _, n := range names {
		s, err := MCPServer(servers[n], log, version)
		s.Pins = pins
		specs, errs = append(specs, s), append(errs, err)
	}
	hints := make([]string, len(specs), cap(specs))
	for _, p := range cfg.Peers { // peers.go: other AIRS instances' /mcp
		s, err := PeerServer(p, log, version)
		s.Pins = pins
		specs, errs, hints = append(specs, s), append(errs, err), append(hints, peerHint(p))
	}
	conns := make([]*client.Conn, len(specs))
	var wg sync.WaitGroup
	for i, s := range specs {
		if errs[i] != nil {
			continue
		}
		wg.Go(func() {
			c, err := client.Connect(ctx, reg, s)
			if err != nil {
				errs[i] = fmt.Errorf("%w; its tools are not available%s", err, hints[i])
				return
			}
			c.OnChange(m.changed)
			conns[i] = c
		})
	}
	wg.Wait()
	for i := range specs {
		if conns[i] != nil {
			m.conns = append(m.conns, conns[i])
		}
		if errs[i] != nil {
			m.problems = append(m.problems, errs[i])
		}
	}
	return m
}

// MCPPins keep the MCP tools' effects as granted or reviewed, in
// AIRS_HOME/mcp/pins.json (shared by every airs process); with no home,
// for the life of the process.
func MCPPins(cfg *config.Config) client.PinStore {
	if cfg.Home == "" {
		return client.MemoryPins()
	}
	return client.FilePins(filepath.Join(cfg.Home, "mcp", "pins.json"))
}

// InstalledMCP are the servers `airs tools install` put in AIRS_HOME and
// the user approved, each checked against the hashes recorded at install;
// one that fails the check, or whose name airs.yaml also uses, is a
// problem and is not started.
func InstalledMCP(cfg *config.Config) ([]config.MCPServer, []error) {
	list, err := install.Load(cfg.Home)
	if err != nil {
		return nil, []error{err}
	}
	var out []config.MCPServer
	var probs []error
	for _, s := range list {
		if !s.Approved {
			continue
		}
		if _, clash := cfg.MCP.Servers[s.Name]; clash {
			probs = append(probs, fmt.Errorf("installed MCP server %s: airs.yaml configures a server of that name too; the installed one is not started: rename one (`airs tools remove %s`, then install with --name)", s.Name, s.Name))
			continue
		}
		if err := install.Verify(cfg.Home, s); err != nil {
			probs = append(probs, err)
			continue
		}
		cs := config.MCPServer{Name: s.Name, Command: s.Command, Args: s.Args, MaxTools: config.DefaultMCPMaxTools,
			MaxMessageBytes: config.DefaultMCPMaxMessageBytes, MaxResponseBytes: config.DefaultMCPMaxResponseBytes,
			RestartsPerMinute: config.DefaultMCPRestartsPerMinute, Grace: config.DefaultMCPGrace, Sampling: cfg.MCP.Sampling}
		for _, r := range s.Requires {
			c, err := config.ParseCapability(r)
			if err != nil {
				probs = append(probs, fmt.Errorf("installed MCP server %s: requires %q: %v", s.Name, r, err))
				cs.Name = ""
				break
			}
			cs.Requires = append(cs.Requires, c)
		}
		if cs.Name != "" {
			out = append(out, cs)
		}
	}
	return out, probs
}

// MCPServer is the client's description of one configured server; a
// header whose environment variable is unset is an error naming it.
func MCPServer(cs config.MCPServer, log *slog.Logger, version string) (client.Server, error) {
	s := client.Server{
		Name: cs.Name, Namespace: cs.Prefix, Requires: settings.Capabilities(cs.Requires),
		Command: append(slices.Clone(cs.Command), cs.Args...), Dir: cs.Dir, URL: cs.URL,
		Timeout: cs.Timeout, MaxTools: cs.MaxTools, MaxMessageBytes: cs.MaxMessageBytes, MaxResponseBytes: cs.MaxResponseBytes,
		RestartsPerMinute: cs.RestartsPerMinute, Grace: cs.Grace, ClientVersion: version, Logger: log,
		MaxSampleTokens: cs.Sampling.MaxTokens, SampleTimeout: cs.Sampling.Timeout, NoSampling: !cs.Sampling.Enabled,
	}
	for tool, e := range cs.ToolEffects {
		eff, err := client.ParseEffect(e)
		if err != nil {
			return s, fmt.Errorf("mcp server %s: tools.%s: %v", cs.Name, tool, err)
		}
		if s.Effects == nil {
			s.Effects = map[string]client.Effect{}
		}
		s.Effects[tool] = eff
	}
	keys := make([]string, 0, len(cs.Env))
	for k := range cs.Env {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		s.Env = append(s.Env, k+"="+cs.Env[k])
	}
	for _, k := range cs.PassEnv {
		v, ok := os.LookupEnv(k)
		if !ok {
			return s, fmt.Errorf("mcp server %s: pass_env names $%s, which is not set: export it before starting airs, or drop it from mcp.servers.%s.pass_env", cs.Name, k, cs.Name)
		}
		s.Env = append(s.Env, k+"="+v)
	}
	if len(cs.HeadersFromEnv) > 0 {
		s.Headers = http.Header{}
		for h, env := range cs.HeadersFromEnv {
			v := os.Getenv(env)
			if v == "" {
				return s, fmt.Errorf("mcp server %s: header %s comes from $%s, which is not set: export it before starting airs", cs.Name, h, env)
			}
			s.Headers.Set(h, v)
		}
	}
	return s, nil
}

// Conns are the connected servers, by name.
func (m *MCP) Conns() []*client.Conn {
	if m == nil {
		return nil
	}
	return m.conns
}

// Conn is the connected server name, or nil.
func (m *MCP) Conn(name string) *client.Conn {
	for _, c := range m.Conns() {
		if c.Name() == name {
			return c
		}
	}
	return nil
}

// Problems are the servers that did not start, each saying why.
func (m *MCP) Problems() []error {
	if m == nil {
		return nil
	}
	return m.problems
}

// OnChange sets what runs when a server's tool set changes.
func (m *MCP) OnChange(f func()) {
	m.mu.Lock()
	m.onChange = f
	m.mu.Unlock()
}

func (m *MCP) changed() {
	m.mu.Lock()
	f := m.onChange
	m.mu.Unlock()
	if f != nil {
		f()
	}
}

// Close stops every server.
func (m *MCP) Close() error {
	if m == nil {
		return nil
	}
	var wg sync.WaitGroup
	errs := make([]error, len(m.conns))
	for i, c := range m.conns {
		wg.Go(func() { errs[i] = c.Close() })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// followMCP keeps the tool index in step with the MCP servers' tools: a
// notifications/tools/list_changed (or a restart that lists other tools)
// reindexes, under the same lock as openIndex.
//
// It also makes the engine's model answer the servers' sampling requests
// (none in no-LLM mode: they are refused, saying why).
func (e *Engine) followMCP(m *MCP) {
	if m == nil {
		return
	}
	m.SetSampler(e.mcpSampler())
	m.OnChange(func() {
		ctx := context.Background()
		if e.cfg.Home != "" {
			unlock, err := filelock.LockPath(filepath.Join(filepath.Dir(e.cfg.IndexDir()), "index.lock"))
			if err != nil {
				slog.Warn("mcp: reindexing after a tool-list change", "err", err)
				return
			}
			defer unlock()
		}
		if err := e.Reindex(ctx); err != nil {
			slog.Warn("mcp: reindexing after a tool-list change", "err", err)
		}
	})
}

// SetSampler makes s answer every server's sampling/createMessage (nil:
// refuse them, as in no-LLM mode).
func (m *MCP) SetSampler(s client.Sampler) {
	for _, c := range m.Conns() {
		c.SetSampler(s)
	}
}

// mcpSampler is the engine's model as the servers' sampler, or nil in
// no-LLM mode.
func (e *Engine) mcpSampler() client.Sampler {
	if e.model == nil {
		return nil
	}
	return modelSampler{m: e.model, model: e.modelName}
}

// modelSampler answers sampling with the engine's model: the server's
// system prompt first, its messages in order, its token limit (already
// capped by the client) as num_predict so the model stops there.
type modelSampler struct {
	m     selector.Model
	model string
}

func (s modelSampler) Sample(ctx context.Context, req client.SampleRequest) (client.SampleResult, error) {
	msgs := make([]selector.Message, 0, len(req.Messages)+1)
	if req.System != "" {
		msgs = append(msgs, selector.Message{Role: "system", Content: req.System})
	}
	for _, m := range req.Messages {
		msgs = append(msgs, selector.Message{Role: m.Role, Content: m.Text})
	}
	var text strings.Builder
	truncated := false
	err := s.m.Generate(ctx, selector.ModelRequest{Model: s.model, Messages: msgs, NumPredict: req.MaxTokens,
		Sample: &selector.Sampling{Temperature: req.Temperature, Stop: req.Stop, Truncated: &truncated}},
		func(chunk string) error { text.WriteString(chunk); return nil })
	if err != nil {
		return client.SampleResult{}, err
	}
	return client.SampleResult{Text: text.String(), Model: s.model, Truncated: truncated}, nil
}

// ServerPrompt is one prompt of a connected server.
type ServerPrompt struct {
	Server string
	client.Prompt
}

// mayUse reports whether caller may use server's prompts: as for its
// tools, the provider must be reachable and MCP(NAME) held.
func (e *Engine) mayUse(caller, server string) bool {
	var pol pipeline.AccessPolicy = pipeline.AllowAll{}
	if e.catalog != nil && e.catalog.Policy != nil {
		pol = e.catalog.Policy
	}
	return pol.CanReach(caller, client.ProviderID(server)) && pol.Holds(caller, client.Capability(server))
}

// MCPPrompts are the prompts of the servers caller may use, by server;
// a server that fails to list them is an error beside the others' list.
func (e *Engine) MCPPrompts(ctx context.Context, caller string) ([]ServerPrompt, error) {
	var out []ServerPrompt
	var errs []error
	for _, c := range e.mcp.Conns() {
		if !e.mayUse(caller, c.Name()) {
			continue
		}
		ps, err := c.Prompts(ctx)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, p := range ps {
			out = append(out, ServerPrompt{Server: c.Name(), Prompt: p})
		}
	}
	return out, errors.Join(errs...)
}

// MCPPrompt is prompt name of server with args as the text of caller's
// turn; a caller without MCP(server) is told which grant it lacks.
func (e *Engine) MCPPrompt(ctx context.Context, caller, server, name string, args map[string]string) (string, error) {
	c := e.mcp.Conn(server)
	if c == nil {
		return "", fmt.Errorf("no MCP server %s is connected: /prompt lists the prompts there are", server)
	}
	if !e.mayUse(caller, server) {
		return "", fmt.Errorf("%s may not use MCP server %s: grant it %s in airs.yaml", caller, server, client.Capability(server))
	}
	return c.GetPrompt(ctx, name, args)
}
