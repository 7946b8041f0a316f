package config

import (
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

var (
	spaceNameRE = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]*$`)
	agentIDRE   = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.:@-]*$`)
)

// baseDir anchors relative paths: the config file's directory, or the
// working directory when there is no file.
func (p *parser) baseDir() string {
	if p.file != "" {
		if abs, err := filepath.Abs(filepath.Dir(p.file)); err == nil {
			return abs
		}
	}
	wd, _ := os.Getwd()
	return wd
}

// expandPath expands ~, $VAR and ${VAR}, and anchors a relative path.
func (p *parser) expandPath(s string) string {
	s = os.ExpandEnv(s)
	if s == "~" || strings.HasPrefix(s, "~/") {
		if h, err := os.UserHomeDir(); err == nil {
			s = filepath.Join(h, s[1:])
		}
	}
	if !filepath.IsAbs(s) {
		s = filepath.Join(p.baseDir(), s)
	}
	return filepath.Clean(s)
}

func (p *parser) build(fc *fileConfig) *Config {
	c := &Config{File: "", MaxPayload: DefaultMaxPayload, MaxSteps: DefaultMaxSteps}
	if p.file != "" {
		if abs, err := filepath.Abs(p.file); err == nil {
			c.File = abs
		}
	}

	p.buildHome(fc, c)
	p.buildSpaces(fc, c)
	p.buildAgents(fc, c)

	p.buildCLI(fc, c)
	p.buildHTTP(fc, c)
	p.buildBreakers(fc, c)
	p.buildCallLimits(fc, c)
	p.buildManifests(fc, c)
	p.buildOllama(fc, c)
	p.buildModel(fc, c)
	p.buildSelection(&fc.Selection, c)

	p.buildRecording(fc, c)
	p.buildRecommend(fc, c)
	p.buildGuard(fc, c)
	p.buildMCP(fc, c)
	p.buildPeers(fc, c) // after agents and mcp: a grant adds to an agent
	p.buildSpeculation(fc, c)
	p.buildStorage(fc, c)
	p.buildChains(fc, c)
	p.buildClaims(fc, c)
	p.buildTelemetry(fc, c)
	p.buildLevel2(fc, c)

	p.buildMinCoverage(fc, c)
	return c
}

// buildHome reads home: $AIRS_HOME, else home:, else the platform's default.
func (p *parser) buildHome(fc *fileConfig, c *Config) {
	switch {
	case os.Getenv("AIRS_HOME") != "":
		c.Home = p.expandPath(os.Getenv("AIRS_HOME"))
	case fc.Home != "":
		c.Home = p.expandPath(fc.Home)
	default:
		c.Home = DefaultHome()
	}
}

// buildCLI reads cli.users: each OS user's agent (any user is the default agent's when the file maps none).
func (p *parser) buildCLI(fc *fileConfig, c *Config) {
	c.CLI.Users = map[string]string{}
	if fc.CLI.Users == nil {
		if _, ok := c.Agents[DefaultAgent]; ok {
			c.CLI.Users["*"] = DefaultAgent
		}
	}
	for _, u := range sortedKeys(fc.CLI.Users) {
		id := fc.CLI.Users[u]
		if _, ok := c.Agents[id]; !ok {
			p.add(p.line("cli", "users", u), "cli.users.%s: agent %q is not defined: add it under agents, or map the user to one of %s", u, id, strings.Join(sortedKeys(c.Agents), ", "))
			continue
		}
		c.CLI.Users[u] = id
	}
}

