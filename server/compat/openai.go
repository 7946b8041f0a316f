package compat

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/airs-dev/airs/server"
)

// openAI answers errors as OpenAI does: {"error": {"message", "type",
// "param", "code"}}. The official clients choose their exception by the
// status (401: AuthenticationError, 429: RateLimitError …).
type openAI struct{}

func (openAI) writeError(w http.ResponseWriter, status int, code, msg string) {
	typ := "invalid_request_error"
	switch {
	case status == http.StatusTooManyRequests:
		typ = "rate_limit_error"
	case status == http.StatusUnauthorized:
		typ = "authentication_error"
	case status >= 500:
		typ = "server_error"
	}
	writeJSON(w, status, map[string]any{"error": map[string]any{"message": msg, "type": typ, "param": nil, "code": code}})
}

// oaiRequest is the part of a chat completion request AIRS reads.
type oaiRequest struct {
	Model             string          `json:"model"`
	Messages          []oaiMessage    `json:"messages"`
	Tools             []oaiTool       `json:"tools"`
	ToolChoice        json.RawMessage `json:"tool_choice"`
	ParallelToolCalls *bool           `json:"parallel_tool_calls"`
	Stream            bool            `json:"stream"`
	StreamOptions     *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	ResponseFormat      *oaiFormat `json:"response_format"`
	MaxTokens           int        `json:"max_tokens"`
	MaxCompletionTokens int        `json:"max_completion_tokens"`
	N                   int        `json:"n"`
}

type oaiMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"` // a string, an array of parts, or null
	ToolCalls  []oaiToolCall   `json:"tool_calls,omitempty"`
	ToolCallID string          `json:"tool_call_id,omitempty"`
	Name       string          `json:"name,omitempty"`
}

type oaiTool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
	} `json:"function"`
}

