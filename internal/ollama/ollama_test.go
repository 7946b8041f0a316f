package ollama

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// These tests cover the error paths against httptest servers that speak
// Ollama's wire format; e2e/ollama_test.go checks the same behaviour
// against a real Ollama server.

func newClient(t *testing.T, url string) *HTTP {
	t.Helper()
	c, err := New(Config{Host: url})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func chunkLine(s string) string {
	b, _ := json.Marshal(map[string]any{"model": "m", "message": map[string]string{"role": "assistant", "content": s}, "done": false})
	return string(b) + "\n"
}

const doneLine = `{"model":"m","message":{"role":"assistant","content":""},"done":true,"done_reason":"stop","prompt_eval_count":7,"eval_count":3,"total_duration":1000}` + "\n"

func TestParseHost(t *testing.T) {
	for in, want := range map[string]string{
		"":                        "http://127.0.0.1:11434",
		"127.0.0.1:5000":          "http://127.0.0.1:5000",
		":5000":                   "http://127.0.0.1:5000",
		"localhost":               "http://localhost:11434",
		"http://example.com":      "http://example.com:80",
		"https://example.com":     "https://example.com:443",
		"http://10.0.0.1:99/base": "http://10.0.0.1:99/base",
		"[::1]:7000":              "http://[::1]:7000",
		"::1":                     "http://[::1]:11434",
	} {
		u, err := ParseHost(in)
		if err != nil {
			t.Errorf("ParseHost(%q): %v", in, err)
			continue
		}
		if u.String() != want {
			t.Errorf("ParseHost(%q) = %s, want %s", in, u, want)
		}
	}
	for _, bad := range []string{"ftp://x", "host:notaport", "host:70000"} {
		if _, err := ParseHost(bad); err == nil {
			t.Errorf("ParseHost(%q) accepted", bad)
		}
	}
}

func TestHostFromEnvironment(t *testing.T) {
	t.Setenv("OLLAMA_HOST", "127.0.0.1:12345")
	c, err := FromEnvironment()
	if err != nil {
		t.Fatal(err)
	}
	if c.Host() != "http://127.0.0.1:12345" {
		t.Errorf("Host() = %s", c.Host())
	}
}

func TestChatStreams(t *testing.T) {
	var got map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/chat" {
			http.NotFound(w, r)
			return
		}
		if err := json.NewDecoder(r.Body).Decode(&got); err != nil {
			t.Error(err)
		}
		for _, s := range []string{`{"a"`, `:`, `1}`} {
			io.WriteString(w, chunkLine(s))
			w.(http.Flusher).Flush()
		}
		io.WriteString(w, doneLine)
	}))
	defer srv.Close()

	var chunks []string
	resp, err := newClient(t, srv.URL).Chat(context.Background(), ChatRequest{
		Model:    "m",
		Messages: []Message{{Role: "user", Content: "hi"}},
		Format:   json.RawMessage(`{"type":"object"}`),
		Options:  Options{Temperature: Ptr(0.0), Seed: Ptr(42), NumCtx: 2048, NumPredict: 64},
	}, func(s string) error { chunks = append(chunks, s); return nil })
	if err != nil {
		t.Fatal(err)
	}
	if resp.Content != `{"a":1}` || !resp.Done || resp.DoneReason != "stop" || resp.Chunks != 3 ||
		resp.EvalCount != 3 || resp.PromptEvalCount != 7 {
		t.Errorf("resp = %+v", resp)
	}
	if strings.Join(chunks, "|") != `{"a"|:|1}` {
		t.Errorf("chunks = %q", chunks)
	}
	if got["stream"] != true {
		t.Errorf("stream = %v, want true", got["stream"])
	}
	if _, ok := got["tools"]; ok {
		t.Error("request carries a tools field")
	}
	if f, _ := json.Marshal(got["format"]); string(f) != `{"type":"object"}` {
		t.Errorf("format = %s", f)
	}
	opts, _ := got["options"].(map[string]any)
	want := map[string]any{"temperature": 0.0, "seed": 42.0, "num_ctx": 2048.0, "num_predict": 64.0}
	for k, v := range want {
		if opts[k] != v {
			t.Errorf("options[%s] = %v, want %v", k, opts[k], v)
		}
	}
	if len(opts) != len(want) {
		t.Errorf("options = %v, want only %v", opts, want)
	}
}