// buildHTTP reads http: the listen address, the tokens (hashes, each to a defined agent, none twice), the body and input limits.
func (p *parser) buildHTTP(fc *fileConfig, c *Config) {
	c.HTTP.Listen = DefaultListen
	if fc.HTTP.Listen != "" {
		c.HTTP.Listen = fc.HTTP.Listen
		if _, port, err := splitHostPort(fc.HTTP.Listen); err != nil || port == "" {
			p.add(p.line("http", "listen"), "http.listen %q: want host:port, e.g. %s", fc.HTTP.Listen, DefaultListen)
		}
	}
	seen := map[[32]byte]bool{}
	for i, t := range fc.HTTP.Tokens {
		line := p.line("http", "tokens", strconv.Itoa(i))
		b, err := hex.DecodeString(t.SHA256)
		if err != nil || len(b) != 32 {
			p.add(line, "http.tokens[%d].sha256: want the 64 hex digits of the token's SHA-256 (e.g. `printf %%s \"$TOKEN\" | sha256sum`), never the token itself", i)
			continue
		}
		if _, ok := c.Agents[t.Agent]; !ok {
			p.add(line, "http.tokens[%d].agent: %q is not defined under agents", i, t.Agent)
			continue
		}
		var h [32]byte
		copy(h[:], b)
		if seen[h] {
			p.add(line, "http.tokens[%d]: the same token is listed twice; keep one", i)
			continue
		}
		seen[h] = true
		c.HTTP.Tokens = append(c.HTTP.Tokens, Token{SHA256: h, Agent: t.Agent})
	}
	if fc.HTTP.MaxBody < 0 {
		p.add(p.line("http", "max_body"), "http.max_body %d: want bytes above 0 (remove it for the default, 2 MiB)", fc.HTTP.MaxBody)
	}
	c.HTTP.MaxBody = max(fc.HTTP.MaxBody, 0)
	fl := fc.HTTP.Limits
	for _, l := range []struct {
		key string
		v   int
		to  *int
	}{
		{"select_text", fl.SelectText, &c.HTTP.Limits.SelectText}, {"plan_text", fl.PlanText, &c.HTTP.Limits.PlanText},
		{"plan_parts", fl.PlanParts, &c.HTTP.Limits.PlanParts}, {"chat_text", fl.ChatText, &c.HTTP.Limits.ChatText},
		{"pipeline_yaml", fl.PipelineYAML, &c.HTTP.Limits.PipelineYAML},
		{"per_address_per_second", fl.PerAddressPerSecond, &c.HTTP.Limits.PerAddressPerSecond},
		{"per_address_burst", fl.PerAddressBurst, &c.HTTP.Limits.PerAddressBurst},
		{"heavy_text", fl.HeavyText, &c.HTTP.Limits.HeavyText}, {"heavy_call_body", fl.HeavyCallBody, &c.HTTP.Limits.HeavyCallBody},
		{"heavy_per_agent", fl.HeavyPerAgent, &c.HTTP.Limits.HeavyPerAgent}, {"heavy_total", fl.HeavyTotal, &c.HTTP.Limits.HeavyTotal},
	} {
		if l.v < 0 {
			p.add(p.line("http", "limits", l.key), "http.limits.%s %d: want a number above 0 (remove it for the default)", l.key, l.v)
			continue
		}
		*l.to = l.v
	}
}

