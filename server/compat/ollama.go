package compat

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/airs-dev/airs/server"
)

// ollamaAPI answers errors as Ollama does: {"error": "message"} (the
// official clients raise a ResponseError with it and the status).
type ollamaAPI struct{}

func (ollamaAPI) writeError(w http.ResponseWriter, status int, code, msg string) {
	writeJSON(w, status, map[string]any{"error": msg})
}

// olRequest is the part of an /api/chat request AIRS reads.
type olRequest struct {
	Model    string          `json:"model"`
	Messages []olMessage     `json:"messages"`
	Tools    []oaiTool       `json:"tools"` // the same shape as OpenAI's
	Format   json.RawMessage `json:"format"`
	Stream   *bool           `json:"stream"` // Ollama streams unless told not to
	Options  struct {
		NumPredict int `json:"num_predict"`
	} `json:"options"`
}

type olMessage struct {
	Role      string       `json:"role"`
	Content   string       `json:"content"`
	Images    []string     `json:"images,omitempty"`
	ToolCalls []olToolCall `json:"tool_calls,omitempty"`
	ToolName  string       `json:"tool_name,omitempty"`
}

type olToolCall struct {
	ID       string `json:"id,omitempty"`
	Function struct {
		Index     int             `json:"index"`
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"` // an object, not a string
	} `json:"function"`
}

func (o *olRequest) toRequest() (*Request, error) {
	// Ollama has no tool_choice: a call when one fits, several allowed.
	req := &Request{Model: o.Model, Parallel: true, MaxTokens: max(o.Options.NumPredict, 0)}
	if len(o.Messages) == 0 {
		return nil, &RequestError{Param: "messages", Message: `"messages" is required: at least one message`}
	}
	for i, m := range o.Messages {
		if len(m.Images) > 0 {
			return nil, &RequestError{Param: "images", Message: fmt.Sprintf("messages[%d] has images: AIRS reads text only", i)}
		}
		switch m.Role {
		case "system", "user", "assistant", "tool":
		default:
			return nil, &RequestError{Param: "role", Message: fmt.Sprintf("messages[%d]: unknown role %q (want system, user, assistant or tool)", i, m.Role)}
		}
		msg := Message{Role: m.Role, Content: m.Content, Name: m.ToolName}
		for _, tc := range m.ToolCalls {
			args := tc.Function.Arguments
			if len(bytes.TrimSpace(args)) == 0 || string(args) == "null" {
				args = json.RawMessage(`{}`)
			}
			msg.Calls = append(msg.Calls, Call{ID: tc.ID, Name: tc.Function.Name, Arguments: args})
		}
		req.Messages = append(req.Messages, msg)
	}
	nameResults(req.Messages)
	for i, t := range o.Tools {
		if t.Function.Name == "" {
			return nil, &RequestError{Param: "tools", Message: fmt.Sprintf("tools[%d]: the function has no name", i)}
		}
		req.Tools = append(req.Tools, Tool{Name: t.Function.Name, Description: t.Function.Description, Parameters: t.Function.Parameters})
	}
	req.Choice = ToolChoice{Mode: ChoiceNone}
	if len(req.Tools) > 0 {
		req.Choice.Mode = ChoiceAuto
	}
	f := bytes.TrimSpace(o.Format)
	switch {
	case len(f) == 0 || string(f) == "null" || string(f) == `""`:
	case string(f) == `"json"`:
		req.JSON = true
	case f[0] == '{':
		req.Schema, req.JSON = json.RawMessage(f), true
	default:
		return nil, &RequestError{Param: "format", Message: `format: want "json" or a JSON Schema object`}
	}
	return req, nil
}

// nameResults names the tool messages that have no tool_name (clients
// such as LangChain's ChatOllama send none) by position: the results that
// follow an assistant message answer its calls in order, as Ollama's
// templates read them. A result beyond the calls stays unnamed.
func nameResults(msgs []Message) {
	var calls []Call
	k := 0
	for i := range msgs {
		switch m := &msgs[i]; m.Role {
		case "assistant":
			calls, k = m.Calls, 0
		case "tool":
			if m.Name == "" && k < len(calls) {
				m.Name = calls[k].Name
			}
			k++
		default:
			calls, k = nil, 0
		}
	}
}

func olCalls(calls []Call) []olToolCall {
	out := make([]olToolCall, len(calls))
	for i, c := range calls {
		out[i].ID = c.ID
		out[i].Function.Index, out[i].Function.Name, out[i].Function.Arguments = i, c.Name, c.Arguments
	}
	return out
}

