// Package config loads airs.yaml and locates AIRS's state directory.
//
// # Where things are
//
// The configuration file is, in order: the --config flag, $AIRS_CONFIG, or
// airs.yaml in the user's configuration directory
// ($XDG_CONFIG_HOME/airs/airs.yaml, ~/.config/airs/airs.yaml on Linux,
// ~/Library/Application Support/airs/airs.yaml on macOS). A file named
// explicitly (flag or environment) must exist; the default one may be
// absent, and then the defaults below apply.
//
// The state directory ($AIRS_HOME: audit log, vector index, learned ranking
// state, recorded sessions) is $AIRS_HOME if set, else home: in the file, else the user's
// data directory: $XDG_DATA_HOME/airs, else ~/.local/share/airs
// (~/Library/Application Support/airs on macOS, %LocalAppData%\airs on
// Windows).
//
// # Defaults (no file, or a file that leaves a section out)
//
//   - spaces: "cwd" is the directory airs was started in, and "documents"
//     is ~/Documents when it exists. A file with a spaces: section replaces
//     both.
//   - agents: one agent, "local", holding ReadSpace(*) and Network(*) and
//     reaching every provider; cli.users maps every local OS user to it.
//     The CLI runs as the user who typed the command, with that user's own
//     rights, so it can read what that user can read; a shared server
//     (airs serve) grants nothing by default: every HTTP token must be
//     configured.
//   - breaker: 5 failures in 30 s open a tool's circuit for 30 s.
//   - rate_limit: none. max_payload: 1 MiB. max_steps (tool calls in one
//     chat turn): 5.
//   - ollama: host $OLLAMA_HOST or http://127.0.0.1:11434, no model (the
//     documented no-LLM mode).
//   - recording: off; when on, sessions go to $AIRS_HOME/sessions with the
//     values of the redact keys replaced.
//   - storage: the audit log in $AIRS_HOME/audit.jsonl (storage.audit:
//     postgres and storage.dsn put it in PostgreSQL, shared by replicas).
//   - guard.affinity: on; 3 calls of a tool within 30 minutes make a
//     caller's affinity for it; the model is kept loaded for 5 minutes
//     (keep_alive) while one is active.
//
// # File format
//
// An annotated example is Example (the text of `airs config example`).
// Every error names the file and line and says what to change.
package config

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"time"
)

// Config is a loaded, validated configuration. Paths in it are absolute.
type Config struct {
	// File is the configuration file that was read; "" when none was.
	File string
	// Home is the state directory.
	Home string

	// Spaces maps a space name to its directory.
	Spaces map[string]string
	// Agents are the identities callers act as, by agent id.
	Agents map[string]Agent
	// Level2: provenance, flow policies, the intent verifier (level2.go).
	Level2 Level2
	CLI    CLI
	HTTP   HTTP

	Breaker Breaker
	// CallerTimeouts limits a caller whose own short deadlines keep
	// expiring (caller_timeouts): its calls are refused for a while, other
	// callers' are not, and the breakers do not count such timeouts.
	CallerTimeouts CallerTimeouts
	// RateLimit applies to every caller without one of its own.
	RateLimit  RateLimit
	MaxPayload int // bytes
	// Latency: latency prediction (latency.enabled, latency.would_timeout).
	Latency Latency
	// MaxSteps bounds the tool calls of one chat turn (chat, /v1/chat): after
	// a result the model may call another tool, up to this many calls.
	MaxSteps int

	// Manifests are tool manifest files to load at start (globs expanded,
	// in the order written).
	Manifests []string
	Ollama    Ollama
	// Model chooses the engine that runs the selector's model.
	Model     ModelEngine
	Recording Recording
	// Selection: ranking weights and the no-LLM "no tool fits" threshold.
	Selection Selection
	// Recommend tunes the proactive suggestions.
	Recommend Recommend
	// Guard configures the guard layer (intent verification).
	Guard Guard
	// MCP: outside MCP servers (config/mcp.go).
	MCP MCP
	// Storage: where shared state lives (config/storage.go).
	Storage Storage
	// Peers: other AIRS instances as providers (config/peers.go).
	Peers []Peer
	// Chains: the engine that runs chains (config/temporal.go).
	Chains Chains
	// Claims: how long call claims are kept (config/claims.go).
	Claims Claims
	// Telemetry: tracing over OTLP, off by default (config/telemetry.go).
	Telemetry Telemetry
}