// buildBreakers reads breaker and caller_timeouts, with the documented defaults filled so what is shown is what runs.
func (p *parser) buildBreakers(fc *fileConfig, c *Config) {
	if f := fc.Breaker.Failures; f != nil {
		if *f < -1 || *f == 0 {
			p.add(p.line("breaker", "failures"), "breaker.failures: want a positive count, or -1 to disable breakers")
		}
		c.Breaker.Failures = *f
	}
	c.Breaker.Window = time.Duration(fc.Breaker.Window)
	c.Breaker.Cooldown = time.Duration(fc.Breaker.Cooldown)
	if c.Breaker.Window < 0 || c.Breaker.Cooldown < 0 {
		p.add(p.line("breaker"), "breaker: window and cooldown must not be negative")
	}
	// Fill the documented defaults so what is shown is what runs.
	if c.Breaker.Failures == 0 {
		c.Breaker.Failures = 5
	}
	if c.Breaker.Window == 0 {
		c.Breaker.Window = 30 * time.Second
	}
	if c.Breaker.Cooldown == 0 {
		c.Breaker.Cooldown = 30 * time.Second
	}

	// caller_timeouts: shown with its defaults filled, as the breaker.
	ct := fc.CallerTimeouts
	if ct.Timeouts != nil {
		if *ct.Timeouts < -1 || *ct.Timeouts == 0 {
			p.add(p.line("caller_timeouts", "timeouts"), "caller_timeouts.timeouts: want a positive count of a caller's own timeouts, or -1 to never limit a caller for them")
		}
		c.CallerTimeouts.Timeouts = *ct.Timeouts
	}
	c.CallerTimeouts.Window = time.Duration(ct.Window)
	c.CallerTimeouts.Cooldown = time.Duration(ct.Cooldown)
	if c.CallerTimeouts.Window < 0 || c.CallerTimeouts.Cooldown < 0 {
		p.add(p.line("caller_timeouts"), "caller_timeouts: window and cooldown must not be negative (e.g. window: 30s, cooldown: 10s)")
	}
	if c.CallerTimeouts.Timeouts == 0 {
		c.CallerTimeouts.Timeouts = 5
	}
	if c.CallerTimeouts.Window == 0 {
		c.CallerTimeouts.Window = 30 * time.Second
	}
	if c.CallerTimeouts.Cooldown == 0 {
		c.CallerTimeouts.Cooldown = 10 * time.Second
	}
}

// buildCallLimits reads rate_limit, max_payload, latency and max_steps.
func (p *parser) buildCallLimits(fc *fileConfig, c *Config) {
	if fc.RateLimit != nil {
		c.RateLimit = p.rate(fc.RateLimit, "rate_limit")
	}
	if fc.MaxPayload != nil {
		if *fc.MaxPayload < 1 {
			p.add(p.line("max_payload"), "max_payload: want a positive number of bytes, e.g. 1048576")
		}
		c.MaxPayload = *fc.MaxPayload
	}
	if fc.Latency.Enabled != nil {
		c.Latency.Off = !*fc.Latency.Enabled
	}
	if fc.Latency.WouldTimeout != nil {
		c.Latency.NoWouldTimeout = !*fc.Latency.WouldTimeout
	}
	if fc.MaxSteps != nil {
		if *fc.MaxSteps < 1 || *fc.MaxSteps > MaxMaxSteps {
			p.add(p.line("max_steps"), "max_steps: want the number of tool calls one chat turn may make, 1 to %d (1 = one call per request), e.g. 5", MaxMaxSteps)
		}
		c.MaxSteps = *fc.MaxSteps
	}
}

// buildManifests reads manifests: files and globs relative to the file's directory, a file that is not there reported.
func (p *parser) buildManifests(fc *fileConfig, c *Config) {
	for i, pat := range fc.Manifests {
		line := p.line("manifests", strconv.Itoa(i))
		full := p.expandPath(pat)
		if !strings.ContainsAny(pat, "*?[") {
			if _, err := os.Stat(full); err != nil {
				p.add(line, "manifests[%d]: %s does not exist: fix the path (relative paths start at the config file's folder)", i, full)
				continue
			}
			c.Manifests = append(c.Manifests, full)
			continue
		}
		matches, err := filepath.Glob(full)
		if err != nil {
			p.add(line, "manifests[%d]: bad glob %q: %v", i, pat, err)
			continue
		}
		c.Manifests = append(c.Manifests, matches...)
	}
}

// buildOllama reads ollama: the host (the file, else $OLLAMA_HOST, else the default) and the models.
func (p *parser) buildOllama(fc *fileConfig, c *Config) {
	c.Ollama.Host = DefaultOllamaHost
	if env := os.Getenv("OLLAMA_HOST"); env != "" {
		c.Ollama.Host = env
	}
	if fc.Ollama.Host != "" {
		c.Ollama.Host = fc.Ollama.Host
	}
	if h, err := normalizeHost(c.Ollama.Host); err != nil {
		p.add(p.line("ollama", "host"), "ollama.host %q: %v; write it like %s", c.Ollama.Host, err, DefaultOllamaHost)
	} else {
		c.Ollama.Host = h
	}
	c.Ollama.Model, c.Ollama.EmbedModel = fc.Ollama.Model, fc.Ollama.EmbedModel
}

