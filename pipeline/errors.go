package pipeline

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// The taxonomy has exactly 16 kinds, each with its own exit code (ExitCode)
// and HTTP status (the server maps them). Each kind is a struct type that
// carries the details a caller needs (errors.As), and matches a sentinel
// (errors.Is) so code that only cares about the kind need not name the type:
//
//	if errors.Is(err, pipeline.ErrTimeout) { ... }
//	var rl *pipeline.RateLimited
//	if errors.As(err, &rl) { sleep(rl.RetryAfterMs) }
//
// Kind strings are stable: they are written to the audit log and metrics, and
// the CLI maps them to exit codes, so renaming one is a breaking change.
const (
	KindToolNotFound            = "tool_not_found"
	KindToolDeprecated          = "tool_deprecated"
	KindChannelCapabilityDenied = "channel_capability_denied"
	KindIntentMisaligned        = "intent_misaligned"
	KindToolCapabilityDenied    = "tool_capability_denied"
	KindSchemaValidationFailed  = "schema_validation_failed"
	KindPayloadTooLarge         = "payload_too_large"
	KindTimeout                 = "timeout"
	KindProviderUnavailable     = "provider_unavailable"
	KindProviderCrashed         = "provider_crashed"
	KindProviderRejected        = "provider_rejected"
	KindRateLimited             = "rate_limited"
	KindCancelled               = "cancelled"
	// KindIntentVerificationRequired: level 2 holds a destructive call
	// until a person confirms it (the guard layer; Config.Gate).
	KindIntentVerificationRequired = "intent_verification_required"
	// KindWouldTimeout: the latency model is sure the call cannot finish
	// in what is left of its budget, so it was not dispatched (latency.go).
	KindWouldTimeout = "would_timeout"
	// KindAlreadyClaimed: an earlier attempt of the same call_id claimed
	// it, so this retry was not run (Config.Claims; claim.go).
	KindAlreadyClaimed = "already_claimed"
)

// kindError is a sentinel: a bare kind with no details, the target of errors.Is.
type kindError string

func (k kindError) Error() string { return strings.ReplaceAll(string(k), "_", " ") }
func (k kindError) Kind() string  { return string(k) }

// Sentinels, one per kind. Every detailed error below reports Is(sentinel).
var (
	ErrToolNotFound            error = kindError(KindToolNotFound)
	ErrToolDeprecated          error = kindError(KindToolDeprecated)
	ErrChannelCapabilityDenied error = kindError(KindChannelCapabilityDenied)
	ErrIntentMisaligned        error = kindError(KindIntentMisaligned)
	ErrToolCapabilityDenied    error = kindError(KindToolCapabilityDenied)
	ErrSchemaValidationFailed  error = kindError(KindSchemaValidationFailed)
	ErrPayloadTooLarge         error = kindError(KindPayloadTooLarge)
	ErrTimeout                 error = kindError(KindTimeout)
	ErrProviderUnavailable     error = kindError(KindProviderUnavailable)
	ErrProviderCrashed         error = kindError(KindProviderCrashed)
	ErrProviderRejected        error = kindError(KindProviderRejected)
	ErrRateLimited             error = kindError(KindRateLimited)
	ErrCancelled               error = kindError(KindCancelled)

	ErrIntentVerificationRequired error = kindError(KindIntentVerificationRequired)
	ErrWouldTimeout               error = kindError(KindWouldTimeout)
	ErrAlreadyClaimed             error = kindError(KindAlreadyClaimed)
)

// ErrProviderDead is what a handler wraps (fmt.Errorf("...: %w", ErrProviderDead))
// when the process or service behind it is gone. The Manager then deregisters
// the provider and answers ProviderUnavailable; it is not itself a kind.
var ErrProviderDead = errors.New("provider dead")

// ToolNotFound: no provider offers the tool (or the named version of it).
type ToolNotFound struct {
	Tool     string
	Provider string // the preferred provider, when the request named one
	Version  string // the requested version, when the request named one
	// OfferedBy lists the providers that do offer the tool when the
	// request named one that does not.
	OfferedBy []string
}

