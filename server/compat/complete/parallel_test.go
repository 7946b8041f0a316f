package complete_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/airs-dev/airs/server"
	"github.com/airs-dev/airs/server/compat"
	"github.com/airs-dev/airs/server/compat/complete"
)

// fileTools are tools over files, beside which "read a.txt and b.txt" is
// two calls of read_file.
func fileTools() []any {
	var tools []any
	for _, s := range []string{
		`{"type":"function","function":{"name":"read_file","description":"Read the text of a file","parameters":{"type":"object","properties":{"path":{"type":"string","description":"the file's path"}},"required":["path"]}}}`,
		`{"type":"function","function":{"name":"delete_file","description":"Delete a file","parameters":{"type":"object","properties":{"path":{"type":"string","description":"the file's path"}},"required":["path"]}}}`,
		`{"type":"function","function":{"name":"list_directory","description":"List the files of a directory","parameters":{"type":"object","properties":{"dir":{"type":"string","description":"the directory"}},"required":["dir"]}}}`,
	} {
		var v any
		_ = json.Unmarshal([]byte(s), &v)
		tools = append(tools, v)
	}
	return tools
}

type gotCall struct{ Name, Args string }

// openAICalls posts body to the OpenAI endpoint and returns its calls.
func openAICalls(t *testing.T, url string, body map[string]any) []gotCall {
	t.Helper()
	resp := post(t, url+"/v1/chat/completions", token, body)
	var c oaiCompletion
	decode(t, resp.Body, &c)
	if len(c.Choices) != 1 {
		t.Fatalf("completion %+v", c)
	}
	var out []gotCall
	ids := map[string]bool{}
	for _, tc := range c.Choices[0].Message.ToolCalls {
		if !strings.HasPrefix(tc.ID, "call_") || ids[tc.ID] {
			t.Errorf("call id %q: want a distinct call_… id per call", tc.ID)
		}
		ids[tc.ID] = true
		out = append(out, gotCall{tc.Function.Name, tc.Function.Arguments})
	}
	if len(out) > 0 && c.Choices[0].FinishReason != "tool_calls" {
		t.Errorf("finish_reason %q", c.Choices[0].FinishReason)
	}
	return out
}

// TestParallelCallsNoLLM: a request that asks for several things gets one
// valid call per thing, each with its own id, without a model; one thing
// stays one call, and parallel_tool_calls false keeps one.
func TestParallelCallsNoLLM(t *testing.T) {
	ts, _ := newServer(t, complete.Options{})
	for _, c := range []struct {
		text  string
		tools []any
		want  []gotCall
	}{
		{"What is the weather in Paris and in Rome?", tools50(t),
			[]gotCall{{"get_weather", `{"city":"Paris"}`}, {"get_weather", `{"city":"Rome"}`}}},
		{"What's the weather in Paris, and what time zone is Tokyo in?", tools50(t),
			[]gotCall{{"get_weather", `{"city":"Paris"}`}, {"get_time_zone", `{"city":"Tokyo"}`}}},
		{"Convert 100 USD to EUR and 50 GBP to JPY", tools50(t),
			[]gotCall{{"convert_currency", `{"amount":100,"from_currency":"USD","to_currency":"EUR"}`}, {"convert_currency", `{"amount":50,"from_currency":"GBP","to_currency":"JPY"}`}}},
		{"read a.txt and b.txt", fileTools(),
			[]gotCall{{"read_file", `{"path":"a.txt"}`}, {"read_file", `{"path":"b.txt"}`}}},
		{"Read notes/a.txt, then delete notes/b.txt", fileTools(),
			[]gotCall{{"read_file", `{"path":"notes/a.txt"}`}, {"delete_file", `{"path":"notes/b.txt"}`}}},
		{"What is the weather forecast in Paris today?", tools50(t),
			[]gotCall{{"get_weather", `{"city":"Paris"}`}}},
		// The parts are one call's arguments: one call.
		{"Compute my BMI with a weight of 80 kg and a height of 1.8 m", tools50(t),
			[]gotCall{{"compute_bmi", `{"height_m":1.8,"weight_kg":80}`}}},
	} {
		body := map[string]any{"model": "none", "tools": c.tools, "messages": []any{map[string]any{"role": "user", "content": c.text}}}
		if got := openAICalls(t, ts.URL, body); !sameGot(got, c.want) {
			t.Errorf("%q: calls %v, want %v", c.text, got, c.want)
		}
		body["parallel_tool_calls"] = false
		if got := openAICalls(t, ts.URL, body); len(got) != 1 || got[0] != c.want[0] {
			t.Errorf("%q with parallel_tool_calls false: calls %v, want %v", c.text, got, c.want[:1])
		}
	}
}

