package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// TrustLevel ranks who vouches for a tool: TL0 community … TL3 system.
type TrustLevel int

const (
	TL0 TrustLevel = iota // community
	TL1                   // verified publisher
	TL2                   // organisation
	TL3                   // system (built in)
)

// LatencyClass tells the dispatcher which default timeout a tool gets when the
// caller asks for none (or for more than the system maximum).
type LatencyClass int

const (
	Instant     LatencyClass = iota // 100 ms
	Fast                            // 5 s
	Slow                            // 60 s
	LongRunning                     // 300 s
)

// Capability is something a caller may hold and a tool may require, written
// as Kind(Arg): ReadSpace(documents), Network(smtp.example.org), Network(*).
type Capability struct {
	Kind string `json:"kind"`
	Arg  string `json:"arg,omitempty"`
}

func (c Capability) String() string { return fmt.Sprintf("%s(%s)", c.Kind, c.Arg) }

// Deprecation marks a tool that is going away. Past Sunset, calls fail with
// ToolDeprecated naming Replacement.
type Deprecation struct {
	Sunset      time.Time `json:"sunset"`
	Replacement string    `json:"replacement,omitempty"`
}

// Tool is the registry's description of one callable tool.
type Tool struct {
	Name               string          `json:"name"`
	Version            string          `json:"version"`
	Description        string          `json:"description"`
	Parameters         json.RawMessage `json:"parameters"`              // JSON Schema 2020-12
	ReturnSchema       json.RawMessage `json:"return_schema,omitempty"` // optional
	CapabilityRequired []Capability    `json:"capability_required,omitempty"`
	Trust              TrustLevel      `json:"trust"`
	LatencyClass       LatencyClass    `json:"latency_class"`
	Idempotent         bool            `json:"idempotent"`
	// ReadOnly: a call changes nothing (it reads, computes, lists).
	// Destructive: a call may remove or overwrite something that cannot be
	// had back (delete a file, send an email). The intent gate (Config.Gate)
	// holds a destructive call until a person confirmed it. A tool is never
	// both; a tool that is neither writes without destroying (creates a file).
	ReadOnly    bool         `json:"read_only"`
	Destructive bool         `json:"destructive"`
	Lenient     bool         `json:"lenient"` // opt-in coercion (the seed's table)
	Deprecation *Deprecation `json:"deprecation,omitempty"`
	// Migrations let callers pinned to an older major version keep calling
	// this one: their params are mapped by a migration tool (migrate.go).
	Migrations []Migration `json:"migrations,omitempty"`
}

// Call is what a handler learns about the call it serves.
type Call struct {
	ID       string
	Tool     string
	Provider string
	Caller   string // agent id, set by the channel
}

// Handler runs a tool. It is the only thing a provider implements; everything
// else (validation, timeouts, audit) is composed around it, as net/http does.
// A handler that is cancelled may return partial output together with
// ctx.Err(); the pipeline delivers it with the Cancelled outcome. A handler
// must stop soon after ctx ends: see "The handler contract" in the package
// doc.
type Handler interface {
	Invoke(ctx context.Context, params json.RawMessage, call *Call) (json.RawMessage, error)
}

// ContextBound marks a Handler that returns promptly once its context
// ends, whatever the tool does: AIRS's own MCP client, whose request
// returns at cancellation (and kills a server that does not stop). The
// pipeline runs such a handler on the caller's goroutine; every other
// handler runs on a goroutine of its own, which the caller can stop
// waiting for at the budget's end however the handler behaves.
type ContextBound interface {
	Handler
	ContextBound()
}

// ContextBoundFunc adapts a function that honours its context to a
// ContextBound Handler.
type ContextBoundFunc func(ctx context.Context, params json.RawMessage, call *Call) (json.RawMessage, error)

// Invoke calls f.
func (f ContextBoundFunc) Invoke(ctx context.Context, params json.RawMessage, call *Call) (json.RawMessage, error) {
	return f(ctx, params, call)
}

// ContextBound marks f as ContextBound.
func (ContextBoundFunc) ContextBound() {}

// HandlerFunc adapts a function to Handler.
type HandlerFunc func(ctx context.Context, params json.RawMessage, call *Call) (json.RawMessage, error)

func (f HandlerFunc) Invoke(ctx context.Context, params json.RawMessage, call *Call) (json.RawMessage, error) {
	return f(ctx, params, call)
}

// Encoding of Request.Params.
type Encoding int

const (
	JSON Encoding = iota
	MsgPack
)

// Request is one call as it enters stage 1. Caller is filled in by the
// channel (CLI user, HTTP token mapping); it is never decoded from a body.
type Request struct {
	CallID   string
	Tool     string
	Provider string // optional: prefer this provider
	Params   []byte
	Encoding Encoding
	Timeout  time.Duration // 0: the tool's latency-class default
	Caller   string

	// Version pins a tool version ("" = the highest each provider offers):
	// exactly ("1.2.0"), or by prefix ("1", "1.x", "1.2.*": the highest
	// version under it). A pin whose major version is no longer registered
	// reaches a newer major that declares a migration from it.
	Version string
	// Intent is the user's request in their words, when the channel has it;
	// the intent verifier (capability level 2) judges the call against it.
	Intent string
	// Turn names the model turn the call is a step of (the engine's turn
	// id): an argument of a later step that is not in Intent carries the
	// labels of what earlier steps showed the model (level2.go).
	Turn string
	// Speculative runs the call ahead of time for a predicted real call
	// (Manager.Speculate, speculate.go): read-only idempotent tools only,
	// its result cached, not delivered as a call.
	Speculative bool
}

// Outcome of a call, as recorded in the audit log and metrics.
type Outcome string

const (
	OutcomeOK        Outcome = "ok"
	OutcomeError     Outcome = "error"
	OutcomeCancelled Outcome = "cancelled"
	OutcomeTimeout   Outcome = "timeout"
)

// Result is what stage 7 delivers.
type Result struct {
	CallID   string          `json:"call_id"`
	Tool     string          `json:"tool"`
	Provider string          `json:"provider"`
	Outcome  Outcome         `json:"outcome"`
	Output   json.RawMessage `json:"output,omitempty"` // partial when Cancelled
	Latency  time.Duration   `json:"latency_ns"`

	Version   string `json:"version,omitempty"`
	ErrorKind string `json:"error_kind,omitempty"` // KindOf(err) when Outcome != ok
	// Warning is set for a deprecated tool called before its sunset.
	Warning string `json:"warning,omitempty"`
	// MigratedFrom is the version the caller pinned when a migration mapped
	// its params to Version; "" when no migration ran.
	MigratedFrom string `json:"migrated_from,omitempty"`
	// Predicted is the handler time the latency model predicted when the
	// call was dispatched (0: no prediction yet; see LatencyConfig).
	Predicted time.Duration `json:"predicted_ns,omitempty"`
	// SpeculativeHit: the result came from a speculative run of the same
	// call (speculate.go), not from running the handler now.
	SpeculativeHit bool `json:"speculative_hit,omitempty"`
	// Provenance are the labels of the call's arguments, by argument
	// ("space:documents/a.pdf (untrusted)"), and Level2 the level-2
	// verdict and its reason, when Config.Level2 checked the call.
	Provenance map[string][]string `json:"provenance,omitempty"`
	Level2     string              `json:"level2,omitempty"`
	// Replayed: a retry of a claimed call (same call_id) that ended before:
	// this is the first attempt's outcome, and nothing ran now (claim.go).
	Replayed bool `json:"replayed,omitempty"`
}