func (h *handler) ollamaChat(w http.ResponseWriter, r *http.Request) {
	a := ollamaAPI{}
	var o olRequest
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
	start := time.Now()
	caller := server.Caller(r.Context())
	final := func(rep *Reply) map[string]any {
		msg := map[string]any{"role": "assistant", "content": ""}
		if len(rep.Calls) > 0 {
			msg["tool_calls"] = olCalls(rep.Calls)
		}
		reason := "stop"
		if rep.Truncated {
			reason = "length"
		}
		return map[string]any{"model": cmpOr(rep.Model, req.Model), "created_at": time.Now().UTC().Format(time.RFC3339Nano),
			"message": msg, "done": true, "done_reason": reason, "total_duration": time.Since(start).Nanoseconds(),
			"prompt_eval_count": rep.PromptTokens, "eval_count": rep.CompletionTokens}
	}
	if o.Stream != nil && !*o.Stream {
		rep, err := h.b.Complete(r.Context(), caller, req, nil)
		if err != nil {
			writeBackendError(w, a, err)
			return
		}
		fillIDs(rep.Calls)
		out := final(rep)
		out["message"].(map[string]any)["content"] = rep.Content
		setMode(w, rep.Mode, rep.Notice)
		writeJSON(w, http.StatusOK, out)
		return
	}
	started, streamed := false, false
	line := func(v any) error {
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		if _, err := w.Write(append(b, '\n')); err != nil {
			return err
		}
		http.NewResponseController(w).Flush()
		return nil
	}
	begin := func(mode Mode, notice string) {
		if !started {
			started = true
			setMode(w, mode, notice)
			w.Header().Set("Content-Type", "application/x-ndjson")
			w.WriteHeader(http.StatusOK)
		}
	}
	piece := func(model, text string) error {
		return line(map[string]any{"model": model, "created_at": time.Now().UTC().Format(time.RFC3339Nano),
			"message": map[string]any{"role": "assistant", "content": text}, "done": false})
	}
	rep, err := h.b.Complete(r.Context(), caller, req, func(mode Mode, text string) error {
		begin(mode, "")
		streamed = true
		return piece(req.Model, text)
	})
	if err != nil {
		if !started {
			writeBackendError(w, a, err)
			return
		}
		_ = line(map[string]any{"error": err.Error()}) // Ollama's mid-stream error
		return
	}
	begin(rep.Mode, rep.Notice)
	if !streamed && rep.Content != "" {
		if piece(cmpOr(rep.Model, req.Model), rep.Content) != nil {
			return
		}
	}
	fillIDs(rep.Calls)
	if len(rep.Calls) > 0 {
		// Ollama sends the calls in a message of their own before the last.
		if line(map[string]any{"model": cmpOr(rep.Model, req.Model), "created_at": time.Now().UTC().Format(time.RFC3339Nano),
			"message": map[string]any{"role": "assistant", "content": "", "tool_calls": olCalls(rep.Calls)}, "done": false}) != nil {
			return
		}
		rep.Calls = nil
	}
	_ = line(final(rep))
}

func (h *handler) ollamaTags(w http.ResponseWriter, r *http.Request) {
	models := []map[string]any{}
	for _, m := range h.b.Models(r.Context(), server.Caller(r.Context())) {
		models = append(models, olModel(m))
	}
	writeJSON(w, http.StatusOK, map[string]any{"models": models})
}

func olModel(m ModelInfo) map[string]any {
	return map[string]any{"name": m.Name, "model": m.Name, "modified_at": time.Unix(0, 0).UTC().Format(time.RFC3339),
		"size": 0, "digest": "", "details": map[string]any{"format": "", "family": m.Family, "families": []string{m.Family},
			"parameter_size": "", "quantization_level": ""}}
}

func (h *handler) ollamaVersion(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"version": cmpOr(h.o.Version, "0.0.0")})
}

// ollamaShow answers /api/show for a listed model (clients ask it for a
// model's capabilities before they send tools).
func (h *handler) ollamaShow(w http.ResponseWriter, r *http.Request) {
	var q struct {
		Model string `json:"model"`
		Name  string `json:"name"`
	}
	if !readJSON(w, r, ollamaAPI{}, &q) {
		return
	}
	name := cmpOr(q.Model, q.Name)
	for _, m := range h.b.Models(r.Context(), server.Caller(r.Context())) {
		if m.Name == name {
			writeJSON(w, http.StatusOK, map[string]any{"modelfile": "", "parameters": "", "template": "",
				"details": olModel(m)["details"], "capabilities": []string{"completion", "tools"}})
			return
		}
	}
	ollamaAPI{}.writeError(w, http.StatusNotFound, "model_not_found", fmt.Sprintf("model %q not found: GET /api/tags lists them", name))
}
