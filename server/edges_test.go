package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/airs-dev/airs/pipeline"
	"github.com/vmihailenco/msgpack/v5"
)

// Every endpoint that costs takes from the agent's bucket: with a burst of
// 2 (and a refill far slower than the test), the third request of an
// agent is 429 with Retry-After, on every endpoint; another agent is not
// affected.
func TestCostlyEndpointsAreRateLimited(t *testing.T) {
	bodies := map[string]string{
		"/v1/call":          `{"tool":"echo","arguments":{"n":1}}`,
		"/v1/select":        `{"text":"echo one"}`,
		"/v1/plan":          `{"text":"echo one"}`,
		"/v1/chat":          `{"text":"echo one"}`,
		"/v1/pipelines/run": `{"yaml":"steps:\n  - {id: a, tool: echo}\n"}`,
	}
	for path, body := range bodies {
		t.Run(strings.TrimPrefix(path, "/v1/"), func(t *testing.T) {
			base, stop := newTestServerWith(t, func(c *pipeline.Config) {
				c.RateLimits = map[string]pipeline.RateLimit{"bob": {PerSecond: 0.01, Burst: 2}}
			})
			defer stop()
			for i := range 2 {
				if resp, b := post(t, base+path, "tok-bob", body); resp.StatusCode == 429 {
					t.Fatalf("request %d: 429 within the burst (%v)", i+1, b)
				}
			}
			resp, b := post(t, base+path, "tok-bob", body)
			if resp.StatusCode != 429 || b["error"] != pipeline.KindRateLimited {
				t.Fatalf("third request: %d %v", resp.StatusCode, b)
			}
			ra, err := strconv.Atoi(resp.Header.Get("Retry-After"))
			if err != nil || ra < 90 || ra > 100 {
				t.Errorf("Retry-After %q, want ~100 s", resp.Header.Get("Retry-After"))
			}
			if h, _ := b["hint"].(string); !strings.Contains(h, "Retry-After") {
				t.Errorf("hint %q", h)
			}
			if resp, b := post(t, base+path, "tok-alice", body); resp.StatusCode == 429 {
				t.Errorf("alice limited by bob's bucket: %v", b)
			}
		})
	}
}

