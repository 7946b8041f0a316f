package complete_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/airs-dev/airs/pipeline"
	"github.com/airs-dev/airs/server"
	"github.com/airs-dev/airs/server/compat"
	"github.com/airs-dev/airs/server/compat/complete"
)

const token = "s3cret-token"

// hostBackend is the server.Backend the compat endpoints sit beside: only
// its rate limit (Admit) and chat (the "airs" model) are reached.
type hostBackend struct {
	limited atomic.Bool
	chat    func(ctx context.Context, caller, text string, emit func(string, any) error) error
}

func (b *hostBackend) Call(context.Context, pipeline.Request) (*pipeline.Result, error) {
	panic("not reached")
}
func (b *hostBackend) Select(context.Context, string, string) (any, error) { panic("not reached") }
func (b *hostBackend) Plan(context.Context, string, string) (any, error)   { panic("not reached") }
func (b *hostBackend) Chat(ctx context.Context, caller, text string, emit func(string, any) error) error {
	return b.chat(ctx, caller, text, emit)
}
func (b *hostBackend) RunPipeline(context.Context, string, []byte, map[string]any) (any, error) {
	panic("not reached")
}
func (b *hostBackend) Tools(string) any                     { return nil }
func (b *hostBackend) WriteMetrics(string, io.Writer) error { return nil }
func (b *hostBackend) Admit(caller string) error {
	if b.limited.Load() {
		return &pipeline.RateLimited{Caller: caller, RetryAfterMs: 1500}
	}
	return nil
}

