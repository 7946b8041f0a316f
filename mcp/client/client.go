// Package client makes the tools of outside MCP servers pipeline providers:
// every call still takes the Tool Manager's seven stages, with the server's
// inputSchema as the schema stage's schema.
//
// Connect starts a stdio server (a process of its own, in its own process
// group) or reaches a streamable HTTP one, lists its tools and registers
// each as NS.tool under provider "mcp:NAME". The separator is "." because
// the registry's names allow no "/" and tool names travel in URL paths
// (/v1/tools/NAME) and in grammars; a server's own names keep their
// spelling after the prefix. Every tool requires MCP(NAME) beside what the
// server's configuration requires, so nothing is callable until granted.
//
// What goes wrong, and what a caller is told:
//
//   - a timeout or cancel: the go-sdk sends notifications/cancelled; the
//     call is Timeout or Cancelled. A stdio server that then does not
//     answer a ping within the grace period is killed and restarted.
//   - the process exits during a call, or the connection breaks:
//     ProviderCrashed, with the exit status and the end of its stderr; the
//     server is restarted with backoff, at most RestartsPerMinute a
//     minute; past that it rests (RestBackoff, doubling up to
//     MaxRestBackoff) and is tried again in the background, its calls
//     failing meanwhile with ProviderUnavailable and a Retry-After. With
//     RestartsPerMinute 0 it is never restarted: its tools are
//     deregistered at their next lookup.
//   - a line that is not JSON-RPC: ProviderCrashed ("broke the protocol"),
//     and the server is killed and restarted.
//   - a message over MaxMessageBytes: ProviderRejected message_too_large
//     (read stops at the bound; the server is restarted); a result over
//     MaxResponseBytes: ProviderRejected response_too_large.
//   - more tools than MaxTools: Connect fails, naming the bound. A tool
//     whose schema the validator or the call grammar cannot compile is
//     left out (Conn.Unavailable says why); the others work.
//   - notifications/tools/list_changed: the tools are listed again and
//     the registry follows; OnChange runs (the engine reindexes).
//
// Bridges: a server's sampling/createMessage is answered by the Sampler
// the engine sets (sampling.go; refused without one); its resources are
// the space mcp-NAME of list-files and read-file (resources.go); its
// prompts are Prompts and GetPrompt, for chat's /prompt (prompts.go).
package client

import (
	"cmp"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airs-dev/airs/grammar"
	"github.com/airs-dev/airs/pipeline"
	"github.com/airs-dev/airs/selector"
)

// Server is one configured MCP server: how to reach it, what its tools
// require, and its bounds. Zero bounds take the defaults of config/mcp.go.
type Server struct {
	Name      string // the provider is ProviderID(Name)
	Namespace string // tools are NS.tool ("" = Name): the registry allows no "/"
	// Requires are what a caller must hold for every tool, beside
	// MCP(Name), which every tool of the server requires.
	Requires []pipeline.Capability

	// Command (stdio; its arguments included), Env ("K=V": with the few
	// variables of InheritedEnv, the server's whole environment, see
	// ServerEnv) and Dir; or URL (streamable HTTP) with Headers; or, in
	// tests, a Transport (connected once, never restarted).
	Command    []string
	Env        []string
	Dir        string
	URL        string
	Headers    http.Header
	HTTPClient *http.Client
	Transport  mcp.Transport

	// Timeout bounds one call (0: the pipeline's budget alone); it also
	// picks the tools' latency class, so the pipeline's budget is at least
	// as long.
	Timeout           time.Duration
	MaxTools          int // 0 = 1000
	MaxMessageBytes   int // 0 = 16 MiB
	MaxResponseBytes  int // 0 = 4 MiB
	RestartsPerMinute int // 0: a server that dies is not restarted
	// RestBackoff is the first rest of a server past its restart budget
	// (0 = DefaultRestBackoff).
	RestBackoff time.Duration
	// MaxSampleTokens caps a sampling request's maxTokens (0 = 1024);
	// SampleTimeout bounds the model's answer (0 = 60 s).
	MaxSampleTokens int
	SampleTimeout   time.Duration
	// NoSampling refuses every sampling request and does not advertise
	// the capability (mcp.servers.NAME.sampling.enabled: false).
	NoSampling    bool
	Grace         time.Duration
	ClientVersion string // AIRS's version, sent in initialize
	// Pins keep each tool's effect as granted or reviewed (pin.go); nil:
	// pins live as long as the Conn. Effects state a tool's effect (by
	// the server's name of it) over its hints (mcp.servers.NAME.tools).
	Pins    PinStore
	Effects map[string]Effect
	PinPoll time.Duration // 0 = PinPoll
	Logger  *slog.Logger

	noRedial bool // the Transport was used
}