func (e *ToolNotFound) Error() string {
	s := "tool not found: " + e.Tool
	if e.Version != "" {
		s += "@" + e.Version
	}
	if e.Provider != "" {
		s += " (provider " + e.Provider + ")"
	}
	if len(e.OfferedBy) > 0 {
		s += "; it is offered by " + strings.Join(e.OfferedBy, ", ")
	}
	return s
}
func (e *ToolNotFound) Kind() string         { return KindToolNotFound }
func (e *ToolNotFound) Is(target error) bool { return target == ErrToolNotFound }

// ToolDeprecated: the tool is past its sunset date.
type ToolDeprecated struct {
	Tool        string
	Sunset      time.Time
	Replacement string // may be empty
}

func (e *ToolDeprecated) Error() string {
	s := fmt.Sprintf("tool %s was retired on %s", e.Tool, e.Sunset.Format(time.DateOnly))
	if e.Replacement != "" {
		s += "; use " + e.Replacement
	}
	return s
}
func (e *ToolDeprecated) Kind() string         { return KindToolDeprecated }
func (e *ToolDeprecated) Is(target error) bool { return target == ErrToolDeprecated }

// ChannelCapabilityDenied: level 1, the caller may not reach this provider.
type ChannelCapabilityDenied struct {
	Caller   string
	Provider string
}

func (e *ChannelCapabilityDenied) Error() string {
	return fmt.Sprintf("caller %q may not reach provider %q", e.Caller, e.Provider)
}
func (e *ChannelCapabilityDenied) Kind() string         { return KindChannelCapabilityDenied }
func (e *ChannelCapabilityDenied) Is(target error) bool { return target == ErrChannelCapabilityDenied }

// IntentMisaligned: level 2, the intent verifier judged the call does not fit
// what the user asked for.
type IntentMisaligned struct {
	Reason string
	// DeniedBy is set when a person denied the call (the intent gate's
	// confirmation Review), not a verifier.
	DeniedBy, Review string
}

func (e *IntentMisaligned) Error() string        { return "intent misaligned: " + e.Reason }
func (e *IntentMisaligned) Kind() string         { return KindIntentMisaligned }
func (e *IntentMisaligned) Is(target error) bool { return target == ErrIntentMisaligned }

// ToolCapabilityDenied: level 3, the caller lacks capabilities the tool requires.
type ToolCapabilityDenied struct {
	Required []Capability // the missing ones
}

func (e *ToolCapabilityDenied) Error() string {
	parts := make([]string, len(e.Required))
	for i, c := range e.Required {
		parts[i] = c.String()
	}
	return "missing capability: " + strings.Join(parts, ", ")
}
func (e *ToolCapabilityDenied) Kind() string         { return KindToolCapabilityDenied }
func (e *ToolCapabilityDenied) Is(target error) bool { return target == ErrToolCapabilityDenied }

// FieldError is one schema violation: where in the params (a JSON pointer,
// "" for the whole document) and what is wrong.
type FieldError struct {
	Pointer string `json:"pointer"`
	Message string `json:"message"`
}

// SchemaValidationFailed lists every violation, not only the first, so a model
// (or a person) can fix the call in one go.
// With Output set, it is the tool's output that failed its return_schema:
// the provider's fault, not the caller's.
type SchemaValidationFailed struct {
	Tool   string
	Errors []FieldError
	Output bool
	// Migration names the migration tool (name@version) whose output these
	// params were, for a call pinned to an older version: the provider's
	// bug, not the caller's.
	Migration string
}