// buildModel reads model: the engine that decodes and its model (a GGUF file or a name pulled into Ollama).
func (p *parser) buildModel(fc *fileConfig, c *Config) {
	c.Model.Engine = EngineOllama
	switch fc.Model.Engine {
	case "", EngineOllama:
	case EngineInproc:
		c.Model.Engine = EngineInproc
	default:
		p.add(p.line("model", "engine"), "model.engine %q: want %s or %s", fc.Model.Engine, EngineOllama, EngineInproc)
	}
	if fc.Model.GGUF != "" {
		c.Model.GGUF = p.expandPath(fc.Model.GGUF)
	}
	c.Model.Name = strings.TrimSpace(fc.Model.Name)
	if fc.Model.Threads < 0 {
		p.add(p.line("model", "threads"), "model.threads %d: want 0 (the default) or a number of threads", fc.Model.Threads)
	}
	c.Model.Threads = max(fc.Model.Threads, 0)
	switch {
	case c.Model.GGUF != "" && c.Model.Name != "":
		p.add(p.line("model", "name"), "model.gguf and model.name both name the model: keep one (gguf: a file; name: a model pulled into Ollama)")
	case c.Model.Engine == EngineInproc && c.Model.GGUF == "" && c.Model.Name == "":
		p.add(p.line("model", "engine"), "model.engine inproc needs the model: model.gguf (a GGUF file) or model.name (a model pulled into Ollama, e.g. qwen3:4b)")
	}
}

// buildRecording reads recording: on or off, the folder, the keys redacted (the defaults and the file's).
func (p *parser) buildRecording(fc *fileConfig, c *Config) {
	c.Recording.Enabled = fc.Recording.Enabled
	c.Recording.Dir = filepath.Join(c.Home, "sessions")
	if fc.Recording.Dir != "" {
		c.Recording.Dir = p.expandPath(fc.Recording.Dir)
	}
	c.Recording.Redact = append([]string(nil), DefaultRedact...)
	for i, k := range fc.Recording.Redact {
		k = strings.ToLower(strings.TrimSpace(k))
		if k == "" {
			p.add(p.line("recording", "redact", strconv.Itoa(i)), "recording.redact[%d]: empty key", i)
			continue
		}
		if !contains(c.Recording.Redact, k) {
			c.Recording.Redact = append(c.Recording.Redact, k)
		}
	}
}

// buildMinCoverage reads selection.min_coverage: between 0 and 1; absent keeps the calibrated default.
func (p *parser) buildMinCoverage(fc *fileConfig, c *Config) {
	if v := fc.Selection.MinCoverage; v != nil {
		if *v < 0 || *v > 1 || *v != *v {
			p.add(p.line("selection", "min_coverage"), "selection.min_coverage %v: must be between 0 and 1 (the share of a request's words a tool's description must use; 0 never answers \"no tool fits\"); remove it for the calibrated default", *v)
		} else {
			x := *v
			c.Selection.MinCoverage = &x
		}
	}
}