// TestChatEarlyStopDrains: when the callback stops the stream, Chat returns
// at once with what it has, and the rest of the reply is read to its end,
// not cut (Ollama v0.17.4 wedges a model when a client leaves mid-stream:
// see Chat); cancelling the caller's context afterwards does not cut it
// either.
func TestChatEarlyStopDrains(t *testing.T) {
	finished := make(chan struct{})
	cancelled := make(chan struct{}, 1)
	// Chunks come every 25 ms, so the drain after the third takes about a
	// second: Chat returning before the server has finished proves it did
	// not wait, whatever the machine's load (no wall-clock bound).
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for i := 0; i < 40; i++ {
			if i == 3 {
				<-release
			}
			select {
			case <-r.Context().Done():
				cancelled <- struct{}{}
				return
			case <-time.After(25 * time.Millisecond):
			}
			io.WriteString(w, chunkLine(fmt.Sprint(i)))
			w.(http.Flusher).Flush()
		}
		io.WriteString(w, `{"model":"m","message":{"role":"assistant","content":""},"done":true,"done_reason":"stop"}`+"\n")
		close(finished)
	}))
	defer srv.Close()

	ctx, cancelCtx := context.WithCancel(context.Background())
	stop := errors.New("enough")
	n := 0
	resp, err := newClient(t, srv.URL).Chat(ctx, ChatRequest{Model: "m"}, func(string) error {
		if n++; n == 3 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) {
		t.Fatalf("err = %v, want the callback's error", err)
	}
	if resp.Content != "012" || resp.Done {
		t.Errorf("resp = %+v, want content 012 and not done", resp)
	}
	select {
	case <-finished:
		t.Errorf("Chat returned only after the server finished: it waited for the drain")
	default:
	}
	close(release)
	cancelCtx()
	select {
	case <-finished:
	case <-cancelled:
		t.Fatal("the stopped stream was cut, not read to its end")
	case <-time.After(10 * time.Second):
		t.Fatal("the server never finished its reply")
	}
}

// TestChatEarlyStopDrainLimit: a stopped stream that never ends is cut
// after Config.DrainLimit, and at once with a negative one.
func TestChatEarlyStopDrainLimit(t *testing.T) {
	for _, limit := range []time.Duration{100 * time.Millisecond, -1} {
		endlessStopped(t, limit)
	}
}

func endlessStopped(t *testing.T, limit time.Duration) {
	cancelled := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for i := 0; ; i++ {
			select {
			case <-r.Context().Done():
				close(cancelled)
				return
			case <-time.After(5 * time.Millisecond):
			}
			io.WriteString(w, chunkLine(fmt.Sprint(i)))
			w.(http.Flusher).Flush()
		}
	}))
	defer srv.Close()
	stop := errors.New("enough")
	c, err := New(Config{Host: srv.URL, DrainLimit: limit})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Chat(context.Background(), ChatRequest{Model: "m"}, func(string) error { return stop })
	if !errors.Is(err, stop) {
		t.Fatalf("err = %v", err)
	}
	select {
	case <-cancelled:
	case <-time.After(5 * time.Second):
		t.Error("the endless stream was never cut")
	}
}

// cutServer writes prefix and then drops the connection without finishing
// the chunked body.
func cutServer(t *testing.T, prefix string) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-ndjson")
		w.WriteHeader(http.StatusOK)
		io.WriteString(w, prefix)
		w.(http.Flusher).Flush()
		conn, _, err := w.(http.Hijacker).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		conn.Close()
	}))
}

func TestChatTruncated(t *testing.T) {
	for name, prefix := range map[string]string{
		"between lines": chunkLine("par") + chunkLine("tial"),
		"mid line":      chunkLine("par") + chunkLine("tial") + `{"model":"m","mess`,
	} {
		t.Run(name, func(t *testing.T) {
			srv := cutServer(t, prefix)
			defer srv.Close()
			resp, err := newClient(t, srv.URL).Chat(context.Background(), ChatRequest{Model: "m"}, nil)
			if !errors.Is(err, ErrTruncated) {
				t.Fatalf("err = %v, want ErrTruncated", err)
			}
			if resp.Content != "partial" || resp.Done {
				t.Errorf("resp = %+v", resp)
			}
		})
	}

	// A clean end of body without "done" is truncation too; after 31
	// identical tokens it is Ollama's repeat guard.
	for n, want := range map[int]bool{30: false, 31: true} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, chunkLine("x"))
			for range n {
				io.WriteString(w, chunkLine("\n "))
			}
		}))
		resp, err := newClient(t, srv.URL).Chat(context.Background(), ChatRequest{Model: "m"}, nil)
		srv.Close()
		if !errors.Is(err, ErrTruncated) || errors.Is(err, ErrRepeatLimit) != want {
			t.Errorf("%d blank chunks then end: err = %v, want ErrTruncated, ErrRepeatLimit %v", n, err, want)
		}
		if resp.Chunks != n+1 {
			t.Errorf("%d blank chunks: resp.Chunks = %d", n, resp.Chunks)
		}
	}
}

func TestServerErrors(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/api/chat", "/api/embed":
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, `{"error":"model 'nope' not found"}`)
		case "/api/version":
			http.Error(w, "boom", http.StatusInternalServerError)
		}
	}))
	defer srv.Close()
	c := newClient(t, srv.URL)
	ctx := context.Background()

	_, chatErr := c.Chat(ctx, ChatRequest{Model: "nope"}, nil)
	_, embedErr := c.Embed(ctx, "nope", []string{"x"})
	for op, err := range map[string]error{"chat": chatErr, "embed": embedErr} {
		var se *ServerError
		if !errors.As(err, &se) || se.StatusCode != 404 || se.Message != "model 'nope' not found" {
			t.Errorf("%s: err = %#v, want ServerError 404 with the server's message", op, err)
		}
		if !errors.Is(err, ErrModelNotFound) || errors.Is(err, ErrUnavailable) {
			t.Errorf("%s: errors.Is ErrModelNotFound/ErrUnavailable wrong for %v", op, err)
		}
		if !strings.Contains(err.Error(), "model 'nope' not found") {
			t.Errorf("%s: message %q lacks the server's text", op, err)
		}
	}
	err := c.Ping(ctx)
	var se *ServerError
	if !errors.As(err, &se) || se.StatusCode != 500 || errors.Is(err, ErrModelNotFound) {
		t.Errorf("ping: err = %v, want ServerError 500", err)
	}
}

