//go:build e2e

package e2e

// These tests talk to a real Ollama server running the tiny random-weight
// model of internal/tinymodel. scripts/e2e.sh (make e2e) builds and starts the
// server and exports OLLAMA_HOST, AIRS_E2E_MODEL and AIRS_E2E=1.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/airs-dev/airs/internal/ollama"
	"github.com/airs-dev/airs/internal/tinymodel"
)

// setup returns a client for the e2e server and the model name, or skips
// when not run by scripts/e2e.sh.
func setup(t *testing.T) (*ollama.HTTP, string) {
	t.Helper()
	if os.Getenv("AIRS_E2E") != "1" {
		t.Skip("e2e: no server; run `bash scripts/e2e.sh` (make e2e), which starts Ollama and sets AIRS_E2E=1")
	}
	c, err := ollama.FromEnvironment()
	if err != nil {
		t.Fatal(err)
	}
	model := os.Getenv("AIRS_E2E_MODEL")
	if model == "" {
		model = "airs-tiny"
	}
	return c, model
}

func ctxT(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// toolSchema is the kind of schema AIRS sends as `format`: a choice of
// function and bounded arguments.
const toolSchema = `{
  "type": "object",
  "properties": {
    "function": {"enum": ["get_weather", "send_mail", "none"]},
    "arguments": {
      "type": "object",
      "properties": {
        "city": {"type": "string", "maxLength": 12},
        "days": {"type": "integer", "minimum": 1, "maximum": 7},
        "units": {"enum": ["metric", "imperial"]}
      },
      "required": ["city", "days", "units"],
      "additionalProperties": false
    }
  },
  "required": ["function", "arguments"],
  "additionalProperties": false
}`

func compileSchema(t *testing.T, schema string) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(schema))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("tool.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("tool.json")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func chatReq(model string, format string, temp float64, seed int) ollama.ChatRequest {
	r := ollama.ChatRequest{
		Model: model,
		Messages: []ollama.Message{
			{Role: "system", Content: "Answer with one tool call as JSON."},
			{Role: "user", Content: "What's the weather in Paris for the next 3 days?"},
		},
		Options: ollama.Options{Temperature: ollama.Ptr(temp), Seed: ollama.Ptr(seed), NumCtx: 2048, NumPredict: 512},
	}
	if format != "" {
		r.Format = json.RawMessage(format)
	}
	return r
}

func TestPingVersionModels(t *testing.T) {
	c, model := setup(t)
	ctx := ctxT(t, 30*time.Second)
	if err := c.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	v, err := c.Version(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if v != "0.17.4" {
		t.Errorf("server version %q, want 0.17.4 (the version pinned in go.mod)", v)
	}
	models, err := c.Models(ctx)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, m := range models {
		found = found || m == model || m == model+":latest"
	}
	if !found {
		t.Errorf("model %s not among %v", model, models)
	}
}

// callTimeout bounds one request. Generous: the machine running the tests
// may be loaded, and grammar-constrained sampling over a 151k vocabulary is
// CPU-heavy.
const callTimeout = 5 * time.Minute

var greedy struct {
	once sync.Once
	resp ollama.ChatResponse
	err  error
}

// greedyFormat is the greedy, schema-constrained reply, computed once and
// shared by the tests that need it.
func greedyFormat(t *testing.T, c ollama.Client, model string) ollama.ChatResponse {
	t.Helper()
	greedy.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
		defer cancel()
		greedy.resp, greedy.err = c.Chat(ctx, chatReq(model, toolSchema, 0, 42), nil)
	})
	if greedy.err != nil {
		t.Fatal(greedy.err)
	}
	return greedy.resp
}

// sampled is an unconstrained request at a high temperature: the random
// model then emits varied tokens (never 31 identical ones), fast.
func sampled(model string, temp float64, seed, n int) ollama.ChatRequest {
	r := chatReq(model, "", temp, seed)
	r.Options.NumPredict = n
	return r
}