type oaiToolCall struct {
	Index    *int   `json:"index,omitempty"` // stream deltas only
	ID       string `json:"id,omitempty"`
	Type     string `json:"type,omitempty"`
	Function struct {
		Name      string `json:"name,omitempty"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type oaiFormat struct {
	Type       string `json:"type"` // text, json_object, json_schema
	JSONSchema *struct {
		Name   string          `json:"name"`
		Schema json.RawMessage `json:"schema"`
	} `json:"json_schema"`
}

// text is a message's content: a string, or the text parts of an array.
func contentText(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	if raw[0] == '"' {
		var s string
		err := json.Unmarshal(raw, &s)
		return s, err
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", fmt.Errorf("content is neither a string nor an array of parts")
	}
	var b strings.Builder
	for _, p := range parts {
		if p.Type != "text" {
			return "", fmt.Errorf("content part of type %q: AIRS reads text parts only", p.Type)
		}
		b.WriteString(p.Text)
	}
	return b.String(), nil
}

// toRequest translates an OpenAI request; the error names the field.
func (o *oaiRequest) toRequest() (*Request, error) {
	req := &Request{Model: o.Model, Parallel: o.ParallelToolCalls == nil || *o.ParallelToolCalls,
		MaxTokens: max(o.MaxCompletionTokens, o.MaxTokens)}
	if o.N > 1 {
		return nil, &RequestError{Param: "n", Message: "n above 1 is not supported: AIRS answers one choice (its calls are decoded greedily)"}
	}
	if len(o.Messages) == 0 {
		return nil, &RequestError{Param: "messages", Message: `"messages" is required: at least one message`}
	}
	for i, m := range o.Messages {
		text, err := contentText(m.Content)
		if err != nil {
			return nil, &RequestError{Param: fmt.Sprintf("messages[%d].content", i), Message: fmt.Sprintf("messages[%d]: %v", i, err)}
		}
		msg := Message{Role: m.Role, Content: text, CallID: m.ToolCallID, Name: m.Name}
		switch m.Role {
		case "developer":
			msg.Role = "system"
		case "function":
			msg.Role = "tool"
		case "system", "user", "assistant", "tool":
		default:
			return nil, &RequestError{Param: fmt.Sprintf("messages[%d].role", i), Message: fmt.Sprintf("messages[%d]: unknown role %q (want system, developer, user, assistant or tool)", i, m.Role)}
		}
		for _, tc := range m.ToolCalls {
			args := json.RawMessage(tc.Function.Arguments)
			if strings.TrimSpace(tc.Function.Arguments) == "" {
				args = json.RawMessage(`{}`)
			}
			msg.Calls = append(msg.Calls, Call{ID: tc.ID, Name: tc.Function.Name, Arguments: args})
		}
		req.Messages = append(req.Messages, msg)
	}
	// A tool message names its call's id only: its tool's name comes from
	// the assistant message that made the call.
	names := map[string]string{}
	for i, m := range req.Messages {
		for _, c := range m.Calls {
			names[c.ID] = c.Name
		}
		if m.Role == "tool" && m.Name == "" {
			req.Messages[i].Name = names[m.CallID]
		}
	}
	for i, t := range o.Tools {
		if t.Type != "function" && t.Type != "" {
			return nil, &RequestError{Param: fmt.Sprintf("tools[%d].type", i), Message: fmt.Sprintf("tools[%d]: type %q: AIRS takes function tools", i, t.Type)}
		}
		if t.Function.Name == "" {
			return nil, &RequestError{Param: fmt.Sprintf("tools[%d].function.name", i), Message: fmt.Sprintf("tools[%d]: the function has no name", i)}
		}
		req.Tools = append(req.Tools, Tool{Name: t.Function.Name, Description: t.Function.Description, Parameters: t.Function.Parameters})
	}
	choice, err := oaiChoice(o.ToolChoice, len(req.Tools) > 0)
	if err != nil {
		return nil, err
	}
	req.Choice = choice
	if f := o.ResponseFormat; f != nil {
		switch f.Type {
		case "", "text":
		case "json_object":
			req.JSON = true
		case "json_schema":
			if f.JSONSchema == nil || len(f.JSONSchema.Schema) == 0 {
				return nil, &RequestError{Param: "response_format", Message: `response_format json_schema needs "json_schema": {"name", "schema"}`}
			}
			req.Schema, req.JSON = f.JSONSchema.Schema, true
		default:
			return nil, &RequestError{Param: "response_format", Message: fmt.Sprintf("response_format type %q: want text, json_object or json_schema", f.Type)}
		}
	}
	return req, nil
}

// oaiChoice reads tool_choice: "auto", "none", "required", or
// {"type": "function", "function": {"name"}}.
func oaiChoice(raw json.RawMessage, tools bool) (ToolChoice, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		if tools {
			return ToolChoice{Mode: ChoiceAuto}, nil
		}
		return ToolChoice{Mode: ChoiceNone}, nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		switch ChoiceMode(s) {
		case ChoiceAuto, ChoiceNone, ChoiceRequired:
			if !tools && s == string(ChoiceRequired) {
				return ToolChoice{}, &RequestError{Param: "tool_choice", Message: `tool_choice "required" needs "tools"`}
			}
			if !tools {
				return ToolChoice{Mode: ChoiceNone}, nil
			}
			return ToolChoice{Mode: ChoiceMode(s)}, nil
		}
		return ToolChoice{}, &RequestError{Param: "tool_choice", Message: fmt.Sprintf("tool_choice %q: want auto, none, required or {\"type\":\"function\",\"function\":{\"name\":…}}", s)}
	}
	var o struct {
		Type     string `json:"type"`
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	if err := json.Unmarshal(raw, &o); err != nil || o.Type != "function" || o.Function.Name == "" {
		return ToolChoice{}, &RequestError{Param: "tool_choice", Message: `tool_choice: want auto, none, required or {"type":"function","function":{"name":…}}`}
	}
	return ToolChoice{Mode: ChoiceFunction, Name: o.Function.Name}, nil
}

// oaiCalls is calls on OpenAI's wire (arguments as a JSON string).
func oaiCalls(calls []Call, indexed bool) []oaiToolCall {
	out := make([]oaiToolCall, len(calls))
	for i, c := range calls {
		out[i].ID, out[i].Type = c.ID, "function"
		out[i].Function.Name, out[i].Function.Arguments = c.Name, string(c.Arguments)
		if indexed {
			out[i].Index = &i
		}
	}
	return out
}

func finishReason(r *Reply) string {
	switch {
	case len(r.Calls) > 0:
		return "tool_calls"
	case r.Truncated:
		return "length"
	}
	return "stop"
}

func usage(r *Reply) map[string]int {
	return map[string]int{"prompt_tokens": r.PromptTokens, "completion_tokens": r.CompletionTokens,
		"total_tokens": r.PromptTokens + r.CompletionTokens}
}

func (h *handler) openAIChat(w http.ResponseWriter, r *http.Request) {
	a := openAI{}
	var o oaiRequest
	if !readJSON(w, r, a, &o) {
		return
	}
	req, err := o.toRequest()
	if err != nil {
		writeBackendError(w, a, err)
		return
	}
	if !h.admitText(w, r, a, req) {
		return
	}
	id, created := newID("chatcmpl-"), time.Now().Unix()
	caller := server.Caller(r.Context())
	if !o.Stream {
		rep, err := h.b.Complete(r.Context(), caller, req, nil)
		if err != nil {
			writeBackendError(w, a, err)
			return
		}
		fillIDs(rep.Calls)
		msg := map[string]any{"role": "assistant", "content": nil, "refusal": nil}
		if rep.Content != "" || len(rep.Calls) == 0 {
			msg["content"] = rep.Content
		}
		if len(rep.Calls) > 0 {
			msg["tool_calls"] = oaiCalls(rep.Calls, false)
		}
		setMode(w, rep.Mode, rep.Notice)
		writeJSON(w, http.StatusOK, map[string]any{
			"id": id, "object": "chat.completion", "created": created, "model": cmpOr(rep.Model, req.Model),
			"choices": []map[string]any{{"index": 0, "message": msg, "finish_reason": finishReason(rep), "logprobs": nil}},
			"usage":   usage(rep),
		})
		return
	}
	sse := &sseWriter{w: w}
	chunk := func(model string, delta map[string]any, finish any) error {
		return sse.data(map[string]any{"id": id, "object": "chat.completion.chunk", "created": created, "model": model,
			"choices": []map[string]any{{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": nil}}})
	}
	started := false
	begin := func(mode Mode, notice, model string) error {
		if started {
			return nil
		}
		started = true
		setMode(w, mode, notice)
		sse.start()
		return chunk(model, map[string]any{"role": "assistant", "content": ""}, nil)
	}
	rep, err := h.b.Complete(r.Context(), caller, req, func(mode Mode, text string) error {
		if err := begin(mode, "", req.Model); err != nil {
			return err
		}
		sse.streamedText = true
		return chunk(req.Model, map[string]any{"content": text}, nil)
	})
	if err != nil {
		if !started {
			writeBackendError(w, a, err)
			return
		}
		// Headers are sent: the error is the stream's last event, in
		// OpenAI's shape (the official clients raise it).
		_ = sse.data(map[string]any{"error": map[string]any{"message": err.Error(), "type": "server_error", "code": nil}})
		return
	}
	model := cmpOr(rep.Model, req.Model)
	if err := begin(rep.Mode, rep.Notice, model); err != nil {
		return
	}
	if !sse.streamedText && rep.Content != "" {
		if chunk(model, map[string]any{"content": rep.Content}, nil) != nil {
			return
		}
	}
	fillIDs(rep.Calls)
	for i, c := range oaiCalls(rep.Calls, true) {
		// The call's head (id, name), then its arguments, as OpenAI streams
		// them; a client's accumulator joins the pieces.
		head := c
		head.Function.Arguments = ""
		if chunk(model, map[string]any{"tool_calls": []oaiToolCall{head}}, nil) != nil {
			return
		}
		body := oaiToolCall{Index: c.Index}
		body.Function.Arguments = string(rep.Calls[i].Arguments)
		if chunk(model, map[string]any{"tool_calls": []oaiToolCall{body}}, nil) != nil {
			return
		}
	}
	if chunk(model, map[string]any{}, finishReason(rep)) != nil {
		return
	}
	if o.StreamOptions != nil && o.StreamOptions.IncludeUsage {
		_ = sse.data(map[string]any{"id": id, "object": "chat.completion.chunk", "created": created, "model": model,
			"choices": []any{}, "usage": usage(rep)})
	}
	_ = sse.done()
}

func (h *handler) openAIModels(w http.ResponseWriter, r *http.Request) {
	var data []map[string]any
	for _, m := range h.b.Models(r.Context(), server.Caller(r.Context())) {
		data = append(data, oaiModel(m))
	}
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": data})
}

func (h *handler) openAIModel(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	for _, m := range h.b.Models(r.Context(), server.Caller(r.Context())) {
		if m.Name == id {
			writeJSON(w, http.StatusOK, oaiModel(m))
			return
		}
	}
	openAI{}.writeError(w, http.StatusNotFound, "model_not_found", fmt.Sprintf("no model %q: GET /v1/models lists them", id))
}

func oaiModel(m ModelInfo) map[string]any {
	return map[string]any{"id": m.Name, "object": "model", "created": 0, "owned_by": "airs"}
}

// sseWriter writes server-sent events, flushing each.
type sseWriter struct {
	w            http.ResponseWriter
	streamedText bool // the content went out as it was generated
}

func (s *sseWriter) start() {
	s.w.Header().Set("Content-Type", "text/event-stream")
	s.w.Header().Set("Cache-Control", "no-cache")
	s.w.WriteHeader(http.StatusOK)
}

func (s *sseWriter) data(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if _, err := fmt.Fprintf(s.w, "data: %s\n\n", b); err != nil {
		return err
	}
	http.NewResponseController(s.w).Flush()
	return nil
}

func (s *sseWriter) done() error {
	if _, err := fmt.Fprint(s.w, "data: [DONE]\n\n"); err != nil {
		return err
	}
	http.NewResponseController(s.w).Flush()
	return nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
