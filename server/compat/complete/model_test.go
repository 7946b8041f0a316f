package complete_test

import (
	"context"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/airs-dev/airs/selector"
	"github.com/airs-dev/airs/server/compat/complete"
)

// scripted is a selector.Model that answers each generation with the next
// of its outputs, streamed in small chunks, and records what it was asked
// (the Ollama-backed model is exercised in e2e/compat_test.go).
type scripted struct {
	mu      sync.Mutex
	outputs []string
	asked   []selector.ModelRequest
	down    bool
}

func (m *scripted) Generate(ctx context.Context, req selector.ModelRequest, onChunk func(string) error) error {
	m.mu.Lock()
	if m.down {
		m.mu.Unlock()
		return selector.ErrModelUnavailable
	}
	m.asked = append(m.asked, req)
	out := m.outputs[0]
	m.outputs = m.outputs[1:]
	m.mu.Unlock()
	for len(out) > 0 {
		n := min(3, len(out))
		if err := onChunk(out[:n]); err != nil {
			return err
		}
		out = out[n:]
	}
	return nil
}

func TestModelCallIsStrict(t *testing.T) {
	m := &scripted{outputs: []string{
		// An undeclared argument: the grammar stops it at its first byte.
		`{"function":"get_weather","arguments":{"city":"Paris","mood":"happy"}}`,
		`{"function":"get_weather","arguments":{"city":"Paris","unit":"celsius"}}`,
	}}
	ts, _ := newServer(t, complete.Options{Model: m, ModelName: "tiny"})
	resp := post(t, ts.URL+"/v1/chat/completions", token, weatherRequest(t, map[string]any{"model": "tiny"}))
	if mode := resp.Header.Get("X-AIRS-Mode"); mode != "model" {
		t.Errorf("mode %q", mode)
	}
	var c oaiCompletion
	decode(t, resp.Body, &c)
	calls := c.Choices[0].Message.ToolCalls
	if len(calls) != 1 || calls[0].Function.Name != "get_weather" || calls[0].Function.Arguments != `{"city":"Paris","unit":"celsius"}` {
		t.Fatalf("calls %+v", calls)
	}
	if len(m.asked) != 2 {
		t.Fatalf("%d generations, want 2 (the repair)", len(m.asked))
	}
	// The grammar offered the top k (8) of the 50 tools, get_weather among them.
	f := string(m.asked[0].Format)
	offered := 0
	for _, tool := range tools50(t) {
		name := tool.(map[string]any)["function"].(map[string]any)["name"].(string)
		if strings.Contains(f, `"`+name+`"`) {
			offered++
		}
	}
	if !strings.Contains(f, `"get_weather"`) || offered != 8 {
		t.Errorf("the format offers %d of the 50 tools, want the top 8 with get_weather", offered)
	}
}

func TestModelNamedChoiceAndNoCall(t *testing.T) {
	m := &scripted{outputs: []string{
		`{"function":"none","arguments":{}}`,
		"Hello! ", // the free-text answer after "none"
	}}
	ts, _ := newServer(t, complete.Options{Model: m, ModelName: "tiny"})
	resp := post(t, ts.URL+"/v1/chat/completions", token, weatherRequest(t, map[string]any{"model": "tiny"}))
	var c oaiCompletion
	decode(t, resp.Body, &c)
	if len(c.Choices[0].Message.ToolCalls) != 0 || *c.Choices[0].Message.Content != "Hello! " {
		t.Fatalf("reply %+v", c.Choices[0])
	}
	if len(m.asked) != 2 || m.asked[1].Format != nil {
		t.Fatalf("asked %+v", m.asked)
	}
	// A named function: the grammar has that tool only, and no "none".
	m.outputs = []string{`{"function":"get_time_zone","arguments":{"city":"Paris"}}`}
	m.asked = nil
	resp = post(t, ts.URL+"/v1/chat/completions", token, weatherRequest(t, map[string]any{"model": "tiny",
		"tool_choice": map[string]any{"type": "function", "function": map[string]any{"name": "get_time_zone"}}}))
	decode(t, resp.Body, &c)
	f := string(m.asked[0].Format)
	if strings.Contains(f, "get_weather") || strings.Contains(f, `"none"`) || !strings.Contains(f, "get_time_zone") {
		t.Errorf("format %s", f)
	}
	if calls := c.Choices[0].Message.ToolCalls; len(calls) != 1 || calls[0].Function.Name != "get_time_zone" {
		t.Errorf("calls %+v", calls)
	}
}

func TestModelTextStreams(t *testing.T) {
	m := &scripted{outputs: []string{"The sky over Paris is clear."}}
	ts, _ := newServer(t, complete.Options{Model: m, ModelName: "tiny"})
	resp := post(t, ts.URL+"/v1/chat/completions", token, map[string]any{"model": "tiny", "stream": true,
		"messages": []any{map[string]any{"role": "user", "content": "Describe Paris"}}})
	_, _, content, finish := sseCalls(t, resp.Body)
	if content != "The sky over Paris is clear." || finish != "stop" {
		t.Errorf("content %q finish %q", content, finish)
	}
}