// Guard configures the guard layer: destructive calls wait for a person's
// confirmation, ReviewTools' calls are queued for review after the fact.
type Guard struct {
	// Enabled: true by default. false lets destructive calls run
	// unconfirmed over HTTP (the CLI's chat still asks).
	Enabled bool
	// ReviewTools are read-only tools whose calls are queued for review.
	ReviewTools []string
	// Reviewers are the agents who may approve and deny over HTTP and in
	// the attention page; the local CLI always may.
	Reviewers []string
	// SelfApprove lets a reviewer approve a call it held itself
	// (guard.self_approve; false by default: a second party approves).
	SelfApprove bool
	// Expiry of a confirmation (0: the guard's default, 15 min).
	Expiry time.Duration
	// MaxPending bounds the open reviews after the fact (0: 1000).
	MaxPending int
	// Anomaly configures the anomaly gate (guard.anomaly).
	Anomaly Anomaly
	// Affinity: which callers use which tools often (guard.affinity).
	Affinity Affinity
	// Speculation: guard.speculation (speculation.go).
	Speculation Speculation
}

// Anomaly configures the anomaly gate: the model file `airs guard train`
// writes, the score thresholds, and an optional candidate model scoring a
// share of callers (A/B). With no model file the gate is off and airs says
// so; a model written later is picked up without a restart.
type Anomaly struct {
	// Model is the model file; default $AIRS_HOME/guard/anomaly.model.
	Model string
	// ModelSet: the file named guard.anomaly.model (a missing file is
	// then a warning, not the quiet default of a home with no model yet).
	ModelSet bool
	// Warn, Review, Block are the thresholds in [0, 1]: log a warning;
	// queue for review after the fact; hold for a person's confirmation.
	Warn, Review, Block float64
	// Candidate is a second model file scoring CandidateShare (0–1) of
	// callers, chosen by a hash of the caller id; "" none.
	Candidate      string
	CandidateShare float64
}

// Default anomaly thresholds.
const (
	DefaultAnomalyWarn   = 0.8
	DefaultAnomalyReview = 0.9
	DefaultAnomalyBlock  = 0.95
	// AnomalyModelName is the model's file name in the guard directory.
	AnomalyModelName = "anomaly.model"
)

// GuardDir is where the guard keeps its reviews: $AIRS_HOME/guard.
func (c *Config) GuardDir() string { return filepath.Join(c.Home, "guard") }

// Recommend configures the recommender. Zero durations and counts take
// the recommender's defaults.
type Recommend struct {
	Enabled     bool // default true
	Watch       bool // watch the spaces' files (chat, serve); default true
	TTL         time.Duration
	PerMinute   int
	MaxActive   int
	Threshold   float64
	Cooldown    time.Duration
	SuppressAt  int
	SuppressFor time.Duration
}

// Agent is an identity that calls tools: the CLI's local user, an HTTP
// token's holder, a chain.
type Agent struct {
	ID string
	// Capabilities the agent holds (level 3), e.g. ReadSpace(documents).
	Capabilities []Capability
	// Providers the agent may reach (level 1); "*" is any.
	Providers []string
	// RateLimit overrides the default for this agent when non-nil.
	RateLimit *RateLimit
	// Trust is the agent's trust level, 0–3; 0 when not set. Accepted for
	// older configurations: the anomaly model learns each agent's habits
	// and no longer reads it.
	Trust int
	// Purpose is what the agent is for, in a sentence
	// (agents.NAME.purpose): the intent verifier judges its calls against it.
	Purpose string
}

// CLI maps local OS users to agents.
type CLI struct {
	// Users maps an OS user name to an agent id; "*" is any other user.
	Users map[string]string
}

// HTTP configures airs serve.
type HTTP struct {
	Listen string  // host:port, loopback by default
	Tokens []Token // bearer tokens, hashed
	// MaxBody bounds a request body in bytes (http.max_body; 0: the
	// server's default, 2 MiB).
	MaxBody int64
	// Limits bound each endpoint's input (http.limits; 0: the server's
	// defaults, server.DefaultLimits).
	Limits HTTPLimits
}

// HTTPLimits are airs serve's input limits per endpoint (server.Limits).
type HTTPLimits struct {
	SelectText, PlanText, PlanParts, ChatText, PipelineYAML int
	// Floods and heavy work (docs/limits.md).
	PerAddressPerSecond, PerAddressBurst                int
	HeavyText, HeavyCallBody, HeavyPerAgent, HeavyTotal int
}