func (e *SchemaValidationFailed) Error() string {
	var b strings.Builder
	if e.Output {
		b.WriteString("invalid output from ")
	} else {
		b.WriteString("invalid params for ")
	}
	b.WriteString(e.Tool)
	if e.Migration != "" {
		b.WriteString(" made by migration ")
		b.WriteString(e.Migration)
	}
	for i, fe := range e.Errors {
		if i == 0 {
			b.WriteString(": ")
		} else {
			b.WriteString("; ")
		}
		p := fe.Pointer
		if p == "" {
			p = "/"
		}
		b.WriteString(p)
		b.WriteString(": ")
		b.WriteString(fe.Message)
	}
	return b.String()
}
func (e *SchemaValidationFailed) Kind() string         { return KindSchemaValidationFailed }
func (e *SchemaValidationFailed) Is(target error) bool { return target == ErrSchemaValidationFailed }

// PayloadTooLarge: the params are bigger than the configured maximum.
type PayloadTooLarge struct {
	Max, Actual int
}

func (e *PayloadTooLarge) Error() string {
	return fmt.Sprintf("params too large: %d bytes, max %d", e.Actual, e.Max)
}
func (e *PayloadTooLarge) Kind() string         { return KindPayloadTooLarge }
func (e *PayloadTooLarge) Is(target error) bool { return target == ErrPayloadTooLarge }

// Timeout: the call's budget ran out before the handler answered.
type Timeout struct {
	Budget time.Duration // the whole budget, stages 1–6
}

func (e *Timeout) Error() string        { return fmt.Sprintf("timed out after %v", e.Budget) }
func (e *Timeout) Kind() string         { return KindTimeout }
func (e *Timeout) Is(target error) bool { return target == ErrTimeout }

// PatternTimeout: a JSON Schema `pattern` could not be checked within its
// match time limit (RegistryConfig.RegexTimeout), so the value was neither
// accepted nor refused and the call did not run. Its kind is timeout (the
// call ran out of time, not the caller's params out of the schema); only
// patterns that need the backtracking engine (lookaround,
// backreferences, ...) have a limit, and a long value against a pattern
// that backtracks hard is what reaches it.
type PatternTimeout struct {
	Tool    string
	Pattern string
	Limit   time.Duration
	Length  int  // the value's length in characters
	Output  bool // the tool's output was being checked, not its params
}

func (e *PatternTimeout) Error() string {
	what := "params"
	if e.Output {
		what = "output"
	}
	tool := ""
	if e.Tool != "" {
		tool = " of " + e.Tool
	}
	return fmt.Sprintf("pattern match timed out: checking %s%s against pattern %q took longer than %v (a value of %d characters); the value was not judged valid or invalid",
		what, tool, e.Pattern, e.Limit, e.Length)
}
func (e *PatternTimeout) Kind() string         { return KindTimeout }
func (e *PatternTimeout) Is(target error) bool { return target == ErrTimeout }

// Hint: unlike a call's timeout, a longer timeout does not help.
func (e *PatternTimeout) Hint() string {
	if e.Output {
		return "the tool's output is too long or complex for its return_schema's pattern to check in time: report it to its provider"
	}
	return "the value is too long or complex for the tool's pattern to check in time: send a shorter value (a longer timeout does not help)"
}

// of fills in what the validator could not know.
func (e *PatternTimeout) of(tool string, output bool) *PatternTimeout {
	c := *e
	c.Tool, c.Output = tool, output
	return &c
}

// Reasons for ProviderUnavailable.
const (
	ReasonProviderDead = "provider dead"
	ReasonCircuitOpen  = "circuit open"
)

// ProviderUnavailable: the provider is dead (and has been deregistered) or the
// tool's circuit breaker is open.
type ProviderUnavailable struct {
	Provider   string
	Tool       string
	Reason     string        // ReasonProviderDead or ReasonCircuitOpen
	RetryAfter time.Duration // for an open circuit: until the cooldown ends
}

func (e *ProviderUnavailable) Error() string {
	s := fmt.Sprintf("provider %q unavailable for %s: %s", e.Provider, e.Tool, e.Reason)
	if e.RetryAfter > 0 {
		s += fmt.Sprintf(" (retry after %v)", e.RetryAfter.Round(time.Millisecond))
	}
	return s
}
func (e *ProviderUnavailable) Kind() string         { return KindProviderUnavailable }
func (e *ProviderUnavailable) Is(target error) bool { return target == ErrProviderUnavailable }