func (p *parser) buildSpaces(fc *fileConfig, c *Config) {
	c.Spaces = map[string]string{}
	if fc.Spaces == nil && !p.has("spaces") {
		if wd, err := os.Getwd(); err == nil {
			c.Spaces["cwd"] = wd
		}
		if h, err := os.UserHomeDir(); err == nil {
			if st, err := os.Stat(filepath.Join(h, "Documents")); err == nil && st.IsDir() {
				c.Spaces["documents"] = filepath.Join(h, "Documents")
			}
		}
		return
	}
	for _, name := range sortedKeys(fc.Spaces) {
		line := p.line("spaces", name)
		dir := fc.Spaces[name]
		if !spaceNameRE.MatchString(name) {
			p.add(line, "space name %q: use letters, digits, '_', '-' or '.'", name)
			continue
		}
		if strings.HasPrefix(name, "mcp-") {
			p.add(line, "space name %q: names starting with mcp- are MCP servers' resources (mcp-NAME is server NAME's): rename the space", name)
			continue
		}
		if dir == "" {
			p.add(line, "space %s: give the directory it maps to, e.g. `%s: ~/%s`", name, name, name)
			continue
		}
		full := p.expandPath(dir)
		st, err := os.Stat(full)
		switch {
		case err != nil:
			p.add(line, "space %s: directory %s does not exist: create it or fix the path", name, full)
			continue
		case !st.IsDir():
			p.add(line, "space %s: %s is not a directory", name, full)
			continue
		}
		c.Spaces[name] = full
	}
}

func (p *parser) buildAgents(fc *fileConfig, c *Config) {
	c.Agents = map[string]Agent{}
	if fc.Agents == nil && !p.has("agents") {
		c.Agents[DefaultAgent] = Agent{
			ID:           DefaultAgent,
			Capabilities: []Capability{{Kind: "ReadSpace", Arg: "*"}, {Kind: "Network", Arg: "*"}},
			Providers:    []string{"*"},
		}
		return
	}
	for _, id := range sortedKeys(fc.Agents) {
		fa := fc.Agents[id]
		if !agentIDRE.MatchString(id) {
			p.add(p.line("agents", id), "agent id %q: use letters, digits and _ . : @ -", id)
			continue
		}
		a := Agent{ID: id, Providers: fa.Providers}
		if a.Providers == nil {
			a.Providers = []string{"*"}
		}
		for i, s := range fa.Capabilities {
			cp, err := ParseCapability(s)
			if err == nil && cp.Kind == "" {
				err = errors.New("empty kind")
			}
			if err != nil {
				p.add(p.line("agents", id, "capabilities", strconv.Itoa(i)), "agents.%s.capabilities[%d]: %q is not a capability: write Kind(arg), e.g. ReadSpace(documents) or Network(*)", id, i, s)
				continue
			}
			if cp.Kind == "ReadSpace" && cp.Arg != "*" && cp.Arg != "" {
				// mcp-NAME is MCP server NAME's resources: the loader reads
				// no AIRS_HOME, so a server installed there is taken on trust
				// (a misspelled one grants nothing).
				isMCP := strings.HasPrefix(cp.Arg, "mcp-")
				if _, ok := c.Spaces[cp.Arg]; !ok && !p.hasProblemFor("spaces", cp.Arg) && !isMCP {
					p.add(p.line("agents", id, "capabilities", strconv.Itoa(i)), "agents.%s: ReadSpace(%s) names no configured space (spaces: %s)", id, cp.Arg, strings.Join(sortedKeys(c.Spaces), ", "))
					continue
				}
			}
			a.Capabilities = append(a.Capabilities, cp)
		}
		if fa.RateLimit != nil {
			r := p.rate(fa.RateLimit, "agents", id, "rate_limit")
			a.RateLimit = &r
		}
		if fa.Trust != nil {
			if *fa.Trust < 0 || *fa.Trust > 3 {
				p.add(p.line("agents", id, "trust"), "agents.%s.trust %d: want a level from 0 (unknown) to 3 (fully trusted)", id, *fa.Trust)
			} else {
				a.Trust = *fa.Trust
			}
		}
		a.Purpose = strings.TrimSpace(fa.Purpose)
		c.Agents[id] = a
	}
}

// hasProblemFor reports whether a problem was already reported at the line
// of path (so one mistake is not reported twice).
func (p *parser) hasProblemFor(path ...string) bool {
	l := p.line(path...)
	for _, pr := range p.problems {
		if pr.Line == l {
			return true
		}
	}
	return false
}