// Client mistakes in a pipeline are 4xx: unreadable YAML (malformed, an
// alias bomb, a repeated key) 400, a readable but wrong pipeline (a
// cycle) 422; and the list of errors is bounded.
func TestPipelineClientErrors(t *testing.T) {
	base, stop := newTestServer(t)
	defer stop()
	bomb := "a0: &a0 [lol]\n"
	for i := 1; i <= 9; i++ {
		bomb += fmt.Sprintf("a%d: &a%d [%s]\n", i, i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*a%d,", i-1), 9), ","))
	}
	bomb = "anchors:\n" + indentAll(bomb) + "steps:\n  - id: s\n    tool: echo\n    params: {x: *a9}\n"
	var many strings.Builder
	many.WriteString("steps:\n")
	for i := range 50 {
		fmt.Fprintf(&many, "  - {id: s%d, tool: echo, oops: 1}\n", i)
	}
	cases := []struct {
		name, yaml string
		status     int
		kind, msg  string
	}{
		{"malformed", "steps: [\n", 400, "invalid_yaml", "request"},
		{"alias bomb", bomb, 400, "invalid_yaml", "document too large"},
		{"repeated key", "steps:\n  - {id: a, tool: echo}\nsteps: []\n", 400, "invalid_yaml", "duplicate key"},
		{"cycle", "steps:\n  - {id: a, tool: echo, needs: [b]}\n  - {id: b, tool: echo, needs: [a]}\n", 422, "invalid_pipeline", "cycle"},
		{"ok", "steps:\n  - {id: a, tool: echo}\n", 200, "", ""},
	}
	for _, c := range cases {
		body, _ := json.Marshal(map[string]string{"yaml": c.yaml})
		resp, b := post(t, base+"/v1/pipelines/run", "tok-bob", string(body))
		if resp.StatusCode != c.status || (c.kind != "" && b["error"] != c.kind) {
			t.Errorf("%s: %d %v, want %d %s", c.name, resp.StatusCode, b, c.status, c.kind)
			continue
		}
		if m, _ := b["message"].(string); !strings.Contains(m, c.msg) {
			t.Errorf("%s: message %q, want %q", c.name, m, c.msg)
		}
		if c.kind != "" && b["hint"] == nil {
			t.Errorf("%s: no hint", c.name)
		}
	}
	body, _ := json.Marshal(map[string]string{"yaml": many.String()})
	resp, b := post(t, base+"/v1/pipelines/run", "tok-bob", string(body))
	errs, _ := b["errors"].([]any)
	if resp.StatusCode != 422 || len(errs) != 20 || b["error_count"] != float64(50) || !strings.Contains(b["message"].(string), "and 30 more") {
		t.Errorf("50 errors: %d, %d listed, count %v, message %.200v", resp.StatusCode, len(errs), b["error_count"], b["message"])
	}
}

func indentAll(s string) string {
	return "  " + strings.ReplaceAll(strings.TrimSuffix(s, "\n"), "\n", "\n  ") + "\n"
}

// A call that breaks its schema 50 times lists 20 field errors and the
// count; hints speak HTTP.
func TestErrorBodiesBoundedAndHTTPHints(t *testing.T) {
	base, stop := newTestServer(t)
	defer stop()
	args := map[string]string{}
	for i := range 50 {
		args[fmt.Sprintf("p%d", i)] = "x"
	}
	body, _ := json.Marshal(map[string]any{"tool": "wide", "arguments": args})
	resp, b := post(t, base+"/v1/call", "tok-bob", string(body))
	errs, _ := b["errors"].([]any)
	msg, _ := b["message"].(string)
	if resp.StatusCode != 422 || len(errs) != 20 || b["error_count"] != float64(50) || !strings.Contains(msg, "and 30 more") {
		t.Fatalf("%d: %d listed, count %v, message %.300s", resp.StatusCode, len(errs), b["error_count"], msg)
	}
	if strings.Count(msg, "/p") != 20 {
		t.Errorf("message names %d fields, want 20: %s", strings.Count(msg, "/p"), msg)
	}
	if h, _ := b["hint"].(string); !strings.Contains(h, "GET /v1/tools") || strings.Contains(h, "airs tools") {
		t.Errorf("schema hint %q", h)
	}
	_, b = post(t, base+"/v1/call", "tok-bob", `{"tool":"slow","arguments":{},"timeout_ms":20}`)
	if h, _ := b["hint"].(string); b["error"] != pipeline.KindTimeout || !strings.Contains(h, "timeout_ms") || strings.Contains(h, "--timeout") {
		t.Errorf("timeout: %v", b)
	}
	_, b = post(t, base+"/v1/call", "tok-bob", `{"tool":"nope"}`)
	if h, _ := b["hint"].(string); strings.Contains(h, "airs tools") || !strings.Contains(h, "/v1/tools") {
		t.Errorf("not found hint %q", h)
	}
}

// Strict bodies: one JSON value, no key twice (at any depth), no unknown
// provider.
func TestStrictBodies(t *testing.T) {
	base, stop := newTestServer(t)
	defer stop()
	cases := []struct {
		name, path, body string
		status           int
		kind, msg        string
	}{
		{"trailing object", "/v1/call", `{"tool":"echo","arguments":{"n":1}} {"tool":"secret"}`, 400, "bad_request", "trailing data"},
		{"trailing garbage", "/v1/call", `{"tool":"echo","arguments":{"n":1}}x`, 400, "bad_request", "trailing data"},
		{"duplicate tool", "/v1/call", `{"tool":"secret","tool":"echo","arguments":{"n":1}}`, 400, "bad_request", `duplicate key "tool"`},
		{"tool and Tool", "/v1/call", `{"tool":"echo","Tool":"secret","arguments":{"n":1}}`, 400, "bad_request", `duplicate key "Tool" (the same as "tool"`},
		{"n and N in arguments", "/v1/call", `{"tool":"echo","arguments":{"n":1,"N":2}}`, 400, "bad_request", `duplicate key "N"`},
		{"duplicate argument", "/v1/call", `{"tool":"echo","arguments":{"n":1,"n":2}}`, 400, "bad_request", `duplicate key "n" at byte 34 (in /arguments)`},
		{"duplicate text", "/v1/select", `{"text":"a","text":"b"}`, 400, "bad_request", "duplicate key"},
		{"two values", "/v1/select", `{"text":"a"}{"text":"b"}`, 400, "bad_request", "trailing data"},
		{"empty", "/v1/select", ``, 400, "bad_request", "empty body"},
		{"unknown provider", "/v1/call", `{"tool":"echo","provider":"elsewhere","arguments":{"n":1}}`, 404, pipeline.KindToolNotFound, "offered by test"},
		{"known provider", "/v1/call", `{"tool":"echo","provider":"test","arguments":{"n":1}}`, 200, "", ""},
		{"negative timeout", "/v1/call", `{"tool":"echo","arguments":{"n":1},"timeout_ms":-5}`, 400, "bad_request", "timeout_ms"},
	}
	for _, c := range cases {
		resp, b := post(t, base+c.path, "tok-bob", c.body)
		if resp.StatusCode != c.status || (c.kind != "" && b["error"] != c.kind) {
			t.Errorf("%s: %d %v", c.name, resp.StatusCode, b)
			continue
		}
		if m, _ := b["message"].(string); !strings.Contains(m, c.msg) {
			t.Errorf("%s: message %q, want %q", c.name, m, c.msg)
		}
	}
}

// 404 and 405 answer JSON like every other error.
func TestNoRouteIsJSON(t *testing.T) {
	base, stop := newTestServer(t)
	defer stop()
	for _, c := range []struct {
		method, path string
		status       int
		kind, allow  string
	}{
		{"GET", "/nope", 404, "not_found", ""},
		{"POST", "/v1/tools", 405, "method_not_allowed", "GET, HEAD"},
		{"GET", "/v1/call", 405, "method_not_allowed", "POST"},
		{"DELETE", "/v1/chat", 405, "method_not_allowed", "POST"},
	} {
		req, _ := http.NewRequest(c.method, base+c.path, nil)
		req.Header.Set("Authorization", "Bearer tok-bob")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var b map[string]any
		derr := json.NewDecoder(resp.Body).Decode(&b)
		resp.Body.Close()
		if resp.StatusCode != c.status || derr != nil || b["error"] != c.kind || resp.Header.Get("Content-Type") != "application/json" {
			t.Errorf("%s %s: %d %s %v (%v)", c.method, c.path, resp.StatusCode, resp.Header.Get("Content-Type"), b, derr)
		}
		if resp.Header.Get("Allow") != c.allow {
			t.Errorf("%s %s: Allow %q, want %q", c.method, c.path, resp.Header.Get("Allow"), c.allow)
		}
	}
}

func doMsgpack(t *testing.T, url, contentType, accept string, body []byte) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest("POST", url, bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer tok-bob")
	req.Header.Set("Content-Type", contentType)
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

// MessagePack with a real client: the request encoded by msgpack.Marshal,
// the answer decoded by msgpack.Unmarshal.
func TestMsgpackCall(t *testing.T) {
	base, stop := newTestServer(t)
	defer stop()
	req, err := msgpack.Marshal(map[string]any{"tool": "echo", "arguments": map[string]any{"n": 7}, "timeout_ms": 5000})
	if err != nil {
		t.Fatal(err)
	}
	resp, b := doMsgpack(t, base+"/v1/call", "application/msgpack", "application/msgpack", req)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/msgpack" {
		t.Fatalf("%d %s: %q", resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	var res struct {
		Outcome string         `msgpack:"outcome"`
		Tool    string         `msgpack:"tool"`
		Output  map[string]any `msgpack:"output"`
	}
	if err := msgpack.Unmarshal(b, &res); err != nil {
		t.Fatalf("decoding the answer: %v (%q)", err, b)
	}
	if n, ok := res.Output["n"].(int8); res.Outcome != "ok" || res.Tool != "echo" || !ok || n != 7 {
		t.Errorf("answer %+v (n %T)", res, res.Output["n"])
	}

	// An error is MessagePack too, with the field errors.
	bad, _ := msgpack.Marshal(map[string]any{"tool": "echo", "arguments": map[string]any{"n": "seven"}})
	resp, b = doMsgpack(t, base+"/v1/call", "application/msgpack", "application/msgpack", bad)
	var eb map[string]any
	if err := msgpack.Unmarshal(b, &eb); err != nil || resp.StatusCode != 422 || eb["error"] != pipeline.KindSchemaValidationFailed {
		t.Errorf("invalid params: %d %v %v", resp.StatusCode, eb, err)
	}

	// A MessagePack request with a JSON answer, and a JSON request with a
	// MessagePack answer.
	resp, b = doMsgpack(t, base+"/v1/call", "application/msgpack", "", req)
	if resp.StatusCode != 200 || !bytes.Contains(b, []byte(`"output":{"n":7}`)) {
		t.Errorf("JSON answer: %d %s", resp.StatusCode, b)
	}
	resp, b = doMsgpack(t, base+"/v1/call", "application/json", "application/json;q=0.5, application/msgpack", []byte(`{"tool":"echo","arguments":{"n":7}}`))
	if err := msgpack.Unmarshal(b, &res); err != nil || resp.StatusCode != 200 || res.Outcome != "ok" {
		t.Errorf("MessagePack answer to JSON: %d %v %q", resp.StatusCode, err, b)
	}

	// Strictness holds for MessagePack: a repeated key, trailing bytes, an
	// unknown field, a map claiming more entries than there are bytes.
	dup := append([]byte{0x82}, mpStr("tool")...)
	dup = append(dup, mpStr("secret")...)
	dup = append(dup, mpStr("tool")...)
	dup = append(dup, mpStr("echo")...)
	foldDup := append([]byte{0x82}, mpStr("tool")...)
	foldDup = append(foldDup, mpStr("secret")...)
	foldDup = append(foldDup, mpStr("Tool")...)
	foldDup = append(foldDup, mpStr("echo")...)
	unknown, _ := msgpack.Marshal(map[string]any{"tool": "echo", "caller": "alice"})
	for name, body := range map[string][]byte{
		"duplicate key":         dup,
		"key repeated but case": foldDup,
		"trailing data":         append(append([]byte{}, req...), 0xc0),
		"unknown field":         unknown,
		"huge map":              {0xdf, 0xff, 0xff, 0xff, 0xff},
		"not a map":             {0x93, 1, 2, 3},
	} {
		resp, b := doMsgpack(t, base+"/v1/call", "application/msgpack", "", body)
		if resp.StatusCode != 400 || !bytes.Contains(b, []byte("bad_request")) {
			t.Errorf("%s: %d %s", name, resp.StatusCode, b)
		}
	}
	// Only /v1/call takes MessagePack.
	if resp, b := doMsgpack(t, base+"/v1/select", "application/msgpack", "", req); resp.StatusCode != 415 {
		t.Errorf("select with MessagePack: %d %s", resp.StatusCode, b)
	}
}

func mpStr(s string) []byte { return append([]byte{0xa0 | byte(len(s))}, s...) }

func TestWantsMsgpack(t *testing.T) {
	for accept, want := range map[string]bool{
		"":                                      false,
		"*/*":                                   false,
		"application/json":                      false,
		"application/msgpack":                   true,
		"application/x-msgpack":                 true,
		"application/msgpack, */*":              true,
		"application/json, application/msgpack": false, // a tie keeps JSON
		"application/json;q=0.5, application/msgpack;q=0.9": true,
		"application/msgpack;q=0":                           false,
	} {
		if got := wantsMsgpack(accept); got != want {
			t.Errorf("Accept %q: msgpack %v, want %v", accept, got, want)
		}
	}
}

// A port in use and a malformed address are one clear error each, from
// Listen, before anything is served.
func TestListenErrors(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	for addr, want := range map[string]string{
		busy.Addr().String(): "already in use",
		"127.0.0.1":          "missing port",
		"127.0.0.1:99999":    "invalid port",
	} {
		s := New(&testBackend{}, Config{Addr: addr})
		l, err := s.Listen()
		if err == nil {
			l.Close()
			t.Errorf("%s: listened", addr)
			continue
		}
		var le *ListenError
		if !errors.As(err, &le) || !strings.Contains(err.Error(), want) || !strings.HasPrefix(err.Error(), "cannot listen on "+addr+": ") {
			t.Errorf("%s: %v, want %q", addr, err, want)
		}
		if strings.Contains(err.Error(), "listen tcp") {
			t.Errorf("%s: the raw net error is repeated: %v", addr, err)
		}
	}
	// ListenAndServe fails the same way, at once.
	s := New(&testBackend{}, Config{Addr: busy.Addr().String()})
	if err := s.ListenAndServe(context.Background()); err == nil || !strings.Contains(err.Error(), "already in use") {
		t.Errorf("ListenAndServe: %v", err)
	}
}

// checkMsgpack never panics, and what it accepts the library decodes to a
// map with as many keys as the body declares (none was dropped).
func FuzzCheckMsgpack(f *testing.F) {
	good, _ := msgpack.Marshal(map[string]any{"tool": "echo", "arguments": map[string]any{"n": 1, "l": []any{1, "x", map[string]any{"k": nil}}}})
	f.Add(good)
	f.Add([]byte{0x82, 0xa1, 'a', 0x01, 0xa1, 'a', 0x02})
	f.Add([]byte{0xdf, 0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		if checkMsgpack(b) != nil {
			return
		}
		var m map[string]any
		if err := msgpack.Unmarshal(b, &m); err != nil {
			t.Fatalf("accepted, but the library cannot decode it: %v", err)
		}
		n, err := msgpack.NewDecoder(bytes.NewReader(b)).DecodeMapLen()
		if err != nil || n != len(m) {
			t.Fatalf("accepted a map of %d entries that decodes to %d keys", n, len(m))
		}
	})
}

// Every 503 says when to come back: an open circuit its cooldown, a dead
// provider at least a second.
func TestUnavailableCarriesRetryAfter(t *testing.T) {
	for _, c := range []struct {
		err  *pipeline.ProviderUnavailable
		want string
	}{
		{&pipeline.ProviderUnavailable{Provider: "p", Tool: "t", Reason: pipeline.ReasonCircuitOpen, RetryAfter: 2500 * time.Millisecond}, "3"},
		{&pipeline.ProviderUnavailable{Provider: "p", Tool: "t", Reason: pipeline.ReasonProviderDead}, "1"},
	} {
		w := httptest.NewRecorder()
		writeCallError(w, nil, fmt.Errorf("wrapped: %w", c.err))
		if w.Code != http.StatusServiceUnavailable || w.Header().Get("Retry-After") != c.want {
			t.Errorf("%s: %d Retry-After %q, want 503 and %s", c.err.Reason, w.Code, w.Header().Get("Retry-After"), c.want)
		}
	}
}

// A body is JSON (or MessagePack on /v1/call): a form or plain text, what a
// page of another site can make a browser send, is refused with 415.
func TestBodyMustBeJSON(t *testing.T) {
	base, stop := newTestServer(t)
	defer stop()
	for _, c := range []struct {
		path, ct string
		status   int
	}{
		{"/v1/call", "application/x-www-form-urlencoded", 415},
		{"/v1/call", "text/plain;charset=UTF-8", 415},
		{"/v1/select", "multipart/form-data; boundary=x", 415},
		{"/v1/call", "application/json; charset=utf-8", 200},
		{"/v1/select", "application/merge-patch+json", 200},
		{"/v1/call", "", 200},
	} {
		body := `{"tool":"echo","arguments":{"n":1}}`
		if c.path == "/v1/select" {
			body = `{"text":"hi"}`
		}
		req, _ := http.NewRequest("POST", base+c.path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer tok-bob")
		if c.ct != "" {
			req.Header.Set("Content-Type", c.ct)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var b map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&b)
		resp.Body.Close()
		if resp.StatusCode != c.status {
			t.Errorf("%s with %q: %d %v, want %d", c.path, c.ct, resp.StatusCode, b, c.status)
		}
		if c.status == 415 && (b["error"] != "unsupported_media_type" || !strings.Contains(b["hint"].(string), "application/json")) {
			t.Errorf("%s with %q: body %v", c.path, c.ct, b)
		}
	}
}

// Each endpoint takes the input its work needs: past its limit, 413 that
// names the limit and the airs.yaml key that raises it.
func TestInputLimitsPerEndpoint(t *testing.T) {
	base, stop := newTestServer(t) // MaxBody 4096
	defer stop()
	m, err := pipeline.NewManager(pipeline.Config{Registry: pipeline.NewRegistry(pipeline.RegistryConfig{}), Policy: &pipeline.StaticPolicy{}})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	s := New(&testBackend{m}, Config{Tokens: []Token{{HashToken("tok"), "bob"}}, Limits: Limits{SelectText: 10, PlanText: 20, ChatText: 30, PipelineYAML: 40}})
	for _, c := range []struct {
		path, body, setting string
		max                 int
	}{
		{"/v1/select", `{"text":"` + strings.Repeat("a", 11) + `"}`, "http.limits.select_text", 10},
		{"/v1/plan", `{"text":"` + strings.Repeat("a", 21) + `"}`, "http.limits.plan_text", 20},
		{"/v1/chat", `{"text":"` + strings.Repeat("a", 31) + `"}`, "http.limits.chat_text", 30},
		{"/v1/pipelines/run", `{"yaml":"` + strings.Repeat("a", 41) + `"}`, "http.limits.pipeline_yaml", 40},
	} {
		r := httptest.NewRequest("POST", c.path, strings.NewReader(c.body))
		r.Header.Set("Authorization", "Bearer tok")
		w := httptest.NewRecorder()
		s.ServeHTTP(w, r)
		var b map[string]any
		_ = json.Unmarshal(w.Body.Bytes(), &b)
		hint, _ := b["hint"].(string)
		msg, _ := b["message"].(string)
		if w.Code != http.StatusRequestEntityTooLarge || b["error"] != "payload_too_large" || b["limit"] != float64(c.max) ||
			!strings.Contains(hint, c.setting) || !strings.Contains(msg, fmt.Sprintf("at most %d", c.max)) {
			t.Errorf("%s over its limit: %d %v", c.path, w.Code, b)
		}
	}
	// The whole body's bound says its key too.
	resp, b := post(t, base+"/v1/call", "tok-bob", `{"tool":"echo","arguments":{"n":1,"pad":"`+strings.Repeat("x", 5000)+`"}}`)
	if hint, _ := b["hint"].(string); resp.StatusCode != 413 || !strings.Contains(hint, "http.max_body") {
		t.Errorf("body over MaxBody: %d %v", resp.StatusCode, b)
	}
}

// A request is charged by its size: with a burst of 10, one selection of
// 8 KiB of text (8 tokens) leaves room for two more requests, not nine;
// the one that finds the bucket dry is 429 with Retry-After.
func TestCostlyRequestsChargeTheirSize(t *testing.T) {
	for _, c := range []struct {
		name    string
		text    int
		allowed int // one-word requests admitted after it
	}{
		{"a sentence", 10, 9},
		{"8 KiB", 8 << 10, 2},
	} {
		base, stop := newTestServerWithBody(t, 64<<10, func(mc *pipeline.Config) {
			mc.RateLimits = map[string]pipeline.RateLimit{"bob": {PerSecond: 0.001, Burst: 10}}
		})
		if resp, b := post(t, base+"/v1/select", "tok-bob", `{"text":"`+strings.Repeat("a", c.text)+`"}`); resp.StatusCode != 200 {
			t.Fatalf("%s: first request %d %v", c.name, resp.StatusCode, b)
		}
		n := 0
		for ; n < 12; n++ {
			resp, _ := post(t, base+"/v1/select", "tok-bob", `{"text":"x"}`)
			if resp.StatusCode == 429 {
				if resp.Header.Get("Retry-After") == "" {
					t.Errorf("%s: 429 without Retry-After", c.name)
				}
				break
			}
		}
		if n != c.allowed {
			t.Errorf("%s: %d requests admitted after it, want %d", c.name, n, c.allowed)
		}
		stop()
	}
}

// PUT /v1/context's task and turn are bounded like a chat's text.
func TestContextTextIsBounded(t *testing.T) {
	u := newUIRig(t, nil)
	u.srv.cfg.Limits.ChatText = 100 // the rig's bodies are at most 4 KiB
	big := strings.Repeat("a", 101)
	for _, body := range []string{`{"task":"` + big + `"}`, `{"turn":"` + big + `"}`} {
		code, v := u.api("PUT", "/v1/context", "tok-bob", body)
		if hint, _ := v["hint"].(string); code != 413 || !strings.Contains(hint, "http.limits.chat_text") {
			t.Errorf("%.20s…: %d %v", body, code, v)
		}
	}
	if code, v := u.api("PUT", "/v1/context", "tok-bob", `{"task":"read the papers"}`); code != 200 {
		t.Errorf("a task: %d %v", code, v)
	}
}

// owingBackend's plans cost 5 tokens of work beyond their size.
type owingBackend struct{ *testBackend }

func (b owingBackend) Plan(ctx context.Context, caller, text string) (any, error) {
	Owe(ctx, 5)
	return map[string]bool{"planned": true}, nil
}

// Work the Backend counts (a plan's parts) is charged too: with a burst of
// 10, a plan that owes 5 leaves room for 4 more requests.
func TestBackendOwesCountedWork(t *testing.T) {
	m, err := pipeline.NewManager(pipeline.Config{Registry: pipeline.NewRegistry(pipeline.RegistryConfig{}), Policy: &pipeline.StaticPolicy{},
		RateLimits: map[string]pipeline.RateLimit{"bob": {PerSecond: 0.001, Burst: 10}}})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	s := New(owingBackend{&testBackend{m}}, Config{Tokens: []Token{{HashToken("tok"), "bob"}}})
	do := func(path string) int {
		r := httptest.NewRequest("POST", path, strings.NewReader(`{"text":"x"}`))
		r.Header.Set("Authorization", "Bearer tok")
		w := httptest.NewRecorder()
		s.ServeHTTP(w, r)
		return w.Code
	}
	if code := do("/v1/plan"); code != 200 {
		t.Fatalf("plan: %d", code)
	}
	n := 0
	for ; n < 10 && do("/v1/select") == 200; n++ {
	}
	if n != 4 {
		t.Errorf("%d requests after a plan that owed 5 of a burst of 10, want 4", n)
	}
}