// TestFormatSchema: the random model's output, constrained by `format`, is
// valid JSON for the schema — under greedy decoding and under sampling.
// (Sampling with a grammar is slow with this model: llama.cpp samples
// unconstrained first, and when the token breaks the grammar — nearly always,
// with random weights — it applies the grammar to all 151k candidates.)
func TestFormatSchema(t *testing.T) {
	c, model := setup(t)
	schema := compileSchema(t, toolSchema)
	check := func(name string, resp ollama.ChatResponse) {
		t.Helper()
		if !resp.Done || resp.DoneReason != "stop" {
			t.Errorf("%s: done=%v reason=%q, want a natural stop (output %q)", name, resp.Done, resp.DoneReason, resp.Content)
		}
		inst, err := jsonschema.UnmarshalJSON(strings.NewReader(resp.Content))
		if err != nil {
			t.Errorf("%s: not JSON: %v\n%q", name, err, resp.Content)
			return
		}
		if err := schema.Validate(inst); err != nil {
			t.Errorf("%s: invalid for the schema: %v\n%s", name, err, resp.Content)
			return
		}
		t.Logf("%s: valid, %d tokens in %v: %s", name, resp.EvalCount, resp.EvalDuration.Round(time.Millisecond), compact(resp.Content))
	}
	check("greedy", greedyFormat(t, c, model))
	for _, r := range []struct {
		temp float64
		seed int
	}{{0.8, 1}, {1.5, 2}} {
		resp, err := c.Chat(ctxT(t, callTimeout), chatReq(model, toolSchema, r.temp, r.seed), nil)
		if err != nil {
			t.Fatalf("temp %v seed %d: %v", r.temp, r.seed, err)
		}
		check(fmt.Sprintf("temp %v seed %d", r.temp, r.seed), resp)
	}
}

func compact(s string) string {
	var b bytes.Buffer
	if json.Compact(&b, []byte(s)) != nil {
		return s
	}
	return b.String()
}

// TestDeterministic: the same request with a fixed seed gives the same
// output: greedy with the grammar, and sampled (temperature 0.9) without it;
// different seeds sample differently.
func TestDeterministic(t *testing.T) {
	c, model := setup(t)
	first := greedyFormat(t, c, model)
	again, err := c.Chat(ctxT(t, callTimeout), chatReq(model, toolSchema, 0, 42), nil)
	if err != nil {
		t.Fatal(err)
	}
	if again.Content != first.Content {
		t.Errorf("greedy with format: two runs differ:\n%q\n%q", first.Content, again.Content)
	}

	run := func(seed int) string {
		resp, err := c.Chat(ctxT(t, callTimeout), sampled(model, 0.9, seed, 20), nil)
		if err != nil {
			t.Fatal(err)
		}
		return resp.Content
	}
	a, b := run(42), run(42)
	if a != b {
		t.Errorf("temperature 0.9, seed 42: two runs differ:\n%q\n%q", a, b)
	}
	if other := run(43); other == a {
		t.Errorf("seeds 42 and 43 gave the same sampled output %q", a)
	}
}

