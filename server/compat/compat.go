// Package compat lets the clients people already use talk to `airs serve`:
// OpenAI's POST /v1/chat/completions and Ollama's POST /api/chat (each
// streaming and not), with the model listings those clients ask for first
// (GET /v1/models, /api/tags, /api/version). A client changes only its
// base URL (and sends a token of http.tokens as its API key).
//
// Its one concern is translating the two wire formats to one Request and
// one Reply and back, in each API's own shapes (its errors included): what
// answers a request is a Backend (server/compat/complete chooses and
// generates the calls). The server's authentication, rate limits and size
// limits apply as on AIRS's own endpoints.
package compat

import (
	"context"
	"encoding/json"
)

// Request is a chat request of either API.
type Request struct {
	Model    string
	Messages []Message
	// Tools are the client's tools: the reply may call them (the client
	// runs them and sends the result back as a "tool" message).
	Tools []Tool
	// Choice is tool_choice: ChoiceAuto when absent (ChoiceNone with no
	// tools).
	Choice ToolChoice
	// Parallel allows several calls in one reply (parallel_tool_calls;
	// Ollama: always).
	Parallel bool
	// Schema, when set, is the JSON Schema the reply's content follows
	// (response_format json_schema, Ollama's format); JSON alone asks for
	// any JSON object (json_object, format "json").
	Schema json.RawMessage
	JSON   bool
	// MaxTokens bounds the generated tokens (0: the backend's default).
	MaxTokens int
}

// LastUser is the content of the last user message ("" when there is none).
func (r *Request) LastUser() string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == "user" {
			return r.Messages[i].Content
		}
	}
	return ""
}

// Message is one message of the conversation: system, user, assistant
// (with the calls it made) or tool (a call's result).
type Message struct {
	Role    string
	Content string
	Calls   []Call // assistant
	CallID  string // tool: the call it answers (OpenAI)
	Name    string // tool: the tool's name (Ollama's tool_name)
}

// Tool is one function the client offers.
type Tool struct {
	Name        string
	Description string
	Parameters  json.RawMessage // JSON Schema of the arguments; empty: none
}

// ChoiceMode is how tool_choice constrains the reply.
type ChoiceMode string

const (
	ChoiceAuto     ChoiceMode = "auto"     // a call or an answer, whichever fits
	ChoiceNone     ChoiceMode = "none"     // an answer, never a call
	ChoiceRequired ChoiceMode = "required" // at least one call
	ChoiceFunction ChoiceMode = "function" // a call of the named function
)

// ToolChoice is the request's tool_choice.
type ToolChoice struct {
	Mode ChoiceMode
	Name string // ChoiceFunction: the function
}

// Call is one tool call of a reply.
type Call struct {
	ID        string
	Name      string
	Arguments json.RawMessage // a JSON object
}

// Mode is how a reply was made; it is sent in the X-AIRS-Mode header.
type Mode string

const (
	ModeModel Mode = "model"  // the configured model, under AIRS's grammar
	ModeNoLLM Mode = "no-llm" // no model: AIRS's retrieval and argument extraction
	ModeAIRS  Mode = "airs"   // AIRS's own tools, run server-side through the pipeline
)

// Reply is the assistant's answer: content, calls, or both.
type Reply struct {
	Content string
	Calls   []Call
	Mode    Mode
	Model   string // the model that answered (the request's when empty)
	// Notice says, in a sentence, what the client should know about how
	// the reply was made (no-LLM mode, no tool fitting); sent in the
	// X-AIRS-Notice header.
	Notice string
	// Truncated: generation stopped at MaxTokens (finish_reason "length").
	Truncated bool
	// PromptTokens and CompletionTokens are the usage the backend counted
	// (0 when it counts none).
	PromptTokens, CompletionTokens int
}

// ModelInfo is one model a listing shows.
type ModelInfo struct {
	Name string
	// Family is what the model is ("airs" for AIRS's own tools, "no-llm"
	// for the no-model path, the backend's family otherwise).
	Family string
}

// Backend answers the requests.
type Backend interface {
	// Complete answers req for caller. onText (may be nil) receives the
	// content as it is generated, with the mode generating it, for a
	// streamed answer; the Reply holds all of it. An error the client
	// caused is a *RequestError.
	Complete(ctx context.Context, caller string, req *Request, onText func(mode Mode, chunk string) error) (*Reply, error)
	// Models lists the models caller may name.
	Models(ctx context.Context, caller string) []ModelInfo
}

// RequestError is a request the backend cannot answer as sent (400): a
// tool_choice naming a function that is not among the tools, a schema
// that does not compile.
type RequestError struct {
	Param   string // the request field at fault, e.g. "tool_choice"
	Message string
}

func (e *RequestError) Error() string { return e.Message }