func (p *parser) rate(fr *fileRate, path ...string) RateLimit {
	where := strings.Join(path, ".")
	if fr.PerSecond < 0 || math.IsNaN(fr.PerSecond) || math.IsInf(fr.PerSecond, 0) {
		p.add(p.line(path...), "%s.per_second: want a number ≥ 0 (0 = unlimited)", where)
	}
	if fr.Burst < 0 {
		p.add(p.line(path...), "%s.burst: want a count ≥ 0", where)
	}
	r := RateLimit{PerSecond: fr.PerSecond, Burst: fr.Burst}
	if r.Burst == 0 && r.PerSecond > 0 {
		r.Burst = int(math.Ceil(r.PerSecond))
	}
	return r
}

func normalizeHost(h string) (string, error) {
	if !strings.Contains(h, "://") {
		h = "http://" + h
	}
	u, err := url.Parse(h)
	if err != nil {
		return "", errors.New("not a URL")
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", fmt.Errorf("scheme %q is not http or https", u.Scheme)
	}
	if u.Host == "" {
		return "", errors.New("no host")
	}
	return strings.TrimRight(u.String(), "/"), nil
}

func splitHostPort(s string) (host, port string, err error) {
	i := strings.LastIndexByte(s, ':')
	if i < 0 {
		return "", "", errors.New("missing port")
	}
	port = s[i+1:]
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return "", "", errors.New("bad port")
	}
	return s[:i], port, nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// buildRecommend reads the recommend section: every value optional,
// checked, and named in the error when wrong.
func (p *parser) buildRecommend(fc *fileConfig, c *Config) {
	r := fc.Recommend
	c.Recommend = Recommend{Enabled: true, Watch: true, TTL: time.Duration(r.TTL), Cooldown: time.Duration(r.Cooldown),
		SuppressFor: time.Duration(r.SuppressFor)}
	if r.Enabled != nil {
		c.Recommend.Enabled = *r.Enabled
	}
	if r.Watch != nil {
		c.Recommend.Watch = *r.Watch
	}
	for _, d := range []struct {
		key string
		v   Duration
	}{{"ttl", r.TTL}, {"cooldown", r.Cooldown}, {"suppress_for", r.SuppressFor}} {
		if d.v < 0 {
			p.add(p.line("recommend", d.key), "recommend.%s %v: must not be negative (remove it for the default)", d.key, time.Duration(d.v))
		}
	}
	for _, n := range []struct {
		key string
		v   *int
		dst *int
	}{{"per_minute", r.PerMinute, &c.Recommend.PerMinute}, {"max_active", r.MaxActive, &c.Recommend.MaxActive}, {"suppress_after", r.SuppressAt, &c.Recommend.SuppressAt}} {
		if n.v == nil {
			continue
		}
		if *n.v < 1 {
			p.add(p.line("recommend", n.key), "recommend.%s %d: must be at least 1 (remove it for the default; recommend.enabled: false turns suggestions off)", n.key, *n.v)
			continue
		}
		*n.dst = *n.v
	}
	if v := r.Threshold; v != nil {
		if *v <= 0 || *v >= 1 || *v != *v {
			p.add(p.line("recommend", "threshold"), "recommend.threshold %v: must be between 0 and 1 (the fused probability a suggestion needs)", *v)
		} else {
			c.Recommend.Threshold = *v
		}
	}
}

// MaxGuardExpiry bounds guard.expiry: a confirmation older than a day is
// no longer an answer to the call that asked.
const MaxGuardExpiry = 24 * time.Hour