func sameGot(a, b []gotCall) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestParallelCallsStreamAndOllama: the same calls streamed by the OpenAI
// endpoint (one index per call) and in Ollama's shape, streamed and not.
func TestParallelCallsStreamAndOllama(t *testing.T) {
	ts, _ := newServer(t, complete.Options{})
	text := "What is the weather in Paris and in Rome?"
	want := []gotCall{{"get_weather", `{"city":"Paris"}`}, {"get_weather", `{"city":"Rome"}`}}
	body := map[string]any{"model": "none", "tools": tools50(t), "stream": true,
		"messages": []any{map[string]any{"role": "user", "content": text}}}
	resp := post(t, ts.URL+"/v1/chat/completions", token, body)
	names, args, _, finish := sseCalls(t, resp.Body)
	var got []gotCall
	for i := range names {
		got = append(got, gotCall{names[i], args[i]})
	}
	if !sameGot(got, want) || finish != "tool_calls" {
		t.Errorf("stream: calls %v (finish %q), want %v", got, finish, want)
	}
	for _, stream := range []bool{false, true} {
		body := map[string]any{"model": "none", "tools": tools50(t), "stream": stream,
			"messages": []any{map[string]any{"role": "user", "content": text}}}
		resp := post(t, ts.URL+"/api/chat", token, body)
		sc := bufio.NewScanner(resp.Body)
		var got []gotCall
		ids := map[string]bool{}
		for sc.Scan() {
			var line struct {
				Message struct {
					ToolCalls []struct {
						ID       string `json:"id"`
						Function struct {
							Index     int             `json:"index"`
							Name      string          `json:"name"`
							Arguments json.RawMessage `json:"arguments"`
						} `json:"function"`
					} `json:"tool_calls"`
				} `json:"message"`
			}
			if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
				t.Fatalf("line %s: %v", sc.Text(), err)
			}
			for i, c := range line.Message.ToolCalls {
				if c.Function.Index != i || c.ID == "" || ids[c.ID] {
					t.Errorf("ollama (stream %v): call %d has index %d, id %q", stream, i, c.Function.Index, c.ID)
				}
				ids[c.ID] = true
				got = append(got, gotCall{c.Function.Name, string(c.Function.Arguments)})
			}
		}
		if !sameGot(got, want) {
			t.Errorf("ollama (stream %v): calls %v, want %v", stream, got, want)
		}
	}
}

// TestParallelCallsModel: with a model, each part's call is generated
// under the grammar (an invalid one is repaired or dropped, never
// returned); the request's parts are named in the prompt of each.
func TestParallelCallsModel(t *testing.T) {
	m := &scripted{outputs: []string{
		`{"function":"get_weather","arguments":{"city":"Paris"}}`,
		// Invalid (an undeclared argument): the grammar stops it, and the
		// repair attempt gives the call.
		`{"function":"get_weather","arguments":{"town":"Rome"}}`,
		`{"function":"get_weather","arguments":{"city":"Rome"}}`,
	}}
	ts, _ := newServer(t, complete.Options{Model: m, ModelName: "tiny"})
	body := map[string]any{"model": "tiny", "tools": tools50(t),
		"messages": []any{map[string]any{"role": "user", "content": "What is the weather in Paris and in Rome?"}}}
	got := openAICalls(t, ts.URL, body)
	want := []gotCall{{"get_weather", `{"city":"Paris"}`}, {"get_weather", `{"city":"Rome"}`}}
	if !sameGot(got, want) {
		t.Fatalf("calls %v, want %v", got, want)
	}
	if len(m.asked) != 3 {
		t.Fatalf("%d generations, want 3 (one per part, one repair)", len(m.asked))
	}
	for i, part := range []string{"in Paris", "in Rome"} {
		msgs := m.asked[i].Messages
		if last := msgs[len(msgs)-1].Content; !strings.Contains(last, part) {
			t.Errorf("generation %d: the last message %q does not name the part %q", i, last, part)
		}
	}
	// One thing asked: one generation, as before.
	m.asked, m.outputs = nil, []string{`{"function":"get_weather","arguments":{"city":"Paris"}}`}
	body["messages"] = []any{map[string]any{"role": "user", "content": "What is the weather forecast in Paris today?"}}
	if got := openAICalls(t, ts.URL, body); len(got) != 1 || len(m.asked) != 1 {
		t.Errorf("one part: calls %v after %d generations", got, len(m.asked))
	}
}

// looseServer is the compat endpoints over a Backend without the
// evidence rule (as the BFCL measurement runs it).
func looseServer(t *testing.T) *httptest.Server {
	t.Helper()
	cb, err := complete.New(context.Background(), complete.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := server.New(&hostBackend{}, server.Config{Tokens: []server.Token{{SHA256: server.HashToken(token), Agent: "alice"}}})
	compat.Mount(s, cb, compat.Options{})
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return ts
}

// TestParallelPartsOfOneCall: "of 18 and 12" are one call's two
// arguments, not two things asked, even where each part alone would
// make a call (no evidence rule, as the BFCL measurement runs it).
func TestParallelPartsOfOneCall(t *testing.T) {
	ts := looseServer(t)
	lcm := []any{map[string]any{"type": "function", "function": map[string]any{"name": "math_lcm", "description": "Calculates the least common multiple of two numbers.",
		"parameters": map[string]any{"type": "object", "properties": map[string]any{"num1": map[string]any{"type": "integer"}, "num2": map[string]any{"type": "integer"}}, "required": []any{"num1", "num2"}}}}}
	body := map[string]any{"model": "none", "tools": lcm,
		"messages": []any{map[string]any{"role": "user", "content": "Calculate the Least Common Multiple (LCM) of 18 and 12."}}}
	want := []gotCall{{"math_lcm", `{"num1":18,"num2":12}`}}
	if got := openAICalls(t, ts.URL, body); !sameGot(got, want) {
		t.Errorf("calls %v, want %v", got, want)
	}
	roe := []any{map[string]any{"type": "function", "function": map[string]any{"name": "calculate_return_on_equity", "description": "Calculates the return on equity of a company.",
		"parameters": map[string]any{"type": "object", "properties": map[string]any{"net_income": map[string]any{"type": "integer"}, "shareholder_equity": map[string]any{"type": "integer"}, "dividends_paid": map[string]any{"type": "integer"}},
			"required": []any{"net_income", "shareholder_equity"}}}}}
	body = map[string]any{"model": "none", "tools": roe, "messages": []any{map[string]any{"role": "user",
		"content": "Calculate the company's return on equity given its net income of $2,000,000, shareholder's equity of $10,000,000, and dividends paid of $200,000."}}}
	if got := openAICalls(t, ts.URL, body); len(got) != 1 {
		t.Errorf("return on equity: calls %v, want one", got)
	}
}