func (s Server) maxTools() int        { return cmp.Or(max(s.MaxTools, 0), 1000) }
func (s Server) maxMessage() int      { return cmp.Or(max(s.MaxMessageBytes, 0), 16<<20) }
func (s Server) maxResponse() int     { return cmp.Or(max(s.MaxResponseBytes, 0), 4<<20) }
func (s Server) grace() time.Duration { return cmp.Or(max(s.Grace, 0), 2*time.Second) }
func (s Server) restBackoff() time.Duration {
	return min(cmp.Or(max(s.RestBackoff, 0), DefaultRestBackoff), MaxRestBackoff)
}

// Capability is MCP(name), which every tool of server name requires: an
// outside server's tools are callable only by agents granted it.
func Capability(name string) pipeline.Capability { return pipeline.Capability{Kind: "MCP", Arg: name} }

// ToolFromMCP maps an MCP tool onto the registry's description. The hints
// take the MCP spec's defaults when absent (readOnly false, destructive
// true, idempotent false); destructive and idempotent mean something only
// for a tool that is not read-only, as the spec says.
func ToolFromMCP(s Server, t *mcp.Tool) (pipeline.Tool, error) {
	schema, err := json.Marshal(t.InputSchema)
	if err != nil || t.InputSchema == nil {
		return pipeline.Tool{}, fmt.Errorf("mcp server %s: tool %q has no usable inputSchema", s.Name, t.Name)
	}
	ns := s.Namespace
	if ns == "" {
		ns = s.Name
	}
	out := pipeline.Tool{
		Name:               ns + "." + t.Name,
		Version:            "1.0.0",
		Description:        t.Description,
		Parameters:         schema,
		CapabilityRequired: append([]pipeline.Capability{Capability(s.Name)}, s.Requires...),
		Trust:              pipeline.TL0,
		LatencyClass:       latencyClass(s.Timeout),
		Destructive:        true,
	}
	if t.OutputSchema != nil {
		// The server promises structuredContent of this shape; the
		// pipeline's return check holds it to that, and /mcp lists it.
		if b, err := json.Marshal(t.OutputSchema); err == nil {
			out.ReturnSchema = b
		}
	}
	if a := t.Annotations; a != nil {
		out.ReadOnly = a.ReadOnlyHint
		if a.DestructiveHint != nil {
			out.Destructive = *a.DestructiveHint
		}
		out.Idempotent = a.IdempotentHint
	}
	if out.ReadOnly {
		out.Destructive = false
		out.Idempotent = true // reading twice changes nothing
	}
	return out, nil
}

// latencyClass is the smallest class whose default budget covers the
// server's timeout.
func latencyClass(d time.Duration) pipeline.LatencyClass {
	for _, c := range []pipeline.LatencyClass{pipeline.Fast, pipeline.Slow, pipeline.LongRunning} {
		if d <= pipeline.ClassTimeouts[c] {
			return c
		}
	}
	return pipeline.LongRunning
}

// Unavailable is a tool the server lists that AIRS cannot offer, and why.
type Unavailable struct {
	Tool, Reason string
}

// checkGrammar compiles the tool's call grammar as the selector will (the
// result is cached, so its first request pays nothing more): a schema the
// grammar cannot express leaves the tool out, with the reason.
func checkGrammar(t pipeline.Tool) error {
	if _, err := grammar.ToolCall([]grammar.ToolSchema{{Name: t.Name, Parameters: t.Parameters}}, selector.ToolCallGrammar); err != nil {
		return fmt.Errorf("its inputSchema has no call grammar: %v", err)
	}
	return nil
}