// ProviderCrashed: the handler panicked. The panic is contained; Stack is kept
// for logs but not shown in Error().
type ProviderCrashed struct {
	Provider string
	Panic    string
	Stack    []byte
}

func (e *ProviderCrashed) Error() string {
	return fmt.Sprintf("provider %q crashed: %s", e.Provider, e.Panic)
}
func (e *ProviderCrashed) Kind() string         { return KindProviderCrashed }
func (e *ProviderCrashed) Is(target error) bool { return target == ErrProviderCrashed }

// ProviderRejected: an application error from the handler (bad input the
// schema could not express, a missing file, a refused operation).
type ProviderRejected struct {
	Code    string
	Message string
}

// Reject is how a handler reports an application error:
//
//	return nil, pipeline.Reject("not_found", "no such file: a.txt")
//
// A handler that returns any other error gets it wrapped as
// ProviderRejected{Code: "internal"}.
func Reject(code, message string) error { return &ProviderRejected{Code: code, Message: message} }

func (e *ProviderRejected) Error() string        { return "rejected (" + e.Code + "): " + e.Message }
func (e *ProviderRejected) Kind() string         { return KindProviderRejected }
func (e *ProviderRejected) Is(target error) bool { return target == ErrProviderRejected }

// ReasonOwnTimeouts is RateLimited.Reason for a caller held back because
// its calls keep timing out on the short deadline it chose
// (CallerTimeoutLimit).
const ReasonOwnTimeouts = "too many of this caller's calls timed out on its own deadline, shorter than the tools' budgets"

// RateLimited: the caller exceeded its rate; RetryAfterMs says when a token is back.
// Reason is empty for the rate limit itself, else why the caller is held back.
type RateLimited struct {
	Caller       string
	RetryAfterMs int64
	Reason       string
}

func (e *RateLimited) Error() string {
	if e.Reason != "" {
		return fmt.Sprintf("rate limited: %s; retry after %d ms", e.Reason, e.RetryAfterMs)
	}
	return fmt.Sprintf("rate limited: retry after %d ms", e.RetryAfterMs)
}

// Hint: for a caller held back for its own timeouts, what to change.
func (e *RateLimited) Hint() string {
	if e.Reason == ReasonOwnTimeouts {
		return "your calls keep timing out on the timeout you give them: after the retry-after time, give a longer timeout (or none, for the tool's own budget) or send less"
	}
	return ""
}
func (e *RateLimited) Kind() string         { return KindRateLimited }
func (e *RateLimited) Is(target error) bool { return target == ErrRateLimited }

// Cancelled: the call was cancelled (Manager.Cancel or the caller's context).
// A handler's partial output, if any, is in Result.Output.
type Cancelled struct {
	CallID string
}

func (e *Cancelled) Error() string        { return "call " + e.CallID + " cancelled" }
func (e *Cancelled) Kind() string         { return KindCancelled }
func (e *Cancelled) Is(target error) bool { return target == ErrCancelled }

// IntentVerificationRequired: level 2, the intent gate holds the call until
// a person confirms it. Nothing ran. ID names the pending confirmation: a
// reviewer approves it (once, or always for this agent and tool) or denies
// it, and the same call (same caller, tool and params) sent again then runs,
// or is refused as IntentMisaligned. The confirmation expires at Expires.
type IntentVerificationRequired struct {
	ID      string
	Caller  string
	Tool    string
	Expires time.Time
	// Reason is why level 2 holds it beyond the tool being destructive
	// (a flow, the intent verifier), "" when it is only that.
	Reason string
}

func (e *IntentVerificationRequired) Error() string {
	s := fmt.Sprintf("intent verification required: %s's call of %s waits for a person to confirm it (confirmation %s", e.Caller, e.Tool, e.ID)
	if !e.Expires.IsZero() {
		s += ", expires " + e.Expires.UTC().Format(time.RFC3339)
	}
	s += ")"
	if e.Reason != "" {
		s += ": " + e.Reason
	}
	return s
}
func (e *IntentVerificationRequired) Kind() string { return KindIntentVerificationRequired }
func (e *IntentVerificationRequired) Is(target error) bool {
	return target == ErrIntentVerificationRequired
}

