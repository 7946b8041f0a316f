// Package session is the recorded-session log: every request AIRS serves
// (airs chat, airs serve) as one JSON line — the request, the candidates
// with their score components, the grammar, the model, its raw output, the
// parsed call, validation, execution and latency — plus the user's feedback.
// Replay and tuning read it back; FORMAT.md documents the format.
//
// Recorder appends crash-safely (one writer goroutine, fsync per batch, a
// record is acknowledged only once it is on disk, a torn last line is cut
// off on open), redacts configured parameter names, and can be switched
// off. Reader reads a log back, tolerating a torn last line.
package session

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"time"
)

// Version is the format version this package writes (the "v" field).
const Version = 1

// Record kinds.
const (
	KindRequest  = "request"  // one served request
	KindFeedback = "feedback" // feedback that arrived after its request was written
)

// Feedback verdicts.
const (
	Accepted  = "accepted"
	Dismissed = "dismissed"
	Corrected = "corrected"
)

// Execution outcomes (the pipeline's, plus "skipped" for a call that was
// never run, e.g. a dry run or a dismissed suggestion).
const (
	OutcomeOK        = "ok"
	OutcomeError     = "error"
	OutcomeTimeout   = "timeout"
	OutcomeCancelled = "cancelled"
	OutcomeDenied    = "denied"
	OutcomeSkipped   = "skipped"
)

// Record is one line of a session log (format v1). A request record holds
// everything known when the request finished; feedback that comes later is
// its own record (Kind "feedback", Ref = the request's ID), since the log is
// append-only. Merge folds such records into their requests.
type Record struct {
	V       int       `json:"v"`
	Kind    string    `json:"kind"`
	ID      string    `json:"id"`
	Ref     string    `json:"ref,omitempty"` // feedback: the request's ID
	Time    time.Time `json:"time"`
	Session string    `json:"session,omitempty"` // conversation the request belongs to
	Channel string    `json:"channel,omitempty"` // "chat", "serve", …

	Caller  string `json:"caller,omitempty"`  // agent ID, as the channel set it
	Request string `json:"request,omitempty"` // the natural-language request

	Candidates  []Candidate `json:"candidates,omitempty"`   // ranked, best first
	GrammarHash string      `json:"grammar_hash,omitempty"` // hash of the per-request grammar
	Model       *Model      `json:"model,omitempty"`        // nil: no-LLM path
	RawOutput   string      `json:"raw_output,omitempty"`   // the model's text, as emitted

	// Call is the parsed call; nil means AIRS chose no tool ("none").
	Call *Call `json:"call,omitempty"`
	// Steps are the calls of a multi-step plan, in plan order, when the
	// request was planned as a DAG (Call is then nil).
	Steps []Call `json:"steps,omitempty"`
	// TurnSteps are the steps of a turn that took more than one: each
	// selection the model made after the first (a further call, or "none"
	// to end), or each step of a plan run in no-LLM mode, with its
	// validation and execution. Call, Validation and Execution above are
	// the first step's. Absent for a turn of one step.
	TurnSteps  []TurnStep  `json:"turn_steps,omitempty"`
	Validation *Validation `json:"validation,omitempty"`
	Execution  *Execution  `json:"execution,omitempty"`
	Latency    *Latency    `json:"latency,omitempty"`
	Feedback   *Feedback   `json:"feedback,omitempty"`

	// Redacted lists the argument paths whose values were replaced (set by
	// the Recorder).
	Redacted []string `json:"redacted,omitempty"`
}

// Candidate is one tool the selector considered, with its score and the
// score's components by name (semantic, trust, success, speed, preference,
// … — whatever the scorer reports; this package does not interpret them).
type Candidate struct {
	Tool       string             `json:"tool"`
	Score      float64            `json:"score"`
	Components map[string]float64 `json:"components,omitempty"`
}

// Model says which model generated the call and how.
type Model struct {
	Backend string         `json:"backend"` // "ollama", "inprocess", …
	Name    string         `json:"name"`
	Options map[string]any `json:"options,omitempty"` // temperature, seed, num_predict, …
}

// Call is a tool call: the tool and its arguments.
type Call struct {
	Tool      string         `json:"tool"`
	Arguments map[string]any `json:"arguments"`
}

// TurnStep is one step of a multi-step turn.
type TurnStep struct {
	Step      int    `json:"step"`                 // 1-based
	RawOutput string `json:"raw_output,omitempty"` // the model's text for this step
	// Call is the step's call; nil means the model answered "none" (the
	// results so far are enough).
	Call       *Call       `json:"call,omitempty"`
	Validation *Validation `json:"validation,omitempty"`
	Execution  *Execution  `json:"execution,omitempty"`
	// GenerationMS is the step's selection time (generation, or retrieval
	// and extraction in no-LLM mode).
	GenerationMS float64 `json:"generation_ms,omitempty"`
	// Note says why the turn stopped at this step, when it stopped early
	// (max_steps reached, a call declined or invalid, a repeated call).
	Note string `json:"note,omitempty"`
}

// Validation is the pipeline's schema validation of the call.
type Validation struct {
	Valid  bool     `json:"valid"`
	Errors []string `json:"errors,omitempty"`
}

// Execution is how running the call went.
type Execution struct {
	Outcome   string  `json:"outcome"`              // see the Outcome constants
	ErrorKind string  `json:"error_kind,omitempty"` // the pipeline's error taxonomy code
	Error     string  `json:"error,omitempty"`
	LatencyMS float64 `json:"latency_ms"`
}

// Latency splits the request's wall time, in milliseconds.
type Latency struct {
	RetrievalMS  float64 `json:"retrieval_ms,omitempty"`
	GrammarMS    float64 `json:"grammar_ms,omitempty"`
	GenerationMS float64 `json:"generation_ms,omitempty"`
	ExecutionMS  float64 `json:"execution_ms,omitempty"`
	TotalMS      float64 `json:"total_ms"`
}

// Feedback is what the user did with the result.
type Feedback struct {
	Verdict   string    `json:"verdict"`             // accepted, dismissed, corrected
	Corrected *Call     `json:"corrected,omitempty"` // the right call, for "corrected"; nil there means "no tool"
	Note      string    `json:"note,omitempty"`
	Time      time.Time `json:"time,omitzero"`
}

// NewID returns a random 128-bit record ID in hex.
func NewID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Label returns the call a replay should score against, and whether the
// record is labelled at all:
//
//   - corrected feedback: the corrected call (nil: "no tool" was right);
//   - accepted feedback: the recorded call (nil: "no tool" was right);
//   - dismissed feedback: unlabelled (we know only what was wrong);
//   - no feedback: when implicit is true, a call that executed with outcome
//     "ok" (or a request where no tool was chosen) counts as accepted;
//     otherwise unlabelled.
func (r Record) Label(implicit bool) (call *Call, labelled bool) {
	if r.Feedback != nil {
		switch r.Feedback.Verdict {
		case Corrected:
			return r.Feedback.Corrected, true
		case Accepted:
			return r.Call, true
		default:
			return nil, false
		}
	}
	if !implicit {
		return nil, false
	}
	if r.Call == nil && len(r.Steps) == 0 {
		return nil, true
	}
	if r.Execution != nil && r.Execution.Outcome == OutcomeOK {
		return r.Call, true
	}
	return nil, false
}

// decodeRecord parses one line, keeping numbers as json.Number so that
// arguments round-trip exactly (5 stays 5, 5.0 stays 5.0).
func decodeRecord(line []byte) (Record, error) {
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	var r Record
	err := dec.Decode(&r)
	return r, err
}