// TestStreaming: chunks arrive one by one, spread over the generation, and
// add up to the reply.
func TestStreaming(t *testing.T) {
	c, model := setup(t)
	var chunks []string
	var times []time.Time
	resp, err := c.Chat(ctxT(t, callTimeout), sampled(model, 1.0, 7, 24), func(s string) error {
		chunks = append(chunks, s)
		times = append(times, time.Now())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !resp.Done || resp.DoneReason != "length" || resp.EvalCount != 24 {
		t.Errorf("resp = %+v, want done by length after 24 tokens", resp)
	}
	if len(chunks) < 12 || len(chunks) != resp.Chunks || len(chunks) > resp.EvalCount {
		t.Errorf("%d chunks (resp.Chunks %d, eval_count %d), want one per token", len(chunks), resp.Chunks, resp.EvalCount)
	}
	if strings.Join(chunks, "") != resp.Content {
		t.Errorf("chunks do not add up to the content")
	}
	// Streamed as generated, not buffered: a buffered reply would deliver
	// every chunk within microseconds.
	if len(times) > 1 {
		spread := times[len(times)-1].Sub(times[0])
		if spread < 10*time.Millisecond {
			t.Errorf("all %d chunks arrived within %v: not streamed", len(chunks), spread)
		}
		t.Logf("%d chunks over %v", len(chunks), spread)
	}
}

// TestEarlyStop: a callback error ends Chat at once, with the chunks so far;
// the rest of the reply is read unseen (hanging up mid-stream can wedge
// the model in Ollama v0.17.4: see TestEarlyStopKeepsServerServing), so
// the next request is served once the abandoned reply's 400 tokens are
// done — not cancelled, and not blocked.
func TestEarlyStop(t *testing.T) {
	c, model := setup(t)
	stop := errors.New("stop: runaway output")
	n := 0
	start := time.Now()
	resp, err := c.Chat(ctxT(t, callTimeout), sampled(model, 1.5, 3, 400), func(string) error {
		if n++; n == 5 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) {
		t.Fatalf("err = %v, want the callback's error", err)
	}
	if resp.Done || resp.Chunks != 5 || resp.Content == "" {
		t.Errorf("resp = %+v, want 5 chunks, not done", resp)
	}
	t.Logf("stopped after %v with %q", time.Since(start), resp.Content)

	start = time.Now()
	next := sampled(model, 0, 1, 5)
	r2, err := c.Chat(ctxT(t, time.Minute), next, nil)
	if err != nil {
		t.Fatalf("next request after an early stop: %v (is the server wedged?)", err)
	}
	if !r2.Done || r2.EvalCount != 5 {
		t.Errorf("next request: %+v", r2)
	}
	t.Logf("next request done in %v", time.Since(start))
}

// TestRepeatLimit pins an Ollama behaviour callers must know: a generation
// that repeats one token (here: the random model's greedy "\n") more than 30
// times is ended by the server without a done message or an error. The
// client reports ErrTruncated and ErrRepeatLimit.
func TestRepeatLimit(t *testing.T) {
	c, model := setup(t)
	resp, err := c.Chat(ctxT(t, callTimeout), sampled(model, 0, 1, 200), nil)
	if !errors.Is(err, ollama.ErrTruncated) || !errors.Is(err, ollama.ErrRepeatLimit) {
		t.Fatalf("err = %v, want ErrTruncated and ErrRepeatLimit (resp %+v)", err, resp)
	}
	if resp.Done || resp.Chunks < 30 || resp.Chunks > 32 {
		t.Errorf("resp: done=%v after %d chunks, want about 31", resp.Done, resp.Chunks)
	}
	t.Logf("%v after %d chunks %q", err, resp.Chunks, resp.Content)
}

// TestEmbed: /api/embed returns one unit vector per input, of the model's
// embedding size, the same for the same text.
func TestEmbed(t *testing.T) {
	c, model := setup(t)
	inputs := []string{"get the weather in Paris", "send an email to Bob", "get the weather in Paris"}
	vecs, err := c.Embed(ctxT(t, callTimeout), model, inputs)
	if err != nil {
		t.Fatal(err)
	}
	dim := tinymodel.DefaultConfig().Dim
	if len(vecs) != len(inputs) {
		t.Fatalf("%d vectors for %d inputs", len(vecs), len(inputs))
	}
	for i, v := range vecs {
		if len(v) != dim {
			t.Errorf("vector %d has %d dimensions, want %d", i, len(v), dim)
		}
		var n float64
		for _, x := range v {
			n += float64(x) * float64(x)
		}
		if math.Abs(n-1) > 1e-3 {
			t.Errorf("vector %d: |v|² = %v, want 1", i, n)
		}
	}
	if !equalVec(vecs[0], vecs[2], 1e-5) {
		t.Error("the same text embedded twice differs")
	}
	if equalVec(vecs[0], vecs[1], 1e-5) {
		t.Error("different texts have the same embedding")
	}
}

func equalVec(a, b []float32, tol float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Abs(float64(a[i]-b[i])) > tol {
			return false
		}
	}
	return true
}

// TestUnavailable: no server at the address → ErrUnavailable, fast.
func TestUnavailable(t *testing.T) {
	setup(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	c, err := ollama.New(ollama.Config{Host: addr})
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxT(t, 10*time.Second)
	start := time.Now()
	_, chatErr := c.Chat(ctx, chatReq("airs-tiny", toolSchema, 0, 1), nil)
	_, embedErr := c.Embed(ctx, "airs-tiny", []string{"x"})
	for op, err := range map[string]error{"ping": c.Ping(ctx), "chat": chatErr, "embed": embedErr} {
		if !errors.Is(err, ollama.ErrUnavailable) {
			t.Errorf("%s: err = %v, want ErrUnavailable", op, err)
		}
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("took %v to notice no server", d)
	}
}

// TestUnknownModel: the server's error comes back clearly.
func TestUnknownModel(t *testing.T) {
	c, _ := setup(t)
	ctx := ctxT(t, 30*time.Second)
	_, chatErr := c.Chat(ctx, chatReq("no-such-model-e2e", toolSchema, 0, 1), nil)
	_, embedErr := c.Embed(ctx, "no-such-model-e2e", []string{"x"})
	for op, err := range map[string]error{"chat": chatErr, "embed": embedErr} {
		var se *ollama.ServerError
		if !errors.As(err, &se) || se.StatusCode != 404 {
			t.Errorf("%s: err = %v, want a 404 ServerError", op, err)
			continue
		}
		if !errors.Is(err, ollama.ErrModelNotFound) || errors.Is(err, ollama.ErrUnavailable) {
			t.Errorf("%s: %v: wrong sentinel", op, err)
		}
		if !strings.Contains(err.Error(), "no-such-model-e2e") || !strings.Contains(err.Error(), "not found") {
			t.Errorf("%s: message %q does not name the model and say not found", op, err)
		}
		t.Logf("%s: %v", op, err)
	}
}

// TestTruncatedStream: the real server's stream, cut after a few messages by
// a proxy that drops the connection → ErrTruncated with the partial content.
func TestTruncatedStream(t *testing.T) {
	c, model := setup(t)
	proxy := newCutProxy(t, strings.TrimPrefix(c.Host(), "http://"), 3)
	pc, err := ollama.New(ollama.Config{Host: proxy})
	if err != nil {
		t.Fatal(err)
	}
	req := sampled(model, 1.5, 5, 20)
	full, err := c.Chat(ctxT(t, callTimeout), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := pc.Chat(ctxT(t, callTimeout), req, nil)
	if !errors.Is(err, ollama.ErrTruncated) {
		t.Fatalf("err = %v, want ErrTruncated", err)
	}
	if resp.Done || resp.Content == "" || !strings.HasPrefix(full.Content, resp.Content) || resp.Content == full.Content {
		t.Errorf("partial %q is not a proper prefix of the full reply %q", resp.Content, full.Content)
	}
	t.Logf("cut after %q: %v", resp.Content, err)
}

// newCutProxy forwards TCP connections to target and closes each one once
// the server has sent `after` stream messages ("done":false).
func newCutProxy(t *testing.T, target string, after int) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { l.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			client, err := l.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer client.Close()
				server, err := net.Dial("tcp", target)
				if err != nil {
					return
				}
				defer server.Close()
				go io.Copy(server, client)
				var seen []byte
				buf := make([]byte, 4096)
				marker := []byte(`"done":false`)
				for {
					n, err := server.Read(buf)
					if n > 0 {
						seen = append(seen, buf[:n]...)
						if bytes.Count(seen, marker) >= after {
							// Forward up to just past the after-th message.
							cut := nthIndex(seen, marker, after) + len(marker)
							if end := bytes.IndexByte(seen[cut:], '\n'); end >= 0 {
								cut += end + 1
							}
							start := len(seen) - n
							if cut > start {
								client.Write(seen[start:cut])
							}
							return
						}
						if _, werr := client.Write(buf[:n]); werr != nil {
							return
						}
					}
					if err != nil {
						return
					}
				}
			}()
		}
	}()
	return l.Addr().String()
}

func nthIndex(b, sep []byte, n int) int {
	off := 0
	for i := 1; ; i++ {
		j := bytes.Index(b[off:], sep)
		if j < 0 {
			return -1
		}
		if i == n {
			return off + j
		}
		off += j + len(sep)
	}
}

// TestEarlyStopKeepsServerServing: stopping a stream from the chunk
// callback (what AIRS's stream check does at the first byte outside the
// grammar) leaves the server serving. Ollama v0.17.4 wedges a model when a
// client hangs up mid-stream (its chat handler stops reading while the
// completion callback, holding the runner's slot, blocks on the next
// chunk), which hung whole e2e runs; Chat now reads a stopped stream to
// its end instead. Each stop is followed by a normal request that must
// finish.
func TestEarlyStopKeepsServerServing(t *testing.T) {
	c, model := setup(t)
	stop := errors.New("stop here")
	for i := range 15 {
		req := chatReq(model, "", 1.0, 100+i)
		req.Options.NumPredict = 48
		n := 0
		t0 := time.Now()
		_, err := c.Chat(ctxT(t, time.Minute), req, func(string) error {
			if n++; n == 2 {
				return stop
			}
			return nil
		})
		if !errors.Is(err, stop) {
			t.Fatalf("stop %d: %v (after %d chunks)", i, err, n)
		}
		if d := time.Since(t0); d > 30*time.Second {
			t.Errorf("stop %d: Chat returned after %v", i, d)
		}
		next := chatReq(model, "", 1.0, 200+i)
		next.Options.NumPredict = 4
		resp, err := c.Chat(ctxT(t, 90*time.Second), next, nil)
		if err != nil || !resp.Done {
			t.Fatalf("the request after stop %d did not finish: %v (%+v)", i, err, resp)
		}
	}
}