// WouldTimeout: the latency model predicts the call takes longer than what
// is left of its budget, by more than its margin (AtLeast, the
// prediction's lower bound, exceeds Remaining), so it was refused before
// dispatch: nothing ran. Another call with a longer timeout, or smaller
// params, may run. LatencyConfig.NoWouldTimeout turns the advisory off.
type WouldTimeout struct {
	Tool, Provider string
	Predicted      time.Duration // the predicted handler time
	AtLeast        time.Duration // its lower bound at the model's margin
	Remaining      time.Duration // what was left of the budget at dispatch
	Budget         time.Duration // the whole budget
}

func (e *WouldTimeout) Error() string {
	return fmt.Sprintf("would time out: %s on %s is predicted to take %v (at least %v), and %v of the %v budget is left; not dispatched",
		e.Tool, e.Provider, e.Predicted.Round(time.Microsecond), e.AtLeast.Round(time.Microsecond),
		e.Remaining.Round(time.Microsecond), e.Budget)
}
func (e *WouldTimeout) Kind() string         { return KindWouldTimeout }
func (e *WouldTimeout) Is(target error) bool { return target == ErrWouldTimeout }

// kinder is implemented by every error kind and every sentinel.
type kinder interface{ Kind() string }

// KindOf returns the stable kind string of err, "" for nil, "internal" for an
// error that is none of the 16 kinds (an I/O failure of the audit log, say).
func KindOf(err error) string {
	if err == nil {
		return ""
	}
	var k kinder
	if errors.As(err, &k) {
		return k.Kind()
	}
	return "internal"
}

// kindInfo is the CLI-facing table: exit code and what the user should do.
type kindInfo struct {
	code int
	hint string
}

// Exit codes start at 10 so they never collide with 0 (ok), 1 (any other
// error) or 2 (usage, as flag packages use it), and stay below 126 where
// shells reserve codes. They are part of the CLI's contract: do not renumber.
var kinds = map[string]kindInfo{
	KindToolNotFound:               {10, "check the name with `airs tools list`, or load the manifest that declares it"},
	KindToolDeprecated:             {11, "the tool is retired: call its replacement instead"},
	KindChannelCapabilityDenied:    {12, "this caller may not use that provider: ask an admin to grant channel access in airs.yaml"},
	KindIntentMisaligned:           {13, "the call does not match the request: rephrase the request or call the tool explicitly"},
	KindToolCapabilityDenied:       {14, "grant the caller the missing capability in airs.yaml, or use a tool that needs less"},
	KindSchemaValidationFailed:     {15, "fix the listed params (see `airs tools show NAME` for the schema) and call again"},
	KindPayloadTooLarge:            {16, "send smaller params, or raise max_payload in airs.yaml"},
	KindTimeout:                    {17, "raise --timeout (max 600s) or narrow the request"},
	KindProviderUnavailable:        {18, "the provider is down or failing: wait for the cooldown, or pick another --provider"},
	KindProviderCrashed:            {19, "the tool crashed: report it to its provider; the call was not retried"},
	KindProviderRejected:           {20, "the tool refused the call: read its message and fix the input"},
	KindRateLimited:                {21, "too many calls: wait the retry-after time and call again"},
	KindCancelled:                  {22, "the call was cancelled; any partial output is shown: call again if you need all of it"},
	KindIntentVerificationRequired: {23, "a person confirms this call first: `airs review approve ID` (or `deny ID`; `airs review` lists them), then run the same call again"},
	KindWouldTimeout:               {24, "the call is predicted to take longer than its timeout: raise --timeout above the predicted time (max 600s), send less, or leave --timeout out to get the class budget (more when the prediction needs it)"},
	KindAlreadyClaimed:             {25, "an earlier attempt of this call id has not finished: call again later to get its outcome (replayed); if its replica died mid-call none comes: `airs audit tail` shows whether it ran"},
}