// buildGuard reads the guard section.
func (p *parser) buildGuard(fc *fileConfig, c *Config) {
	fg := fc.Guard
	c.Guard = Guard{Enabled: true, Expiry: time.Duration(fg.Expiry)}
	if fg.Enabled != nil {
		c.Guard.Enabled = *fg.Enabled
	}
	seen := map[string]bool{}
	for i, t := range fg.ReviewTools {
		line := p.line("guard", "review_tools", strconv.Itoa(i))
		switch {
		case t == "" || strings.ContainsFunc(t, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_-.", r))
		}):
			p.add(line, "guard.review_tools[%d]: %q is not a tool name (letters, digits, _ - .; `airs tools list` shows them)", i, t)
		case seen[t]:
			p.add(line, "guard.review_tools[%d]: %s is listed twice; keep one", i, t)
		default:
			seen[t] = true
			c.Guard.ReviewTools = append(c.Guard.ReviewTools, t)
		}
	}
	for i, a := range fg.Reviewers {
		if _, ok := c.Agents[a]; !ok {
			p.add(p.line("guard", "reviewers", strconv.Itoa(i)), "guard.reviewers[%d]: agent %q is not defined under agents (defined: %s)", i, a, strings.Join(sortedKeys(c.Agents), ", "))
			continue
		}
		c.Guard.Reviewers = append(c.Guard.Reviewers, a)
	}
	c.Guard.SelfApprove = fg.SelfApprove
	if d := time.Duration(fg.Expiry); d < 0 || d > MaxGuardExpiry || (p.has("guard", "expiry") && d == 0) {
		p.add(p.line("guard", "expiry"), "guard.expiry %v: want a duration above 0 and at most %v, e.g. 15m (remove it for the default, 15m)", d, MaxGuardExpiry)
	}
	if n := fg.MaxPending; n != nil {
		if *n < 1 {
			p.add(p.line("guard", "max_pending"), "guard.max_pending %d: must be at least 1 (remove it for the default, 1000)", *n)
		} else {
			c.Guard.MaxPending = *n
		}
	}
	p.buildAffinity(&fg.Affinity, c)
	p.buildAnomaly(fc, c)
}

// buildAnomaly reads guard.anomaly.
func (p *parser) buildAnomaly(fc *fileConfig, c *Config) {
	fa := fc.Guard.Anomaly
	a := Anomaly{Model: filepath.Join(c.GuardDir(), AnomalyModelName),
		Warn: DefaultAnomalyWarn, Review: DefaultAnomalyReview, Block: DefaultAnomalyBlock}
	if fa.Model != "" {
		a.Model, a.ModelSet = p.expandPath(fa.Model), true
	}
	for _, t := range []struct {
		key string
		in  *float64
		out *float64
	}{{"warn", fa.Warn, &a.Warn}, {"review", fa.Review, &a.Review}, {"block", fa.Block, &a.Block}} {
		if t.in == nil {
			continue
		}
		if !(*t.in > 0 && *t.in <= 1) {
			p.add(p.line("guard", "anomaly", t.key), "guard.anomaly.%s %v: want a score above 0 and at most 1 (remove it for the default)", t.key, *t.in)
			continue
		}
		*t.out = *t.in
	}
	if !(a.Warn <= a.Review && a.Review <= a.Block) {
		p.add(p.line("guard", "anomaly"), "guard.anomaly: thresholds warn %v, review %v, block %v must not decrease (defaults 0.8, 0.9, 0.95)", a.Warn, a.Review, a.Block)
	}
	if fa.Candidate != "" {
		a.Candidate = p.expandPath(fa.Candidate)
	}
	if s := fa.CandidateShare; s != nil {
		switch {
		case !(*s >= 0 && *s <= 1):
			p.add(p.line("guard", "anomaly", "candidate_share"), "guard.anomaly.candidate_share %v: want a share of callers from 0 to 1, e.g. 0.1", *s)
		case a.Candidate == "":
			p.add(p.line("guard", "anomaly", "candidate_share"), "guard.anomaly.candidate_share without a candidate: name the candidate model file (guard.anomaly.candidate)")
		default:
			a.CandidateShare = *s
		}
	} else if a.Candidate != "" {
		a.CandidateShare = 0.1
	}
	c.Guard.Anomaly = a
}