// newServer is airs serve's HTTP server with the compat endpoints over
// the real complete.Backend (o.Model nil: no-LLM mode).
func newServer(t testing.TB, o complete.Options) (*httptest.Server, *hostBackend) {
	t.Helper()
	o.RequireEvidence = true // as airs serve runs it
	hb := &hostBackend{}
	if o.AIRS == nil {
		o.AIRS = hb
	}
	cb, err := complete.New(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	s := server.New(hb, server.Config{Tokens: []server.Token{{SHA256: server.HashToken(token), Agent: "alice"}}})
	compat.Mount(s, cb, compat.Options{Version: "1.2.3"})
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return ts, hb
}

func tools50(t testing.TB) []any {
	t.Helper()
	b, err := os.ReadFile("testdata/tools50.json")
	if err != nil {
		t.Fatal(err)
	}
	var tools []any
	if err := json.Unmarshal(b, &tools); err != nil {
		t.Fatal(err)
	}
	return tools
}

func post(t testing.TB, url, tok string, body any) *http.Response {
	t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest("POST", url, strings.NewReader(string(b)))
	req.Header.Set("Content-Type", "application/json")
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func decode(t testing.TB, r io.Reader, v any) {
	t.Helper()
	if err := json.NewDecoder(r).Decode(v); err != nil {
		t.Fatal(err)
	}
}

type oaiCompletion struct {
	Object  string `json:"object"`
	Model   string `json:"model"`
	Choices []struct {
		Message struct {
			Role      string  `json:"role"`
			Content   *string `json:"content"`
			ToolCalls []struct {
				ID       string `json:"id"`
				Type     string `json:"type"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
}

func weatherRequest(t testing.TB, extra map[string]any) map[string]any {
	body := map[string]any{"model": "none", "tools": tools50(t),
		"messages": []any{map[string]any{"role": "user", "content": "What is the weather forecast in Paris today?"}}}
	for k, v := range extra {
		body[k] = v
	}
	return body
}

func TestOpenAIToolCallAmongFifty(t *testing.T) {
	ts, _ := newServer(t, complete.Options{})
	resp := post(t, ts.URL+"/v1/chat/completions", token, weatherRequest(t, nil))
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("status %d: %s", resp.StatusCode, b)
	}
	if m := resp.Header.Get("X-AIRS-Mode"); m != "no-llm" {
		t.Errorf("X-AIRS-Mode = %q, want no-llm", m)
	}
	var c oaiCompletion
	decode(t, resp.Body, &c)
	if c.Object != "chat.completion" || len(c.Choices) != 1 {
		t.Fatalf("completion %+v", c)
	}
	ch := c.Choices[0]
	if ch.FinishReason != "tool_calls" || len(ch.Message.ToolCalls) != 1 {
		t.Fatalf("choice %+v", ch)
	}
	tc := ch.Message.ToolCalls[0]
	if tc.Function.Name != "get_weather" || tc.Type != "function" || !strings.HasPrefix(tc.ID, "call_") {
		t.Fatalf("call %+v", tc)
	}
	var args map[string]any
	if err := json.Unmarshal([]byte(tc.Function.Arguments), &args); err != nil {
		t.Fatalf("arguments %q: %v", tc.Function.Arguments, err)
	}
	if args["city"] != "Paris" {
		t.Errorf("arguments %v, want city Paris", args)
	}
	for k := range args {
		if k != "city" && k != "unit" {
			t.Errorf("undeclared argument %q", k)
		}
	}
}

// sseCalls assembles the calls and content of an OpenAI stream as the
// official clients do (deltas joined by index).
func sseCalls(t *testing.T, r io.Reader) (names, args []string, content, finish string) {
	t.Helper()
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	done := false
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "data: ") {
			continue
		}
		data := strings.TrimPrefix(line, "data: ")
		if data == "[DONE]" {
			done = true
			break
		}
		var ch struct {
			Choices []struct {
				Delta struct {
					Content   string `json:"content"`
					ToolCalls []struct {
						Index    int `json:"index"`
						Function struct {
							Name      string `json:"name"`
							Arguments string `json:"arguments"`
						} `json:"function"`
					} `json:"tool_calls"`
				} `json:"delta"`
				FinishReason *string `json:"finish_reason"`
			} `json:"choices"`
		}
		if err := json.Unmarshal([]byte(data), &ch); err != nil {
			t.Fatalf("chunk %s: %v", data, err)
		}
		for _, c := range ch.Choices {
			content += c.Delta.Content
			for _, tc := range c.Delta.ToolCalls {
				for len(names) <= tc.Index {
					names, args = append(names, ""), append(args, "")
				}
				names[tc.Index] += tc.Function.Name
				args[tc.Index] += tc.Function.Arguments
			}
			if c.FinishReason != nil {
				finish = *c.FinishReason
			}
		}
	}
	if !done {
		t.Fatal("the stream did not end with data: [DONE]")
	}
	return
}

func TestOpenAIStreamYieldsTheSameCall(t *testing.T) {
	ts, _ := newServer(t, complete.Options{})
	plain := post(t, ts.URL+"/v1/chat/completions", token, weatherRequest(t, nil))
	var c oaiCompletion
	decode(t, plain.Body, &c)
	resp := post(t, ts.URL+"/v1/chat/completions", token, weatherRequest(t, map[string]any{"stream": true}))
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type %q", ct)
	}
	names, args, _, finish := sseCalls(t, resp.Body)
	want := c.Choices[0].Message.ToolCalls[0].Function
	if len(names) != 1 || names[0] != want.Name || args[0] != want.Arguments || finish != "tool_calls" {
		t.Fatalf("stream gave %v %v (%s), the plain answer %s %s", names, args, finish, want.Name, want.Arguments)
	}
}

func TestOpenAIToolChoice(t *testing.T) {
	ts, _ := newServer(t, complete.Options{})
	cases := []struct {
		name   string
		choice any
		text   string
		call   string // "" : no call
		status int
	}{
		{"none", "none", "What is the weather forecast in Paris today?", "", 200},
		{"required, nothing fits well", "required", "Hello there", "*", 200},
		{"auto, nothing fits", "auto", "Tell me a joke about penguins", "", 200},
		{"named", map[string]any{"type": "function", "function": map[string]any{"name": "get_time_zone"}}, "What is the weather forecast in Paris today?", "get_time_zone", 200},
		{"named, unknown", map[string]any{"type": "function", "function": map[string]any{"name": "no_such_tool"}}, "Paris", "", 400},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			body := weatherRequest(t, map[string]any{"tool_choice": tc.choice})
			body["messages"] = []any{map[string]any{"role": "user", "content": tc.text}}
			resp := post(t, ts.URL+"/v1/chat/completions", token, body)
			if resp.StatusCode != tc.status {
				b, _ := io.ReadAll(resp.Body)
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tc.status, b)
			}
			if tc.status != 200 {
				var e struct {
					Error struct {
						Message, Type string
					}
				}
				decode(t, resp.Body, &e)
				if e.Error.Type != "invalid_request_error" || !strings.Contains(e.Error.Message, "no_such_tool") {
					t.Errorf("error %+v", e)
				}
				return
			}
			var c oaiCompletion
			decode(t, resp.Body, &c)
			calls := c.Choices[0].Message.ToolCalls
			switch {
			case tc.call == "" && len(calls) > 0:
				t.Errorf("a call %+v, want none", calls)
			case tc.call == "" && (c.Choices[0].Message.Content == nil || *c.Choices[0].Message.Content == ""):
				t.Error("no call and no content")
			case tc.call == "*" && len(calls) != 1:
				t.Errorf("calls %+v, want one", calls)
			case tc.call != "" && tc.call != "*" && (len(calls) != 1 || calls[0].Function.Name != tc.call):
				t.Errorf("calls %+v, want %s", calls, tc.call)
			}
		})
	}
}

func TestOpenAIToolResultContinues(t *testing.T) {
	ts, _ := newServer(t, complete.Options{})
	body := weatherRequest(t, nil)
	body["messages"] = []any{
		map[string]any{"role": "user", "content": "What is the weather forecast in Paris today?"},
		map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{"id": "call_1", "type": "function",
			"function": map[string]any{"name": "get_weather", "arguments": `{"city":"Paris"}`}}}},
		map[string]any{"role": "tool", "tool_call_id": "call_1", "content": `{"temp_c":18,"sky":"sunny"}`},
	}
	resp := post(t, ts.URL+"/v1/chat/completions", token, body)
	var c oaiCompletion
	decode(t, resp.Body, &c)
	ch := c.Choices[0]
	if ch.FinishReason != "stop" || len(ch.Message.ToolCalls) != 0 || ch.Message.Content == nil {
		t.Fatalf("choice %+v", ch)
	}
	if got := *ch.Message.Content; !strings.Contains(got, "get_weather") || !strings.Contains(got, `"sky":"sunny"`) {
		t.Errorf("content %q does not pass on get_weather's result", got)
	}
}

func TestBadKeyIsAuthenticationError(t *testing.T) {
	ts, _ := newServer(t, complete.Options{})
	resp := post(t, ts.URL+"/v1/chat/completions", "wrong", weatherRequest(t, nil))
	var e struct {
		Error struct{ Message, Type, Code string }
	}
	decode(t, resp.Body, &e)
	if resp.StatusCode != 401 || e.Error.Type != "authentication_error" || e.Error.Code != "invalid_api_key" {
		t.Errorf("status %d, error %+v", resp.StatusCode, e)
	}
	resp = post(t, ts.URL+"/api/chat", "", map[string]any{"model": "none", "messages": []any{}})
	var oe struct{ Error string }
	decode(t, resp.Body, &oe)
	if resp.StatusCode != 401 || oe.Error == "" {
		t.Errorf("ollama: status %d, error %+v", resp.StatusCode, oe)
	}
}

func TestRateLimitInEachShape(t *testing.T) {
	ts, hb := newServer(t, complete.Options{})
	hb.limited.Store(true)
	resp := post(t, ts.URL+"/v1/chat/completions", token, weatherRequest(t, nil))
	var e struct {
		Error struct{ Type, Code string }
	}
	decode(t, resp.Body, &e)
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "2" || e.Error.Code != "rate_limit_exceeded" {
		t.Errorf("status %d Retry-After %q error %+v", resp.StatusCode, resp.Header.Get("Retry-After"), e)
	}
	resp = post(t, ts.URL+"/api/chat", token, map[string]any{"model": "none", "messages": []any{map[string]any{"role": "user", "content": "hi"}}})
	if resp.StatusCode != 429 {
		t.Errorf("ollama: status %d", resp.StatusCode)
	}
}

func TestOllamaChat(t *testing.T) {
	ts, _ := newServer(t, complete.Options{})
	body := map[string]any{"model": "none", "tools": tools50(t), "stream": false,
		"messages": []any{map[string]any{"role": "user", "content": "where is my parcel? track package \"1Z999AA10123456784\""}}}
	resp := post(t, ts.URL+"/api/chat", token, body)
	var out struct {
		Message struct {
			ToolCalls []struct {
				Function struct {
					Name      string         `json:"name"`
					Arguments map[string]any `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"message"`
		Done bool `json:"done"`
	}
	decode(t, resp.Body, &out)
	if !out.Done || len(out.Message.ToolCalls) != 1 || out.Message.ToolCalls[0].Function.Name != "track_package" {
		t.Fatalf("reply %+v", out)
	}
	if a := out.Message.ToolCalls[0].Function.Arguments; a["tracking_number"] != "1Z999AA10123456784" {
		t.Errorf("arguments %v", a)
	}
	// Streaming (Ollama's default): NDJSON lines, the calls before the last.
	delete(body, "stream")
	resp = post(t, ts.URL+"/api/chat", token, body)
	if ct := resp.Header.Get("Content-Type"); ct != "application/x-ndjson" {
		t.Fatalf("Content-Type %q", ct)
	}
	var lines []map[string]any
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("line %s: %v", sc.Text(), err)
		}
		lines = append(lines, m)
	}
	if len(lines) < 2 || lines[len(lines)-1]["done"] != true {
		t.Fatalf("lines %v", lines)
	}
	calls := lines[len(lines)-2]["message"].(map[string]any)["tool_calls"].([]any)
	if name := calls[0].(map[string]any)["function"].(map[string]any)["name"]; name != "track_package" {
		t.Errorf("streamed call %v", calls)
	}
}

func TestListings(t *testing.T) {
	ts, _ := newServer(t, complete.Options{})
	get := func(path string) map[string]any {
		req, _ := http.NewRequest("GET", ts.URL+path, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d", path, resp.StatusCode)
		}
		var m map[string]any
		decode(t, resp.Body, &m)
		return m
	}
	if d := get("/v1/models")["data"].([]any); len(d) != 2 || d[0].(map[string]any)["id"] != "none" || d[1].(map[string]any)["id"] != "airs" {
		t.Errorf("/v1/models %v", d)
	}
	if m := get("/api/tags")["models"].([]any); len(m) != 2 {
		t.Errorf("/api/tags %v", m)
	}
	if v := get("/api/version")["version"]; v != "1.2.3" {
		t.Errorf("/api/version %v", v)
	}
}

func TestResponseFormatNoLLM(t *testing.T) {
	ts, _ := newServer(t, complete.Options{})
	schema := map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"},
		"days": map[string]any{"type": "integer"}}, "required": []string{"city", "days"}, "additionalProperties": false}
	resp := post(t, ts.URL+"/v1/chat/completions", token, map[string]any{"model": "none",
		"messages":        []any{map[string]any{"role": "user", "content": "I want to spend 3 days in Lisbon"}},
		"response_format": map[string]any{"type": "json_schema", "json_schema": map[string]any{"name": "trip", "schema": schema}}})
	var c oaiCompletion
	decode(t, resp.Body, &c)
	var got map[string]any
	if err := json.Unmarshal([]byte(*c.Choices[0].Message.Content), &got); err != nil {
		t.Fatal(err)
	}
	if got["city"] != "Lisbon" || got["days"] != 3.0 || len(got) != 2 {
		t.Errorf("content %v", got)
	}
}

func TestAIRSModelSaysWhatWaits(t *testing.T) {
	ts, hb := newServer(t, complete.Options{})
	hb.chat = func(ctx context.Context, caller, text string, emit func(string, any) error) error {
		if caller != "alice" {
			t.Errorf("caller %q", caller)
		}
		_ = emit("selection", map[string]any{"function": "delete-file"})
		return emit("result", map[string]any{"error": "intent_verification_required", "message": "held",
			"confirmation": map[string]any{"id": "r1", "caller": "alice", "tool": "delete-file",
				"approve": "/v1/reviews/r1/approve", "deny": "/v1/reviews/r1/deny"}})
	}
	resp := post(t, ts.URL+"/v1/chat/completions", token, map[string]any{"model": "airs",
		"messages": []any{map[string]any{"role": "user", "content": "delete notes.txt"}}})
	if m := resp.Header.Get("X-AIRS-Mode"); m != "airs" {
		t.Errorf("mode %q", m)
	}
	var c oaiCompletion
	decode(t, resp.Body, &c)
	got := *c.Choices[0].Message.Content
	for _, want := range []string{"delete-file", "held", "alice", "/v1/reviews/r1/approve"} {
		if !strings.Contains(got, want) {
			t.Errorf("content %q lacks %q", got, want)
		}
	}
}

func TestSizeLimitInEachShape(t *testing.T) {
	ts, _ := newServer(t, complete.Options{})
	long := strings.Repeat("weather ", 2000) // over the default 8 KiB of http.limits.chat_text
	resp := post(t, ts.URL+"/v1/chat/completions", token, map[string]any{"model": "none",
		"messages": []any{map[string]any{"role": "user", "content": long}}})
	var e struct {
		Error struct{ Message, Type, Code string }
	}
	decode(t, resp.Body, &e)
	if resp.StatusCode != 413 || e.Error.Type != "invalid_request_error" || !strings.Contains(e.Error.Message, "http.limits.chat_text") {
		t.Errorf("status %d error %+v", resp.StatusCode, e)
	}
	resp = post(t, ts.URL+"/api/chat", token, map[string]any{"model": "none",
		"messages": []any{map[string]any{"role": "user", "content": long}}})
	var oe struct{ Error string }
	decode(t, resp.Body, &oe)
	if resp.StatusCode != 413 || !strings.Contains(oe.Error, "chat_text") {
		t.Errorf("ollama: status %d error %+v", resp.StatusCode, oe)
	}
}

func TestAIRSModelWithoutAModelAnswersWithTheResult(t *testing.T) {
	ts, hb := newServer(t, complete.Options{})
	hb.chat = func(ctx context.Context, caller, text string, emit func(string, any) error) error {
		return emit("result", &pipeline.Result{Tool: "calculator", Outcome: pipeline.OutcomeOK, Output: json.RawMessage(`{"value":144}`)})
	}
	resp := post(t, ts.URL+"/api/chat", token, map[string]any{"model": "airs", "stream": false,
		"messages": []any{map[string]any{"role": "user", "content": "calculate 12 * 12"}}})
	var out struct {
		Message struct{ Content string } `json:"message"`
	}
	decode(t, resp.Body, &out)
	if out.Message.Content != `calculator returned: {"value":144}` {
		t.Errorf("content %q", out.Message.Content)
	}
}