func TestErrorInStream(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, chunkLine("ab"))
		io.WriteString(w, `{"error":"llama runner process has terminated"}`+"\n")
	}))
	defer srv.Close()
	resp, err := newClient(t, srv.URL).Chat(context.Background(), ChatRequest{Model: "m"}, nil)
	var se *ServerError
	if !errors.As(err, &se) || se.StatusCode != 0 || !strings.Contains(se.Message, "terminated") {
		t.Fatalf("err = %v, want in-stream ServerError", err)
	}
	if resp.Content != "ab" {
		t.Errorf("content = %q", resp.Content)
	}
}

func TestUnavailable(t *testing.T) {
	// A port that was just free: nothing listens there.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	c := newClient(t, addr)
	ctx := context.Background()
	_, chatErr := c.Chat(ctx, ChatRequest{Model: "m"}, nil)
	_, embedErr := c.Embed(ctx, "m", []string{"x"})
	_, listErr := c.Models(ctx)
	for op, err := range map[string]error{"chat": chatErr, "embed": embedErr, "ping": c.Ping(ctx), "models": listErr} {
		if !errors.Is(err, ErrUnavailable) {
			t.Errorf("%s: err = %v, want ErrUnavailable", op, err)
		}
	}
}

func TestContextCancelled(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, chunkLine("a"))
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	c, err := New(Config{Host: srv.URL, DrainLimit: 50 * time.Millisecond}) // the server here never ends its reply
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Chat(ctx, ChatRequest{Model: "m"}, func(string) error { cancel(); return nil })
	if !errors.Is(err, context.Canceled) || errors.Is(err, ErrTruncated) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	if resp.Content != "a" {
		t.Errorf("content = %q", resp.Content)
	}
}

func TestEmbed(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Model string   `json:"model"`
			Input []string `json:"input"`
		}
		json.NewDecoder(r.Body).Decode(&req)
		vecs := make([][]float32, len(req.Input))
		for i := range vecs {
			vecs[i] = []float32{float32(i), 1}
		}
		if req.Model == "short" {
			vecs = vecs[:1]
		}
		json.NewEncoder(w).Encode(map[string]any{"model": req.Model, "embeddings": vecs})
	}))
	defer srv.Close()
	c := newClient(t, srv.URL)
	v, err := c.Embed(context.Background(), "m", []string{"a", "b"})
	if err != nil {
		t.Fatal(err)
	}
	if len(v) != 2 || v[1][0] != 1 {
		t.Errorf("vectors = %v", v)
	}
	if _, err := c.Embed(context.Background(), "short", []string{"a", "b"}); err == nil {
		t.Error("1 vector for 2 inputs accepted")
	}
	if v, err := c.Embed(context.Background(), "m", nil); v != nil || err != nil {
		t.Errorf("no inputs: %v, %v", v, err)
	}
}

// Load sends a chat with no messages and the keep_alive, as Ollama's load
// request is written, and checks that the answer is a load.
func TestLoad(t *testing.T) {
	var got map[string]any
	reason := "load"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/chat" {
			http.NotFound(w, r)
			return
		}
		got = nil
		json.NewDecoder(r.Body).Decode(&got)
		fmt.Fprintf(w, `{"model":"m","message":{"role":"assistant","content":""},"done":true,"done_reason":%q}`, reason)
	}))
	defer srv.Close()
	c := newClient(t, srv.URL)
	if _, err := Load(context.Background(), c, "m", 90*time.Second, Options{NumCtx: 2048}); err != nil {
		t.Fatal(err)
	}
	if msgs, ok := got["messages"].([]any); !ok || len(msgs) != 0 {
		t.Errorf("messages = %#v, want an empty list (a load, not a chat)", got["messages"])
	}
	if got["model"] != "m" || got["keep_alive"] != "1m30s" {
		t.Errorf("model %v keep_alive %v, want m and 1m30s", got["model"], got["keep_alive"])
	}
	if o, _ := got["options"].(map[string]any); o["num_ctx"] != 2048.0 {
		t.Errorf("options %v: want num_ctx 2048, or the real requests reload the model", got["options"])
	}
	reason = "stop"
	if _, err := Load(context.Background(), c, "m", time.Minute, Options{}); err == nil || !strings.Contains(err.Error(), `answered "stop"`) {
		t.Errorf("a reply that is not a load: %v", err)
	}
}