// Token maps a bearer token, by its SHA-256, to an agent.
type Token struct {
	SHA256 [32]byte
	Agent  string
}

// Ollama says where the model server is.
type Ollama struct {
	Host       string // base URL
	Model      string // chat/generation model; "" = no-LLM mode
	EmbedModel string // embedding model; "" = the embedded default embedder
}

// ModelEngine says what decodes the selector's tool calls and plans:
// EngineOllama (the model server, ollama.model) or EngineInproc (a GGUF
// loaded in process by a binary built with the inproc tag, decoded under
// AIRS's own token masks). The in-process engine's model is GGUF, a file,
// or Name, a model pulled into Ollama whose GGUF is read from Ollama's
// model store ($OLLAMA_MODELS or ~/.ollama/models), so nothing is
// downloaded twice; at most one of them is set.
type ModelEngine struct {
	Engine string
	GGUF   string
	Name   string
	// Threads is the in-process engine's threads for one token's forward
	// pass (0: half the logical CPUs, which keeps a core for the masks and
	// for a loaded machine; on a quiet one, one per core decodes faster).
	Threads int
}

// The values of model.engine.
const (
	EngineOllama = "ollama"
	EngineInproc = "inproc"
)

// Recording configures session recording for evals.
type Recording struct {
	Enabled bool
	Dir     string
	// Redact lists keys (argument or field names, case-insensitive) whose
	// values are replaced by "[redacted]" in recordings.
	Redact []string
}

// Defaults.
const (
	DefaultListen     = "127.0.0.1:7777"
	DefaultOllamaHost = "http://127.0.0.1:11434"
	DefaultMaxPayload = 1 << 20
	DefaultMaxSteps   = 5
	MaxMaxSteps       = 50 // a turn's results all go to the model's context
	DefaultAgent      = "local"
	FileName          = "airs.yaml"
)

// AuditPath is the audit log's path: $AIRS_HOME/audit.jsonl.
func (c *Config) AuditPath() string { return filepath.Join(c.Home, "audit.jsonl") }

// IndexDir is where the vector index is persisted: $AIRS_HOME/index.
func (c *Config) IndexDir() string { return filepath.Join(c.Home, "index") }

// TrustLevels is each agent's trust level (agents.ID.trust).
func (c *Config) TrustLevels() map[string]int {
	m := map[string]int{}
	for id, a := range c.Agents {
		m[id] = a.Trust
	}
	return m
}

// CLIAgent returns the agent id the local OS user acts as: cli.users[user],
// else cli.users["*"], else an agent named like the user. The identity comes
// from the OS, never from a flag or a request.
func (c *Config) CLIAgent(osUser string) (string, error) {
	id, ok := c.CLI.Users[osUser]
	if !ok {
		id, ok = c.CLI.Users["*"]
	}
	if !ok {
		if _, exists := c.Agents[osUser]; exists {
			return osUser, nil
		}
		where := c.File
		if where == "" {
			where = "airs.yaml"
		}
		return "", fmt.Errorf("local user %q has no agent: add it under cli.users in %s (e.g. `%s: %s`)", osUser, where, osUser, DefaultAgent)
	}
	return id, nil
}

// LocalUser is the name of the OS user running this process.
func LocalUser() string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	for _, v := range []string{"USER", "USERNAME", "LOGNAME"} {
		if s := os.Getenv(v); s != "" {
			return s
		}
	}
	return "unknown"
}

// HashToken returns the hex SHA-256 of a bearer token, the form airs.yaml
// stores (http.tokens[].sha256).
func HashToken(token string) string {
	h := sha256.Sum256([]byte(token))
	return hex.EncodeToString(h[:])
}

// AgentForToken returns the agent a bearer token maps to. Every configured
// hash is compared in constant time, so timing reveals neither which
// token matched nor how much of one did.
func (c *Config) AgentForToken(token string) (string, bool) {
	h := sha256.Sum256([]byte(token))
	agent, found := "", false
	for _, t := range c.HTTP.Tokens {
		if subtle.ConstantTimeCompare(h[:], t.SHA256[:]) == 1 && !found {
			agent, found = t.Agent, true
		}
	}
	return agent, found
}

// Duration is a time.Duration written as "30s", "1m30s" or a number of
// seconds in airs.yaml.
type Duration time.Duration