// ExitCode maps err to the `airs` process exit code: 0 for nil, 10–25 for the
// 16 kinds (in the order of the Kind constants), 1 for anything else.
func ExitCode(err error) int {
	if err == nil {
		return 0
	}
	if ki, ok := kinds[KindOf(err)]; ok {
		return ki.code
	}
	return 1
}

// The interfaces a hint can speak (HintFor): the `airs` command line, whose
// words are flags and subcommands, and the HTTP API, whose words are body
// fields and endpoints.
const (
	HintCLI  = "cli"
	HintHTTP = "http"
)

// httpHints replace the CLI hints that name a flag or a command, so an HTTP
// client is told about timeout_ms, not --timeout.
var httpHints = map[string]string{
	KindToolNotFound:               "check the tool's name and provider in GET /v1/tools, or load the manifest that declares it",
	KindSchemaValidationFailed:     "fix the listed arguments (GET /v1/tools shows each tool's parameters schema) and call again",
	KindTimeout:                    "raise \"timeout_ms\" (max 600000) or narrow the request",
	KindProviderUnavailable:        "the provider is down or failing: wait for the cooldown (Retry-After), or name another \"provider\"",
	KindRateLimited:                "too many requests: wait the Retry-After seconds and send it again",
	KindIntentVerificationRequired: "a reviewer approves the confirmation (POST /v1/reviews/{id}/approve, the attention page, or `airs review approve ID`), then send the same call again",
	KindWouldTimeout:               "the call is predicted to take longer than its timeout: raise \"timeout_ms\" above the predicted time (max 600000), send less, or leave \"timeout_ms\" out to get 3x the prediction",
	KindAlreadyClaimed:             "an earlier attempt of this \"call_id\" has not finished: send it again after Retry-After to get its outcome (\"replayed\": true); if its replica died mid-call none comes: `airs audit tail` shows whether it ran",
}

// Hint is a one-line suggestion of what the user should do about err, in
// the command line's words; "" for nil.
func Hint(err error) string { return HintFor(err, HintCLI) }

// HintFor is Hint in the words of iface (HintCLI or HintHTTP; anything
// else is HintCLI).
func HintFor(err error, iface string) string {
	if err == nil {
		return ""
	}
	// An error that knows better than its kind's table (chains/temporal's
	// unreachable server, say: provider_unavailable, but no cooldown).
	var own interface{ Hint() string }
	if errors.As(err, &own) && own.Hint() != "" {
		return own.Hint()
	}
	var sv *SchemaValidationFailed
	if errors.As(err, &sv) && sv.Output {
		return "the tool returned output that breaks its own return_schema: report it to its provider"
	}
	if sv != nil && sv.Migration != "" {
		return "the migration from the version you pinned made params the current version rejects: report it to the tool's provider, or call the current version with its own params"
	}
	var im *IntentMisaligned
	if errors.As(err, &im) && im.DeniedBy != "" {
		return "a person (" + im.DeniedBy + ") refused this call: do not send it again; ask them if it is needed"
	}
	kind := KindOf(err)
	if h, ok := httpHints[kind]; ok && iface == HintHTTP {
		return h
	}
	if ki, ok := kinds[kind]; ok {
		return ki.hint
	}
	return "an internal error: see the logs, and report it if it persists"
}

// Kinds lists the 16 kind strings in exit-code order.
func Kinds() []string {
	return []string{
		KindToolNotFound, KindToolDeprecated, KindChannelCapabilityDenied, KindIntentMisaligned,
		KindToolCapabilityDenied, KindSchemaValidationFailed, KindPayloadTooLarge, KindTimeout,
		KindProviderUnavailable, KindProviderCrashed, KindProviderRejected, KindRateLimited, KindCancelled,
		KindIntentVerificationRequired, KindWouldTimeout, KindAlreadyClaimed,
	}
}