func TestModelDownFallsBackToNoLLM(t *testing.T) {
	m := &scripted{down: true}
	ts, _ := newServer(t, complete.Options{Model: m, ModelName: "tiny"})
	resp := post(t, ts.URL+"/v1/chat/completions", token, weatherRequest(t, map[string]any{"model": "tiny"}))
	var c oaiCompletion
	decode(t, resp.Body, &c)
	if mode := resp.Header.Get("X-AIRS-Mode"); mode != "no-llm" || !strings.Contains(resp.Header.Get("X-AIRS-Notice"), "does not answer") {
		t.Errorf("mode %q notice %q", mode, resp.Header.Get("X-AIRS-Notice"))
	}
	if calls := c.Choices[0].Message.ToolCalls; len(calls) != 1 || calls[0].Function.Name != "get_weather" {
		t.Errorf("calls %+v", calls)
	}
	// A written answer needs the model: 503 in OpenAI's shape.
	resp = post(t, ts.URL+"/v1/chat/completions", token, map[string]any{"model": "tiny",
		"messages": []any{map[string]any{"role": "user", "content": "Describe Paris"}}})
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 503 || !strings.Contains(string(b), `"type":"server_error"`) {
		t.Errorf("status %d: %s", resp.StatusCode, b)
	}
}

func TestModelResponseSchema(t *testing.T) {
	m := &scripted{outputs: []string{`{"city":"Lisbon","days":3}`}}
	ts, _ := newServer(t, complete.Options{Model: m, ModelName: "tiny"})
	schema := map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"},
		"days": map[string]any{"type": "integer"}}, "required": []string{"city", "days"}, "additionalProperties": false}
	resp := post(t, ts.URL+"/api/chat", token, map[string]any{"model": "tiny", "stream": false, "format": schema,
		"messages": []any{map[string]any{"role": "user", "content": "3 days in Lisbon"}}})
	var out struct {
		Message struct{ Content string } `json:"message"`
	}
	decode(t, resp.Body, &out)
	if out.Message.Content != `{"city":"Lisbon","days":3}` || len(m.asked) != 1 || m.asked[0].Format == nil {
		t.Errorf("content %q asked %d", out.Message.Content, len(m.asked))
	}
}

func TestModelContinuesAfterToolResult(t *testing.T) {
	m := &scripted{outputs: []string{
		`{"function":"none","arguments":{}}`, // the results answer the user
		"It is sunny in Paris, 18 degrees.",
	}}
	ts, _ := newServer(t, complete.Options{Model: m, ModelName: "tiny"})
	body := weatherRequest(t, map[string]any{"model": "tiny"})
	body["messages"] = []any{
		map[string]any{"role": "user", "content": "What is the weather forecast in Paris today?"},
		map[string]any{"role": "assistant", "tool_calls": []any{map[string]any{"id": "call_1", "type": "function",
			"function": map[string]any{"name": "get_weather", "arguments": `{"city":"Paris"}`}}}},
		map[string]any{"role": "tool", "tool_call_id": "call_1", "content": `{"temp_c":18,"sky":"sunny"}`},
	}
	resp := post(t, ts.URL+"/v1/chat/completions", token, body)
	var c oaiCompletion
	decode(t, resp.Body, &c)
	if got := c.Choices[0].Message.Content; got == nil || *got != "It is sunny in Paris, 18 degrees." || c.Choices[0].FinishReason != "stop" {
		t.Fatalf("reply %+v", c.Choices[0])
	}
	// The model saw the call it made and its result, named by the call's id.
	var seen strings.Builder
	for _, msg := range m.asked[1].Messages {
		seen.WriteString(msg.Role + ": " + msg.Content + "\n")
	}
	if !strings.Contains(seen.String(), `I called get_weather with {"city":"Paris"}`) || !strings.Contains(seen.String(), `Result of get_weather: {"temp_c":18,"sky":"sunny"}`) {
		t.Errorf("the answer's conversation:\n%s", seen.String())
	}
}

func TestTextModelWritesTheAnswers(t *testing.T) {
	calls := &scripted{outputs: []string{`{"function":"none","arguments":{}}`}}
	text := &scripted{outputs: []string{"Hello."}}
	ts, _ := newServer(t, complete.Options{Model: calls, TextModel: text, ModelName: "tiny"})
	resp := post(t, ts.URL+"/v1/chat/completions", token, weatherRequest(t, map[string]any{"model": "tiny"}))
	var c oaiCompletion
	decode(t, resp.Body, &c)
	if got := c.Choices[0].Message.Content; got == nil || *got != "Hello." || len(calls.asked) != 1 || len(text.asked) != 1 || text.asked[0].Format != nil {
		t.Errorf("content %v; the call model asked %d times, the text model %d", got, len(calls.asked), len(text.asked))
	}
}
